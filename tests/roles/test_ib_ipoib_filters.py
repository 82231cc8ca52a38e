"""Unit tests for roles/ib_ipoib/filter_plugins/ib_ipoib.py (naming, PKeys, validation)."""

from __future__ import annotations

from typing import Any

import pytest
from role_code import load

f = load("ib_ipoib", "filter_plugins/ib_ipoib.py", "ib_ipoib_filters")

GOOD: list[dict[str, Any]] = [
    {"name": "ib0", "parent": "ib0", "pkey": None, "mode": "datagram", "mtu": 2044, "address": "10.10.0.11/24"},
    {"name": "ib0.8010", "parent": "ib0", "pkey": 0x10, "mode": "connected", "mtu": 65520, "address": "10.20.0.1/24"},
    {"name": "ib1.8020", "parent": "ib1", "pkey": 0x8020, "mode": "datagram", "mtu": None, "address": None},
    {"name": "ib-store", "parent": "ib1", "pkey": 0x30, "address": "fd00::5/64"},
]


def test_valid_plan_has_no_problems() -> None:
    assert f.ib_ipoib_problems(GOOD) == []


def test_normalize_sets_full_member_bit_and_defaults() -> None:
    norm = f.ib_ipoib_normalize(GOOD)
    assert [(i["name"], i["pkey_hex"], i["child"]) for i in norm] == [
        ("ib0", None, False),
        ("ib0.8010", "0x8010", True),
        ("ib1.8020", "0x8020", True),
        ("ib-store", "0x8030", True),
    ]
    assert norm[1]["pkey"] == 0x8010
    assert norm[3]["mode"] == "datagram"
    assert norm[3]["mtu"] is None


def test_parent_derived_from_dotted_name() -> None:
    norm = f.ib_ipoib_normalize([{"name": "ib2.8040", "pkey": 0x40}])
    assert norm[0]["parent"] == "ib2"


def test_parents_group_children_in_first_seen_order() -> None:
    parents = f.ib_ipoib_parents(f.ib_ipoib_normalize(GOOD))
    assert [(p["name"], p["children"], p["interface"] is not None) for p in parents] == [
        ("ib0", ["ib0.8010"], True),
        ("ib1", ["ib1.8020", "ib-store"], False),
    ]


def test_canonical_name() -> None:
    assert f.canonical_name("ib0", 0x8010) == "ib0.8010"
    assert f.canonical_name("ib0", 0x8001) == "ib0.8001"


@pytest.mark.parametrize(
    ("iface", "message"),
    [
        ({"name": "ib0.10", "parent": "ib0", "pkey": 0x10}, "is named 'ib0.8010'"),
        ({"name": "ib0", "parent": "ib1", "pkey": None}, "pkey is null (the parent link itself)"),
        ({"name": "ib0.ffff", "parent": "ib0", "pkey": 0x7FFF}, "out of range 0x0001-0x7ffe"),
        ({"name": "ib0", "pkey": None, "mode": "fast"}, "mode 'fast' is not one of datagram, connected"),
        ({"name": "ib0", "pkey": None, "mtu": 9000}, "mtu 9000 out of range 576-4092 for datagram mode"),
        ({"name": "ib0", "pkey": None, "address": "10.0.0.1"}, "is not ADDRESS/PREFIXLEN"),
        ({"name": "ib0", "pkey": None, "address": "10.0.0.300/24"}, "is not ADDRESS/PREFIXLEN"),
        ({"name": "ib0.8010", "parent": "ib0", "pkey": "x"}, "is not an integer"),
        ({"name": "a-very-long-interface-name"}, "not a valid interface name"),
        ({"pkey": 1}, "name is required"),
    ],
)
def test_problems(iface: dict[str, Any], message: str) -> None:
    problems = f.ib_ipoib_problems([iface])
    assert any(message in p for p in problems), problems


def test_duplicate_names() -> None:
    problems = f.ib_ipoib_problems([{"name": "ib0"}, {"name": "ib0"}])
    assert problems == ["ib_ipoib_interfaces[1]: interface ib0 is already defined at ib_ipoib_interfaces[0]"]


def test_filter_module_exports() -> None:
    assert set(f.FilterModule().filters()) == {"ib_ipoib_problems", "ib_ipoib_normalize", "ib_ipoib_parents"}
