"""Helpers for the perftest schedule tests: specs built in code, and a checker that
recomputes a route-aware schedule's routes, coverage and conflicts from scratch."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.design import design, spec_text
from ibprov.verify.perf.routes import Routing
from ibprov.verify.perf.schedule import Schedule


def designed(nodes: int, radix: int, blocking: str = "1") -> LoadedSpec:
    """The spec `ibprov design --nodes N --radix R --blocking B` writes, loaded."""
    return load_spec_text(spec_text(design(nodes, radix, Fraction(blocking))), f"design-{nodes}-{radix}.yaml")


def one_leaf(hcas: Sequence[int], ports: int = 1) -> LoadedSpec:
    """Nodes n001.. with ``hcas[i]`` HCAs (mlx5_0..) of ``ports`` ports each, all cabled to one leaf."""
    total = sum(hcas) * ports
    port_list = ", ".join(str(p) for p in range(1, ports + 1))
    devices = [", ".join(f"{{device: mlx5_{j}, ports: [{port_list}]}}" for j in range(k)) for k in hcas]
    lines = ["version: 1", "cluster: {name: perf}", "nodes:"]
    lines += [f"  - {{name: n{i + 1:03d}, groups: [compute], hcas: [{d}]}}" for i, d in enumerate(devices)]
    lines += [
        "fabric:",
        "  speed: HDR",
        f"  fat_tree: {{radix: {max(4, total)}, leaves: 1, spines: 0, hosts_per_leaf: {total}, uplinks_per_leaf: 0}}",
        "subnet_manager: {routing_engine: minhop, instances: [{node: n001, priority: 15}]}",
    ]
    return load_spec_text("\n".join(lines) + "\n", "one-leaf.yaml")


def fat_tree(nodes: int, **params: int) -> LoadedSpec:
    """``nodes`` single-port nodes cabled by a fat tree with these generator parameters."""
    lines = ["version: 1", "cluster: {name: tiny}", "nodes:"]
    lines += [f"  - {{name: n{i + 1:03d}, hcas: [{{device: mlx5_0}}]}}" for i in range(nodes)]
    lines += [
        "fabric:",
        "  speed: HDR",
        "  fat_tree: {" + ", ".join(f"{k}: {v}" for k, v in params.items()) + "}",
        "subnet_manager: {routing_engine: ftree, instances: [{node: n001, priority: 15}]}",
    ]
    return load_spec_text("\n".join(lines) + "\n", "tiny.yaml")


def check_route_schedule(schedule: Schedule, routing: Routing) -> None:
    """Recompute, with ``routing`` (a fresh one, not the schedule's), what the schedule claims: no host port
    twice in a round, no link direction crossed by two pairs of a round, and the coverage it reports."""
    index = {end: i for i, end in enumerate(routing.endpoints)}
    covered: set[int] = set()
    tested: set[Endpoint] = set()
    for pairs in schedule.rounds:
        ports: list[Endpoint] = [end for p in pairs for end in (p.client, p.server)]
        assert len(ports) == len(set(ports)), "a host port is in two pairs of one round"
        tested.update(ports)
        used: set[int] = set()
        for pair in pairs:
            assert pair.client.device != pair.server.device, f"{pair} tests a node against itself"
            path = routing.route(routing.switch_of(index[pair.client]), index[pair.server])
            assert path is not None, f"{pair} has no route"
            if not path:  # same switch: only to test ports no other pair tests
                assert routing.switch_of(index[pair.client]) == routing.switch_of(index[pair.server])
            assert used.isdisjoint(path), f"{pair} shares a link direction with another pair of its round"
            used.update(path)
        covered |= used
    nodes = {end.device for end in routing.endpoints}
    if len(nodes) > 1:
        assert tested == set(routing.endpoints) - set(schedule.untested), "every host port is in a pair"
    coverage = schedule.coverage
    assert coverage is not None
    assert covered <= routing.routable
    assert coverage.covered == len(covered)
    assert coverage.routable == len(routing.routable)
    assert coverage.total == routing.direction_count
    assert {str(d) for d in coverage.unroutable} == {
        str(routing.direction(e)) for e in range(routing.direction_count) if e not in routing.routable
    }
