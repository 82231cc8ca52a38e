"""The route audit on fabrics built here: every route traced by destination, dead ends and loops named where
they break, hop counts against the shortest paths, up*/down* turns, paths and destinations per port."""

from __future__ import annotations

import pytest
from routingkit import fat_tree, ring, torus

from ibprov.routing.audit import audit, shortest_hops
from ibprov.routing.model import NO_ENTRY, ModelBuilder
from ibprov.routing.offline import compute_lft


@pytest.mark.parametrize("n", [3, 4, 5, 7])
def test_every_pair_of_a_min_hop_ring_is_delivered_on_a_shortest_route(n: int) -> None:
    model = ring(n)
    result = audit(model)
    assert result.pairs == n * (n - 1) == result.delivered
    assert result.broken_pairs == 0
    assert not result.breaks
    assert not result.switch_breaks
    assert result.nonminimal_pairs == 0
    assert sum(result.switches_per_route.values()) == result.pairs
    assert max(result.switches_per_route) == n // 2 + 1  # switches on the longest route


def test_a_ring_routed_up_down_from_a_root_takes_longer_routes_and_counts_them() -> None:
    model = ring(5, tiers=[2, 1, 0, 0, 1])  # S0 the root, ranks by distance
    result = audit(model)
    assert result.delivered == 20
    assert result.nonminimal_pairs > 0
    for source, lid, hops, shortest in result.nonminimal:
        assert hops > shortest >= 1
        assert model.names[source].startswith("S")
        assert lid in model.lid_owner()


@pytest.mark.parametrize(("leaves", "spines", "hosts"), [(3, 2, 2), (5, 3, [1, 4, 2, 3, 1]), (2, 1, 7), (7, 4, 3)])
def test_a_fat_tree_routed_up_down_delivers_every_pair_with_no_turn_after_going_down(
    leaves: int, spines: int, hosts: int | list[int]
) -> None:
    model, tiers = fat_tree(leaves, spines, hosts)
    result = audit(model, tiers)
    cas = len(model.cas)
    assert result.pairs == cas * (cas - 1) == result.delivered
    assert result.updown_checked
    assert result.updown_pairs == 0
    assert not result.updown_samples
    assert set(result.switches_per_route) <= {1, 3}  # the same leaf, or leaf-spine-leaf
    assert result.nonminimal_pairs == 0


def test_paths_and_destinations_per_port_add_up_to_the_routes_that_leave_a_leaf() -> None:
    model, tiers = fat_tree(3, 2, 2)
    result = audit(model, tiers)
    # each leaf sends its 2 CAs' routes to the 4 remote CA LIDs up, spread over its 2 uplinks
    for s in range(3):
        ups = [int(model.chan[s, p]) for p in (3, 4)]
        assert sum(int(result.chan_dlids[c]) for c in ups) == 4
        assert sum(int(result.chan_routes[c]) for c in ups) == 2 * 4
    # every spine-to-leaf port carries the leaf's 2 LIDs from the other 2 leaves: 2 LIDs, 4 routes
    assert int(result.chan_routes.sum()) == 3 * 8 * 2  # every remote route crosses two channels


def test_a_missing_entry_is_a_dead_end_named_by_the_switch_and_counted_by_the_ca_ports_behind_it() -> None:
    model, tiers = fat_tree(3, 2, 2)
    lid = model.cas[4].lid  # a CA on leaf03
    model.lft[0, lid] = NO_ENTRY  # leaf01 forgets it
    result = audit(model, tiers)
    assert result.broken_pairs == 2
    assert result.broken_lids == {lid}
    (brk,) = result.breaks
    assert (brk.kind, model.names[brk.switch], brk.port, brk.pairs) == ("dead end", "leaf01", NO_ENTRY, 2)


def test_an_entry_to_a_port_without_a_cable_is_a_dead_end_at_that_switch() -> None:
    model, tiers = fat_tree(3, 2, 2)
    lid = model.cas[1].lid  # the second CA of leaf01: the other leaves send it up to spine02
    spine = model.names.index("spine02")
    model.lft[spine, lid] = 9  # spine02 has ports 1..3 cabled
    result = audit(model, tiers)
    assert result.broken_lids == {lid}
    assert {(model.names[b.switch], b.port) for b in result.breaks} == {("spine02", 9)}


def test_two_switches_that_send_a_lid_to_each_other_are_a_forwarding_loop() -> None:
    model, tiers = fat_tree(3, 2, 2)
    lid = model.cas[5].lid  # on leaf03
    leaf02, spine01 = model.names.index("leaf02"), model.names.index("spine01")
    model.lft[leaf02, lid] = 3  # leaf02 -> spine01
    model.lft[spine01, lid] = 2  # spine01 -> leaf02
    result = audit(model, tiers)
    kinds = {b.kind for b in result.breaks}
    assert kinds == {"loop"}
    assert result.broken_lids == {lid}
    path, end = model.walk(leaf02, lid)
    assert end == "loop"
    assert len(path) == 256


