"""The ib_ipoib role's copy of the P_Key contract (its filter plugin cannot import ibprov) agrees with
ibprov/pkey.py on every 16-bit value: the same constants, partition key, membership, text, IPoIB
child name and validity, and the role's filters name, normalise and accept exactly what ibprov renders."""

from __future__ import annotations

import pytest
from role_code import load

from ibprov import pkey as ibprov_pkey
from ibprov.pkey import PKey, is_valid_partition_base

role = load("ib_ipoib", "filter_plugins/ib_ipoib.py", "ib_ipoib_pkey_contract")

CONSTANTS = ("FULL_MEMBER_BIT", "BASE_MASK", "DEFAULT_BASE", "MIN_PARTITION_BASE", "MAX_PARTITION_BASE", "MAX_WIRE")


@pytest.mark.parametrize("name", CONSTANTS)
def test_the_role_has_the_same_constants(name: str) -> None:
    assert getattr(role, name) == getattr(ibprov_pkey, name)


def test_the_role_and_ibprov_read_every_16_bit_entry_alike() -> None:
    for entry in range(0x10000):
        ours, theirs = PKey.from_wire(entry), role.PKey.from_wire(entry)
        assert (theirs.wire, theirs.base, theirs.full, theirs.hex) == (ours.wire, ours.base, ours.full, ours.hex)
        assert theirs.as_full() == ours.as_full()
        assert theirs.child_name("ib0") == ours.child_name("ib0")
        assert role.PKey(ours.base, full=ours.full) == ours
        assert role.is_valid_partition_base(ours.base) is is_valid_partition_base(ours.base)


def test_the_role_refuses_what_ibprov_refuses() -> None:
    for entry in (-1, 0x10000):
        with pytest.raises(ValueError, match="is not 16 bits"):
            role.PKey.from_wire(entry)
        with pytest.raises(ValueError, match="is not 16 bits"):
            PKey.from_wire(entry)


def test_the_role_takes_what_render_writes_for_every_partition_key() -> None:
    """Render gives a child interface its partition's key as a full member and names it PARENT.XXXX; the role
    accepts exactly the keys validate accepts, names the child alike and keeps the key render wrote."""
    for base in range(0x8000):
        rendered = PKey(base, full=True)
        iface = {"name": rendered.child_name("ib0"), "parent": "ib0", "pkey": rendered.wire}
        problems = role.ib_ipoib_problems([iface])
        assert (problems == []) is is_valid_partition_base(base), (hex(base), problems)
        (normalized,) = role.ib_ipoib_normalize([iface])
        assert (normalized["pkey"], normalized["pkey_hex"]) == (rendered.wire, rendered.hex)
        assert type(normalized["pkey"]) is int  # a plain int into Ansible's variables
        assert role.canonical_name("ib0", rendered.wire) == rendered.child_name("ib0")
