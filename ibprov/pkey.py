"""The P_Key, the spec's vocabulary on the bottom floor (beside the errors): one 16-bit entry of a port's P_Key
table, a 15-bit partition key (its base) and the full-member bit. A full member of a partition reaches every
member; a limited member reaches full members only. ``PKey(0x0010, full=True)`` is the entry 0x8010,
``PKey.from_wire(0x0010)`` the limited 0x0010.

This is the one place in ibprov that writes the full-member bit and the base mask. It imports nothing (not
even from ibprov, so that a diag parser or the CLI's early discovery reads P_Keys without loading the spec's
models) and keeps to Python 3.6 syntax: ibprov.probes.pkeytables sends this file's source to
the hosts inside the PKey-table probe (pkeytables_probe.py), whose python3 may be a distribution's oldest.
The ib_ipoib role carries its own copy of this contract under the same names (a role runs without ibprov);
tests/roles/test_pkey_contract.py proves the two agree on every 16-bit value.
"""

FULL_MEMBER_BIT = 0x8000  # set in an entry: a full member; clear: a limited member
BASE_MASK = 0x7FFF  # the 15-bit partition key of an entry
DEFAULT_BASE = 0x7FFF  # the Default partition, which every port is in
MIN_PARTITION_BASE = 0x0001  # the keys a partition of the spec may have (0x0000 is an empty table entry)
MAX_PARTITION_BASE = 0x7FFE
MAX_WIRE = BASE_MASK | FULL_MEMBER_BIT  # the largest 16-bit entry


def is_valid_partition_base(base: int) -> bool:
    """A key a configured partition (and an IPoIB child) may have: 0x0001-0x7ffe. 0x0000 is an empty table
    entry, 0x7fff the Default partition (the parent link, ``ib0``)."""
    return MIN_PARTITION_BASE <= base <= MAX_PARTITION_BASE


class PKey(int):
    """A P_Key table entry. Its int value is the entry as the port holds it (membership bit included), so
    it compares and hashes as that 16-bit number: ``PKey(0x10, full=True) == 0x8010``."""

    __slots__ = ()

    def __new__(cls, base: int, *, full: bool) -> "PKey":
        if not 0 <= base <= BASE_MASK:
            raise ValueError(f"P_Key base 0x{base:x} is not 15 bits (0x0000-0x{BASE_MASK:04x})")
        return super().__new__(cls, base | FULL_MEMBER_BIT if full else base)

    @classmethod
    def from_wire(cls, entry: int) -> "PKey":
        """The P_Key of a 16-bit table entry (as `smpquery pkeys` prints it, or a MAD carries it)."""
        if not 0 <= entry <= MAX_WIRE:
            raise ValueError(f"P_Key table entry 0x{entry:x} is not 16 bits (0x0000-0x{MAX_WIRE:04x})")
        return cls(entry & BASE_MASK, full=bool(entry & FULL_MEMBER_BIT))

    @property
    def wire(self) -> int:
        """The 16-bit table entry, membership bit included (a plain int)."""
        return int(self)

    @property
    def base(self) -> int:
        """The 15-bit partition key: what partitions.conf and the spec name the partition by."""
        return int(self) & BASE_MASK

    @property
    def full(self) -> bool:
        return bool(int(self) & FULL_MEMBER_BIT)

    @property
    def membership(self) -> str:
        return "full" if self.full else "limited"

    @property
    def is_default(self) -> bool:
        return self.base == DEFAULT_BASE

    @property
    def is_empty(self) -> bool:
        """An unused table entry (base 0x0000, with or without the membership bit)."""
        return self.base == 0

    @property
    def hex(self) -> str:
        """The entry as the diags print it: ``0x8010``."""
        return f"0x{int(self):04x}"

    def as_full(self) -> "PKey":
        return PKey(self.base, full=True)

    def as_limited(self) -> "PKey":
        return PKey(self.base, full=False)

    def child_name(self, parent: str) -> str:
        """The kernel's name of the IPoIB child of ``parent`` in this partition (created as a full member,
        4 hex digits): ``ib0.8010`` whichever membership this entry has."""
        return f"{parent}.{self.base | FULL_MEMBER_BIT:04x}"

    def __repr__(self) -> str:
        return f"PKey(0x{self.base:04x}, full={self.full})"

    def __str__(self) -> str:
        return self.hex

    def __reduce__(self) -> "tuple[object, tuple[int]]":
        return (PKey.from_wire, (int(self),))
