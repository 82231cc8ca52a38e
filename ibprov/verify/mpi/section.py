"""``verify --mpi``: does MPI use the fabric? The MPI configuration on every node (UCX, Open MPI, NCCL), the
transports UCX finds (``ucx_info -d``: verbs, or only TCP and shared memory), and an MPI point-to-point run
between two nodes under mpirun, judged against the spec's limits; with ``--contrast-tcp`` a run forced onto
TCP is shown beside it.

The entry point of the mpi section (:data:`SECTION`). Collection (:mod:`.collect`) is Ansible plumbing;
parsing (:mod:`ibprov.probes`) and the checks (:mod:`.checks`) are pure.
"""

from __future__ import annotations

import time
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.report.model import SectionReport, utc_now_text
from ibprov.verify.checking import run_checks
from ibprov.verify.mpi.checks import FAMILIES, fallback_text, reached
from ibprov.verify.mpi.collect import OSU, RINGTEST, AnsibleMpiCollector, MpiCollector, pair_tools
from ibprov.verify.mpi.facts import SCHEMA, MpiFacts
from ibprov.verify.mpi.observation import MpiObservation, MpiRun, Transport
from ibprov.verify.mpi.plan import MpiPlan, build_mpi_plan
from ibprov.verify.sections import Section, VerifyOptions

__all__ = ["SECTION", "TITLE", "check_mpi", "verify_mpi"]

TITLE = "MPI"


def verify_mpi(plan: MpiPlan, collector: MpiCollector, *, contrast_tcp: bool = False) -> SectionReport:
    """Collect through ``collector`` and check against ``plan``."""
    started, t0 = utc_now_text(), time.monotonic()
    hosts = collector.collect(plan)
    runs: list[MpiRun] = []
    benchmark = None
    if plan.pair is not None:
        tools, why = pair_tools(hosts, plan.pair)
        benchmark = OSU if tools.osu else RINGTEST
        transports: list[Transport] = ["configured", "tcp"] if contrast_tcp else ["configured"]
        for transport in transports:
            if why:
                runs.append(MpiRun(transport, benchmark, "failed", why))
            else:
                runs.append(collector.run(plan, tools, transport))
        benchmark = None if why else benchmark
    obs = MpiObservation(hosts, tuple(runs))
    return check_mpi(
        plan, obs, benchmark=benchmark, started=started, duration=time.monotonic() - t0, collected_from=collector.where
    )


def check_mpi(
    plan: MpiPlan,
    obs: MpiObservation,
    *,
    benchmark: str | None = None,
    started: str = "",
    duration: float = 0.0,
    collected_from: str = "",
) -> SectionReport:
    """The section report of the observation against the plan (no I/O)."""
    with_verbs = sum(1 for h in obs.hosts.values() if h.reachable and h.ucx is not None and h.ucx.verbs)
    notes = []
    if plan.no_rdma:
        fallbacks = [fallback_text(h, obs.hosts[h]) for h in plan.hosts if h in obs.hosts and obs.hosts[h].ucx]
        fallbacks = [f for f in fallbacks if "would fall back" in f]
        if fallbacks and not with_verbs:
            notes.append(f"{plan.no_rdma}: every node falls back to TCP, as expected (the MPI limits are not judged)")
    if plan.pair is not None and benchmark == RINGTEST:
        notes.append(
            "benchmark: mpi4py's ringtest between two ranks (a ping-pong; no OSU micro-benchmarks on the nodes): "
            "latency is half a round trip, bandwidth the ping-pong rate, below osu_bw's streamed rate"
        )
    return SectionReport(
        name="mpi",
        title=TITLE,
        collected_from=collected_from,
        started=started,
        duration_seconds=duration,
        checks=run_checks(FAMILIES, plan, obs),
        facts=MpiFacts(len(plan.hosts), reached(plan, obs), with_verbs, plan.pair, benchmark, obs.runs),
        notes=tuple(notes),
    )


def _run(loaded: LoadedSpec, options: VerifyOptions, _started: Any) -> SectionReport:
    """The section as the CLI runs it: the hosts through ``--inventory DIR``, else the spec's addresses; the twin
    rack's containers with ``--target twin``."""
    from ibprov.run.inventory import nodes_inventory

    source: str | dict[str, Any] = str(options.inventory) if options.inventory else nodes_inventory(loaded)
    plan = build_mpi_plan(loaded)
    if options.target == "twin":
        from ibprov.twin.rack import load_state

        state = load_state(loaded)
        source = str(state.inventory)
        plan = build_mpi_plan(
            loaded,
            containers=tuple(state.nodes),
            addresses={n: node.address for n, node in state.nodes.items()},
            twin=True,
        )
    return verify_mpi(plan, AnsibleMpiCollector(source), contrast_tcp=options.contrast_tcp)


SECTION = Section(name="mpi", title=TITLE, families=FAMILIES, facts_schema=SCHEMA, run=_run)
