"""Subnet managers: exactly one MASTER, the one the plan wants; the planned standbys; no other SM.

Which master the plan wants is OpenSM's own election over the planned instances that are running: the
highest planned priority, ties to the lower port GUID. So the plan's top instance while it runs; after it
stopped (failover), the highest-priority planned instance still running -- that passes sm.master, and
the stopped instance is a *warning* under sm.standby_missing (the fabric works as the plan allows, with
less redundancy). A planned standby that is not running while its master is the plan's choice is an
error; an SM on a port the plan does not name is a security finding, whatever its state.
"""

from __future__ import annotations

from ibprov.identity.guids import fmt_guid
from ibprov.report.model import Finding, Severity
from ibprov.verify.fabric.checks.objects import fabric_only
from ibprov.verify.fabric.observation import Observation, ObservedSm
from ibprov.verify.fabric.plan import Plan, PlannedSm, endpoint_name, port_name
from ibprov.verify.judge import Check

__all__ = ["CHECKS", "check", "planned_instance", "sm_name"]


def _instances(plan: Plan, _obs: Observation) -> list[str]:
    return [endpoint_name(i.endpoint) for i in plan.sms]


MASTER = Check(
    "sm.master",
    "Exactly one MASTER SM: the plan's highest-priority SM that is running",
    Severity.CRITICAL,
    "start the planned master (systemctl start opensm) and stop every other MASTER; check sm_priority "
    "in each opensm.conf",
    fabric_only,
    object_kind="`fabric`",
)
STANDBY = Check(
    "sm.standby_missing",
    "Every planned standby SM is running in STANDBY",
    Severity.ERROR,
    "start opensm on this node (the ib_sm role, or systemctl start opensm)",
    _instances,
    object_kind="the planned SM port",
    severity_note="warning after failover",
)
ROGUE = Check(
    "sm.rogue",
    "No subnet manager the plan does not name",
    Severity.SECURITY,
    "stop and disable opensm on this node (or add it to subnet_manager.instances if it belongs there); "
    "an sm_key does not keep it out (OpenSM may ignore an SM whose key is not its own and make itself a "
    "second MASTER, rewriting PKey tables): stop it first",
    fabric_only,
    object_kind="the SM's port",
)
PRIORITY = Check(
    "sm.priority",
    "Each planned SM runs with its planned priority",
    Severity.ERROR,
    "set sm_priority in this node's opensm.conf (re-apply the ib_sm role) and restart opensm",
    _instances,
    object_kind="the planned SM port",
)
CHECKS = (MASTER, STANDBY, ROGUE, PRIORITY)


def planned_instance(plan: Plan, sm: ObservedSm) -> PlannedSm | None:
    return next((i for i in plan.sms if i.port_guid is not None and i.port_guid == sm.port_guid), None)


def sm_name(plan: Plan, obs: Observation, sm: ObservedSm) -> str:
    inst = planned_instance(plan, sm)
    return endpoint_name(inst.endpoint) if inst is not None else port_name(plan, obs.nodes, sm.port)


def _rank(inst: PlannedSm) -> tuple[int, int]:
    return (-inst.priority, inst.port_guid if inst.port_guid is not None else 2**64)


def _describe(plan: Plan, obs: Observation, sm: ObservedSm) -> str:
    return f"{sm_name(plan, obs, sm)} {sm.state} (priority {sm.priority})"


def _master(plan: Plan, obs: Observation, running: dict[PlannedSm, ObservedSm]) -> list[Finding]:
    masters = [s for s in obs.sms if s.state == "MASTER"]
    choice = min(running, key=_rank) if running else min(plan.sms, key=_rank)
    expected = f"{endpoint_name(choice.endpoint)} MASTER (priority {choice.priority})"
    if not masters:
        seen = ", ".join(_describe(plan, obs, s) for s in obs.sms) or "no SM at all"
        return [MASTER.finding("fabric", expected, f"no MASTER ({seen})")]
    if len(masters) > 1:
        found = " and ".join(_describe(plan, obs, s) for s in masters)
        return [MASTER.finding("fabric", expected, f"{len(masters)} MASTERs: {found}")]
    master = masters[0]
    inst = planned_instance(plan, master)
    if inst is None:
        return [MASTER.finding("fabric", expected, f"{_describe(plan, obs, master)}, not a planned SM")]
    if inst != choice:
        state = running[choice].state
        return [
            MASTER.finding("fabric", expected, f"{_describe(plan, obs, master)} while the planned master is {state}")
        ]
    return []


def _standbys(plan: Plan, obs: Observation, running: dict[PlannedSm, ObservedSm]) -> list[Finding]:
    out = []
    master = next((i for i, s in running.items() if s.state == "MASTER"), None)
    for inst in plan.sms:
        if inst == master:
            continue
        sm = running.get(inst)
        name = endpoint_name(inst.endpoint)
        expected = f"STANDBY (priority {inst.priority})"
        if sm is not None and sm.state == "STANDBY":
            continue
        if sm is not None:
            out.append(STANDBY.finding(name, expected, f"{sm.state} (priority {sm.priority})"))
        elif master is not None and _rank(inst) < _rank(master):
            found = f"not running; {endpoint_name(master.endpoint)} took over as MASTER (failover the plan allows)"
            fix = "find out why opensm stopped here and start it again; it takes the MASTER role back"
            out.append(STANDBY.finding(name, expected, found, severity=Severity.WARNING, fix=fix))
        else:
            out.append(STANDBY.finding(name, expected, "no SM running on this port"))
    return out


def _beside_backend(plan: Plan) -> str | None:
    """The fix for an SM beside a switch or UFM SM: a double SM (None: ROGUE's own fix)."""
    sm = plan.loaded.spec.subnet_manager
    if sm.backend == "switch" and sm.switch is not None:
        owner = f"the embedded SM of switch {sm.switch.name} (subnet_manager.backend: switch)"
    elif sm.backend == "ufm":
        owner = "UFM's SM on its server ports (subnet_manager.backend: ufm)"
    else:
        return None
    return (
        f"a second SM beside {owner}: the two elect one master and the loser's partitions and settings go "
        "unused, or they fight over the PKey tables; stop and disable opensm here (systemctl disable --now opensm)"
    )


def check(plan: Plan, obs: Observation) -> list[Finding]:
    running: dict[PlannedSm, ObservedSm] = {}
    out: list[Finding] = []
    for sm in obs.sms:
        inst = planned_instance(plan, sm)
        if inst is None:
            found = f"{sm.state} SM with priority {sm.priority} (port GUID {fmt_guid(sm.port_guid)}, lid {sm.lid})"
            out.append(ROGUE.finding(sm_name(plan, obs, sm), "no subnet manager", found, fix=_beside_backend(plan)))
        else:
            running[inst] = sm
            if sm.priority != inst.priority:
                out.append(
                    PRIORITY.finding(
                        endpoint_name(inst.endpoint), f"priority {inst.priority}", f"priority {sm.priority}"
                    )
                )
    out += _master(plan, obs, running)
    out += _standbys(plan, obs, running)
    return out
