"""route-aware: coverage of every routable link direction, no shared direction or port within a round, rounds
against the lower bound -- on the examples' fat trees, designed three-level trees, random designs, and the
routes OpenSM programmed in the sim captures."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import pytest
from captures import read_capture
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from perfkit import check_route_schedule, designed

from ibprov.clusterspec import load_spec, load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.design import DesignError
from ibprov.probes import ibnetdiscover, lfts
from ibprov.probes.runner import CommandResult
from ibprov.routing.model import RoutingModel, from_discovery
from ibprov.verify.perf.routes import ca_endpoints, lft_routing, model_endpoints, planned_routing
from ibprov.verify.perf.schedule import route_aware, route_aware_from_lfts
from ibprov.verify.perf.section import live_schedule

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"


def test_fat_tree_example_covers_every_direction_routes_can_use() -> None:
    loaded = load_spec(EXAMPLES / "fat-tree.yaml")
    schedule = route_aware(loaded)
    check_route_schedule(schedule, planned_routing(loaded))
    coverage = schedule.coverage
    assert coverage is not None
    assert (coverage.covered, coverage.routable, coverage.total) == (74, 74, 80)
    assert coverage.complete
    assert coverage.routable_percent == 100.0
    # leaf04 has 4 hosts and 10 uplinks: each destination has one down path, so 6 of the 10 cables into
    # leaf04 carry no host-to-host traffic (the twin's OpenSM ftree LFTs show the same)
    assert sorted(map(str, coverage.unroutable)) == [
        "spine01:18 -> leaf04:15",
        "spine01:19 -> leaf04:17",
        "spine01:20 -> leaf04:19",
        "spine02:18 -> leaf04:16",
        "spine02:19 -> leaf04:18",
        "spine02:20 -> leaf04:20",
    ]
    assert schedule.lower_bound == 4  # leaf04: 10 up + 4 down routable directions, 4 host ports
    assert schedule.lower_bound_reason is not None
    assert schedule.lower_bound_reason.startswith("leaf04: 14 routable link directions")
    assert len(schedule.rounds) <= 2 * schedule.lower_bound


@pytest.mark.parametrize(("nodes", "radix"), [(64, 8), (512, 16)])
def test_designed_three_level_trees_in_two_rounds(nodes: int, radix: int) -> None:
    loaded = designed(nodes, radix)
    assert loaded.spec.fabric.fat_tree is not None
    assert loaded.spec.fabric.fat_tree.cores > 0  # three levels
    schedule = route_aware(loaded)
    check_route_schedule(schedule, planned_routing(loaded))
    coverage = schedule.coverage
    assert coverage is not None
    assert coverage.covered == coverage.total == 4 * nodes  # every cable of a full tree, both ways
    assert coverage.percent == 100.0
    assert len(schedule.rounds) == schedule.lower_bound == 2
    assert len(schedule.pairs) == nodes


def test_odd_number_of_pods() -> None:
    loaded = designed(100, 8)  # seven pods, the last one partly filled
    assert loaded.spec.fabric.fat_tree is not None
    assert loaded.spec.fabric.fat_tree.pods == 7
    schedule = route_aware(loaded)
    check_route_schedule(schedule, planned_routing(loaded))
    assert schedule.coverage is not None
    assert schedule.coverage.complete
    assert schedule.lower_bound is not None
    assert len(schedule.rounds) <= 2 * schedule.lower_bound


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(2, 260),
    radix=st.sampled_from([4, 8, 12, 16]),
    blocking=st.sampled_from(["1", "3/2", "2"]),
)
def test_random_designs(nodes: int, radix: int, blocking: str) -> None:
    try:
        loaded = designed(nodes, radix, blocking)
    except DesignError:
        assume(False)
        raise
    schedule = route_aware(loaded)
    check_route_schedule(schedule, planned_routing(loaded))
    assert schedule.coverage is not None
    assert schedule.coverage.complete
    assert schedule.lower_bound is not None
    assert len(schedule.rounds) <= 2 * schedule.lower_bound


@pytest.mark.parametrize(("nodes", "radix"), [(34, 40), (64, 8), (100, 8)])
def test_model_routes_are_up_then_down_between_the_right_switches(nodes: int, radix: int) -> None:
    routing = planned_routing(designed(nodes, radix))
    g = routing.g
    spines = {x: {g.dst[e] for e in g.dirs_of[x] if g.level[g.dst[e]] > g.level[x]} for x in g.host_switches}
    for host in range(len(routing.endpoints)):
        for x in g.host_switches:
            path = routing.route(x, host)
            assert path is not None
            if x == routing.switch_of(host):
                assert path == ()
                continue
            assert g.src[path[0]] == x
            assert g.dst[path[-1]] == routing.switch_of(host)
            assert all(g.dst[a] == g.src[b] for a, b in pairwise(path))
            levels = [g.level[g.src[path[0]]], *(g.level[g.dst[e]] for e in path)]
            peak = levels.index(max(levels))
            assert levels[: peak + 1] == sorted(levels[: peak + 1])  # climbs ...
            assert levels[peak:] == sorted(levels[peak:], reverse=True)  # ... then descends
            assert len(set(levels[: peak + 1])) == peak + 1
            # leaves of a pod share spines: up and down; else through a core
            assert len(path) == (2 if spines[x] & spines[routing.switch_of(host)] else 4)


def test_single_switch_has_nothing_to_route_but_every_port_is_still_tested() -> None:
    loaded = load_spec(EXAMPLES / "rack.yaml")
    schedule = route_aware(loaded)
    ports = {end for pair in schedule.pairs for end in (pair.client, pair.server)}
    assert ports == {Endpoint(n.name, h.device, p) for n in loaded.spec.nodes for h in n.hcas for p in h.ports}
    assert len(schedule.rounds) == 1
    assert schedule.coverage is not None
    assert (schedule.coverage.total, schedule.coverage.percent) == (0, 100.0)
    assert schedule.lower_bound == 1


# ------------------------------------------------------------------------- the routes OpenSM programmed
FT2 = """\
version: 1
cluster: {name: ft2}
nodes:
  - {name: node01, hcas: [{device: mlx5_0}]}
  - {name: node02, hcas: [{device: mlx5_0}]}
  - {name: node03, hcas: [{device: mlx5_0}]}
  - {name: node04, hcas: [{device: mlx5_0}]}
