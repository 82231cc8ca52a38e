"""The partitions as planned: the plan's partitions with their members by port GUID, and the P_Key table
that gives every CA port. Render writes the ib_sm role's partition variables (partitions.conf) from
:func:`plan_partitions`; verify and the twin's proof expect :meth:`PartitionPlan.pkeys`: one computation,
from the spec and the GUIDs, for what is configured and what is checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, NamedTuple

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.members import index_of
from ibprov.clusterspec.model import ClusterSpec, Member, Membership, Partition
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rails import rail_ports
from ibprov.identity.guids import GuidBook
from ibprov.identity.smports import planned_sms
from ibprov.pkey import DEFAULT_BASE, PKey

__all__ = [
    "PartitionMember",
    "PartitionPlan",
    "PlannedDefault",
    "PlannedPartition",
    "UnresolvedNode",
    "both_pkeys",
    "plan_partitions",
    "planned_pkeys",
]

# Where member entries overlap, the most specific sets a port's membership: node, group, all; with a rail, one
# step above the same selector without (node+rail > node > group+rail > group > all+rail > all).
_SPECIFICITY = {"node": 6, "group": 4, "all": 2}
_RANK: dict[Membership, int] = {"limited": 0, "both": 1, "full": 2}


class PartitionMember(NamedTuple):
    port_guid: int
    membership: Membership


@dataclass(frozen=True)
class PlannedPartition:
    name: str
    pkey: PKey  # the key as a full member holds it; .base is what the spec and partitions.conf name
    members: tuple[PartitionMember, ...]  # by port GUID, ascending

    def entries(self, membership: Membership, both: bool) -> frozenset[PKey]:
        """What a member holds: the full or the limited key; ``both``, the full key and -- when OpenSM
        allows both P_Keys of a partition in one table (``both``) -- the limited key as well."""
        if membership == "full" or (membership == "both" and not both):
            return frozenset({self.pkey.as_full()})
        if membership == "limited":
            return frozenset({self.pkey.as_limited()})
        return frozenset({self.pkey.as_full(), self.pkey.as_limited()})


@dataclass(frozen=True)
class PlannedDefault:
    """The Default partition (0x7fff): every port, with the spec's membership; the SM ports always full."""

    membership: Literal["full", "limited"]
    sm_ports: frozenset[int]  # every planned SM's port GUID (the known ones)

    @property
    def pkey(self) -> PKey:
        return PKey(DEFAULT_BASE, full=self.membership == "full")

    def entry(self, port_guid: int) -> PKey:
        """A full member of Default whichever SM is master, so that a failover changes no PKey table (OpenSM's
        ``SELF=full`` alone makes only the running master's port full)."""
        return self.pkey.as_full() if port_guid in self.sm_ports else self.pkey


@dataclass(frozen=True)
class UnresolvedNode:
    """A node whose ports partitions need but whose port GUIDs nothing gives yet."""

    first: Path  # the first member entry that selected one of them
    ports: tuple[str, ...]  # DEVICE:PORT, once per partition that needs it
    partitions: tuple[str, ...]  # the partitions, once per port


@dataclass(frozen=True)
class PartitionPlan:
    default: PlannedDefault
    partitions: tuple[PlannedPartition, ...]  # in spec order
    both: bool  # OpenSM's allow_both_pkeys (see both_pkeys)
    unresolved: Mapping[str, UnresolvedNode]  # node -> its ports without a GUID, in the order found

    @property
    def names(self) -> dict[int, str]:
        """Partition key (15 bits) -> partition name, Default included."""
        return {DEFAULT_BASE: "Default", **{p.pkey.base: p.name for p in self.partitions}}

    def pkeys(self, port_guids: Iterable[int]) -> dict[int, frozenset[PKey]]:
        """Port GUID -> the P_Key table entries the plan gives it: Default's, then every partition's."""
        out: dict[int, set[PKey]] = {g: {self.default.entry(g)} for g in port_guids}
        for part in self.partitions:
            held = {m: part.entries(m, self.both) for m in _RANK}
            for guid, membership in part.members:
                out.setdefault(guid, set()).update(held[membership])
        return {g: frozenset(keys) for g, keys in out.items()}


