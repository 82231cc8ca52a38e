"""Cabling: every planned cable where the plan puts it, and nothing else (see :mod:`.matching`)."""

from __future__ import annotations

from collections.abc import Sequence

from ibprov.clusterspec.topology import PlannedLink
from ibprov.clusterspec.types import Endpoint
from ibprov.identity.guids import fmt_guid
from ibprov.report.model import Finding, Severity
from ibprov.verify.fabric.checks.matching import classify, end_name
from ibprov.verify.fabric.checks.objects import fabric_only, planned_cables, planned_switches
from ibprov.verify.fabric.observation import LinkState, Observation
from ibprov.verify.fabric.plan import Plan, endpoint_name
from ibprov.verify.judge import Check

__all__ = ["CHECKS", "check"]

MISWIRE = Check(
    "cabling.miswire",
    "Each cable ends at the planned port",
    Severity.ERROR,
    "move the cable from the found port to the planned one (or fix fabric.links in the spec if the plan is wrong)",
    planned_cables,
    object_kind="the cable (its CA / lower-tier end)",
)
SWAPPED = Check(
    "cabling.swapped",
    "No two cables are swapped",
    Severity.ERROR,
    "swap the two cables back at the switch",
    fabric_only,
    object_kind="both cables: `A and B`",
)
MISSING = Check(
    "cabling.missing",
    "Each planned cable is there",
    Severity.ERROR,
    "plug in (or reseat) the cable and check that the device at the other end is powered",
    planned_cables,
    object_kind="the cable (its CA / lower-tier end)",
)
UNPLANNED = Check(
    "cabling.unplanned",
    "No cable or device the plan does not have",
    Severity.ERROR,
    "remove the cable, or add it (and the device) to the spec",
    fabric_only,
    object_kind="the planned end, else the foreign one",
)
WRONG_DEVICE = Check(
    "cabling.wrong_device",
    "The planned device (by GUID) is at each planned position",
    Severity.ERROR,
    "put the planned device there; if the hardware was replaced on purpose, run `ibprov discover` "
    "to update the lock file (or fix the GUID in the spec)",
    planned_cables,
    object_kind="the planned end that sees the foreign device",
)
SWITCH_MISSING = Check(
    "cabling.switch_missing",
    "Each planned switch is on the fabric",
    Severity.ERROR,
    "power the switch on and check its management port; if it runs, reseat its cables (every planned cable "
    "to it is missing and none of its ports answers)",
    planned_switches,
    object_kind="the switch",
)
CHECKS = (MISWIRE, SWAPPED, MISSING, UNPLANNED, WRONG_DEVICE, SWITCH_MISSING)


def _with_guid(plan: Plan, end: Endpoint) -> str:
    guid = plan.device_guid(end)
    return f"{endpoint_name(end)} ({fmt_guid(guid)})" if guid is not None else endpoint_name(end)


Missing = Sequence[tuple[PlannedLink, Sequence[tuple[Endpoint, LinkState | None]]]]


def _switches_gone(plan: Plan, missing: Missing) -> list[Finding]:
    """A planned switch is gone when every planned cable to it is missing and none of its ends is on the fabric
    (the fabric shows no port of it): one finding for the switch, beside its cables' (which it explains)."""
    planned: dict[str, int] = {}
    for link in plan.links:
        for end in (link.a, link.b):
            if end.hca is None:
                planned[end.device] = planned.get(end.device, 0) + 1
    lost: dict[str, int] = {}
    for _link, states in missing:
        for end, state in states:
            if end.hca is None and state is None:
                lost[end.device] = lost.get(end.device, 0) + 1
    return [
        SWITCH_MISSING.finding(name, "on the fabric", f"not on the fabric: none of its {count} planned cables is seen")
        for name, count in sorted(planned.items())
        if lost.get(name) == count
    ]


def check(plan: Plan, obs: Observation) -> list[Finding]:
    cabling = classify(plan, obs)
    out: list[Finding] = []
    for first, second in cabling.swapped:
        a1, a2 = plan.anchor(first), plan.anchor(second)
        p1 = first.b if first.a == a1 else first.a
        p2 = second.b if second.a == a2 else second.a
        out.append(
            SWAPPED.finding(
                f"{endpoint_name(a1)} and {endpoint_name(a2)}",
                f"{endpoint_name(p1)} and {endpoint_name(p2)}",
                f"{endpoint_name(p2)} and {endpoint_name(p1)}",
            )
        )
    for end, planned, found in cabling.miswired:
        out.append(MISWIRE.finding(endpoint_name(end), endpoint_name(planned), end_name(found)))
    for end, planned, foreign in cabling.wrong_device:
        out.append(WRONG_DEVICE.finding(endpoint_name(end), _with_guid(plan, planned), str(foreign)))
    for a, b in cabling.unplanned:
        out.append(UNPLANNED.finding(end_name(a), "no cable", f"a cable to {end_name(b)}"))
    out += _switches_gone(plan, cabling.missing)
    for link, states in cabling.missing:
        anchor = plan.anchor(link)
        other = link.b if link.a == anchor else link.a
        seen = "; ".join(
            f"{endpoint_name(e)} {s}" if s is not None else f"{endpoint_name(e)} not on the fabric" for e, s in states
        )
        out.append(MISSING.finding(endpoint_name(anchor), endpoint_name(other), f"no link ({seen})"))
    return out
