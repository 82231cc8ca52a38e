"""IPoIB interfaces: a known partition that carries IPoIB, an MTU that fits it, a name that says its parent
and P_Key, addresses inside the subnet and used once, a pool large enough; with a rail, a rail that has an
``ipoib_parent`` and nodes with a port of it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from ipaddress import IPv4Address, IPv6Address

from ibprov.clusterspec.ipoib import interface_name, ipoib_nodes, ipoib_pool, pool_start
from ibprov.clusterspec.members import index_of
from ibprov.clusterspec.model import ClusterSpec, IpoibInterface, Partition, Rail
from ibprov.clusterspec.positions import Path, format_path
from ibprov.clusterspec.rules.findings import Finding, dupes, hint
from ibprov.clusterspec.rules.rails import unknown_rail
from ibprov.clusterspec.topology import Topology
from ibprov.pkey import DEFAULT_BASE, PKey


def ipoib_is_consistent(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    if not spec.ipoib:
        return
    parts = {p.name: p for p in spec.partitions}
    index = index_of(spec)
    everyone = set(index.by_name)
    for i, a in enumerate(spec.ipoib):
        for j in range(i):
            b = spec.ipoib[j]
            if a.subnet.version == b.subnet.version and a.subnet.overlaps(b.subnet):
                yield ("ipoib", i, "subnet"), f"{a.subnet} overlaps {b.subnet} (ipoib[{j}])"
    names: list[tuple[object, Path]] = []
    used: dict[object, Path] = {}
    for i, iface in enumerate(spec.ipoib):
        path: Path = ("ipoib", i)
        if iface.partition != "default" and iface.partition not in parts:
            yield (
                (*path, "partition"),
                f"unknown partition {iface.partition!r}{hint(iface.partition, parts)}",
            )
            continue
        part_mtu = spec.default_partition.mtu if iface.partition == "default" else parts[iface.partition].mtu
        ipoib_flag = spec.default_partition.ipoib if iface.partition == "default" else parts[iface.partition].ipoib
        if not ipoib_flag:
            yield (
                (*path, "partition"),
                (
                    f"partition {iface.partition} has ipoib: false, so OpenSM creates no "
                    "broadcast group and the interface cannot come up"
                ),
            )
        if iface.mode == "datagram" and iface.effective_mtu > (part_mtu or 2048) - 4:
            yield (
                (*path, "mtu"),
                (
                    f"datagram mtu {iface.effective_mtu} does not fit the partition's IB MTU "
                    f"{part_mtu or 2048} (at most {(part_mtu or 2048) - 4})"
                ),
            )
        yield from _name_problems(spec, iface, path)
        names.append((interface_name(spec, iface), (*path, "name")))
        nodes_in = everyone if iface.partition == "default" else index.member_names(parts[iface.partition])
        for node, addr in iface.addresses.items():
            if node not in everyone:
                yield (*path, "addresses", node), f"unknown node {node!r}{hint(node, everyone)}"
                continue
            yield from _address_problems(iface, addr, (*path, "addresses", node), node, nodes_in, used)
        # the pool counts the nodes render gives the interface (a rail's: only those with the rail's port)
        getting = set(ipoib_nodes(spec, iface)) if iface.rail is not None and nodes_in else nodes_in
        yield from _pool_problems(spec, iface, path, getting, used)
    yield from dupes(names, "IPoIB interface")


def _name_problems(spec: ClusterSpec, iface: IpoibInterface, path: Path) -> Iterator[Finding]:
    """An interface name that says another parent or another P_Key than the fields do."""
    if iface.name is None:
        return
    part = next((p for p in spec.partitions if p.name == iface.partition), None)
    pkey = DEFAULT_BASE if part is None else part.pkey
    child = PKey(pkey, full=True).child_name(iface.parent)
    base, dot, suffix = iface.name.partition(".")
    if part is not None and iface.name == iface.parent:
        yield (
            (*path, "name"),
            f"{iface.name} is the parent interface itself, which carries the Default partition, not "
            f"{part.name} (0x{pkey:04x}): name it {child}",
        )
    elif dot and base != iface.parent:
        yield (*path, "name"), f"{iface.name} names parent {base}, but parent is {iface.parent}"
    elif dot and re.fullmatch(r"[0-9a-f]{4}", suffix) and PKey.from_wire(int(suffix, 16)).base != pkey:
        fix = iface.parent if part is None else child
        yield (
            (*path, "name"),
            f"{iface.name} says P_Key 0x{suffix}, but partition {iface.partition} has P_Key 0x{pkey:04x} "
            f"(name it {fix})",
        )


def _address_problems(
    iface: IpoibInterface,
    addr: IPv4Address | IPv6Address,
    path: Path,
    node: str,
    nodes_in: set[str],
    used: dict[object, Path],
) -> Iterator[Finding]:
    if node not in nodes_in:
        yield path, f"{node} is not a member of partition {iface.partition}"
    if addr not in iface.subnet:
        yield path, f"{addr} is not inside {iface.subnet}"
    elif addr in (iface.subnet.network_address, iface.subnet.broadcast_address) and iface.subnet.num_addresses > 2:
        yield path, f"{addr} is the network or broadcast address of {iface.subnet}"
    if addr in used:
        yield path, f"address {addr} is used twice (also at {format_path(used[addr])})"
    used[addr] = path


def _pool_problems(
    spec: ClusterSpec, iface: IpoibInterface, path: Path, nodes_in: set[str], used: dict[object, Path]
) -> Iterator[Finding]:
    need = [n.name for n in spec.nodes if n.name in nodes_in and n.name not in iface.addresses]
    if not need:
        return
    start = pool_start(iface)
    if start not in iface.subnet:
        yield (*path, "pool_start"), f"{start} is not inside {iface.subnet}"
        return
    last = iface.subnet.broadcast_address
    fixed = {a for a in iface.addresses.values() if int(start) <= int(a) < int(last)}  # the pool skips them
    available = int(last) - int(start) - len(fixed)
    if available < len(need):
        n = len(fixed)
        counted = f" once the {n} fixed address{'es there are' if n > 1 else ' there is'} counted" if fixed else ""
        yield (
            (*path, "subnet"),
            f"{len(need)} nodes need an address but {iface.subnet} has only {max(available, 0)} from {start}{counted}",
        )
        return
    for addr in ipoib_pool(iface, need):
        if addr in used:
            yield (*path, "pool_start"), f"pool address {addr} is also at {format_path(used[addr])}"
        used[addr] = (*path, "pool_start")


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
            continue  # ipoib_is_consistent reports it
        if iface.rail is None:
            if part is not None:
                yield from _rail_only_partition(spec, iface, part, path)
        elif iface.rail not in rails:
            yield (*path, "rail"), unknown_rail(iface.rail, spec)
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
        members = set(index.by_name) if part is None else index.member_names(part)
        for node in iface.addresses:
            if node in members and node not in gets:  # else: not a member at all (ipoib_is_consistent)
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
