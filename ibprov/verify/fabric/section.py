"""``verify --fabric``: observe the fabric with infiniband-diags, compare it with the plan, report.

The entry point of the fabric section (:data:`SECTION`): collect (:mod:`.collect`, through a
:class:`~ibprov.probes.runner.Runner`) -> :class:`~.observation.Observation` -> checks (:mod:`.checks`,
against :mod:`.plan`) -> :class:`~ibprov.report.model.SectionReport` with :class:`~.facts.FabricFacts`.
"""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.errors import CollectError
from ibprov.identity.guids import GuidBook
from ibprov.probes.runner import Runner
from ibprov.report.model import SectionReport
from ibprov.twinnet.limits import TwinLimits
from ibprov.verify.fabric.checks import FAMILIES
from ibprov.verify.fabric.collect import Clock, collect
from ibprov.verify.fabric.commands import diag_runner
from ibprov.verify.fabric.facts import SCHEMA, fabric_facts
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.plan import Plan, build_plan
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.skeleton import Skeleton

__all__ = ["FABRIC", "SECTION", "TITLE", "check_observation", "diag_notes", "verify_fabric"]

TITLE = "Fabric"


def fabric_notes(plan: Plan, obs: Observation) -> list[str]:
    """What the report notes: the plan's notes, the twin's, where the diags ran, how many QoS tables were read,
    and the lines the diags printed besides their output."""
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
    return notes + diag_notes(obs)


_SHOWN_LINES = 3  # lines of a diag's notes quoted in the report


def diag_notes(obs: Observation) -> list[str]:
    """One note per diag whose output had lines that are not the tool's (ibwarn, libibumad, kernel or syslog
    lines merged from stderr): they were read past; the first few are quoted."""
    notes = []
    for tool, lines in obs.diag_notes.items():
        more = f" (and {len(lines) - _SHOWN_LINES} more)" if len(lines) > _SHOWN_LINES else ""
        notes.append(
            f"{tool} printed {len(lines)} line{'s' * (len(lines) != 1)} besides its output (read past): "
            f"{'; '.join(lines[:_SHOWN_LINES])}{more}"
        )
    return notes


FABRIC: Skeleton[Plan, Observation] = Skeleton(
    "fabric", TITLE, FAMILIES, SCHEMA, facts=fabric_facts, notes=fabric_notes
)
check_observation = FABRIC.report  # the section report of one observation against the plan (no I/O)


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

    def observe() -> tuple[Plan, Observation]:  # the plan fills in the GUIDs it lacks from the fabric
        seconds = float(loaded.spec.acceptance.soak_seconds if soak is None else soak)
        obs = collect(runner, soak=seconds, qos=loaded.spec.qos.enabled, clock=clock)
        book = GuidBook.for_spec(loaded, allow_synthetic=synthetic_guids, twin=synthetic_guids)
        return build_plan(loaded, book, obs.nodes.values(), twin=twin), obs

    return FABRIC.run(observe, collected_from=runner.where)


def _run(loaded: LoadedSpec, options: VerifyOptions, started: Any) -> SectionReport:
    """The section as the CLI runs it: on this host (the runner prestart made, which has started the
    discovery), on ``--via HOST`` through Ansible, or on the target (:func:`diag_runner`)."""
    runner, twin = diag_runner(loaded, options, started)
    try:
        return verify_fabric(
            loaded, runner, soak=options.soak, synthetic_guids=options.synthetic_guids or twin is not None, twin=twin
        )
    except CollectError as exc:
        if options.target is None:
            raise
        exited = options.target.exited()  # a dead simulator, not the diags, is then the problem
        raise CollectError(f"{exc}; {exited}" if exited else str(exc)) from None
    finally:
        runner.close()


SECTION = FABRIC.section(_run)
