"""The route-aware lower bound is a lower bound: on small fat trees, the fewest rounds any schedule needs
(found by exhaustive search) is never below it, and the schedule built is never below that optimum."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from perfkit import fat_tree

from ibprov.clusterspec import SpecError
from ibprov.verify.perf.routes import Routing, lower_bound, planned_routing
from ibprov.verify.perf.schedule import route_schedule


def optimum(routing: Routing) -> int:
    """The fewest rounds that cover every routable direction, each round a set of pairs with no host port
    twice (the constraint the bound uses; no two pairs sharing a direction either, as the schedule has it):
    every possible round, then a breadth-first search over the covered directions."""
    order = sorted(routing.routable)
    bit = {e: 1 << i for i, e in enumerate(order)}
    full = (1 << len(order)) - 1
    ends = routing.endpoints
    pairs = []
    for s in range(len(ends)):
        for d in range(len(ends)):
            path = routing.route(routing.switch_of(s), d)
            if ends[s].device != ends[d].device and path:
                pairs.append((s, d, sum(bit[e] for e in set(path))))
    rounds: set[int] = set()

    def extend(start: int, busy: frozenset[int], mask: int) -> None:
        rounds.add(mask)
        for k in range(start, len(pairs)):
            s, d, m = pairs[k]
            if s not in busy and d not in busy and not m & mask:
                extend(k + 1, busy | {s, d}, mask | m)

    extend(0, frozenset(), 0)
    best = [m for m in rounds if not any(m != o and m & o == m for o in rounds)]
    seen, frontier, depth = {0}, [0], 0
    while full not in seen:
        depth += 1
        frontier = [c | m for c in frontier for m in best if c | m not in seen]
        seen.update(frontier)
        assert frontier, "some routable direction cannot be covered"
    return depth


def check(routing: Routing) -> None:
    bound = lower_bound(routing)
    assert bound is not None
    best = optimum(routing)
    schedule = route_schedule(routing)
    assert bound.rounds <= best <= len(schedule.rounds)
    assert schedule.coverage is not None
    assert schedule.coverage.complete


@settings(max_examples=60, deadline=None)
@given(
    leaves=st.integers(2, 3),
    spines=st.integers(1, 2),
    parallel=st.integers(1, 2),
    hosts=st.integers(1, 4),
    data=st.data(),
)
def test_two_level_trees(leaves: int, spines: int, parallel: int, hosts: int, data: st.DataObject) -> None:
    uplinks = spines * parallel
    assume(leaves * uplinks <= 6)  # at most 12 directions: the exhaustive search stays small
    nodes = data.draw(st.integers(2, leaves * hosts), label="nodes")
    radix = max(4, hosts + uplinks, leaves * parallel)
    try:
        loaded = fat_tree(
            nodes, radix=radix, leaves=leaves, spines=spines, hosts_per_leaf=hosts, uplinks_per_leaf=uplinks
        )
    except SpecError:
        assume(False)
        raise
    check(planned_routing(loaded))


@settings(max_examples=25, deadline=None)
@given(hosts=st.integers(1, 3), cores=st.integers(1, 2), data=st.data())
def test_three_level_trees(hosts: int, cores: int, data: st.DataObject) -> None:
    nodes = data.draw(st.integers(2, 2 * hosts), label="nodes")
    loaded = fat_tree(
        nodes,
        radix=4,
        pods=2,
        leaves=2,
        spines=2,
        cores=cores,
        hosts_per_leaf=hosts,
        uplinks_per_leaf=1,
        uplinks_per_spine=cores,
    )
    check(planned_routing(loaded))


def test_the_bound_is_reached_where_a_leaf_is_short_of_hosts() -> None:
    """Two leaves of 3 and 1 hosts, 2 uplinks each to 2 spines: the lone host must send over both uplinks
    of its leaf and receive once, one pair per round: 3 rounds, and no fewer are possible."""
    routing = planned_routing(fat_tree(4, radix=6, leaves=2, spines=2, hosts_per_leaf=3, uplinks_per_leaf=2))
    bound = lower_bound(routing)
    assert bound is not None
    assert bound.rounds == optimum(routing) == len(route_schedule(routing).rounds) == 3
    assert bound.witness.startswith("leaf02: 3 routable link directions cross its boundary and only 1 host port")
