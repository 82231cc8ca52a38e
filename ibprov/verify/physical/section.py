"""``verify --physical``: the physical layer against the plan -- bit error rates (effective and raw), link
error rates, mstlink's troubleshooting opcode, cables and optics (medium, length, part, vendor, temperature),
the HCAs' PCIe links, GPU locality, NUMA placement and firmware consistency; and the cable report.

Collection (:mod:`.collect`): the physical probe on every host through Ansible (``mstlink`` from Debian's
mstflint, or NVIDIA's ``mlxlink``, sysfs, ``nvidia-smi``), the switch ports in-band from the ``--via`` host.
The checks (:mod:`.checks`) are pure. On the twin nothing physical exists: every check is skipped with the
twin's reason and nothing is collected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.physical import BER_SOURCES
from ibprov.probes.runner import Runner
from ibprov.report.model import SectionReport
from ibprov.run.inventory import nodes_inventory
from ibprov.twinnet.limits import TwinLimits, read_limits
from ibprov.verify.physical.checks import FAMILIES
from ibprov.verify.physical.collect import collect_hosts, collect_switch_ports
from ibprov.verify.physical.facts import SCHEMA, PhysicalFacts, physical_facts
from ibprov.verify.physical.observation import PhysicalObservation
from ibprov.verify.physical.plan import PhysicalPlan, build_physical_plan
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.skeleton import Skeleton

__all__ = ["PHYSICAL", "SECTION", "TITLE", "check_physical", "verify_physical"]

TITLE = "Physical layer"
_SHOWN = 3


def _facts(plan: PhysicalPlan, obs: PhysicalObservation) -> PhysicalFacts:
    return physical_facts(plan, obs)


def _notes(plan: PhysicalPlan, obs: PhysicalObservation) -> Iterable[str]:
    if plan.twin is not None:
        return [f"skipped: {plan.twin}"]
    notes = [f"limits: {s}" for s in BER_SOURCES]
    for host, seen in sorted(obs.hosts.items()):
        lines = list(seen.notes) + [n for d in seen.devices.values() for r in d.links.values() for n in r.notes]
        if lines:
            more = f" (and {len(lines) - _SHOWN} more)" if len(lines) > _SHOWN else ""
            notes.append(
                f"{host}: the probe printed {len(lines)} line(s) it read past: {'; '.join(lines[:_SHOWN])}{more}"
            )
    if obs.switches_not_read and plan.switch_ports:
        notes.append(f"switch ports not read: {obs.switches_not_read}")
    return notes


PHYSICAL: Skeleton[PhysicalPlan, PhysicalObservation] = Skeleton(
    "physical", TITLE, FAMILIES, SCHEMA, facts=_facts, notes=_notes
)
check_physical = PHYSICAL.report  # the section report of one observation against the plan (no I/O)


def verify_physical(
    loaded: LoadedSpec,
    *,
    inventory: Mapping[str, Any] | str,
    runner: Runner | None,
    twin: TwinLimits | None = None,
) -> SectionReport:
    """Collect from every planned host (through ``inventory``) and every planned switch port (through
    ``runner``; None: not read) and judge them; ``twin``: the fabric is the twin, nothing is collected."""

    def observe() -> tuple[PhysicalPlan, PhysicalObservation]:
        plan = build_physical_plan(loaded, twin=twin)
        if plan.twin is not None:
            return plan, PhysicalObservation()
        seen, unreachable = collect_hosts(inventory, plan.hosts)
        switches = (
            collect_switch_ports(plan, runner)
            if runner is not None
            else PhysicalObservation(switches_not_read="no host to read the switches from")
        )
        obs = PhysicalObservation(
            hosts=seen,
            unreachable=unreachable,
            switch_ports=switches.switch_ports,
            switches_not_read=switches.switches_not_read,
            switch_firmware=switches.switch_firmware,
        )
        return plan, obs

    where = (
        "the twin (nothing physical to read)" if twin is not None else "each host (ansible) and the switches in-band"
    )
    return PHYSICAL.run(observe, collected_from=where)


def _run(loaded: LoadedSpec, options: VerifyOptions, _started: Any) -> SectionReport:
    """As the CLI runs it: on the twin (a target or --twin-limits) skipped with its reason; else the hosts
    through the target's or --inventory's inventory (the spec's addresses by default) and the switches from
    --via (or this host)."""
    twin: TwinLimits | None = None
    if options.target is not None:
        twin = options.target.limits
    elif options.twin_limits is not None:
        twin = read_limits(options.twin_limits)
    if twin is not None:
        return verify_physical(loaded, inventory={}, runner=None, twin=twin)
    # lazy: the diag runner (and its Ansible plumbing) only when switch ports are read
    from ibprov.verify.fabric.commands import diag_runner

    source: str | dict[str, Any] = str(options.inventory) if options.inventory else nodes_inventory(loaded)
    runner, _limits = diag_runner(loaded, options)
    try:
        return verify_physical(loaded, inventory=source, runner=runner)
    finally:
        runner.close()


SECTION = PHYSICAL.section(_run)
