"""Subnet managers: each instance on a node's HCA port that exists, one per port, one with the highest
priority; then what the routing engines need (:mod:`ibprov.clusterspec.rules.routing`)."""

from __future__ import annotations

from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.findings import Finding, hint
from ibprov.clusterspec.rules.routing import routing_problems
from ibprov.clusterspec.topology import Topology


def subnet_managers_are_sound(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    by_name = {n.name: n for n in spec.nodes}
    sm = spec.subnet_manager
    seen: dict[tuple[str, str, int], int] = {}
    for i, inst in enumerate(sm.instances):
        path: Path = ("subnet_manager", "instances", i)
        node = by_name.get(inst.node)
        if node is None:
            yield (*path, "node"), f"unknown node {inst.node!r}{hint(inst.node, by_name)}"
            continue
        if not node.hcas:
            yield (*path, "node"), f"node {inst.node} has no HCA to run a subnet manager on"
            continue
        hca = next((h for h in node.hcas if h.device == inst.hca), None) if inst.hca else node.hcas[0]
        if hca is None:
            yield (*path, "hca"), f"node {inst.node} has no HCA {inst.hca!r}"
            continue
        if inst.port not in hca.ports:
            yield (
                (*path, "port"),
                f"{inst.node}/{hca.device} has no port {inst.port} (ports {list(hca.ports)})",
            )
        key = (inst.node, hca.device, inst.port)
        if key in seen:
            yield path, f"a second subnet manager on {inst.node}/{hca.device}:{inst.port}"
        seen[key] = i
    if not sm.instances:  # a switch SM (or a missing instance: sm_backend_is_complete says so)
        yield from routing_problems(spec, topo)
        return
    top = max(inst.priority for inst in sm.instances)
    winners = [i for i, inst in enumerate(sm.instances) if inst.priority == top]
    if len(winners) > 1:
        names = ", ".join(sm.instances[i].node for i in winners)
        yield (
            ("subnet_manager", "instances", winners[1], "priority"),
            (
                f"{len(winners)} subnet managers share the highest priority {top} ({names}): give exactly one "
                "the highest priority so the master is deterministic"
            ),
        )
    yield from routing_problems(spec, topo)
