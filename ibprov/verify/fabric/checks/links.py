"""Links: every planned cable is up (Active/LinkUp at both ends) at the planned width and speed.

Width and speed are compared with the plan, never with iblinkinfo's "Could be ..." hint (ibsim always
prints "Could be 12X", and real hardware may support more than the cables do). On the twin, a cable the
plan runs at a rate the twin cannot (:mod:`ibprov.twinnet.limits`) is judged at the twin's rate, so a
degraded link is still found; the finding names both rates, and a pass is a caveat, never a verified
planned rate.
"""

from __future__ import annotations

from collections.abc import Sequence

from ibprov.clusterspec.topology import PlannedLink
from ibprov.clusterspec.types import Endpoint
from ibprov.report.model import Finding, Severity
from ibprov.verify.fabric.checks.matching import classify, planned_ref
from ibprov.verify.fabric.checks.objects import planned_cables
from ibprov.verify.fabric.observation import LinkState, Observation, ObservedLink
from ibprov.verify.fabric.plan import Plan, endpoint_name
from ibprov.verify.judge import Check

__all__ = ["CHECKS", "check"]

DOWN = Check(
    "link.down",
    "Each planned link is Active/LinkUp",
    Severity.ERROR,
    "enable the port (ibportstate <lid> <port> enable) and check that a subnet manager is running; "
    "a link stuck in Initialize/Armed has not been brought up by an SM",
    planned_cables,
    object_kind="the cable",
)
WIDTH = Check(
    "link.width",
    "Each planned link runs at the planned width",
    Severity.ERROR,
    "reseat or replace the cable (a lane is down); check both ports' LinkWidthEnabled",
    planned_cables,
    object_kind="the cable",
    caveats=lambda plan, _obs: _stand_in_caveats(plan, "width"),
)
SPEED = Check(
    "link.speed",
    "Each planned link runs at the planned speed",
    Severity.ERROR,
    "check cable and transceiver ratings and both ports' LinkSpeed(Ext)Enabled / opensm force_link_speed*",
    planned_cables,
    object_kind="the cable",
    caveats=lambda plan, _obs: _stand_in_caveats(plan, "speed"),
)
CHECKS = (DOWN, WIDTH, SPEED)

_ACTIVE = "Active/LinkUp"


def _rate(width: str | None, speed: str | None) -> str:
    return f"{width or '??'} {speed or '???'}"


def _states(states: Sequence[tuple[Endpoint, LinkState | None]]) -> str:
    shown = [f"{endpoint_name(e)} {s}" for e, s in states if s is not None and not s.active]
    return "; ".join(shown) or "down"


def check(plan: Plan, obs: Observation) -> list[Finding]:
    cabling = classify(plan, obs)
    index = obs.guid_index()
    out: list[Finding] = []
    for link, states in cabling.down:
        out.append(DOWN.finding(endpoint_name(plan.anchor(link)), _ACTIVE, _states(states)))
    for link, seen in cabling.matched:
        name = endpoint_name(plan.anchor(link))
        ends = [(end, obs.states.get(ref)) for end in (link.a, link.b) if (ref := planned_ref(plan, obs, end, index))]
        if any(s is not None and not s.active for _e, s in ends):
            out.append(DOWN.finding(name, _ACTIVE, _states(ends)))
            continue
        out += _rate_findings(plan, name, link, seen)
    return out


def _stand_in_caveats(plan: Plan, what: str) -> dict[str, str]:
    """The cables whose ``what`` ("width" or "speed") the twin runs other than planned."""
    out = {}
    for link in plan.links:
        stand_in = plan.stand_in(link)
        if stand_in is None:
            continue
        if (what == "width" and stand_in.twin_width != stand_in.planned_width) or (
            what == "speed" and stand_in.twin_speed != stand_in.planned_speed
        ):
            out[endpoint_name(plan.anchor(link))] = (
                f"planned {stand_in.planned}, which the twin cannot run: judged at {stand_in.twin}"
            )
    return out


def _rate_findings(plan: Plan, name: str, link: PlannedLink, seen: ObservedLink) -> list[Finding]:
    stand_in = plan.stand_in(link)
    width, speed = (stand_in.twin_width, stand_in.twin_speed) if stand_in else (link.width, link.speed)
    planned = _rate(str(link.width), str(link.speed))
    if stand_in is not None:
        planned += f" (the twin runs {stand_in.twin})"
    found = _rate(seen.width, seen.speed)
    out = []
    if (seen.width or "").lower() != str(width).lower():
        out.append(WIDTH.finding(name, planned, found))
    if (seen.speed or "").upper() != str(speed).upper():
        out.append(SPEED.finding(name, planned, found))
    return out
