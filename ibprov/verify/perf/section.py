"""``verify --perf``: RDMA latency and bandwidth acceptance with perftest between node pairs, and a TCP probe.

The entry point of the perf section (:data:`SECTION`): the schedule (:mod:`.schedule`; route-aware from
the LFTs the SM programmed when the fabric can be read from here, else from the plan) -> the plan
(:mod:`.plan`) -> runs over SSH (:mod:`.collect`, :mod:`.remote`) -> checks (:mod:`.checks`) ->
:class:`~ibprov.report.model.SectionReport` with :class:`~.facts.PerfFacts`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.errors import CollectError
from ibprov.identity.guids import GuidBook, planned_names
from ibprov.probes import ibnetdiscover, lfts
from ibprov.probes.runner import Runner
from ibprov.report.model import SectionReport
from ibprov.routing.model import from_discovery
from ibprov.verify.fabric.commands import diag_runner
from ibprov.verify.perf.baseline import Baseline, BaselineEntry, baseline_text, load_baseline
from ibprov.verify.perf.checks import FAMILIES, run_object, tcp_object
from ibprov.verify.perf.collect import collect
from ibprov.verify.perf.facts import SCHEMA, PerfFacts, perf_facts
from ibprov.verify.perf.observation import PerfObservation
from ibprov.verify.perf.plan import PerfPlan, build_perf_plan, schedule_for
from ibprov.verify.perf.remote import Remote, SshRemote, ssh_targets
from ibprov.verify.perf.routes import Routing, ca_endpoints, lft_routing
from ibprov.verify.perf.schedule import Schedule, ScheduleKind, route_schedule
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.skeleton import Skeleton

__all__ = [
    "PERF",
    "SECTION",
    "TITLE",
    "baseline_results",
    "check_perf",
    "dry_run_lines",
    "live_schedule",
    "verify_perf",
]

TITLE = "Performance (RDMA perftest, TCP probe)"
OVER_SSH = "each node (SSH)"  # where perf collects


def perf_notes(plan: PerfPlan, obs: PerfObservation) -> list[str]:
    """What the report notes: the twin's missing data path, why runs were skipped, the lines a client printed
    besides its tool's report, an interruption."""
    notes = []
    if plan.twin:
        notes.append(
            "the twin has no RDMA data path: perftest is skipped on nodes without an RDMA device; the TCP "
            "probe runs over the twin's container network, not IPoIB"
        )
    reasons = Counter(r.reason for r in obs.runs if r.status == "skipped")
    notes += [f"skipped: {reason} ({n} perftest run{'s' * (n != 1)})" for reason, n in sorted(reasons.items())]
    notes += output_notes(obs)
    if obs.interrupted:
        notes.append("interrupted (Ctrl-C): the runs not done are skipped; every server started was stopped")
    return notes


_SHOWN_LINES = 3  # lines of a run's notes quoted in the report


def output_notes(obs: PerfObservation) -> list[str]:
    """One note per perftest or iperf3 run whose client printed lines that are not the tool's report (warnings,
    log lines merged from stderr): they were read past; the first few are quoted."""
    noted = [(run_object(r.pair, r.test), r.notes) for r in obs.runs]
    noted += [(tcp_object(t.pair), t.notes) for t in obs.tcp]
    notes = []
    for what, lines in noted:
        if not lines:
            continue
        more = f" (and {len(lines) - _SHOWN_LINES} more)" if len(lines) > _SHOWN_LINES else ""
        notes.append(
            f"{what}: the client printed {len(lines)} line{'s' * (len(lines) != 1)} besides the report (read past): "
            f"{'; '.join(lines[:_SHOWN_LINES])}{more}"
        )
    return notes


PERF: Skeleton[PerfPlan, PerfObservation] = Skeleton(
    "perf", TITLE, FAMILIES, SCHEMA, facts=perf_facts, notes=perf_notes
)


def verify_perf(
    loaded: LoadedSpec, remote: Remote, plan: PerfPlan, *, routes: str = "", notes: list[str] | None = None
) -> SectionReport:
    """Run ``plan`` through ``remote`` and judge it."""
    return PERF.run(lambda: (plan, collect(plan, remote, routes=routes)), collected_from=OVER_SSH, notes=notes or [])


def check_perf(
    plan: PerfPlan,
    obs: PerfObservation,
    *,
    started: str = "",
    duration: float = 0.0,
    collected_from: str = OVER_SSH,
    notes: list[str] | tuple[str, ...] = (),
) -> SectionReport:
    """The section report of one observation against the plan (no I/O)."""
    return PERF.report(plan, obs, started=started, duration=duration, collected_from=collected_from, notes=notes)


