"""Credit loops: cycles of the channel dependency graph, listed in order; the graph of a deadlock-free routing
has none."""

from __future__ import annotations

import numpy as np
import pytest
from routingkit import fat_tree, ring, torus

from ibprov.routing.audit import audit
from ibprov.routing.cdg import find_cycles


def _cycles(model, tiers=None):  # type: ignore[no-untyped-def]
    result = audit(model, tiers)
    src, dst = result.edge_list(model)
    return find_cycles(src, dst, model.channel_count)


@pytest.mark.parametrize("n", [5, 7, 9])
def test_min_hop_on_a_ring_of_five_or_more_has_a_loop_each_way_round(n: int) -> None:
    model = ring(n)
    cycles = _cycles(model)
    assert cycles.component_sizes == (n, n)
    names = [[model.channel_name(c) for c in cycle] for cycle in cycles.cycles]
    clockwise = next(c for c in names if c[0].startswith("S0:3"))
    assert clockwise == [f"S{i}:3 → S{(i + 1) % n}:4" for i in range(n)]


def test_a_ring_of_three_has_one_hop_routes_only_and_no_loop() -> None:
    assert not _cycles(ring(3)).found


def test_a_ring_of_four_loops_one_way_when_every_two_hop_route_takes_the_same_turn() -> None:
    model = ring(4)  # the routes two hops away all leave by the lower port: clockwise
    cycles = _cycles(model)
    assert cycles.component_sizes == (4,)
    assert [model.channel_name(c) for c in cycles.cycles[0]] == [f"S{i}:3 → S{(i + 1) % 4}:4" for i in range(4)]


def test_up_down_on_a_ring_with_a_root_has_no_loop() -> None:
    assert not _cycles(ring(5, tiers=[2, 1, 0, 0, 1])).found


@pytest.mark.parametrize(("leaves", "spines", "hosts"), [(3, 2, 2), (6, 4, [3, 1, 2, 2, 5, 1])])
def test_a_fat_tree_routed_up_down_has_no_loop(leaves: int, spines: int, hosts: int | list[int]) -> None:
    model, tiers = fat_tree(leaves, spines, hosts)
    assert not _cycles(model, tiers).found


def test_min_hop_on_a_torus_has_loops_in_every_ring() -> None:
    cycles = _cycles(torus(5, 5))
    assert cycles.found
    assert all(len(c) >= 5 for c in cycles.cycles)


def test_a_self_loop_and_a_two_cycle_are_found_and_a_chain_is_not() -> None:
    src = np.array([0, 1, 2, 3, 5], dtype=np.int64)
    dst = np.array([1, 2, 1, 4, 5], dtype=np.int64)
    found = find_cycles(src, dst, 6)
    assert sorted(found.component_sizes) == [1, 2]
    assert sorted(tuple(sorted(c)) for c in found.cycles) == [(1, 2), (5,)]
    assert not find_cycles(np.array([0, 1]), np.array([1, 2]), 3).found


def test_each_listed_cycle_is_a_closed_walk_of_the_graph() -> None:
    model = ring(7)
    result = audit(model)
    src, dst = result.edge_list(model)
    edges = set(zip(src.tolist(), dst.tolist(), strict=True))
    for cycle in find_cycles(src, dst, model.channel_count).cycles:
        for a, b in zip(cycle, (*cycle[1:], cycle[0]), strict=True):
            assert (a, b) in edges
