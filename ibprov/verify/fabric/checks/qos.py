"""QoS (when the plan turns it on): each CA port's and each switch egress port's SL2VL and VL arbitration
tables are the plan's.

The plan's tables for a class of port are its own set where set, else the default qos_* set: qos_ca_* for
CA ports, qos_sw0_* for switch port 0 (an enhanced port 0: a base port 0 has no VLArb tables and is not
judged), qos_swe_* for every other switch port. OpenSM has one external class: host-facing and
switch-to-switch ports get the same qos_swe_* tables, and the finding says which kind the port is. A switch
port's SL2VL table is one row per ingress port into it; every row must be the plan's: qos_swe_*'s, except
the row from port 0 into port 0, which is qos_sw0_*'s (OpenSM's qos_extports_setup sets every row from
the external set, then qos_endport_setup sets port 0's own row). A VLArb table
matches when it starts with the planned (VL, weight) entries and every entry after them has weight 0
(OpenSM fills the rest of the table that way). Tables the plan leaves to OpenSM's defaults are not judged.
(torus-2QoS, which rewrites these tables itself, is refused by validate.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ibprov.clusterspec.model import QosTables
from ibprov.report.model import Finding, Severity
from ibprov.verify.fabric.observation import Observation, PortRef
from ibprov.verify.fabric.plan import Plan, endpoint_name
from ibprov.verify.judge import Check

__all__ = ["CHECKS", "arb_matches", "check", "port_class", "switch_port_name"]


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


def _switch_ports_if_qos(plan: Plan, obs: Observation) -> list[str]:
    if not plan.switch_qos:
        return []
    return [switch_port_name(plan, obs, ref) for ref in sorted({*obs.switch_sl2vl, *obs.switch_vlarb})]


_SWITCH_FIX = (
    "check qos_swe_* (external ports) / qos_sw0_* (port 0) / qos_* in opensm.conf (re-apply the ib_sm role), "
    "qos TRUE, and restart opensm; a single port off the plan while its switch's other ports match: the "
    "switch did not take the tables (check its firmware, reset the port)"
)
SWITCH_SL2VL = Check(
    "qos.switch_sl2vl",
    "Each switch egress port's SL-to-VL table (every ingress port into it) is the plan's",
    Severity.ERROR,
    _SWITCH_FIX,
    _switch_ports_if_qos,
    object_kind="the switch port (`leaf01 port 7`)",
)
SWITCH_VLARB = Check(
    "qos.switch_vlarb",
    "Each switch egress port's VL arbitration tables are the plan's",
    Severity.ERROR,
    _SWITCH_FIX,
    _switch_ports_if_qos,
    object_kind="the switch port (`leaf01 port 7`)",
)
CHECKS = (SL2VL, VLARB, SWITCH_SL2VL, SWITCH_VLARB)


def arb_matches(planned: Sequence[tuple[int, int]], have: Sequence[tuple[int, int]]) -> bool:
    """The port's table starts with the planned entries and every entry after them has weight 0."""
    n = len(planned)
    return list(have[:n]) == list(planned) and all(weight == 0 for _vl, weight in have[n:])


def _arb(entries: Sequence[tuple[int, int]]) -> str:
    shown = [f"{vl}:{w}" for vl, w in entries if w]
    return ",".join(shown) or "all weights 0"


def switch_port_name(plan: Plan, obs: Observation, ref: PortRef) -> str:
    """``leaf01 port 7`` (the plan's name), else the switch's NodeDescription, else its GUID."""
    name = plan.switch_name(ref.node_guid)
    if name is None:
        node = obs.nodes.get(ref.node_guid)
        name = f'"{node.description}"' if node is not None else f"switch 0x{ref.node_guid:016x}"
    return f"{name} port {ref.port}"


def port_class(obs: Observation, ref: PortRef) -> tuple[str, str]:
    """(spec class, what the port is): ``switch_port0``/port 0, else ``switch_external`` and whether the
    cable goes to a host (CA) or another switch."""
    if ref.port == 0:
        return "switch_port0", "port 0, qos_sw0_*"
    for link in obs.links:
        for end, peer in ((link.a, link.b), (link.b, link.a)):
            if end == ref:
                node = obs.nodes.get(peer.node_guid)
                kind = "switch-to-switch" if node is not None and node.type == "SW" else "host-facing"
                return "switch_external", f"{kind} port, qos_swe_*"
    return "switch_external", "external port, qos_swe_*"


