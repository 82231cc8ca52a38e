"""``verify --fabric``: observe the fabric with infiniband-diags, compare it with the plan, report.

The entry point of the fabric section (:data:`SECTION`): collect (:mod:`.collect`, through a
:class:`~ibprov.probes.runner.Runner`) -> :class:`~.observation.Observation` -> checks (:mod:`.checks`,
against :mod:`.plan`) -> :class:`~ibprov.report.model.SectionReport` with :class:`~.facts.FabricFacts`.
"""

from __future__ import annotations

import time
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.errors import CollectError
from ibprov.identity.guids import GuidBook
from ibprov.probes.runner import Runner
from ibprov.report.model import SectionReport, utc_now_text
from ibprov.twinnet.limits import TwinLimits
from ibprov.verify.checking import run_checks
from ibprov.verify.fabric.checks import FAMILIES
from ibprov.verify.fabric.collect import Clock, collect
from ibprov.verify.fabric.commands import diag_runner
from ibprov.verify.fabric.facts import SCHEMA, fabric_facts
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.plan import Plan, build_plan
from ibprov.verify.sections import Section, VerifyOptions

__all__ = ["SECTION", "TITLE", "check_observation", "verify_fabric"]

TITLE = "Fabric"


def verify_fabric(
    loaded: LoadedSpec,
    runner: Runner,
    *,
    soak: float | None = None,
    synthetic_guids: bool = False,
    twin: TwinLimits | None = None,
    clock: Clock | None = None,
) -> SectionReport:
    """Collect through ``runner`` and check against ``loaded``. ``soak`` None takes the spec's
    acceptance.soak_seconds. ``synthetic_guids``: the fabric is the twin (its stand-in GUIDs); ``twin``:
    what the twin runs instead of the plan (its links are judged at those rates, and the report says so)."""
    started = utc_now_text()
    t0 = time.monotonic()
    seconds = float(loaded.spec.acceptance.soak_seconds if soak is None else soak)
    obs = collect(runner, soak=seconds, qos=loaded.spec.qos.enabled, clock=clock)
    book = GuidBook.for_spec(loaded, allow_synthetic=synthetic_guids, twin=synthetic_guids)
    plan = build_plan(loaded, book, obs.nodes.values(), twin=twin)
    return check_observation(
        plan,
        obs,
        started=started,
        duration=time.monotonic() - t0,
        collected_from=runner.where,
    )


def check_observation(
    plan: Plan, obs: Observation, *, started: str = "", duration: float = 0.0, collected_from: str = ""
) -> SectionReport:
    """The section report of one observation against the plan (no I/O)."""
    notes = list(plan.notes)
    if plan.twin is not None:
        notes += plan.twin.notes()
    if plan.book.synthetic:
        notes.append(f"synthetic GUIDs stand in for {len(plan.book.synthetic)} devices (twin)")
    if obs.from_port:
        notes.append(f"diags ran from {obs.from_port}")
    read, total = obs.switch_qos_ports
    if read < total:
        notes.append(
            f"switch QoS tables read on {read} of {total} switch egress ports (a sample: per switch port 0, "
            "one host-facing and one switch-to-switch port; OpenSM gives every external port the same tables)"
        )
    return SectionReport(
        name="fabric",
        title=TITLE,
        collected_from=collected_from,
        started=started,
        duration_seconds=duration,
        checks=run_checks(FAMILIES, plan, obs),
        facts=fabric_facts(plan, obs),
        notes=tuple(notes),
    )


def _run(loaded: LoadedSpec, options: VerifyOptions, started: Any) -> SectionReport:
    """The section as the CLI runs it: on this host (the runner prestart made, which has started the
    discovery), on ``--via HOST`` through Ansible, or on the twin rack (:func:`diag_runner`)."""
    runner, twin = diag_runner(loaded, options, started)
    try:
        return verify_fabric(
            loaded, runner, soak=options.soak, synthetic_guids=options.synthetic_guids or twin is not None, twin=twin
        )
    except CollectError as exc:
        if options.target != "twin":
            raise
        from ibprov.twin.rack import ibsim_exit, load_state

        exited = ibsim_exit(load_state(loaded))  # a dead simulator, not the diags, is then the problem
        raise CollectError(f"{exc}; {exited}" if exited else str(exc)) from None
    finally:
        runner.close()


SECTION = Section(name="fabric", title=TITLE, families=FAMILIES, facts_schema=SCHEMA, run=_run)
