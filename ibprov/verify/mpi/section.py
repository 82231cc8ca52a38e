"""``verify --mpi``: does MPI use the fabric? The MPI configuration on every node (UCX, Open MPI, NCCL), the
transports UCX finds (``ucx_info -d``: verbs, or only TCP and shared memory), and an MPI point-to-point run
between two nodes under mpirun, judged against the spec's limits; with ``--contrast-tcp`` a run forced onto
TCP is shown beside it.

The entry point of the mpi section (:data:`SECTION`). Collection (:mod:`.collect`) is Ansible plumbing;
parsing (:mod:`ibprov.probes`) and the checks (:mod:`.checks`) are pure.
"""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.report.model import SectionReport
from ibprov.run.inventory import nodes_inventory
from ibprov.verify.mpi.checks import FAMILIES, TRANSPORT_LABEL, fallback_text, reached
from ibprov.verify.mpi.collect import OSU, RINGTEST, AnsibleMpiCollector, MpiCollector, pair_tools
from ibprov.verify.mpi.facts import SCHEMA, MpiFacts
from ibprov.verify.mpi.observation import MpiObservation, MpiRun, Transport
from ibprov.verify.mpi.plan import MpiPlan, build_mpi_plan
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.skeleton import Skeleton

__all__ = ["MPI", "SECTION", "TITLE", "check_mpi", "ran_benchmark", "verify_mpi"]

TITLE = "MPI"


def ran_benchmark(plan: MpiPlan, obs: MpiObservation) -> str | None:
    """The benchmark the pair runs: OSU where both nodes have it, else mpi4py's ringtest; None without a pair,
    or when neither can run (:func:`pair_tools` says why)."""
    if plan.pair is None:
        return None
    tools, why = pair_tools(obs.hosts, plan.pair)
    return None if why else OSU if tools.osu else RINGTEST


def _with_verbs(obs: MpiObservation) -> int:
    return sum(1 for h in obs.hosts.values() if h.reachable and h.ucx is not None and h.ucx.verbs)


def mpi_facts(plan: MpiPlan, obs: MpiObservation) -> MpiFacts:
    return MpiFacts(
        len(plan.hosts), reached(plan, obs), _with_verbs(obs), plan.pair, ran_benchmark(plan, obs), obs.runs
    )


def mpi_notes(plan: MpiPlan, obs: MpiObservation) -> list[str]:
    """What the report notes: an expected fall-back to TCP everywhere, the lines of ucx_info -d and of the MPI runs
    that are not their output, and what the ringtest measures."""
    notes = []
    if plan.no_rdma:
        fallbacks = [fallback_text(h, obs.hosts[h]) for h in plan.hosts if h in obs.hosts and obs.hosts[h].ucx]
        fallbacks = [f for f in fallbacks if "would fall back" in f]
        if fallbacks and not _with_verbs(obs):
            notes.append(f"{plan.no_rdma}: every node falls back to TCP, as expected (the MPI limits are not judged)")
    notes += ucx_notes(plan, obs)
    notes += tools_notes(plan, obs)
    notes += run_notes(obs)
    if ran_benchmark(plan, obs) == RINGTEST:
        notes.append(
            "benchmark: mpi4py's ringtest between two ranks (a ping-pong; no OSU micro-benchmarks on the nodes): "
            "latency is half a round trip, bandwidth the ping-pong rate, below osu_bw's streamed rate"
        )
    return notes


_SHOWN_LINES = 3  # lines of a host's ucx_info -d notes quoted in the report


def ucx_notes(plan: MpiPlan, obs: MpiObservation) -> list[str]:
    """One note per host whose ucx_info -d printed lines that are not its output (UCX warnings, log lines): they
    were read past; the first few are quoted."""
    notes = []
    for host in plan.hosts:
        h = obs.hosts.get(host)
        if h is None or h.ucx is None or not h.ucx.notes:
            continue
        lines = h.ucx.notes
        more = f" (and {len(lines) - _SHOWN_LINES} more)" if len(lines) > _SHOWN_LINES else ""
        notes.append(
            f"{host}: ucx_info -d printed {len(lines)} line{'s' * (len(lines) != 1)} besides its output (read past): "
            f"{'; '.join(lines[:_SHOWN_LINES])}{more}"
        )
    return notes


