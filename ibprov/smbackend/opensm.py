"""The host-OpenSM side of the one model: partitions.conf (OpenSM 3.3 grammar) read back into
:class:`BackendState`, and a state written as the ib_sm role's partition variables (so that the twin can run
the real OpenSM with what a switch or UFM would hold). The Default partition (0x7fff) is not part of the
model: every back end keeps its own.

Grammar (OpenSM's doc/partition-config.txt, 3.3.x): ``Name[=PKey][,flag[=value]]... : member[,member]... ;``
where a flag is ``ipoib``, ``mtu=``, ``rate=``, ``sl=``, ``scope=``, ``Q_Key=``, ``TClass=`` or
``defmember=full|limited|both``, and a member is a port GUID with an optional ``=full|limited|both`` (without
one: the partition's defmember, else limited), or ``NONE``. ``#`` starts a comment. Group members (``ALL``,
``ALL_CAS``, ``SELF``, ...) name no GUID: outside Default they are refused, since the model holds GUIDs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, cast

from ibprov.clusterspec.units import RATE_CODE
from ibprov.pkey import DEFAULT_BASE
from ibprov.smbackend.state import BackendState, Membership, PartitionState, partition_name

__all__ = ["CARRIED", "parse_partitions_conf", "partition_vars"]

CARRIED = ("name", "ipoib", "members", "mtu", "rate", "sl")
_RATE_GBPS = {code: gbps for gbps, code in RATE_CODE.items()}
_MEMBERSHIPS = ("full", "limited", "both")
_GUID = re.compile(r"^0x[0-9a-fA-F]{1,16}$")


def parse_partitions_conf(text: str) -> BackendState:
    """Every partition but Default, members by port GUID. Raises ValueError naming the entry it cannot read."""
    body = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    parts: dict[int, PartitionState] = {}
    for entry in (e.strip() for e in body.split(";")):
        if not entry:
            continue
        head, sep, members = entry.partition(":")
        if not sep:
            raise ValueError(f"partition entry without ':': {entry[:60]!r}")
        part = _partition(head.strip(), members)
        if part is not None:
            parts[part.pkey] = part
    return BackendState(None, parts)


def _partition(head: str, members: str) -> PartitionState | None:
    name_key, *flags = [f.strip() for f in head.split(",")]
    name, _, key = name_key.partition("=")
    if not key:
        raise ValueError(f"partition {name!r} has no P_Key")
    pkey = int(key, 16) & 0x7FFF
    if pkey == DEFAULT_BASE:
        return None
    values: dict[str, str] = {}
    for flag in flags:
        k, _, v = flag.partition("=")
        values[k.strip()] = v.strip()
    default = cast(Membership, values.get("defmember", "limited"))
    return PartitionState(
        pkey=pkey,
        name=name.strip(),
        ipoib="ipoib" in values,
        members=frozenset(_members(members, default, name)),
        mtu=int(values["mtu"]) if "mtu" in values else None,
        rate=_RATE_GBPS[int(values["rate"])] if "rate" in values else None,
        sl=int(values["sl"]) if "sl" in values else None,
    )


def _members(text: str, default: Membership, name: str) -> Iterable[tuple[int, Membership]]:
    for item in (m.strip() for m in text.replace("\n", " ").split(",")):
        if not item or item == "NONE":
            continue
        guid, _, membership = (p.strip() for p in item.partition("="))
        if not _GUID.match(guid):
            raise ValueError(f"partition {name}: member {item!r} names no port GUID")
        if membership and membership not in _MEMBERSHIPS:
            raise ValueError(f"partition {name}: member {item!r} has no membership full, limited or both")
        yield int(guid, 16), cast(Membership, membership or default)


def partition_vars(state: BackendState) -> list[dict[str, Any]]:
    """``state``'s partitions as the ib_sm role's ``ib_sm_partitions`` (the twin renders partitions.conf from
    them with the role's own template)."""
    return [
        {
            "name": partition_name(p),
            "pkey": p.pkey,
            "ipoib": p.ipoib,
            "mtu": p.mtu,
            "rate": None if p.rate is None else RATE_CODE[p.rate],
            "sl": p.sl,
            "defmember": "limited",
            "members": [{"guid": f"0x{g:016x}", "membership": ms} for g, ms in sorted(p.members)],
        }
        for p in (state.partitions[k] for k in sorted(state.partitions))
    ]
