"""Multi-HCA (rail) nodes: partition members and IPoIB interfaces restricted to one ``mpi.rails`` rail.

A rail is a list of DEVICE:PORT entries; a node's ports of the rail are those of its HCA ports the list
names (a node may lack one: it then has no port of that rail). The rules here yield (path, message) like
those of :mod:`ibprov.clusterspec.rules`, which registers them; the helpers say which ports and nodes a
rail-restricted member or interface means, for render.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from typing import Literal

from ibprov.clusterspec.model import ClusterSpec, IpoibInterface, Member, Node, Partition, Rail
from ibprov.clusterspec.positions import Path, format_path
from ibprov.clusterspec.rails import Port, rail_ports
from ibprov.clusterspec.topology import Topology

Finding = tuple[Path, str]
ALL_PORTS: Literal["all"] = "all"


def node_ports(node: Node) -> list[Port]:
    return [(hca.device, port) for hca in node.hcas for port in hca.ports]


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


def ipoib_nodes(spec: ClusterSpec, iface: IpoibInterface) -> list[str]:
    """The nodes (in spec order) that get the interface: members of its partition whose member ports hold
    the interface's port. Without a rail, any member node (a rail-restricted member counts only where the
    node has a port of that rail); with ``rail``, only nodes with a port of that rail in the partition."""
    index = index_of(spec)
    wanted: frozenset[Port] | None = None
    if iface.rail is not None:
        rail = next((r for r in spec.mpi.rails if r.name == iface.rail), None)
        wanted = rail_ports(rail) if rail is not None else frozenset()
    if iface.partition == "default":
        if wanted is None:
            return [n.name for n in spec.nodes]  # HCA ports or not (as without rails)
        have = set().union(*(index.holders.get(p, ()) for p in wanted))
        return [n.name for n in spec.nodes if n.name in have]
    part = next((p for p in spec.partitions if p.name == iface.partition), None)
    given = partition_ports(spec, part) if part is not None else {}
    out = []
    for node in spec.nodes:
        ports = given.get(node.name)
        if ports is None:
            continue
        if ports == ALL_PORTS:
            if wanted is None or index.has_any(node.name, wanted):
                out.append(node.name)
        elif index.has_any(node.name, ports if wanted is None else ports & wanted):
            out.append(node.name)
    return out


def _hint(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_rail(name: str, spec: ClusterSpec) -> str:
    names = [r.name for r in spec.mpi.rails]
    if not names:
        return f"unknown rail {name!r}: mpi.rails defines no rail (add it there with its DEVICE:PORT entries)"
    return f"unknown rail {name!r}{_hint(name, names)}: mpi.rails defines {', '.join(names)}"


def _port_list(ports: list[Port]) -> str:
    return ", ".join(f"{d}:{p}" for d, p in ports) or "none"


def partition_rails_are_sound(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """A member's rail is one mpi.rails defines, and the nodes it selects have a port of it; the same
    selector and rail is not listed twice with different memberships."""
    if all(m.rail is None for p in spec.partitions for m in p.members):
        return
    rails = {r.name: r for r in spec.mpi.rails}
    index = index_of(spec)
    by_name, by_group = index.by_name, index.by_group
    for i, part in enumerate(spec.partitions):
        seen: dict[tuple[str, str, str], tuple[int, str]] = {}
        for j, m in enumerate(part.members):
            if m.rail is None:
                continue
            path: Path = ("partitions", i, "members", j)
            key = ("node", m.node) if m.node else ("group", m.group) if m.group else ("all", "all: true")
            membership = m.membership or part.defmember
            first = seen.setdefault((key[0], str(key[1]), m.rail), (j, membership))
            if first[1] != membership:
                what = f"{key[0]} {key[1]}" if key[0] != "all" else "all: true"
                yield (
                    (*path, "membership" if m.membership else "rail"),
                    f"{what} with rail {m.rail} is listed twice in partition {part.name} with different "
                    f"memberships: {membership} here, {first[1]} at partitions[{i}].members[{first[0]}] "
                    "(list it once)",
                )
            rail = rails.get(m.rail)
            if rail is None:
                yield (*path, "rail"), _unknown_rail(m.rail, spec)
                continue
            ports = rail_ports(rail)
            devices = ", ".join(rail.devices)
            if m.node is not None and m.node in by_name:
                node = by_name[m.node]
                if not any(p in ports for p in node_ports(node)):
                    yield (
                        (*path, "rail"),
                        f"node {node.name} has no port of rail {rail.name} ({devices}); its HCA ports: "
                        f"{_port_list(node_ports(node))}",
                    )
            elif m.group in by_group and not any(p in ports for n in by_group[m.group] for p in node_ports(n)):
                yield (*path, "rail"), f"no node of group {m.group} has a port of rail {rail.name} ({devices})"


def ipoib_rails_are_sound(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """An interface's rail is defined and has an ipoib_parent (and the interface no parent of its own); the
    interface is on at least one node, and a fixed address goes only to a node that gets the interface."""
    rails = {r.name: (k, r) for k, r in enumerate(spec.mpi.rails)}
    first_parent: dict[str, int] = {}
    for k, rail in enumerate(spec.mpi.rails):
        if rail.ipoib_parent is None:
            continue
        if rail.ipoib_parent in first_parent:
            other = first_parent[rail.ipoib_parent]
            yield (
                ("mpi", "rails", k, "ipoib_parent"),
                f"rail {rail.name} has the same ipoib_parent {rail.ipoib_parent} as rail "
                f"{spec.mpi.rails[other].name} (mpi.rails[{other}]): each rail has its own port and IPoIB link",
            )
        first_parent.setdefault(rail.ipoib_parent, k)
    parts = {p.name: p for p in spec.partitions}
    index = index_of(spec)
    for i, iface in enumerate(spec.ipoib):
        path: Path = ("ipoib", i)
        part = parts.get(iface.partition)
        if iface.partition != "default" and part is None:
            continue  # rules.ipoib_is_consistent reports it
        if iface.rail is None:
            if part is not None:
                yield from _rail_only_partition(spec, iface, part, path)
        elif iface.rail not in rails:
            yield (*path, "rail"), _unknown_rail(iface.rail, spec)
            continue
        else:
            yield from _rail_parent_problems(iface, *rails[iface.rail], path)
        if iface.rail is None and (part is None or all(m.rail is None for m in part.members)):
            continue  # every member node gets it, as without rails
        gets = set(ipoib_nodes(spec, iface))
        if iface.rail is not None and not gets:
            k, rail = rails[iface.rail]
            where = "no node" if part is None else f"no member of partition {part.name}"
            yield (
                (*path, "rail"),
                f"{where} has a port of rail {rail.name} ({', '.join(rail.devices)}) in it: the interface is on "
                "no node",
            )
        if not iface.addresses:
            continue
        members = set(index.by_name) if part is None else {n.name for m in part.members for n in index.select(m)}
        for node in iface.addresses:
            if node in members and node not in gets:  # else: not a member at all (rules.ipoib_is_consistent)
                yield (*path, "addresses", node), _no_port_here(spec, iface, node)


def _rail_parent_problems(iface: IpoibInterface, k: int, rail: Rail, path: Path) -> Iterator[Finding]:
    at = format_path(("mpi", "rails", k, "ipoib_parent"))
    if "parent" in iface.model_fields_set:
        if rail.ipoib_parent is not None:
            fix = f"remove parent, the interface sits on rail {rail.name}'s ipoib_parent {rail.ipoib_parent} ({at})"
        else:
            fix = f"move it to {at} (the IPoIB link of rail {rail.name}'s port on every node)"
        yield (*path, "parent"), f"parent and rail together: {fix}"
    elif rail.ipoib_parent is None:
        yield (
            (*path, "rail"),
            f"rail {rail.name} has no ipoib_parent: set {at} to the IPoIB link of its port on the nodes "
            "(e.g. ib3 or ibp26s0)",
        )


def _rail_only_partition(spec: ClusterSpec, iface: IpoibInterface, part: Partition, path: Path) -> Iterator[Finding]:
    """An interface without rail on a partition whose every member is restricted to rails: its parent is
    on none of the partition's ports unless it is one of those rails' ipoib_parent."""
    names = list(dict.fromkeys(m.rail for m in part.members))
    if None in names or not names:
        return
    rails = [r for r in spec.mpi.rails if r.name in names]
    if len(rails) != len(names) or any(r.ipoib_parent == iface.parent for r in rails):
        return  # an unknown rail is reported at the member
    listed = ", ".join(str(n) for n in names)
    yield (
        (*path, "partition"),
        f"partition {part.name} has only the ports of rail{'s' if len(names) > 1 else ''} {listed}, and parent "
        f"{iface.parent} is no such rail's ipoib_parent: give the interface rail: {names[0]} (one entry per rail)",
    )


def _no_port_here(spec: ClusterSpec, iface: IpoibInterface, node: str) -> str:
    if iface.rail is not None:
        rail = next(r for r in spec.mpi.rails if r.name == iface.rail)
        where = "" if iface.partition == "default" else f" in partition {iface.partition}"
        return (
            f"{node} has no port of rail {rail.name} ({', '.join(rail.devices)}){where}: only the nodes that have "
            "it get this interface"
        )
    return f"{node} has no HCA port in partition {iface.partition} (its members there are restricted to rails)"


RAIL_RULES = (partition_rails_are_sound, ipoib_rails_are_sound)
