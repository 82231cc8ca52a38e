"""Partitions: a P_Key each, members that name known nodes and groups, each selector (and rail) listed once
per membership, an SL only where QoS is on; a member's rail is defined and the nodes it selects have a port
of it."""

from __future__ import annotations

from collections.abc import Iterator

from ibprov.clusterspec.members import index_of
from ibprov.clusterspec.model import ClusterSpec, Member, Node, Partition
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rails import Port, rail_ports
from ibprov.clusterspec.rules.findings import Finding, dupes, hint
from ibprov.clusterspec.rules.rails import unknown_rail
from ibprov.clusterspec.topology import Topology

Seen = dict[tuple[str, str, str | None], tuple[int, str]]  # (selector, name, rail) -> (first member, membership)


def partitions_are_consistent(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from dupes([(f"0x{p.pkey:04x}", ("partitions", i, "pkey")) for i, p in enumerate(spec.partitions)], "pkey")
    nodes = {n.name for n in spec.nodes}
    groups = {g for n in spec.nodes for g in n.groups}
    for i, part in enumerate(spec.partitions):
        for j, member in enumerate(part.members):
            path: Path = ("partitions", i, "members", j)
            if member.node is not None and member.node not in nodes:
                yield (*path, "node"), f"unknown node {member.node!r}{hint(member.node, nodes | groups)}"
            if member.group is not None and member.group not in groups:
                yield (*path, "group"), f"unknown group {member.group!r}{hint(member.group, groups)}"
        seen: Seen = {}
        for j, member in enumerate(part.members):
            if member.rail is None:  # with a rail: another member than the same selector without (see below)
                yield from _listed_twice(i, j, part, member, seen)
        if part.sl and not spec.qos.enabled:
            yield (
                ("partitions", i, "sl"),
                (
                    f"sl {part.sl} has no effect while qos.enabled is false: "
                    "OpenSM silently forces the partition SL to 0"
                ),
            )


def _listed_twice(i: int, j: int, part: Partition, member: Member, seen: Seen) -> Iterator[Finding]:
    """The member selects what an earlier one with the same rail did (node, group or all: true), with
    another membership."""
    kind, name = _selector(member)
    membership = member.membership or part.defmember
    first, other = seen.setdefault((kind, name, member.rail), (j, membership))
    if other == membership:
        return
    what = name if kind == "all" else f"{kind} {name}"
    if member.rail is not None:
        what = f"{what} with rail {member.rail}"
    field = "membership" if member.membership else kind if member.rail is None else "rail"
    yield (
        ("partitions", i, "members", j, field),
        f"{what} is listed twice in partition {part.name} with different memberships: {membership} here, "
        f"{other} at partitions[{i}].members[{first}] (list it once)",
    )


def _selector(member: Member) -> tuple[str, str]:
    """("node", NAME), ("group", NAME) or ("all", "all: true"): whom the member selects, its rail aside."""
    if member.node:
        return "node", member.node
    if member.group:
        return "group", member.group
    return "all", "all: true"


def partition_rails_are_sound(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """A member's rail is one mpi.rails defines, and the nodes it selects have a port of it; the same
    selector and rail is not listed twice with different memberships."""
    if all(m.rail is None for p in spec.partitions for m in p.members):
        return
    rails = {r.name: r for r in spec.mpi.rails}
    index = index_of(spec)
    by_name, by_group = index.by_name, index.by_group
    for i, part in enumerate(spec.partitions):
        seen: Seen = {}
        for j, m in enumerate(part.members):
            if m.rail is None:
                continue
            path: Path = ("partitions", i, "members", j)
            yield from _listed_twice(i, j, part, m, seen)
            rail = rails.get(m.rail)
            if rail is None:
                yield (*path, "rail"), unknown_rail(m.rail, spec)
                continue
            ports = rail_ports(rail)
            devices = ", ".join(rail.devices)
            if m.node is not None and m.node in by_name:
                node = by_name[m.node]
                if not any(p in ports for p in _node_ports(node)):
                    yield (
                        (*path, "rail"),
                        f"node {node.name} has no port of rail {rail.name} ({devices}); its HCA ports: "
                        f"{_port_list(_node_ports(node))}",
                    )
            elif m.group in by_group and not any(p in ports for n in by_group[m.group] for p in _node_ports(n)):
                yield (*path, "rail"), f"no node of group {m.group} has a port of rail {rail.name} ({devices})"


def _node_ports(node: Node) -> list[Port]:
    return [(hca.device, port) for hca in node.hcas for port in hca.ports]


def _port_list(ports: list[Port]) -> str:
    return ", ".join(f"{d}:{p}" for d, p in ports) or "none"