switches:
  - {name: Leaf1, role: leaf, ports: 36}
  - {name: Leaf2, role: leaf, ports: 36}
  - {name: Spine1, role: spine, ports: 36}
fabric:
  speed: EDR
  links:
    - Leaf1:1 <-> node01/mlx5_0:1
    - Leaf1:2 <-> node02/mlx5_0:1
    - Leaf2:1 <-> node03/mlx5_0:1
    - Leaf2:2 <-> node04/mlx5_0:1
    - Leaf1:35 <-> Spine1:1
    - Leaf2:35 <-> Spine1:2
subnet_manager: {routing_engine: ftree, instances: [{node: node01, priority: 15}]}
"""


def sim_model(dump: str | None = None) -> RoutingModel:
    """The routing model of the twin's capture (``dump``: another ``dump_lfts`` text for it)."""
    fabric = ibnetdiscover.parse(read_capture("sim/ibnetdiscover-sim-v44.txt"))
    return from_discovery(fabric, lfts.parse(read_capture("sim/dump_lfts-sim-v44.txt") if dump is None else dump))


def test_lfts_of_the_sim_capture() -> None:
    model = sim_model()
    routing = lft_routing(model)
    names = routing.g.names
    node03 = next(i for i, end in enumerate(routing.endpoints) if end.device == "node03")
    path = routing.route(names.index("Leaf1"), node03)
    assert path is not None
    assert [str(routing.direction(e)) for e in path] == ["Leaf1:35 -> Spine1:1", "Spine1:2 -> Leaf2:35"]
    schedule = route_aware_from_lfts(model)
    check_route_schedule(schedule, lft_routing(model))
    assert schedule.routes == "LFTs (dump_lfts)"
    assert schedule.coverage is not None
    assert (schedule.coverage.covered, schedule.coverage.total) == (4, 4)
    assert schedule.lower_bound == 1
    assert len(schedule.rounds) == 1  # one pair each way between the leaves
    assert len(schedule.pairs) == 2


def test_the_offline_model_routes_like_opensm_on_the_sim_capture() -> None:
    programmed = lft_routing(sim_model())
    planned = planned_routing(load_spec_text(FT2, "ft2.yaml"))
    assert sorted(map(str, programmed.endpoints)) == sorted(map(str, planned.endpoints))
    host_of = {end: i for i, end in enumerate(planned.endpoints)}
    for host, end in enumerate(programmed.endpoints):
        for x in programmed.g.host_switches:
            real = programmed.route(x, host)
            model = planned.route(planned.g.names.index(programmed.g.names[x]), host_of[end])
            assert real is not None
            assert model is not None
            assert [str(programmed.direction(e)) for e in real] == [str(planned.direction(e)) for e in model]


