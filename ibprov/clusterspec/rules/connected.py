"""The fabric is one piece: every cabled HCA port reaches the master subnet manager's port (OpenSM manages
only the part it reaches)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.cabling import FAT_TREE_SOURCE, end_exists, existing_links
from ibprov.clusterspec.rules.findings import Finding
from ibprov.clusterspec.topology import Topology
from ibprov.clusterspec.types import Endpoint
from ibprov.clusterspec.unionfind import UnionFind

Device = tuple[str, str | None]  # (switch, None) or (node, HCA)
FAT_TREE_PIECE: Device = ("<fat tree>", None)


def fabric_is_connected(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """Every cabled HCA port is reachable from the master SM's port: OpenSM manages only the part it reaches."""
    master_key, master = _master_device(spec, topo)
    if master_key is None:
        return  # reported by subnet_managers_are_sound / sm_backend_is_complete
    if _connected_with_the_fat_tree(spec, topo, master_key):
        return
    links = existing_links(spec, topo)  # the others are reported by cabling_is_consistent
    # one edge per pair of devices: a fat tree has many parallel cables between the same two switches
    adjacent: dict[Device, list[Device]] = defaultdict(list)
    for a, b in {(link.a[:2], link.b[:2]) for link in links}:
        adjacent[a].append(b)
        adjacent[b].append(a)
    if master_key not in adjacent:
        return  # its port is uncabled: reported by cabling_is_consistent
    reached = _reached(adjacent, master_key)
    if all(key in reached for key in adjacent):
        return
    parts = UnionFind[Device]()
    for a, nexts in adjacent.items():
        for b in nexts:
            parts.union(a, b)
    cut: dict[Device, list[tuple[Endpoint, Path]]] = {}
    for link in links:
        for end in (link.a, link.b):
            key = end[:2]
            if end.hca is not None and key not in reached:
                cut.setdefault(parts.find(key), []).append((end, link.source))
    for ends in cut.values():
        end, source = ends[0]
        more = f" and {len(ends) - 1} more HCA port{'s' if len(ends) > 2 else ''}" if len(ends) > 1 else ""
        yield (
            source,
            f"{end}{more} cannot reach the subnet manager on {master}: no cable joins this part of "
            "the fabric to the rest, and OpenSM manages only the part its port reaches",
        )


def _master_device(spec: ClusterSpec, topo: Topology) -> tuple[Device | None, str]:
    """The planned master SM's device and how a message names its port: the switch of backend: switch, else
    the highest-priority instance's HCA."""
    sm = spec.subnet_manager
    if sm.backend == "switch":
        if sm.switch is None or sm.switch.name not in topo.switches:
            return None, ""
        return (sm.switch.name, None), f"switch {sm.switch.name} (port 0)"
    if not sm.instances:
        return None, ""
    inst = max(sm.instances, key=lambda i: i.priority)
    node = next((n for n in spec.nodes if n.name == inst.node), None)
    hca = next((h for h in node.hcas if h.device == inst.hca or inst.hca is None), None) if node else None
    if hca is None:
        return None, ""
    return (inst.node, hca.device), f"{inst.node}/{hca.device}:{inst.port}"


def _connected_with_the_fat_tree(spec: ClusterSpec, topo: Topology, master: Device) -> bool:
    """A quick proof that everything is connected: the generated fat tree is one connected piece by
    construction (every leaf reaches every spine of its pod, the cores join the pods), so it counts as one
    device and only the cables given by hand are walked. False: no proof (the full check decides)."""
    if not topo.fat_tree_devices or topo.misfits:
        return False
    exists = end_exists(spec, topo)
    piece = topo.fat_tree_devices

    def device(end: Endpoint) -> Device:
        key = end[:2]
        return FAT_TREE_PIECE if key in piece else key

    adjacent: dict[Device, list[Device]] = defaultdict(list)
    adjacent[FAT_TREE_PIECE] = []
    for link in topo.links:
        if link.source != FAT_TREE_SOURCE and exists(link.a) and exists(link.b):
            a, b = device(link.a), device(link.b)
            adjacent[a].append(b)
            adjacent[b].append(a)
    start = FAT_TREE_PIECE if master in piece else master
    if start not in adjacent:
        return False
    reached = _reached(adjacent, start)
    return all(key in reached for key in adjacent)


def _reached(adjacent: dict[Device, list[Device]], start: Device) -> set[Device]:
    reached, todo = {start}, [start]
    while todo:
        for peer in adjacent[todo.pop()]:
            if peer not in reached:
                reached.add(peer)
                todo.append(peer)
    return reached