def both_pkeys(spec: ClusterSpec) -> bool:
    """Whether a member is in a partition as "both" (full and limited): OpenSM then needs allow_both_pkeys."""
    return any(m.membership == "both" or p.defmember == "both" for p in spec.partitions for m in p.members)


def _member_kind(m: Member) -> str:
    return "node" if m.node else "group" if m.group else "all"


_Missing = dict[str, tuple[Path, list[str], list[str]]]  # node -> (first member, ports, partitions)


def _members(
    loaded: LoadedSpec, book: GuidBook, part_index: int, part: Partition, missing: _Missing
) -> tuple[PartitionMember, ...]:
    """Port GUID -> membership for one partition; the most specific member entry wins, then the strongest.
    A member with a rail holds only the node's ports that the rail lists (its DEVICE:PORT entries)."""
    spec = loaded.spec
    rails = {r.name: rail_ports(r) for r in spec.mpi.rails}
    chosen: dict[tuple[str, str, int], tuple[int, int, Membership]] = {}
    origin: dict[tuple[str, str, int], Path] = {}
    index = index_of(spec)  # the nodes a member selects, as validation saw them
    for j, m in enumerate(part.members):
        membership: Membership = m.membership or part.defmember
        only = rails.get(m.rail, frozenset()) if m.rail is not None else None
        rank = (_SPECIFICITY[_member_kind(m)] + (0 if only is None else 1), _RANK[membership], membership)
        strength = rank[:2]
        where = ("partitions", part_index, "members", j)
        for selected in index.select(m):
            name = selected.name
            for hca in selected.hcas:
                device = hca.device
                for port in hca.ports:
                    if only is not None and (device, port) not in only:
                        continue
                    key = (name, device, port)
                    held = chosen.get(key)
                    if held is None or strength > held[:2]:
                        chosen[key] = rank
                        origin[key] = where
    out: list[PartitionMember] = []
    port_guid = book.port_guid
    for (node, dev, port), (_s, _r, membership) in chosen.items():
        guid = port_guid(node, dev, port)
        if guid is None:
            _first, ports, parts = missing.setdefault(node, (origin[(node, dev, port)], [], []))
            ports.append(f"{dev}:{port}")
            parts.append(part.name)
            continue
        out.append(PartitionMember(guid, membership))
    out.sort()
    return tuple(out)


def _sm_ports(loaded: LoadedSpec, book: GuidBook) -> frozenset[int]:
    return frozenset(sm.port_guid for sm in planned_sms(loaded, book) if sm.port_guid is not None)


def plan_partitions(loaded: LoadedSpec, book: GuidBook) -> PartitionPlan:
    """The plan's partitions, members by port GUID; a port whose GUID is unknown is left out and its node
    named in ``unresolved`` (render reports it)."""
    spec = loaded.spec
    missing: _Missing = {}
    partitions = tuple(
        PlannedPartition(p.name, PKey(p.pkey, full=True), _members(loaded, book, i, p, missing))
        for i, p in enumerate(spec.partitions)
    )
    unresolved = {node: UnresolvedNode(w, tuple(ports), tuple(parts)) for node, (w, ports, parts) in missing.items()}
    return PartitionPlan(
        default=PlannedDefault(spec.default_partition.membership, _sm_ports(loaded, book)),
        partitions=partitions,
        both=both_pkeys(spec),
        unresolved=MappingProxyType(unresolved),
    )


def planned_pkeys(loaded: LoadedSpec, book: GuidBook) -> dict[int, frozenset[PKey]]:
    """Every spec CA port with a known GUID -> the P_Key table entries the plan gives it."""
    ports = (book.port_guid(n.name, h.device, p) for n in loaded.spec.nodes for h in n.hcas for p in h.ports)
    return plan_partitions(loaded, book).pkeys(g for g in ports if g is not None)
