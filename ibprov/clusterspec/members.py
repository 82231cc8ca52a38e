"""Who a partition's members are: the nodes a member selects (by node, group or ``all: true``) and, with a
rail, the ports it gives them. One reading for the rules (:mod:`ibprov.clusterspec.rules`), the IPoIB
interfaces (:mod:`ibprov.clusterspec.ipoib`) and the partitions OpenSM is given."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Literal

from ibprov.clusterspec.model import ClusterSpec, Member, Node, Partition
from ibprov.clusterspec.rails import Port, rail_ports

__all__ = ["ALL_PORTS", "Index", "index_of", "partition_ports"]

ALL_PORTS: Literal["all"] = "all"


class Index:
    """Lookups over one spec's nodes: by name, by group, and which nodes have an HCA port (device, port)."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.nodes = spec.nodes

    @cached_property
    def by_name(self) -> dict[str, Node]:
        return {n.name: n for n in self.nodes}

    @cached_property
    def by_group(self) -> dict[str, list[Node]]:
        out: dict[str, list[Node]] = {}
        for node in self.nodes:
            for group in node.groups:
                out.setdefault(group, []).append(node)
        return out

    @cached_property
    def holders(self) -> dict[Port, set[str]]:
        """(device, port) -> the names of the nodes that have it."""
        out: dict[Port, set[str]] = {}
        for node in self.nodes:
            for hca in node.hcas:
                for port in hca.ports:
                    out.setdefault((hca.device, port), set()).add(node.name)
        return out

    def select(self, member: Member) -> Sequence[Node]:
        """The nodes ``member`` names by node, group or all: true (its rail aside), in spec order."""
        if member.all:
            return self.nodes
        if member.group is not None:
            return self.by_group.get(member.group, [])
        node = self.by_name.get(member.node or "")
        return [node] if node is not None else []

    def member_names(self, part: Partition) -> set[str]:
        """The names of the nodes the partition's members select (their rails aside)."""
        return {n.name for m in part.members for n in self.select(m)}

    def has_any(self, node: str, ports: Iterable[Port]) -> bool:
        """Whether ``node`` has one of ``ports``."""
        return any(node in self.holders.get(p, ()) for p in ports)


_LAST: list[tuple[ClusterSpec, Index]] = []  # validate and render ask per interface, of the same spec


def index_of(spec: ClusterSpec) -> Index:
    if not _LAST or _LAST[0][0] is not spec:
        _LAST[:] = [(spec, Index(spec))]
    return _LAST[0][1]


def partition_ports(spec: ClusterSpec, part: Partition) -> dict[str, frozenset[Port] | Literal["all"]]:
    """Node name -> the ports the partition's members give it (any membership): ``"all"`` or a set."""
    rails = {r.name: rail_ports(r) for r in spec.mpi.rails}
    index = index_of(spec)
    out: dict[str, frozenset[Port] | Literal["all"]] = {}
    for member in part.members:
        ports = rails.get(member.rail, frozenset()) if member.rail is not None else None
        for node in index.select(member):
            held = out.get(node.name, frozenset())
            if ports is None or held == ALL_PORTS:
                out[node.name] = ALL_PORTS
            else:
                out[node.name] = held | ports
    return out
