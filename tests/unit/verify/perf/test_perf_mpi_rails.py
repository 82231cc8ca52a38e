"""rail-aware and quick when ``mpi.rails`` names the rails: the schedule's rails are the generator's (the
ports mpi.rails names, in its order), so rail-aware pairs meet on their rail's leaf; odd node counts, a node
missing a rail and a storage HCA on no rail (cabled by hand) included."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.rails import Rails
from ibprov.clusterspec.topology import rail_plan
from ibprov.clusterspec.types import Endpoint
from ibprov.verify.perf.schedule import Schedule, all_pairs, quick, rail_aware

# the rails list mlx5_2 before mlx5_1, and mlx5_0 is the storage HCA: positions would get every rail wrong
RAILS = ("mlx5_2", "mlx5_1")
STORAGE = "mlx5_0"


def rail_spec(nodes: Sequence[Sequence[str]]) -> LoadedSpec:
    """Nodes n001.. with the HCAs ``nodes[i]`` (of mlx5_0 (storage), mlx5_1, mlx5_2); the rails rail0 = mlx5_2,
    rail1 = mlx5_1 cabled rail-optimized by the fat tree; the storage ports cabled by hand to stor01."""
    lines = ["version: 1", "cluster: {name: mr}", "nodes:"]
    for i, hcas in enumerate(nodes):
        lines.append(f"  - {{name: n{i + 1:03d}, hcas: [{', '.join(f'{{device: {d}}}' for d in hcas)}]}}")
    storage = [i for i, hcas in enumerate(nodes) if STORAGE in hcas]
    lines += [
        "switches: [{name: stor01, role: leaf, ports: 16}]",
        "fabric:",
        "  speed: HDR",
        "  fat_tree: {radix: 16, leaves: 2, spines: 1, hosts_per_leaf: 12, uplinks_per_leaf: 2, rails: rail-optimized}",
        "  links:",
        "    - stor01:16 <-> spine01:16",
        *(f"    - stor01:{k + 1} <-> n{i + 1:03d}/{STORAGE}:1" for k, i in enumerate(storage)),
        "subnet_manager: {routing_engine: updn, instances: [{node: n001}]}",
        "mpi:",
        "  rails:",
        *(f"    - {{name: rail{r}, devices: ['{d}:1']}}" for r, d in enumerate(RAILS)),
    ]
    return load_spec_text("\n".join(lines) + "\n", "mr.yaml")


def all_ports(loaded: LoadedSpec) -> set[Endpoint]:
    return {Endpoint(n.name, h.device, p) for n in loaded.spec.nodes for h in n.hcas for p in h.ports}


def rail_of(loaded: LoadedSpec) -> dict[Endpoint, int]:
    rails = Rails.of(loaded.spec)
    return {end: r for node in loaded.spec.nodes for end, r in rails.rail_of(node).items()}


def assert_rail_local(loaded: LoadedSpec, schedule: Schedule) -> None:
    """Every pair: two nodes, one rail (by mpi.rails), one leaf (as the generator cabled it); a port on no rail
    only meets a port of the same name on no rail."""
    rails = rail_of(loaded)
    plan = rail_plan(loaded.spec, loaded.topology)
    assert plan is not None
    assert plan.port_rail == rails  # the generator's rails (and the cabling.rail check's) are the schedule's
    for pair in schedule.pairs:
        assert pair.client.device != pair.server.device
        if pair.client in rails or pair.server in rails:
            assert rails.get(pair.client) == rails.get(pair.server), f"{pair} crosses rails"
            assert plan.leaf_of[pair.client] == plan.leaf_of[pair.server], f"{pair} leaves its rail's leaf"
        else:
            assert (pair.client.hca, pair.client.port) == (pair.server.hca, pair.server.port)
    for pairs in schedule.rounds:
        ends = [end for p in pairs for end in (p.client, p.server)]
        assert len(ends) == len(set(ends)), "a port is in two pairs of one round"


@pytest.mark.parametrize("n", [2, 3, 5, 7])
def test_rail_aware_on_mpi_rails_with_odd_and_even_node_counts(n: int) -> None:
    loaded = rail_spec([["mlx5_1", "mlx5_2"]] * n)
    schedule = rail_aware(loaded)
    assert_rail_local(loaded, schedule)
    rails = rail_of(loaded)
    assert {end for p in schedule.pairs for end in (p.client, p.server)} == set(rails)
    for r in range(2):
        met = Counter(frozenset((p.client.device, p.server.device)) for p in schedule.pairs if rails[p.client] == r)
        assert set(met) == {frozenset(p) for p in combinations([f"n{i + 1:03d}" for i in range(n)], 2)}
        assert set(met.values()) == {1}
    assert len(schedule.rounds) == (n - 1 if n % 2 == 0 else n)
    assert schedule.untested == ()


def test_the_first_rail_is_the_first_in_mpi_rails_not_the_first_hca() -> None:
    loaded = rail_spec([["mlx5_1", "mlx5_2"]] * 2)
    (first,) = rail_aware(loaded).rounds[0][:1]
    assert first.client.hca == "mlx5_2"  # rail0 = mlx5_2, listed second on the node
    assert {end.hca for p in all_pairs(loaded).pairs for end in (p.client, p.server)} == {"mlx5_2"}


def test_a_node_missing_a_rail_is_tested_on_the_rails_it_has() -> None:
    # n002 lacks rail0 (mlx5_2): rail0 has n001 and n003, rail1 all three nodes
    loaded = rail_spec([["mlx5_1", "mlx5_2"], ["mlx5_1"], ["mlx5_1", "mlx5_2"]])
    for pairing, rail1_pairs in (("all-pairs", 3), ("quick", 2)):
        schedule = rail_aware(loaded, pairing)  # type: ignore[arg-type]
        assert_rail_local(loaded, schedule)
        tested = {end for p in schedule.pairs for end in (p.client, p.server)}
        assert tested == all_ports(loaded)
        assert Counter(p.client.hca for p in schedule.pairs) == {"mlx5_2": 1, "mlx5_1": rail1_pairs}


def test_a_rail_with_one_node_is_listed_untested() -> None:
    loaded = rail_spec([["mlx5_1", "mlx5_2"], ["mlx5_1"], ["mlx5_1"]])
    schedule = rail_aware(loaded)
    assert schedule.untested == (Endpoint("n001", "mlx5_2", 1),)
    assert "not tested (no partner on their rail): n001/mlx5_2:1" in schedule.describe()
    # quick tests every port anyway, the lone one with a port of another node
    tested = {end for p in quick(loaded).pairs for end in (p.client, p.server)}
    assert tested == all_ports(loaded)


def test_a_storage_hca_on_no_rail_meets_only_storage_ports() -> None:
    loaded = rail_spec([["mlx5_0", "mlx5_1", "mlx5_2"]] * 3 + [["mlx5_1", "mlx5_2"]])
    rails = rail_of(loaded)
    assert Endpoint("n001", "mlx5_0", 1) not in rails
    schedule = rail_aware(loaded)
    assert_rail_local(loaded, schedule)
    storage = {p for p in schedule.pairs if p.client.hca == STORAGE}
    assert len(storage) == 3  # n001..n003 all-pairs
    assert all(p.server.hca == STORAGE for p in storage)
    assert {end for p in schedule.pairs for end in (p.client, p.server)} == all_ports(loaded)
    # all-pairs: one port per node, its lowest rail (never the storage HCA listed first)
    assert {end.hca for p in all_pairs(loaded).pairs for end in (p.client, p.server)} == {"mlx5_2"}


def test_quick_on_mpi_rails_tests_every_port_pairing_within_rails() -> None:
    loaded = rail_spec([["mlx5_0", "mlx5_1", "mlx5_2"]] * 2 + [["mlx5_1", "mlx5_2"]] * 2)
    schedule = quick(loaded)
    assert {end for p in schedule.pairs for end in (p.client, p.server)} == all_ports(loaded)
    assert_rail_local(loaded, schedule)  # every rail and the storage ports have an even count: no mixing
    assert len(schedule.rounds) == 1


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.lists(
        st.sets(st.sampled_from(["mlx5_0", "mlx5_1", "mlx5_2"]), min_size=1).filter(lambda s: s != {"mlx5_0"}),
        min_size=2,
        max_size=9,
    ),
    pairing=st.sampled_from(["all-pairs", "quick"]),
)
def test_rail_aware_on_any_mix_of_rails_and_storage(nodes: list[set[str]], pairing: str) -> None:
    assume(all(any(d in hcas for hcas in nodes) for d in RAILS))  # mpi.rails names ports some node has
    loaded = rail_spec([sorted(hcas) for hcas in nodes])
    schedule = rail_aware(loaded, pairing)  # type: ignore[arg-type]
    assert_rail_local(loaded, schedule)
    groups = Counter((end.hca, end.port) for end in all_ports(loaded))
    tested = {end for p in schedule.pairs for end in (p.client, p.server)}
    assert tested | set(schedule.untested) == all_ports(loaded)
    assert set(schedule.untested) == {end for end in all_ports(loaded) if groups[(end.hca, end.port)] == 1}
