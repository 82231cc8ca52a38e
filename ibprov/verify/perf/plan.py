"""What ``verify --perf`` runs and how it judges, from the spec's ``acceptance:`` section and its nodes.

A :class:`PerfPlan` is the pair schedule (:mod:`.schedule`), the tests (each perftest tool at each message
size), the thresholds, and per HCA port what perftest needs to run there (device, port, GID index, NUMA
node) and the rate the plan cables it at. Judging uses the rate the port trained to when the node says it
(sysfs), capped by the HCA's PCIe link; the planned rate otherwise (the report says which).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.ipoib import planned_interfaces
from ibprov.clusterspec.types import Endpoint
from ibprov.clusterspec.units import data_rate_gbps
from ibprov.verify.perf import schedule
from ibprov.verify.perf.baseline import Baseline
from ibprov.verify.perf.routes import LinkDirection, Routing, planned_routing
from ibprov.verify.perf.schedule import Pair, Schedule, ScheduleKind

__all__ = [
    "EndpointPlan",
    "PerfPlan",
    "PerfTest",
    "TcpPlan",
    "build_perf_plan",
    "pair_paths",
    "schedule_for",
    "size_text",
]


def size_text(size: int) -> str:
    """65536 -> 64KiB, 8388608 -> 8MiB, 2 -> 2B."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return f"{size}B"


@dataclass(frozen=True)
class PerfTest:
    tool: str  # ib_write_lat, ib_write_bw, ...
    size: int  # bytes
    limit_us: float | None = None  # latency tests: the upper bound of the average

    @property
    def kind(self) -> Literal["lat", "bw"]:
        return "lat" if self.tool.endswith("_lat") else "bw"

    @property
    def name(self) -> str:
        return f"{self.tool} {size_text(self.size)}"


@dataclass(frozen=True)
class EndpointPlan:
    endpoint: Endpoint
    planned_gbps: float  # data rate of the cable the plan gives this port
    gid_index: int | None = None
    numa_node: int | None = None

    @property
    def node(self) -> str:
        return self.endpoint.device


@dataclass(frozen=True)
class TcpPlan:
    """The iperf3 probe: on (per the spec), how long, the limit, and where each node is reached over IPoIB."""

    enabled: bool
    seconds: int
    min_gbps: float | None
    addresses: Mapping[str, str] = field(default_factory=dict)  # node -> its first IPoIB address
    interface: str = ""  # the IPoIB interface the addresses are on ("ib0")


@dataclass(frozen=True)
class PerfPlan:
    schedule: Schedule
    tests: tuple[PerfTest, ...]
    endpoints: Mapping[Endpoint, EndpointPlan]
    bandwidth_fraction: float
    bidirectional: bool
    timeout_seconds: int
    first_port: int  # perftest's TCP port of the first concurrent pair
    max_parallel: int | None
    tcp: TcpPlan
    baseline_tolerance: float
    twin: bool = False  # the nodes are the twin rack's containers (no RDMA device is expected)
    # route-aware: the inter-switch link directions each pair's traffic crosses (client -> server)
    paths: Mapping[Pair, tuple[LinkDirection, ...]] = field(default_factory=dict)
    baseline: Baseline | None = None  # --baseline FILE: a site's earlier results

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node of the schedule, in the spec's order."""
        scheduled = {end.device for p in self.schedule.pairs for end in (p.client, p.server)}
        spec_order = dict.fromkeys(e.device for e in self.endpoints)
        return tuple(n for n in [*spec_order, *sorted(scheduled - set(spec_order))] if n in scheduled)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.tool for t in self.tests))

    def needs_numactl(self, node: str) -> bool:
        return any(e.numa_node is not None for e in self.endpoints.values() if e.node == node)


def build_perf_plan(
    loaded: LoadedSpec,
    schedule: Schedule,
    *,
    twin: bool = False,
    routing: Routing | None = None,
    baseline: Baseline | None = None,
) -> PerfPlan:
    """The plan of the spec's acceptance tests over ``schedule``; ``routing``: the routes it was made from."""
    spec = loaded.spec
    acc = spec.acceptance
    tests = [PerfTest(t, acc.latency_size, acc.latency_us[t]) for t in acc.latency_tests]
    tests += [PerfTest(t, size) for t in acc.bandwidth_tests for size in acc.bandwidth_sizes]
    return PerfPlan(
        schedule=schedule,
        tests=tuple(tests),
        endpoints=_endpoints(loaded),
        bandwidth_fraction=acc.bandwidth_fraction,
        bidirectional=acc.bidirectional,
        timeout_seconds=acc.perftest_timeout_seconds,
        first_port=acc.perftest_port,
        max_parallel=acc.max_parallel_pairs,
        tcp=_tcp_plan(loaded),
        baseline_tolerance=acc.baseline_tolerance,
        twin=twin,
        paths=pair_paths(routing, schedule.pairs) if routing is not None else {},
        baseline=baseline,
    )


def pair_paths(routing: Routing, pairs: Iterable[Pair]) -> dict[Pair, tuple[LinkDirection, ...]]:
    """The link directions each pair's traffic crosses under ``routing`` (pairs it cannot route: left out)."""
    index = {end: i for i, end in enumerate(routing.endpoints)}
    out = {}
    for pair in pairs:
        c, s = index.get(pair.client), index.get(pair.server)
        if c is None or s is None:
            continue
        path = routing.route(routing.switch_of(c), s)
        if path is not None:
            out[pair] = tuple(routing.direction(e) for e in path)
    return out


def _endpoints(loaded: LoadedSpec) -> dict[Endpoint, EndpointPlan]:
    rates = {}
    for link in loaded.topology.links:
        for end in (link.a, link.b):
            if end.hca is not None:
                rates[end] = data_rate_gbps(link.speed, link.width)
    out = {}
    for node in loaded.spec.nodes:
        for hca in node.hcas:
            for port in hca.ports:
                end = Endpoint(node.name, hca.device, port)
                if end in rates:
                    out[end] = EndpointPlan(end, rates[end], hca.gid_index, hca.numa_node)
    return out


def _tcp_plan(loaded: LoadedSpec) -> TcpPlan:
    acc = loaded.spec.acceptance
    addresses: dict[str, str] = {}
    interface = ""
    for node, interfaces in planned_interfaces(loaded.spec).items():
        first = interfaces[0]
        interface = interface or first.name
        if first.name == interface:
            addresses[node] = first.address
    return TcpPlan(acc.tcp_probe, acc.tcp_probe_seconds, acc.tcp_min_gbps, addresses, interface)


def schedule_for(loaded: LoadedSpec, kind: ScheduleKind) -> tuple[Schedule, Routing]:
    """The schedule of ``kind`` from the plan alone, and the plan's routes (the offline fat-tree model)."""
    routing = planned_routing(loaded)
    if kind == "quick":
        return schedule.quick(loaded), routing
    if kind == "all-pairs":
        return schedule.all_pairs(loaded), routing
    if kind == "rail-aware":
        return schedule.rail_aware(loaded), routing
    return schedule.route_schedule(routing), routing
