"""Names and GUIDs: each names one thing (nodes, switches, groups, HCAs, addresses, partitions, QoS
levels; node and port GUIDs)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.findings import Finding, dupes
from ibprov.clusterspec.topology import Topology


def names_are_unique(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from dupes([(n.name, ("nodes", i, "name")) for i, n in enumerate(spec.nodes)], "node name")
    yield from dupes([(s.name, ("switches", i, "name")) for i, s in enumerate(spec.switches)], "switch name")
    nodes = {n.name for n in spec.nodes}
    for i, sw in enumerate(spec.switches):
        if sw.name in nodes:
            yield ("switches", i, "name"), f"{sw.name} is both a node and a switch"
    groups = {g for n in spec.nodes for g in n.groups}
    for i, node in enumerate(spec.nodes):
        if node.name in groups:
            yield ("nodes", i, "name"), f"{node.name} is both a node name and a group name"
        if len({h.device for h in node.hcas}) != len(node.hcas):
            yield from dupes(
                [(h.device, ("nodes", i, "hcas", j, "device")) for j, h in enumerate(node.hcas)],
                f"HCA on {node.name}:",
            )
    names = Counter(n.name for n in spec.nodes)
    addresses: list[tuple[object, Path]] = [
        ((n.address or n.name), ("nodes", i, "address" if n.address else "name"))
        for i, n in enumerate(spec.nodes)
        if n.address or names[n.name] == 1
    ]  # else: duplicate name
    yield from dupes(addresses, "node address")
    yield from dupes([(p.name, ("partitions", i, "name")) for i, p in enumerate(spec.partitions)], "partition name")
    yield from dupes([(q.name, ("qos", "levels", i, "name")) for i, q in enumerate(spec.qos.levels)], "qos level")


def guids_are_unique(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    node_guids: list[tuple[object, Path]] = []
    port_guids: list[tuple[object, Path]] = []
    for i, node in enumerate(spec.nodes):
        for j, hca in enumerate(node.hcas):
            if hca.node_guid is not None:
                node_guids.append((hca.node_guid, ("nodes", i, "hcas", j, "node_guid")))
            if hca.port_guids:
                port_guids += [(g, ("nodes", i, "hcas", j, "port_guids", p)) for p, g in hca.port_guids.items()]
    for i, sw in enumerate(spec.switches):
        if sw.node_guid is not None:
            node_guids.append((sw.node_guid, ("switches", i, "node_guid")))
    yield from dupes(node_guids, "node GUID")
    yield from dupes(port_guids, "port GUID")