def tools_notes(plan: MpiPlan, obs: MpiObservation) -> list[str]:
    """One note per host whose probe of the installed MPI tools printed lines that are not tools (a shell's
    warning merged from stderr): they were read past; the first few are quoted."""
    notes = []
    for host in plan.hosts:
        h = obs.hosts.get(host)
        if h is None or not h.tools.notes:
            continue
        lines = h.tools.notes
        more = f" (and {len(lines) - _SHOWN_LINES} more)" if len(lines) > _SHOWN_LINES else ""
        notes.append(
            f"{host}: the probe of the MPI tools printed {len(lines)} line{'s' * (len(lines) != 1)} besides "
            f"them (read past): {'; '.join(lines[:_SHOWN_LINES])}{more}"
        )
    return notes


def run_notes(obs: MpiObservation) -> list[str]:
    """One note per MPI run whose output had lines that are not the benchmark's (UCX warnings, Open MPI banners,
    loader warnings, merged from stderr): they were read past; the first few are quoted."""
    notes = []
    for run in obs.runs:
        if not run.notes:
            continue
        lines = run.notes
        more = f" (and {len(lines) - _SHOWN_LINES} more)" if len(lines) > _SHOWN_LINES else ""
        notes.append(
            f"MPI run {TRANSPORT_LABEL[run.transport]}: {run.benchmark} printed {len(lines)} "
            f"line{'s' * (len(lines) != 1)} besides its output (read past): {'; '.join(lines[:_SHOWN_LINES])}{more}"
        )
    return notes


MPI: Skeleton[MpiPlan, MpiObservation] = Skeleton("mpi", TITLE, FAMILIES, SCHEMA, facts=mpi_facts, notes=mpi_notes)
check_mpi = MPI.report  # the section report of the observation against the plan (no I/O)


def verify_mpi(plan: MpiPlan, collector: MpiCollector, *, contrast_tcp: bool = False) -> SectionReport:
    """Collect through ``collector`` and check against ``plan``."""
    return MPI.run(lambda: (plan, _observe(plan, collector, contrast_tcp)), collected_from=collector.where)


def _observe(plan: MpiPlan, collector: MpiCollector, contrast_tcp: bool) -> MpiObservation:
    """Every host's MPI configuration, then the pair's runs: as configured, and forced onto TCP with
    ``contrast_tcp`` (each failed, with why, when the pair has no benchmark to run)."""
    hosts = collector.collect(plan)
    runs: list[MpiRun] = []
    if plan.pair is not None:
        tools, why = pair_tools(hosts, plan.pair)
        benchmark = OSU if tools.osu else RINGTEST
        transports: list[Transport] = ["configured", "tcp"] if contrast_tcp else ["configured"]
        for transport in transports:
            runs.append(MpiRun(transport, benchmark, "failed", why) if why else collector.run(plan, tools, transport))
    return MpiObservation(hosts, tuple(runs))


def _run(loaded: LoadedSpec, options: VerifyOptions, _started: Any) -> SectionReport:
    """The section as the CLI runs it: the target's hosts through its inventory (``--target twin``: the
    rack's containers), else the hosts through ``--inventory DIR``, else the spec's addresses."""
    target = options.target
    if target is not None:
        plan = build_mpi_plan(loaded, containers=tuple(target.hosts), addresses=target.hosts, twin=True)
        source: str | dict[str, Any] = str(target.inventory)
    else:
        plan = build_mpi_plan(loaded)
        source = str(options.inventory) if options.inventory else nodes_inventory(loaded)
    return verify_mpi(plan, AnsibleMpiCollector(source), contrast_tcp=options.contrast_tcp)


SECTION = MPI.section(_run)
