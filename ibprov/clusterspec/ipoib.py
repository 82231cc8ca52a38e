"""What an IPoIB interface of the spec comes to: its Linux name, the nodes that get it and the addresses its
pool hands them. The rules check these (:mod:`ibprov.clusterspec.rules.ipoib`); render writes them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address

from ibprov.clusterspec.members import ALL_PORTS, index_of, partition_ports
from ibprov.clusterspec.model import ClusterSpec, IpoibInterface
from ibprov.clusterspec.rails import Port, rail_ports
from ibprov.pkey import PKey

__all__ = ["PlannedInterface", "interface_name", "ipoib_nodes", "ipoib_pool", "planned_interfaces", "pool_start"]


def interface_name(spec: ClusterSpec, iface: IpoibInterface) -> str:
    """The Linux interface name: explicit, the parent for the Default partition, else PARENT.PKEY (ib0.8010)."""
    if iface.name:
        return iface.name
    part = next((p for p in spec.partitions if p.name == iface.partition), None)
    if part is None:
        return iface.parent
    return PKey(part.pkey, full=True).child_name(iface.parent)


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


def pool_start(iface: IpoibInterface) -> IPv4Address | IPv6Address:
    """The pool's first address: ``pool_start``, else the subnet's first host address."""
    if iface.pool_start is not None:
        return iface.pool_start
    hosts: Iterator[IPv4Address | IPv6Address] = iter(iface.subnet.hosts())
    return next(hosts, iface.subnet.network_address)


def ipoib_pool(iface: IpoibInterface, nodes: list[str]) -> list[IPv4Address | IPv6Address]:
    """Addresses handed out, in order, to ``nodes`` (skipping explicitly assigned ones)."""
    taken = set(iface.addresses.values())
    out: list[IPv4Address | IPv6Address] = []
    cur = int(pool_start(iface))
    while len(out) < len(nodes) and cur < int(iface.subnet.broadcast_address):
        addr = ip_address(cur)
        if addr not in taken:
            out.append(addr)
        cur += 1
    return out


@dataclass(frozen=True)
class PlannedInterface:
    """One IPoIB interface on one node, as the spec plans it: what render writes (ib_ipoib_interfaces) and
    verify expects to find."""

    name: str  # ib0, ib0.8010
    parent: str
    pkey: PKey | None  # the child's P_Key (a full member); None: the parent link (the Default partition)
    mode: str  # datagram, connected
    mtu: int
    address: str  # as the spec writes a fixed one, or the pool's
    prefixlen: int

    @property
    def cidr(self) -> str:
        return f"{self.address}/{self.prefixlen}"


def planned_interfaces(spec: ClusterSpec) -> dict[str, list[PlannedInterface]]:
    """node -> its IPoIB interfaces in spec order. An interface goes to the members of its partition that have
    its port: with ``rail``, only the nodes with a port of that rail (the pool hands its addresses to those
    alone); fixed addresses first, the pool fills in the rest."""
    pkeys = {p.name: PKey(p.pkey, full=True) for p in spec.partitions}  # a child interface is a full member
    out: dict[str, list[PlannedInterface]] = {}
    for iface in spec.ipoib:
        need = [name for name in ipoib_nodes(spec, iface) if name not in iface.addresses]
        addresses = {name: str(a) for name, a in iface.addresses.items()}
        addresses.update(zip(need, map(str, ipoib_pool(iface, need)), strict=True))
        name, pkey = interface_name(spec, iface), pkeys.get(iface.partition)
        for node in spec.nodes:
            if node.name in addresses:
                out.setdefault(node.name, []).append(
                    PlannedInterface(
                        name,
                        iface.parent,
                        pkey,
                        iface.mode,
                        iface.effective_mtu,
                        addresses[node.name],
                        iface.subnet.prefixlen,
                    )
                )
    return out