def test_the_offline_model_says_when_the_specs_sm_routes_with_another_engine() -> None:
    minhop = FT2.replace("routing_engine: ftree", "routing_engine: [minhop, updn]")
    assert planned_routing(load_spec_text(FT2, "ft2.yaml")).source == "plan (up*/down* model of ftree)"
    assert planned_routing(load_spec_text(minhop, "ft2.yaml")).source == (
        "plan (up*/down* model of ftree; the spec's SM routes with minhop,updn, whose routes may differ: "
        "a run reads the LFTs)"
    )


def test_describe_for_a_dry_run() -> None:
    lines = route_aware(load_spec(EXAMPLES / "fat-tree.yaml")).describe()
    assert lines[0].startswith("route-aware schedule: 4 rounds, ")
    assert lines[0].endswith(" pairs (routes: plan (up*/down* model of ftree))")
    assert lines[1] == (
        "link coverage: 92.5 % (74 of 80 inter-switch link directions); 100.0 % of the 74 that host-to-host routes use"
    )
    assert lines[2].startswith("  6 direction(s) carry no host-to-host route, so no perftest pair can load them: ")
    assert lines[3].startswith("lower bound: 4 round(s) (ratio 1.00): leaf04: 14 routable link directions")
    assert [line.split(":")[0] for line in lines if line.startswith("round ")] == [f"round {i}/4" for i in range(1, 5)]
    assert all(" -> " in line for line in lines[5:] if line.startswith("  "))


def test_a_host_missing_from_the_tables_is_noted_and_its_directions_unroutable() -> None:
    text = read_capture("sim/dump_lfts-sim-v44.txt")
    leaf2 = text.split("0x0007 002 : (Channel Adapter portguid 0x0000000000100007: 'node04 mlx5_0')\n", 1)
    assert len(leaf2) == 2  # the first table (Leaf2) loses node04's entry
    text = leaf2[0] + leaf2[1].replace("7 valid lids dumped", "6 valid lids dumped", 1)
    schedule = route_aware_from_lfts(sim_model(text))
    assert schedule.coverage is not None
    assert schedule.coverage.complete
    assert schedule.coverage.routable == 4  # Spine1 -> Leaf2 still carries node03's traffic
    assert schedule.notes == (
        "1 host port(s) have no entry in their own switch's table, so no route reaches them and the directions "
        "only they receive over count as unroutable: node04/mlx5_0:1 (LID 7)",
    )
    assert schedule.describe()[-1].startswith("note: 1 host port(s) have no entry")


# What the perf builder gave on the sim capture before it read the shared routing model (computed with
# lft_routing(fabric, lfts) of the commit before it): every route from every switch to every host port.
SIM_ROUTES = {
    ("Leaf1", "node01/mlx5_0:1"): [],
    ("Leaf1", "node02/mlx5_0:1"): [],
    ("Leaf1", "node03/mlx5_0:1"): ["Leaf1:35 -> Spine1:1", "Spine1:2 -> Leaf2:35"],
    ("Leaf1", "node04/mlx5_0:1"): ["Leaf1:35 -> Spine1:1", "Spine1:2 -> Leaf2:35"],
    ("Leaf2", "node01/mlx5_0:1"): ["Leaf2:35 -> Spine1:2", "Spine1:1 -> Leaf1:35"],
    ("Leaf2", "node02/mlx5_0:1"): ["Leaf2:35 -> Spine1:2", "Spine1:1 -> Leaf1:35"],
    ("Leaf2", "node03/mlx5_0:1"): [],
    ("Leaf2", "node04/mlx5_0:1"): [],
    ("Spine1", "node01/mlx5_0:1"): ["Spine1:1 -> Leaf1:35"],
    ("Spine1", "node02/mlx5_0:1"): ["Spine1:1 -> Leaf1:35"],
    ("Spine1", "node03/mlx5_0:1"): ["Spine1:2 -> Leaf2:35"],
    ("Spine1", "node04/mlx5_0:1"): ["Spine1:2 -> Leaf2:35"],
}
SIM_SCHEDULE = [  # route_aware_from_lfts(fabric, lfts).describe() of the commit before
    "route-aware schedule: 1 round, 2 pairs (routes: LFTs (dump_lfts))",
    "link coverage: 100.0 % (4 of 4 inter-switch link directions)",
    "lower bound: 1 round(s) (ratio 1.00): some link direction must be tested",
    "round 1/1: 2 pairs",
    "  node01/mlx5_0:1 -> node03/mlx5_0:1",
    "  node04/mlx5_0:1 -> node02/mlx5_0:1",
]


