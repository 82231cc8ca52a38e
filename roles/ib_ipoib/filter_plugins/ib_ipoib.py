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

FULL_MEMBER = 0x8000
MODES = ("datagram", "connected")
# IPoIB MTU = IB MTU - 4 in datagram mode (max IB MTU 4096); connected mode allows 65520.
MAX_MTU = {"datagram": 4092, "connected": 65520}
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")  # IFNAMSIZ - 1


def _parent(iface):
    return iface.get("parent") or str(iface.get("name", "")).split(".", 1)[0]


def _pkey(iface):
    """Interface PKey with the full-member bit set, or None for the parent link itself."""
    pkey = iface.get("pkey")
    if pkey is None:
        return None
    return (int(pkey) & 0x7FFF) | FULL_MEMBER


def canonical_name(parent, pkey):
    """The kernel's name for a child created with create_child: ib0 + 0x8010 -> ib0.8010."""
    return f"{parent}.{pkey:04x}"


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
                f"(full-member bit 0x8000 set, 4 hex digits), not {name!r}"
            )
        if parent == name:
            problems.append(f"{where}: a partition child interface cannot be its own parent")
    return problems


def _value_problems(where, iface, pkey):
    problems = []
    if pkey is not None and not 0x0001 <= (pkey & 0x7FFF) <= 0x7FFE:
        problems.append(
            f"{where}: pkey 0x{pkey & 0x7FFF:04x} out of range 0x0001-0x7ffe (0x7fff is the default "
            "partition: use the parent link with pkey null)"
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
            problems.append(f"{where}: pkey {iface.get('pkey')!r} is not an integer")
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
                "pkey": pkey,
                "pkey_hex": None if pkey is None else f"0x{pkey:04x}",
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
