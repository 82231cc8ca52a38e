"""Partitions: every CA port's PKey table is exactly the plan's (ibprov.identity.partitions).

Per port, by partition key (``PKey.base``): a planned partition the port lacks is ``pkey.missing``; a
partition held with the other membership is ``pkey.membership`` (a security finding when the port is a
full member where the plan says limited: a full member reaches every member); a partition the port must
not hold at all is ``pkey.extra``, a security finding (the port can reach that partition's members).
"""

from __future__ import annotations

from collections.abc import Iterable

from ibprov.pkey import PKey
from ibprov.report.model import Finding, Severity
from ibprov.verify.fabric.checks.objects import planned_ca_ports
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.plan import Plan, endpoint_name
from ibprov.verify.judge import Check

__all__ = ["CHECKS", "check"]

_FIX = "check the partition's members in the spec, re-render, re-apply the ib_sm role and let the SM sweep "
MISSING = Check(
    "pkey.missing",
    "Each CA port holds every partition it is planned in",
    Severity.ERROR,
    _FIX + "(kill -HUP the master opensm); look for 'PARSE ERROR' in opensm.log",
    planned_ca_ports,
    object_kind="the CA port",
)
MEMBERSHIP = Check(
    "pkey.membership",
    "Each CA port is a full or limited member as planned",
    Severity.ERROR,
    _FIX + "(kill -HUP the master opensm)",
    planned_ca_ports,
    object_kind="the CA port",
    severity_note="security when full where limited is planned",
)
EXTRA = Check(
    "pkey.extra",
    "No CA port holds a partition it is not planned in",
    Severity.SECURITY,
    "remove the port from that partition in partitions.conf (or find who changed it), then kill -HUP the "
    "master opensm; check that only planned SMs run (sm.rogue)",
    planned_ca_ports,
    object_kind="the CA port",
)
CHECKS = (MISSING, MEMBERSHIP, EXTRA)


def _describe(plan: Plan, keys: Iterable[PKey]) -> str:
    parts = []
    for key in sorted(keys, key=lambda k: (k.base, k.full)):
        name = plan.partition_names.get(key.base, "unplanned")
        parts.append(f"{key.hex} ({name}, {key.membership})")
    return ", ".join(parts) or "none"


def _by_key(keys: Iterable[PKey]) -> dict[int, set[PKey]]:
    out: dict[int, set[PKey]] = {}
    for key in keys:
        out.setdefault(key.base, set()).add(key)
    return out


def check(plan: Plan, obs: Observation) -> list[Finding]:
    out: list[Finding] = []
    for end, guid in plan.port_guids.items():
        if guid is None or guid not in obs.pkeys or guid not in plan.pkeys:
            continue  # not on the fabric, or its table could not be read: other checks say so
        want, have = _by_key(plan.pkeys[guid]), _by_key(obs.pkeys[guid])
        name = endpoint_name(end)
        table = _describe(plan, obs.pkeys[guid])
        missing = [k for p, ks in want.items() if p not in have for k in ks]
        if missing:
            out.append(MISSING.finding(name, _describe(plan, missing), f"not in the table ({table})"))
        wrong = [p for p in want.keys() & have.keys() if want[p] != have[p]]
        if wrong:
            planned = [k for p in wrong for k in want[p]]
            found = [k for p in wrong for k in have[p]]
            stronger = any(k.full for k in found) and not all(k.full for k in planned)
            out.append(
                MEMBERSHIP.finding(
                    name,
                    _describe(plan, planned),
                    _describe(plan, found),
                    severity=Severity.SECURITY if stronger else None,
                )
            )
        extra = [k for p, ks in have.items() if p not in want for k in ks]
        if extra:
            out.append(
                EXTRA.finding(name, f"not in {_describe(plan, extra)}", f"{_describe(plan, extra)} in the table")
            )
    return out