def _sl2vl_rows(want: Callable[[int], Sequence[int] | None], rows: Sequence[tuple[int, tuple[int, ...]]]) -> str | None:
    """What differs from the planned table (``want`` of the ingress port; None: not judged), by ingress
    port: None when every judged row is the plan's."""
    if not rows:
        return "no SL2VL rows"
    wrong: dict[tuple[int, ...], list[int]] = {}
    for in_port, vls in rows:
        planned = want(in_port)
        if planned is not None and tuple(vls) != tuple(planned):
            wrong.setdefault(tuple(vls), []).append(in_port)
    if not wrong:
        return None
    return "; ".join(
        f"from port{'s' if len(ins) > 1 else ''} {_ports(ins)}: SL0-15 -> VL {','.join(map(str, vls))}"
        for vls, ins in sorted(wrong.items(), key=lambda item: item[1])
    )


def _ports(numbers: Sequence[int]) -> str:
    """1,2,3,7 -> ``1-3,7``."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _vlarb_finding(
    check_: Check[Plan, Observation],
    name: str,
    tables: QosTables,
    high: Sequence[tuple[int, int]],
    low: Sequence[tuple[int, int]],
    suffix: str = "",
) -> Finding | None:
    wrong = [
        (label, want, have)
        for label, want, have in (("high", tables.vlarb_high, high), ("low", tables.vlarb_low, low))
        if want is not None and not arb_matches(want, have)
    ]
    if not wrong:
        return None
    expected = "; ".join(f"{label} {_arb(want)}" for label, want, _have in wrong)
    found = "; ".join(f"{label} {_arb(have)}" for label, _want, have in wrong)
    return check_.finding(name, expected + suffix, found)


def _vls(table: Sequence[int]) -> str:
    return "SL0-15 -> VL " + ",".join(map(str, table))


def _switch_sl2vl(
    plan: Plan, ref: PortRef, name: str, what: str, rows: Sequence[tuple[int, tuple[int, ...]]]
) -> Finding | None:
    """OpenSM sets every ingress row into a switch port from qos_swe_* (qos_extports_setup), then the row
    from port 0 into an enhanced port 0 from qos_sw0_* (qos_endport_setup): that one row is port 0's own."""
    swe, sw0 = plan.switch_qos.get("switch_external"), plan.switch_qos.get("switch_port0")
    external = swe.sl2vl if swe is not None else None
    own = sw0.sl2vl if sw0 is not None else None
    if ref.port != 0:
        own = external

    def want(in_port: int) -> Sequence[int] | None:
        return own if in_port == 0 else external

    wrong = _sl2vl_rows(want, rows)
    if wrong is None:
        return None
    if ref.port != 0 or own == external:
        expected = f"{_vls(external or own or ())} ({what})"
    else:
        expected = f"from port 0: {_vls(own or ())} ({what}); from the others: {_vls(external or ())} (qos_swe_*)"
    return SWITCH_SL2VL.finding(name, expected, wrong)


def _switch_check(plan: Plan, obs: Observation) -> list[Finding]:
    out: list[Finding] = []
    for ref in sorted({*obs.switch_sl2vl, *obs.switch_vlarb}):
        cls, what = port_class(obs, ref)
        name = switch_port_name(plan, obs, ref)
        rows = obs.switch_sl2vl.get(ref)
        if rows is not None and (found := _switch_sl2vl(plan, ref, name, what, rows)) is not None:
            out.append(found)
        tables = plan.switch_qos.get(cls)
        if tables is not None and ref in obs.switch_vlarb:
            high, low = obs.switch_vlarb[ref]
            arb = _vlarb_finding(SWITCH_VLARB, name, tables, high, low, f" ({what})")
            if arb is not None:
                out.append(arb)
    return out


def check(plan: Plan, obs: Observation) -> list[Finding]:
    out = _switch_check(plan, obs)
    tables = plan.qos
    if tables is None:
        return out
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
            found = _vlarb_finding(VLARB, name, tables, *obs.vlarb[guid])
            if found is not None:
                out.append(found)
    return out