def test_a_route_that_goes_down_then_up_is_counted_at_its_destination_and_sampled_where_it_turns() -> None:
    model, tiers = fat_tree(3, 2, 2)
    lid = model.cas[0].lid  # on leaf01
    spine01, leaf02 = model.names.index("spine01"), model.names.index("leaf02")
    model.lft[spine01, lid] = 2  # down to leaf02 ...
    model.lft[leaf02, lid] = 4  # ... which sends it up to spine02, which goes down to leaf01
    result = audit(model, tiers)
    assert result.delivered == result.pairs
    # the routes from leaf03 (2 CAs) that leave by spine01 turn at leaf02; leaf02's own go up at once
    assert result.updown_pairs > 0
    assert {(s.lid, model.names[s.switch]) for s in result.updown_samples} == {(lid, "leaf02")}
    assert result.nonminimal_pairs == result.updown_pairs


def test_switch_lids_are_destinations_too() -> None:
    model, tiers = fat_tree(3, 2, 2)
    lid = model.lids[model.names.index("spine02")]
    model.lft[0, lid] = NO_ENTRY
    result = audit(model, tiers)
    assert result.broken_pairs == 0
    assert result.broken_switch_lids == {lid}


def test_shortest_hops_on_a_torus_wraps_around() -> None:
    model = torus(4, 4)
    hops = shortest_hops(model, [0])
    assert int(hops.max()) == 4  # (2, 2) away on a 4x4 torus
    assert audit(model).nonminimal_pairs == 0


def test_any_number_of_threads_gives_the_same_audit() -> None:
    model, tiers = fat_tree(5, 3, [1, 4, 2, 3, 1])
    model.lft[1, model.cas[0].lid] = NO_ENTRY
    whole = audit(model, tiers, threads=1)
    small = audit(model, tiers, threads=3)
    assert (whole.pairs, whole.delivered, whole.switches_per_route, whole.broken_pairs) == (
        small.pairs,
        small.delivered,
        small.switches_per_route,
        small.broken_pairs,
    )
    assert (whole.chan_routes == small.chan_routes).all()
    assert (whole.edges == small.edges).all()


def test_min_hop_on_a_fat_tree_without_tiers_is_also_valley_free() -> None:
    model, tiers = fat_tree(4, 2, 2, minhop=True)
    assert audit(model, tiers).updown_pairs == 0
    model.lft = compute_lft(model, tiers)
    assert audit(model, tiers).updown_pairs == 0


def test_a_single_switch_fabric_has_one_switch_routes_and_no_channels() -> None:
    b = ModelBuilder()
    leaf = b.switch("leaf01", 0x10)
    for port in range(1, 6):
        b.ca(f"n{port}/mlx5_0:1", port, leaf, port)
    b.lids = [6]
    model = b.build()
    model.lft = compute_lft(model)
    result = audit(model, [0])
    assert result.pairs == result.delivered == 5 * 4
    assert result.switches_per_route == {1: 20}
    assert model.channel_count == 0
    assert not result.edge_list(model)[0].size


def _ring3_switch_lids_the_long_way() -> tuple[object, list[int]]:
    """Three switches in a ring (S_i:3 -- S_{i+1}:4), a CA on each: the CA LIDs routed one hop the short way,
    the switch LIDs two hops round the ring, the same way from everywhere (as an engine that balances
    switch LIDs apart from CA LIDs may leave them)."""
    b = ModelBuilder()
    sw = [b.switch(f"S{i}", 0x100 + i) for i in range(3)]
    for i in range(3):
        b.cable(sw[i], 3, sw[(i + 1) % 3], 4)
    for i in range(3):
        b.ca(f"H{i}/mlx5_0:1", 1 + i, sw[i], 1)
    b.lids = [4, 5, 6]
    model = b.build()
    model.lft = compute_lft(model)
    for i in range(3):
        target = 4 + i  # S_i's LID: from S_(i+1) go on round (port 3) through S_(i+2)
        model.lft[(i + 1) % 3, target] = 3
        model.lft[(i + 2) % 3, target] = 3
    return model, sw


def test_switch_lid_routes_add_their_dependencies_to_the_loop_graph_only_when_asked() -> None:
    from ibprov.routing.cdg import find_cycles

    model, _sw = _ring3_switch_lids_the_long_way()
    ca_only = audit(model)
    assert ca_only.delivered == ca_only.pairs == 6
    assert not find_cycles(*ca_only.edge_list(model), model.channel_count).found, "CA routes: one hop, no turn"
    with_switches = audit(model, switch_routes=True)
    cycles = find_cycles(*with_switches.edge_list(model), model.channel_count)
    assert cycles.found
    assert sorted(model.channel_name(c) for c in cycles.cycles[0]) == ["S0:3 → S1:4", "S1:3 → S2:4", "S2:3 → S0:4"]
    # routes and destinations per channel still count CA pairs only (the balance check reads them)
    assert (with_switches.chan_routes == ca_only.chan_routes).all()
    assert (with_switches.chan_dlids == ca_only.chan_dlids).all()
