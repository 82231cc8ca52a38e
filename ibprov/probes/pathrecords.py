"""``saquery -p``: the PathRecords the subnet administrator (OpenSM's SA) hands out, above all each path's SL.

infiniband-diags 44 (``saquery.c``, ``dump_path_record``) prints one block of 16 fields per record, each
field line indented by two tabs::

    PathRecord dump:
            service_id..............0x0000000000000000
            dgid....................fe80::10:5
            sgid....................fe80::10:1
            dlid....................8
            slid....................1
            hop_flow_raw............0x0
            tclass..................0x0
            num_path_revers.........0x80
            pkey....................0xFFFF
            qos_class...............0x0
            sl......................0x1
            mtu.....................0x84
            rate....................0x83
            pkt_life................0x92
            preference..............0x0
            resv2...................0x000000000000

LIDs are decimal, the other numbers hex. ``mtu``, ``rate`` and ``pkt_life`` are the raw bytes: a 2-bit
selector above a 6-bit code (MTU code 1..5 = 256..4096 bytes; rate code 3 = 10 Gb/s, ...).
``saquery -p`` asks for every path the SA knows; ``saquery -p --slid S --dlid D`` for one pair, which
prints nothing (and exits 0) when the SA finds no route (OpenSM logs ``ERR 1F02``/``1F07``/``1F25``).
A failed query prints ``Query SA failed: <errno text>`` (exit 110 on a timeout): refused here.

Older infiniband-diags printed the same block with other fields (``saquery.c``'s history): before 1.5 (2009)
the LIDs in hex (``dlid....0x8``) and ``resv2``/``resv3`` where ``resv2`` now holds 6 bytes; before OFED 1.4
(2008) the GIDs as two 64-bit halves (``0xfe80000000000000 : 0x0002c90200259201``); before OFED 1.3 (2007)
``resv0`` in place of ``service_id`` and no ``qos_class``. Each of these layouts is read; a record whose
fields follow none of them is refused, as is one cut short.

A line that is neither a record header nor a field (an ``ibwarn:`` line, a libibmad complaint, a log line: the
probe merges stderr into stdout) is kept as a note ``line N: TEXT``, never the end of the output; output with
no record but such lines (a missing binary, an error message) is refused quoting the first of them.
Proven on (tests/fixtures/proven/pathrecords.yaml): infiniband-diags 44.0 under ibsim (no capture of an older
version or of real hardware was found; the older layouts are read as their source prints them).

Seen on the twin (ibsim 0.10 + libumad2sim, OpenSM 3.3.23): the SA's answer to ``saquery -p`` needs
several MADs (RMPP) and umad2sim delivers only the first, so the tool prints two real records and a
third whose every field is 0 or garbage (``slid 0``, ``dlid 0``). A record with LID 0 is not a path: it
is kept out of :attr:`PathRecords.records` and noted. On the twin, ask pair by pair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.probes._text import ParseError, lines, note

__all__ = ["PathRecord", "PathRecords", "argv", "pair_argv", "parse"]

TOOL = "saquery"

_HEADER = "PathRecord dump:"
_FIELD = re.compile(r"^\s+([a-z_0-9]+)\.{2,}(\S+(?: : \S+)?)$", re.ASCII)  # old GIDs: "0x... : 0x..."
_FAILED = re.compile(r"^Query SA failed: ")
_FIELDS = (
    "service_id",
    "dgid",
    "sgid",
    "dlid",
    "slid",
    "hop_flow_raw",
    "tclass",
    "num_path_revers",
    "pkey",
    "qos_class",
    "sl",
    "mtu",
    "rate",
    "pkt_life",
    "preference",
    "resv2",
)
# Every layout saquery has printed, newest first: 2009 on; OFED 1.3 (2007) to 2009; before OFED 1.3.
_LAYOUTS = (
    _FIELDS,
    (*_FIELDS, "resv3"),
    ("resv0", *_FIELDS[1:9], *_FIELDS[10:], "resv3"),
)
_EXPECTED = "'PathRecord dump:' blocks"
_HEX = re.compile(r"^0x[0-9a-fA-F]+$", re.ASCII)
_DEC = re.compile(r"^[0-9]+$", re.ASCII)
_MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}


@dataclass(frozen=True)
class PathRecord:
    slid: int
    dlid: int
    sgid: str  # as printed (IPv6 notation)
    dgid: str
    sl: int
    pkey: int
    mtu: int  # raw byte: selector << 6 | MTU code
    rate: int  # raw byte: selector << 6 | rate code
    reversible: bool  # num_path_revers bit 7
    line_no: int  # the record's 'PathRecord dump:' line

    @property
    def mtu_bytes(self) -> int | None:
        """The MTU in bytes (code 1..5), None for a code outside the table."""
        return _MTU_BYTES.get(self.mtu & 0x3F)

    @property
    def rate_code(self) -> int:
        return self.rate & 0x3F


@dataclass(frozen=True)
class PathRecords:
    records: tuple[PathRecord, ...]
    notes: tuple[str, ...] = ()  # "line N: TEXT": lines not understood, records left out

    def for_pair(self, slid: int, dlid: int) -> tuple[PathRecord, ...]:
        return tuple(r for r in self.records if r.slid == slid and r.dlid == dlid)

    def sl(self, slid: int, dlid: int) -> int | None:
        """The SL of the first record from ``slid`` to ``dlid``; None when there is none."""
        found = self.for_pair(slid, dlid)
        return found[0].sl if found else None

    def sls(self, slid: int, dlid: int) -> frozenset[int]:
        """Every SL the records from ``slid`` to ``dlid`` give (more than one: the SA disagrees with itself)."""
        return frozenset(r.sl for r in self.for_pair(slid, dlid))

    def pairs(self) -> frozenset[tuple[int, int]]:
        return frozenset((r.slid, r.dlid) for r in self.records)


def argv() -> tuple[str, ...]:
    """Every PathRecord the SA gives (truncated to the first MAD on the ibsim twin: see the module doc)."""
    return ("saquery", "-p")


def pair_argv(slid: int, dlid: int) -> tuple[str, ...]:
    """The PathRecord(s) from one LID to another."""
    return ("saquery", "-p", "--slid", str(slid), "--dlid", str(dlid))


def _lid(value: str) -> int:
    """A LID as printed: decimal (infiniband-diags 1.5 on) or hex (before)."""
    return int(value, 16) if value.startswith("0x") else int(value)


def _number(name: str, value: str, line_no: int, line: str) -> int:
    if name in ("slid", "dlid"):
        if not (_DEC.match(value) or _HEX.match(value)):
            raise ParseError(TOOL, line_no, line, f"{name} is not a LID")
        return _lid(value)
    if not _HEX.match(value):
        raise ParseError(TOOL, line_no, line, f"{name} is not a hex number")
    return int(value, 16)


class _Record:
    def __init__(self, line_no: int, line: str) -> None:
        self.line_no, self.line = line_no, line
        self.values: dict[str, str] = {}

    def add(self, name: str, value: str, line_no: int, line: str) -> None:
        names = (*self.values, name)
        if not any(layout[: len(names)] == names for layout in _LAYOUTS):
            n = len(self.values)
            expected = sorted({layout[n] for layout in _LAYOUTS if layout[:n] == names[:n] and len(layout) > n})
            reason = f"expected field {' or '.join(map(repr, expected))}" if expected else f"a field after {n} fields"
            raise ParseError(TOOL, line_no, line, reason)
        if name in ("slid", "dlid", "sl", "pkey", "mtu", "rate", "num_path_revers"):
            _number(name, value, line_no, line)
        self.values[name] = value

    def finish(self) -> PathRecord:
        if tuple(self.values) not in _LAYOUTS:
            size = min((len(layout) for layout in _LAYOUTS if len(layout) > len(self.values)), default=len(_FIELDS))
            raise ParseError(
                TOOL, self.line_no, self.line, f"the record ends after {len(self.values)} of {size} fields"
            )
        v = self.values
        return PathRecord(
            slid=_lid(v["slid"]),
            dlid=_lid(v["dlid"]),
            sgid=v["sgid"],
            dgid=v["dgid"],
            sl=int(v["sl"], 16),
            pkey=int(v["pkey"], 16),
            mtu=int(v["mtu"], 16),
            rate=int(v["rate"], 16),
            reversible=bool(int(v["num_path_revers"], 16) & 0x80),
            line_no=self.line_no,
        )


def parse(text: str) -> PathRecords:
    """The records in ``saquery -p`` output, in order. Lines that are neither a record header nor a field
    are kept as notes; a record cut short, a field out of place and ``Query SA failed`` raise ParseError, and
    so does output with no record but lines that are not saquery's."""
    records: list[PathRecord] = []
    notes: list[str] = []
    foreign: tuple[int, str] | None = None
    current: _Record | None = None
    headers = 0

    def close() -> None:
        if current is None:
            return
        record = current.finish()
        if record.slid == 0 or record.dlid == 0:
            notes.append(note(record.line_no, f"record with LID 0 left out (slid {record.slid}, dlid {record.dlid})"))
        else:
            records.append(record)

    for line_no, line in lines(TOOL, text, notes):
        if line == _HEADER:
            close()
            current = _Record(line_no, line)
            headers += 1
        elif field := _FIELD.match(line):
            if current is None:
                raise ParseError(TOOL, line_no, line, "a field before any 'PathRecord dump:' line")
            current.add(field[1], field[2], line_no, line)
        elif _FAILED.match(line):
            raise ParseError(TOOL, line_no, line, "the SA query failed")
        else:
            notes.append(note(line_no, line))
            foreign = foreign or (line_no, line)
    close()
    if not headers and foreign is not None:
        raise ParseError(TOOL, foreign[0], foreign[1], f"not saquery -p output: expected {_EXPECTED}, got")
    return PathRecords(tuple(records), tuple(notes))