def live_schedule(loaded: LoadedSpec, runner: Runner, *, twin: bool = False) -> tuple[Schedule, Routing, str]:
    """The route-aware schedule from the LFTs the SM programmed (``ibnetdiscover`` and ``dump_lfts -n``
    through ``runner``), read into the routing model with the plan's names for the switches and host ports
    whose GUIDs it knows (``twin``: the twin's stand-in GUIDs) and its LMC; raises ValueError with why when
    they cannot be read."""
    topo, dump = runner.run_batch([ibnetdiscover.argv(), lfts.argv()], parallel=True)
    for result in (topo, dump):
        if result.returncode != 0:
            tail = (result.stderr or result.stdout).strip().splitlines()
            raise ValueError(f"{result.argv[0]} exited {result.returncode}" + (f": {tail[-1]}" if tail else ""))
    fabric = ibnetdiscover.parse(topo.stdout)
    switch_names, ca_names = planned_names(loaded, GuidBook.for_spec(loaded, allow_synthetic=twin, twin=twin))
    model = from_discovery(
        fabric,
        lfts.parse(dump.stdout),
        switch_names=switch_names,
        ca_names=ca_names,
        lmc=loaded.spec.subnet_manager.lmc,
    )
    routing = lft_routing(model, ca_endpoints(fabric, ca_names))
    return route_schedule(routing), routing, routing.source


def dry_run_lines(
    loaded: LoadedSpec, kind: ScheduleKind | None = None, options: VerifyOptions | None = None
) -> list[str]:
    """``verify --perf --dry-run``: the schedule, and what each pair would run. Route-aware with ``--target
    twin`` or ``--via HOST``: from the LFTs the SM programmed, read where the fabric diags run (as the run
    would; the plan's routes when they cannot be read, with why); else from the plan."""
    kind = kind or loaded.spec.acceptance.pairs
    notes: list[str] = []
    if kind == "route-aware" and options is not None and (options.target is not None or options.via is not None):
        schedule, routing, notes = _route_aware_live(loaded, options)
    else:
        schedule, routing = schedule_for(loaded, kind)
    plan = build_perf_plan(loaded, schedule, routing=routing)
    tests = ", ".join(t.name for t in plan.tests)
    lines = schedule.describe() + [f"note: {note}" for note in notes]
    lines.append(f"each pair runs: {tests}" + (" (bidirectional)" if plan.bidirectional else ""))
    if plan.tcp.enabled:
        lines.append(f"then the TCP probe: iperf3 for {plan.tcp.seconds} s between each pair of nodes")
    lines.append("dry run: nothing was started")
    return lines


def _route_aware_live(loaded: LoadedSpec, options: VerifyOptions) -> tuple[Schedule, Routing, list[str]]:
    """The route-aware schedule from the LFTs read where the fabric diags run; the plan's when they cannot be
    read (and a note saying why)."""
    runner, _limits = diag_runner(loaded, options)
    try:
        schedule, routing, _routes = live_schedule(loaded, runner, twin=options.target is not None)
        return schedule, routing, []
    except (ValueError, CollectError) as err:  # the fabric cannot be read from here: the plan's routes
        schedule, routing = schedule_for(loaded, "route-aware")
        return schedule, routing, [f"routes from the plan (the fabric's LFTs could not be read here: {err})"]
    finally:
        runner.close()


def baseline_results(facts: PerfFacts) -> dict[str, BaselineEntry]:
    """Every measured result of a run, for ``--save-baseline``."""
    kinds = {t.name: t.kind for t in facts.plan.tests}
    return {
        run_object(r.pair, r.test): BaselineEntry(r.value, "us" if kinds.get(r.test) == "lat" else "Gb/s")
        for r in facts.obs.runs
        if r.status == "ok" and r.value is not None
    }


def save_baseline(report: SectionReport, cluster: str, path: Path) -> int:
    """Write the measured results of a perf section report to ``path``; returns how many."""
    if not isinstance(report.facts, PerfFacts):
        raise TypeError("not a perf section report")
    results = baseline_results(report.facts)
    path.write_text(baseline_text(cluster, report.started, results), encoding="utf-8")
    return len(results)


def _run(loaded: LoadedSpec, options: VerifyOptions, _started: Any) -> SectionReport:
    """The section as the CLI runs it: the spec's nodes over SSH (or the target's hosts)."""
    kind: ScheduleKind = options.pairs or loaded.spec.acceptance.pairs  # type: ignore[assignment]
    baseline: Baseline | None = load_baseline(options.baseline) if options.baseline is not None else None
    target = options.target
    notes: list[str] = []
    if target is not None:
        names = [n.name for n in loaded.spec.nodes]
        targets = ssh_targets(
            [(n, target.hosts[n], target.user) for n in names if n in target.hosts], target.ssh_config
        )
        boxless = [n for n in names if n not in target.hosts]
        if boxless:
            notes.append(
                f"{len(boxless)} node(s) are simulated HCAs only on the twin (no container): {', '.join(boxless)}"
            )
    else:
        spec = loaded.spec
        targets = ssh_targets((n.name, n.address or n.name, n.user or spec.cluster.ssh_user) for n in spec.nodes)
    routes = ""
    if kind == "route-aware":  # from the LFTs the SM programmed, read where the fabric diags run
        schedule, routing, why = _route_aware_live(loaded, options)
        routes = schedule.routes or "the plan"
        notes += why
    else:
        schedule, routing = schedule_for(loaded, kind)
    plan = build_perf_plan(loaded, schedule, twin=target is not None, routing=routing, baseline=baseline)
    remote = SshRemote(targets)
    try:
        return verify_perf(loaded, remote, plan, routes=routes, notes=notes)
    finally:
        remote.close()


SECTION = PERF.section(_run)
