"""quick, all-pairs and rail-aware: the properties each schedule promises, on fixed and random node counts."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfkit import one_leaf

from ibprov.clusterspec import load_spec
from ibprov.clusterspec.types import Endpoint
from ibprov.verify.perf.schedule import Schedule, all_pairs, quick, rail_aware, round_robin

COUNTS = [2, 3, 7, 8, 33]


def assert_disjoint_rounds(schedule: Schedule, *, by_node: bool) -> None:
    for pairs in schedule.rounds:
        ends = [end.device if by_node else end for p in pairs for end in (p.client, p.server)]
        assert len(ends) == len(set(ends)), f"{'a node' if by_node else 'a port'} is in two pairs of one round"


@pytest.mark.parametrize("n", [*COUNTS, 0, 1])
def test_round_robin_meets_every_pair_once_in_n_minus_1_or_n_rounds(n: int) -> None:
    rounds = round_robin(n)
    met = Counter(frozenset(p) for r in rounds for p in r)
    assert set(met) == {frozenset(p) for p in combinations(range(n), 2)}
    assert set(met.values()) <= {1}
    for pairs in rounds:
        items = [i for p in pairs for i in p]
        assert len(items) == len(set(items))
        assert len(pairs) == n // 2
    assert len(rounds) == (0 if n < 2 else n - 1 if n % 2 == 0 else n)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 90))
def test_round_robin_any_count(n: int) -> None:
    test_round_robin_meets_every_pair_once_in_n_minus_1_or_n_rounds(n)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 60))
def test_round_robin_alternates_who_is_client(n: int) -> None:
    clients = Counter(a for r in round_robin(n) for a, _ in r)
    servers = Counter(b for r in round_robin(n) for _, b in r)
    assert all(abs(clients[i] - servers[i]) <= 2 for i in range(n))


@pytest.mark.parametrize("n", COUNTS)
def test_all_pairs_from_a_spec(n: int) -> None:
    loaded = one_leaf([1] * n)
    schedule = all_pairs(loaded)
    met = Counter(frozenset((p.client.device, p.server.device)) for p in schedule.pairs)
    names = [node.name for node in loaded.spec.nodes]
    assert set(met) == {frozenset(p) for p in combinations(names, 2)}
    assert set(met.values()) == {1}
    assert len(schedule.rounds) == (n - 1 if n % 2 == 0 else n)
    assert all(len(r) == n // 2 for r in schedule.rounds)
    assert_disjoint_rounds(schedule, by_node=True)


def test_all_pairs_uses_each_nodes_first_port() -> None:
    schedule = all_pairs(one_leaf([2, 1, 3]))
    assert {end for p in schedule.pairs for end in (p.client, p.server)} == {
        Endpoint("n001", "mlx5_0", 1),
        Endpoint("n002", "mlx5_0", 1),
        Endpoint("n003", "mlx5_0", 1),
    }


def ports_of(hcas: list[int], ports: int) -> set[Endpoint]:
    return {
        Endpoint(f"n{i + 1:03d}", f"mlx5_{j}", p)
        for i, k in enumerate(hcas)
        for j in range(k)
        for p in range(1, ports + 1)
    }


@pytest.mark.parametrize("n", COUNTS)
def test_quick_tests_every_node_in_one_round_or_two(n: int) -> None:
    schedule = quick(one_leaf([1] * n))
    assert {end for p in schedule.pairs for end in (p.client, p.server)} == ports_of([1] * n, 1)
    assert len(schedule.rounds) == (1 if n % 2 == 0 else 2)
    assert_disjoint_rounds(schedule, by_node=True)


def test_quick_pairs_across_the_cabling_order() -> None:
    """The first half meets the second half: on a fat tree the pairs cross leaves (and spines)."""
    schedule = quick(load_spec("examples/fat-tree.yaml"))
    first = schedule.rounds[0][0]
    assert (first.client.device, first.server.device) == ("sm01", "node17")


@settings(max_examples=60, deadline=None)
@given(hcas=st.lists(st.integers(1, 3), min_size=1, max_size=12), ports=st.integers(1, 2))
def test_quick_tests_every_rail_of_every_node(hcas: list[int], ports: int) -> None:
    schedule = quick(one_leaf(hcas, ports))
    tested = {end for p in schedule.pairs for end in (p.client, p.server)}
    assert tested | set(schedule.untested) == ports_of(hcas, ports)
    assert not tested & set(schedule.untested)
    assert bool(schedule.untested) == (len(hcas) == 1)  # only a lone node has no partner
    assert_disjoint_rounds(schedule, by_node=False)
    if len(set(hcas)) == 1:  # nodes alike: one round, or two when a rail has an odd number of ports
        assert len(schedule.rounds) <= 2
    else:  # a node with many more ports than the others needs more rounds: ceil(most / rest) at least
        most = max(hcas) * ports
        rest = sum(hcas) * ports - most
        assert len(schedule.rounds) <= 1 + max(1, -(-most // rest))
    assert all(p.client.device != p.server.device for p in schedule.pairs)
    rails = Counter(rail(end) for end in ports_of(hcas, ports))
    if all(count % 2 == 0 for count in rails.values()):
        assert len(schedule.rounds) == 1


def test_quick_pairs_the_ports_left_over_on_odd_rails() -> None:
    """Three nodes with two HCAs: each rail leaves a port over, on different nodes, and those two pair up."""
    schedule = quick(one_leaf([2, 2, 2]))
    assert len(schedule.rounds) == 1
    assert len(schedule.pairs) == 3


def rail(end: Endpoint) -> tuple[int, int]:
    assert end.hca is not None
    return int(end.hca.removeprefix("mlx5_")), end.port


@settings(max_examples=60, deadline=None)
@given(
    hcas=st.lists(st.integers(1, 3), min_size=1, max_size=10),
    ports=st.integers(1, 2),
    pairing=st.sampled_from(["all-pairs", "quick"]),
)
def test_rail_aware_never_pairs_different_rails(hcas: list[int], ports: int, pairing: str) -> None:
    schedule = rail_aware(one_leaf(hcas, ports), pairing)  # type: ignore[arg-type]
    assert all(rail(p.client) == rail(p.server) for p in schedule.pairs)
    assert_disjoint_rounds(schedule, by_node=False)
    by_rail: dict[tuple[int, int], list[str]] = {}
    for end in sorted(ports_of(hcas, ports)):
        by_rail.setdefault(rail(end), []).append(end.device)
    tested = {end for p in schedule.pairs for end in (p.client, p.server)}
    assert set(schedule.untested) == {end for end in ports_of(hcas, ports) if len(by_rail[rail(end)]) == 1}
    assert tested | set(schedule.untested) == ports_of(hcas, ports)
    if pairing == "all-pairs":
        for r, nodes in by_rail.items():
            met = Counter(frozenset((p.client.device, p.server.device)) for p in schedule.pairs if rail(p.client) == r)
            assert set(met) == {frozenset(p) for p in combinations(nodes, 2)}
            assert set(met.values()) <= {1}
        longest = max(len(nodes) for nodes in by_rail.values())
        assert len(schedule.rounds) == (0 if longest < 2 else longest - 1 + longest % 2)


def test_rail_aware_runs_the_rails_of_a_node_pair_together() -> None:
    schedule = rail_aware(one_leaf([2, 2, 2, 2]))
    first = schedule.rounds[0]
    assert len(first) == 4  # two node pairs x two rails
    assert Counter((p.client.device, p.server.device) for p in first) == Counter(
        {(first[0].client.device, first[0].server.device): 2, (first[1].client.device, first[1].server.device): 2}
    )


def test_describe_lists_every_round_and_pair() -> None:
    lines = all_pairs(one_leaf([1, 1, 1])).describe()
    assert lines[0] == "all-pairs schedule: 3 rounds, 3 pairs"
    assert lines[1:3] == ["round 1/3: 1 pair", "  n002/mlx5_0:1 -> n003/mlx5_0:1"]
    assert [line for line in lines if line.startswith("round")] == [
        "round 1/3: 1 pair",
        "round 2/3: 1 pair",
        "round 3/3: 1 pair",
    ]