def test_the_schedule_over_the_shared_routing_model_routes_as_the_perf_builder_did_on_the_sim_capture() -> None:
    routing = lft_routing(sim_model())
    assert routing.g.names == ["Leaf1", "Leaf2", "Spine1"]
    assert routing.g.level == [0, 0, 1]
    assert list(map(str, routing.endpoints)) == [f"node0{i}/mlx5_0:1" for i in range(1, 5)]
    routes = {
        (name, str(end)): [str(routing.direction(e)) for e in path]
        for x, name in enumerate(routing.g.names)
        for h, end in enumerate(routing.endpoints)
        if (path := routing.route(x, h)) is not None
    }
    assert routes == SIM_ROUTES
    assert sorted(str(routing.direction(e)) for e in routing.routable) == [
        "Leaf1:35 -> Spine1:1",
        "Leaf2:35 -> Spine1:2",
        "Spine1:1 -> Leaf1:35",
        "Spine1:2 -> Leaf2:35",
    ]
    assert routing.valley_free
    assert routing.notes == ()
    assert route_aware_from_lfts(sim_model()).describe() == SIM_SCHEDULE


class CaptureRunner:
    """The fabric diags of the sim capture."""

    where = "fake"

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        files = {"ibnetdiscover": "sim/ibnetdiscover-sim-v44.txt", "dump_lfts": "sim/dump_lfts-sim-v44.txt"}
        return [CommandResult(tuple(argv), 0, read_capture(files[argv[0]]), "") for argv in commands]

    def close(self) -> None:
        pass


def test_the_live_schedule_names_switches_and_host_ports_by_the_guids_the_plan_knows() -> None:
    spec = (
        FT2.replace("Leaf1, role: leaf", "leaf-a, role: leaf, node_guid: 0x200000")
        .replace("Spine1, role: spine", "spine-a, role: spine, node_guid: 0x200002")
        .replace("Leaf1:", "leaf-a:")
        .replace("Spine1:", "spine-a:")
        .replace("node04, hcas: [{device: mlx5_0}]", "gpu04, hcas: [{device: mlx5_0, port_guids: {1: 0x100007}}]")
        .replace("node04/mlx5_0:1", "gpu04/mlx5_0:1")
    )
    schedule, routing, source = live_schedule(load_spec_text(spec, "ft2.yaml"), CaptureRunner())
    assert source == "LFTs (dump_lfts)"
    assert routing.g.names == ["Leaf2", "leaf-a", "spine-a"]  # Leaf2's GUID is not in the plan: its NodeDescription
    assert list(map(str, routing.endpoints)) == [
        "node03/mlx5_0:1",
        "gpu04/mlx5_0:1",
        "node01/mlx5_0:1",
        "node02/mlx5_0:1",
    ]
    assert schedule.coverage is not None
    assert (schedule.coverage.covered, schedule.coverage.total) == (4, 4)
    assert sorted(str(routing.direction(e)) for e in routing.routable) == [
        "Leaf2:35 -> spine-a:2",
        "leaf-a:35 -> spine-a:1",
        "spine-a:1 -> leaf-a:35",
        "spine-a:2 -> Leaf2:35",
    ]


def test_host_ports_are_named_by_their_node_description_without_a_plan() -> None:
    fabric = ibnetdiscover.parse(
        read_capture("sim/ibnetdiscover-sim-v44.txt").replace('"node04 mlx5_0"', '"MT4123 ConnectX6 Mellanox"')
    )
    model = from_discovery(fabric, lfts.parse(read_capture("sim/dump_lfts-sim-v44.txt")))
    assert ca_endpoints(fabric)[7] == Endpoint("MT4123 ConnectX6 Mellanox", "0x0000000000100006", 1)
    assert model_endpoints(model)[7] == Endpoint("MT4123 ConnectX6 Mellanox", None, 1)  # the model has no node GUID
    assert model_endpoints(model)[6] == ca_endpoints(fabric)[6] == Endpoint("node03", "mlx5_0", 1)
    assert ca_endpoints(fabric, {0x100007: "gpu04/mlx5_0:1"})[7] == Endpoint("gpu04", "mlx5_0", 1)
    routing = lft_routing(model, ca_endpoints(fabric))
    assert "MT4123 ConnectX6 Mellanox/0x0000000000100006:1" in map(str, routing.endpoints)
