# Copyright: ibprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Filters for the ib_ipoib role: validate and normalise ib_ipoib_interfaces.

ib_ipoib_problems(interfaces)  -> list of human-readable problems ([] when valid)
ib_ipoib_normalize(interfaces) -> list of interfaces with derived fields
ib_ipoib_parents(normalized)   -> one entry per parent link that networkd/NM must configure
"""

from __future__ import annotations

import ipaddress
import re

# The P_Key contract: the same names, values and meaning as ibprov/pkey.py. The role keeps its own
# copy because it must run where ibprov is not installed (a role is copied alone onto a controller or into an
# execution environment, and a filter plugin can import neither ibprov nor a file outside its role);
# tests/roles/test_pkey_contract.py proves the two agree on every 16-bit value.
FULL_MEMBER_BIT = 0x8000  # set in an entry: a full member; clear: a limited member
BASE_MASK = 0x7FFF  # the 15-bit partition key of an entry
DEFAULT_BASE = 0x7FFF  # the Default partition (the parent link itself)
MIN_PARTITION_BASE = 0x0001
MAX_PARTITION_BASE = 0x7FFE
MAX_WIRE = BASE_MASK | FULL_MEMBER_BIT


def is_valid_partition_base(base):
    return MIN_PARTITION_BASE <= base <= MAX_PARTITION_BASE


class PKey(int):
    """A P_Key table entry (its int value, membership bit included); see ibprov/pkey.py."""

    __slots__ = ()

    def __new__(cls, base, *, full):
        if not 0 <= base <= BASE_MASK:
            raise ValueError(f"P_Key base 0x{base:x} is not 15 bits (0x0000-0x{BASE_MASK:04x})")
        return super().__new__(cls, base | FULL_MEMBER_BIT if full else base)

    @classmethod
    def from_wire(cls, entry):
        if not 0 <= entry <= MAX_WIRE:
            raise ValueError(f"P_Key table entry 0x{entry:x} is not 16 bits (0x0000-0x{MAX_WIRE:04x})")
        return cls(entry & BASE_MASK, full=bool(entry & FULL_MEMBER_BIT))

    @property
    def wire(self):
        return int(self)

    @property
    def base(self):
        return int(self) & BASE_MASK

    @property
    def full(self):
        return bool(int(self) & FULL_MEMBER_BIT)

    @property
    def hex(self):
        return f"0x{int(self):04x}"

    def as_full(self):
        return PKey(self.base, full=True)

    def child_name(self, parent):
        return f"{parent}.{self.base | FULL_MEMBER_BIT:04x}"


MODES = ("datagram", "connected")
# IPoIB MTU = IB MTU - 4 in datagram mode (max IB MTU 4096); connected mode allows 65520.
MAX_MTU = {"datagram": 4092, "connected": 65520}
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")  # IFNAMSIZ - 1


def _parent(iface):
    return iface.get("parent") or str(iface.get("name", "")).split(".", 1)[0]


def _pkey(iface):
    """Interface PKey as a full member (ib_ipoib_interfaces[].pkey with or without the bit), or None for the
    parent link itself. ValueError: not a 16-bit P_Key."""
    pkey = iface.get("pkey")
    if pkey is None:
        return None
    return PKey.from_wire(int(pkey)).as_full()


def canonical_name(parent, pkey):
    """The kernel's name for a child created with create_child: ib0 + 0x8010 -> ib0.8010."""
    return PKey.from_wire(pkey).child_name(parent)


def _name_problems(where, name, parent, pkey):
    problems = []
    if not _NAME_RE.match(name):
        problems.append(f"{where}: name {name!r} is not a valid interface name (at most 15 of [A-Za-z0-9_.-])")
    if pkey is None:
        if parent != name:
            problems.append(f"{where}: pkey is null (the parent link itself) but parent {parent!r} != name")
    else:
        canonical = canonical_name(parent, pkey)
        if "." in name and name != canonical:
            problems.append(
                f"{where}: a child of {parent} with PKey 0x{pkey:04x} is named {canonical!r} "
                f"(full-member bit 0x{FULL_MEMBER_BIT:04x} set, 4 hex digits), not {name!r}"
            )
        if parent == name:
            problems.append(f"{where}: a partition child interface cannot be its own parent")
    return problems


def _value_problems(where, iface, pkey):
    problems = []
    if pkey is not None and not is_valid_partition_base(pkey.base):
        problems.append(
            f"{where}: pkey 0x{pkey.base:04x} out of range 0x{MIN_PARTITION_BASE:04x}-0x{MAX_PARTITION_BASE:04x} "
            f"(0x{DEFAULT_BASE:04x} is the default partition: use the parent link with pkey null)"
        )
    mode = iface.get("mode") or "datagram"
    if mode not in MODES:
        problems.append(f"{where}: mode {mode!r} is not one of {', '.join(MODES)}")
    mtu = iface.get("mtu")
    if mtu is not None and mode in MODES and not 576 <= int(mtu) <= MAX_MTU[mode]:
        problems.append(f"{where}: mtu {mtu} out of range 576-{MAX_MTU[mode]} for {mode} mode")
    address = iface.get("address")
    if address:
        try:
            ipaddress.ip_interface(address)
            if "/" not in address:
                raise ValueError
        except ValueError:
            problems.append(f"{where}: address {address!r} is not ADDRESS/PREFIXLEN")
    return problems


def ib_ipoib_problems(interfaces):
    problems = []
    seen = {}
    for index, iface in enumerate(interfaces or []):
        where = f"ib_ipoib_interfaces[{index}]"
        name = iface.get("name")
        if not name:
            problems.append(f"{where}: name is required")
            continue
        name = str(name)
        if name in seen:
            problems.append(f"{where}: interface {name} is already defined at ib_ipoib_interfaces[{seen[name]}]")
        seen[name] = index
        try:
            pkey = _pkey(iface)
        except (TypeError, ValueError):
            problems.append(
                f"{where}: pkey {iface.get('pkey')!r} is not an integer P_Key (0x0000-0x{MAX_WIRE:04x})"
            )
            continue
        problems.extend(_name_problems(where, name, _parent(iface), pkey))
        problems.extend(_value_problems(where, iface, pkey))
    return problems


def ib_ipoib_normalize(interfaces):
    result = []
    for iface in interfaces or []:
        pkey = _pkey(iface)
        parent = _parent(iface)
        result.append(
            {
                "name": str(iface["name"]),
                "parent": parent,
                "pkey": None if pkey is None else pkey.wire,
                "pkey_hex": None if pkey is None else pkey.hex,
                "child": pkey is not None,
                "mode": iface.get("mode") or "datagram",
                "mtu": iface.get("mtu"),
                "address": iface.get("address") or None,
            }
        )
    return result


def ib_ipoib_parents(normalized):
    """Parent links in first-seen order: {name, interface (own entry or None), children: [names]}."""
    parents = {}
    for iface in normalized:
        key = iface["parent"] if iface["child"] else iface["name"]
        entry = parents.setdefault(key, {"name": key, "interface": None, "children": []})
        if iface["child"]:
            entry["children"].append(iface["name"])
        else:
            entry["interface"] = iface
    return list(parents.values())


class FilterModule:
    def filters(self):
        return {
            "ib_ipoib_problems": ib_ipoib_problems,
            "ib_ipoib_normalize": ib_ipoib_normalize,
            "ib_ipoib_parents": ib_ipoib_parents,
        }
