"""QoS (when the plan turns it on): each CA port's SL2VL and VL arbitration tables are the plan's.

The plan's tables for CA ports are qos_ca_* where set, else the default qos_* set. A VLArb table matches
when it starts with the planned (VL, weight) entries and every entry after them has weight 0 (OpenSM
fills the rest of the table that way). Tables the plan leaves to OpenSM's defaults are not judged.
"""

from __future__ import annotations

from collections.abc import Sequence

from ibprov.report.model import Finding, Severity
from ibprov.verify.checking import Check
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.plan import Plan, endpoint_name

__all__ = ["CHECKS", "arb_matches", "check"]


def _ca_ports_if_qos(plan: Plan, _obs: Observation) -> list[str]:
    return [endpoint_name(e) for e in plan.port_guids] if plan.qos is not None else []


_FIX = "check qos_ca_* / qos_* in opensm.conf (re-apply the ib_sm role), qos TRUE, and restart opensm"
SL2VL = Check(
    "qos.sl2vl",
    "Each CA port's SL-to-VL table is the plan's",
    Severity.ERROR,
    _FIX,
    _ca_ports_if_qos,
    object_kind="the CA port",
)
VLARB = Check(
    "qos.vlarb",
    "Each CA port's VL arbitration tables are the plan's",
    Severity.ERROR,
    _FIX,
    _ca_ports_if_qos,
    object_kind="the CA port",
)
CHECKS = (SL2VL, VLARB)


def arb_matches(planned: Sequence[tuple[int, int]], have: Sequence[tuple[int, int]]) -> bool:
    """The port's table starts with the planned entries and every entry after them has weight 0."""
    n = len(planned)
    return list(have[:n]) == list(planned) and all(weight == 0 for _vl, weight in have[n:])


def _arb(entries: Sequence[tuple[int, int]]) -> str:
    shown = [f"{vl}:{w}" for vl, w in entries if w]
    return ",".join(shown) or "all weights 0"


def check(plan: Plan, obs: Observation) -> list[Finding]:
    tables = plan.qos
    if tables is None:
        return []
    out: list[Finding] = []
    for end, guid in plan.port_guids.items():
        if guid is None:
            continue
        name = endpoint_name(end)
        if tables.sl2vl is not None and guid in obs.sl2vl and tuple(obs.sl2vl[guid]) != tuple(tables.sl2vl):
            planned = ",".join(map(str, tables.sl2vl))
            out.append(
                SL2VL.finding(name, f"SL0-15 -> VL {planned}", f"SL0-15 -> VL {','.join(map(str, obs.sl2vl[guid]))}")
            )
        if guid in obs.vlarb:
            high, low = obs.vlarb[guid]
            wrong = [
                (label, want, have)
                for label, want, have in (("high", tables.vlarb_high, high), ("low", tables.vlarb_low, low))
                if want is not None and not arb_matches(want, have)
            ]
            if wrong:
                expected = "; ".join(f"{label} {_arb(want)}" for label, want, _have in wrong)
                found = "; ".join(f"{label} {_arb(have)}" for label, _want, have in wrong)
                out.append(VLARB.finding(name, expected, found))
    return out
