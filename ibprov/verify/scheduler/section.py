"""``verify --scheduler``: Slurm's view against the plan — every planned node known to Slurm and under its
planned leaf, the switches of the topology file as planned, the planned plugin, the nodes Slurm knows that
the spec does not, and the nodes out of service.

Collection (:mod:`.collect`) is one Ansible shell call on the controller; parsing
(:mod:`ibprov.probes.slurm`) and the checks (:mod:`.checks`) are pure. Drains and resumes are not part of
the section: they follow a whole run's findings (:mod:`.drain`).
"""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.errors import IbprovError
from ibprov.probes.slurm import SlurmView
from ibprov.report.model import SectionReport
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.scheduler.checks import FAMILIES
from ibprov.verify.scheduler.collect import AnsibleSlurm, Slurm, controller_inventory
from ibprov.verify.scheduler.facts import SCHEMA, SchedulerFacts
from ibprov.verify.scheduler.plan import SchedulerPlan, build_scheduler_plan
from ibprov.verify.skeleton import Skeleton

__all__ = ["SCHEDULER", "SECTION", "TITLE", "check_scheduler", "slurm_of", "verify_scheduler"]

TITLE = "Scheduler"


def _facts(plan: SchedulerPlan, view: SlurmView) -> SchedulerFacts:
    states = {name: node.state for name, node in view.nodes.items()}
    return SchedulerFacts.of(plan.controller, view.version, view.plugin, list(plan.nodes), states)


def _notes(_plan: SchedulerPlan, view: SlurmView) -> list[str]:
    return list(view.notes)


SCHEDULER: Skeleton[SchedulerPlan, SlurmView] = Skeleton("scheduler", TITLE, FAMILIES, SCHEMA, _facts, _notes)
check_scheduler = SCHEDULER.report  # the section report of one view against the plan (no I/O)


def verify_scheduler(loaded: LoadedSpec, slurm: Slurm) -> SectionReport:
    def observe() -> tuple[SchedulerPlan, SlurmView]:
        return build_scheduler_plan(loaded), slurm.view()

    return SCHEDULER.run(observe, collected_from=slurm.where)


def slurm_of(loaded: LoadedSpec, options: VerifyOptions) -> AnsibleSlurm:
    """Slurm on the spec's controller, reached as every host of this run is: the target's inventory, else
    ``--inventory DIR``, else the spec's addresses."""
    scheduler = loaded.spec.scheduler
    if scheduler is None:
        raise IbprovError(
            f"{loaded.path or 'the spec'} has no scheduler section: add `scheduler: {{controller: HOST}}` "
            "(docs/scheduler.md)"
        )
    inventory: Any
    if options.target is not None:
        if scheduler.controller not in options.target.hosts:
            raise IbprovError(
                f"the target has no host for the controller {scheduler.controller} (the twin runs Slurm only on "
                "a node with a container)"
            )
        inventory = str(options.target.inventory)
    elif options.inventory is not None:
        inventory = str(options.inventory)
    else:
        inventory = controller_inventory(loaded)
    return AnsibleSlurm(scheduler.controller, inventory)


def _run(loaded: LoadedSpec, options: VerifyOptions, _started: Any) -> SectionReport:
    return verify_scheduler(loaded, slurm_of(loaded, options))


SECTION = SCHEDULER.section(_run)
