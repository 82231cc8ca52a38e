"""The P_Key (ibprov/pkey.py): the full-member bit is 0x8000, the partition key the low 15 bits,
for every 16-bit table entry; the module stays shippable to hosts (no imports, Python 3.6 syntax)."""

from __future__ import annotations

import ast
import copy
import json
import pickle
from pathlib import Path

import pytest

from ibprov import pkey
from ibprov.pkey import (
    BASE_MASK,
    DEFAULT_BASE,
    FULL_MEMBER_BIT,
    MAX_PARTITION_BASE,
    MIN_PARTITION_BASE,
    PKey,
    is_valid_partition_base,
)


def test_the_constants_are_the_ibta_ones() -> None:
    assert (FULL_MEMBER_BIT, BASE_MASK, DEFAULT_BASE) == (0x8000, 0x7FFF, 0x7FFF)
    assert (MIN_PARTITION_BASE, MAX_PARTITION_BASE) == (0x0001, 0x7FFE)


@pytest.mark.parametrize(
    ("entry", "base", "full", "text"),
    [
        (0xFFFF, 0x7FFF, True, "0xffff"),  # Default, full member
        (0x7FFF, 0x7FFF, False, "0x7fff"),  # Default, limited member
        (0x8010, 0x0010, True, "0x8010"),
        (0x0010, 0x0010, False, "0x0010"),
        (0x8000, 0x0000, True, "0x8000"),  # an empty entry with the bit set
        (0x0000, 0x0000, False, "0x0000"),
        (0x0001, 0x0001, False, "0x0001"),
        (0xFFFE, 0x7FFE, True, "0xfffe"),
    ],
)
def test_a_table_entry_is_its_partition_key_and_the_full_member_bit(
    entry: int, base: int, full: bool, text: str
) -> None:
    key = PKey.from_wire(entry)
    assert (key.base, key.full, key.wire, key.hex, str(key)) == (base, full, entry, text, text)
    assert key.membership == ("full" if full else "limited")
    assert PKey(base, full=full) == key == entry
    assert type(key.wire) is int
    assert type(key.base) is int


def test_every_16_bit_entry_round_trips() -> None:
    for entry in range(0x10000):
        key = PKey.from_wire(entry)
        assert key.wire == entry
        assert key.base == entry % 0x8000
        assert key.full is (entry >= 0x8000)
        assert PKey(key.base, full=key.full) == entry
        assert key.as_full() == entry | 0x8000
        assert key.as_limited() == entry % 0x8000


@pytest.mark.parametrize("entry", [-1, 0x10000, 0x18010])
def test_an_entry_wider_than_16_bits_is_refused(entry: int) -> None:
    with pytest.raises(ValueError, match="is not 16 bits"):
        PKey.from_wire(entry)


@pytest.mark.parametrize("base", [-1, 0x8000, 0x8010])
def test_a_base_wider_than_15_bits_is_refused(base: int) -> None:
    with pytest.raises(ValueError, match="is not 15 bits"):
        PKey(base, full=False)


def test_the_default_partition_and_empty_entries() -> None:
    assert PKey.from_wire(0xFFFF).is_default
    assert PKey.from_wire(0x7FFF).is_default
    assert not PKey.from_wire(0x7FFE).is_default
    assert PKey.from_wire(0x0000).is_empty
    assert PKey.from_wire(0x8000).is_empty
    assert not PKey.from_wire(0x0001).is_empty


@pytest.mark.parametrize(
    ("base", "valid"),
    [(0x0000, False), (0x0001, True), (0x0010, True), (0x7FFE, True), (0x7FFF, False), (0x8000, False), (-1, False)],
)
def test_which_keys_a_partition_may_have(base: int, valid: bool) -> None:
    assert is_valid_partition_base(base) is valid


def test_the_ipoib_child_is_named_with_the_full_member_bit_whatever_the_membership() -> None:
    assert PKey(0x0010, full=True).child_name("ib0") == "ib0.8010"
    assert PKey(0x0010, full=False).child_name("ib0") == "ib0.8010"
    assert PKey(0x0001, full=False).child_name("ib1") == "ib1.8001"
    assert PKey(0x7FFE, full=True).child_name("ib0") == "ib0.fffe"


def test_a_pkey_is_its_16_bit_int_in_sets_sorting_json_and_pickles() -> None:
    keys = frozenset({PKey(0x10, full=True), PKey(0x20, full=False), PKey(DEFAULT_BASE, full=True)})
    assert keys == {0x8010, 0x0020, 0xFFFF}
    assert sorted(keys) == [0x0020, 0x8010, 0xFFFF]
    assert json.dumps(sorted(keys)) == "[32, 32784, 65535]"
    for key in keys:
        for again in (pickle.loads(pickle.dumps(key)), copy.deepcopy(key), copy.copy(key)):
            assert type(again) is PKey
            assert again == key
    assert repr(PKey(0x10, full=True)) == "PKey(0x0010, full=True)"
    assert f"{PKey(0x10, full=True)} {PKey(0x10, full=True):04x}" == "0x8010 8010"


@pytest.mark.reads_own_source
def test_the_module_can_be_shipped_to_a_host() -> None:
    """pkeytables_probe.py carries this module's source to hosts: no import at all, Python 3.6 syntax, and no
    ``from __future__`` (which must come first in a file, and 3.6 has no ``annotations`` feature)."""
    source = Path(pkey.__file__).read_text()
    tree = ast.parse(source, feature_version=(3, 6))
    assert [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)] == []
    namespace: dict[str, object] = {}
    exec(compile(source, "pkey.py", "exec"), namespace)  # runs alone, as inside the probe
    shipped = namespace["PKey"]
    assert isinstance(shipped, type)
    assert shipped.from_wire(0x8010).base == 0x10
