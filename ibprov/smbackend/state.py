"""The one model every back end is rendered from and read back into: the SM's state and the partitions by
P_Key, members by port GUID. OpenSM's partitions.conf, the switch's CLI and UFM's payload each parse back
into it, so that "the same partitions" is one comparison (:func:`differences`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = ["BackendState", "Membership", "PartitionState", "SmState", "differences", "fmt_guid_hex", "partition_name"]

Membership = Literal["full", "limited", "both"]
Member = tuple[int, Membership]  # (port GUID, membership)


def fmt_guid_hex(guid: int) -> str:
    return f"0x{guid:016x}"


@dataclass(frozen=True)
class PartitionState:
    pkey: int  # the 15-bit base (0x0001-0x7ffe)
    name: str | None  # None where the back end keeps no name (UFM before 6.22)
    ipoib: bool
    members: frozenset[Member]
    mtu: int | None = None  # IBTA MTU code (4 = 2048), None: the back end's default
    rate: float | None = None  # Gb/s, None: the back end's default
    sl: int | None = None  # service level, None: the back end's default

    def without(self, fields: Iterable[str]) -> PartitionState:
        """This partition with ``fields`` cleared (what a back end does not carry)."""
        gone = set(fields)
        return replace(
            self,
            name=None if "name" in gone else self.name,
            ipoib=False if "ipoib" in gone else self.ipoib,
            members=frozenset() if "members" in gone else self.members,
            mtu=None if "mtu" in gone else self.mtu,
            rate=None if "rate" in gone else self.rate,
            sl=None if "sl" in gone else self.sl,
        )

    @property
    def member_map(self) -> dict[int, Membership]:
        return dict(self.members)


def partition_name(part: PartitionState) -> str:
    """The name a partition goes by where the form needs one (the switch's CLI, partitions.conf): its own, else
    ``pkey_0010`` for P_Key 0x0010 (UFM before 6.22 keeps no name)."""
    return part.name or f"pkey_{part.pkey:04x}"


@dataclass(frozen=True)
class SmState:
    enabled: bool
    priority: int | None  # None: not read / not set


@dataclass(frozen=True)
class BackendState:
    sm: SmState | None = None  # None: the back end has no SM switch of its own (UFM: its SM is always on)
    partitions: Mapping[int, PartitionState] = field(default_factory=dict)  # pkey -> partition

    def only(self, carried: Iterable[str]) -> BackendState:
        """The partitions reduced to the fields a back end carries (the rest cleared)."""
        keep = set(carried)
        drop = [f for f in ("name", "ipoib", "members", "mtu", "rate", "sl") if f not in keep]
        return BackendState(self.sm, {k: p.without(drop) for k, p in self.partitions.items()})


def differences(want: Mapping[int, PartitionState], have: Mapping[int, PartitionState]) -> list[str]:
    """What differs between two partition sets, one line each (empty: the same partitions)."""
    out = []
    for pkey in sorted(set(want) | set(have)):
        w, h = want.get(pkey), have.get(pkey)
        if h is None:
            out.append(f"0x{pkey:04x}: missing")
            continue
        if w is None:
            out.append(f"0x{pkey:04x} ({h.name or 'unnamed'}): not planned")
            continue
        for name in ("name", "ipoib", "mtu", "rate", "sl"):
            if getattr(w, name) != getattr(h, name):
                out.append(f"0x{pkey:04x}: {name} {getattr(h, name)!r}, planned {getattr(w, name)!r}")
        wm, hm = w.member_map, h.member_map
        for guid in sorted(set(wm) | set(hm)):
            if wm.get(guid) != hm.get(guid):
                out.append(
                    f"0x{pkey:04x}: member {fmt_guid_hex(guid)} {hm.get(guid) or 'absent'}, planned "
                    f"{wm.get(guid) or 'absent'}"
                )
    return out
