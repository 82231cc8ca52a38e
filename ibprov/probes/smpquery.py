"""``smpquery pkeys|sl2vl|vlarb <lid> [port]``: one parser per operation verify sends (pure parsers).

The three layouts have been printed by the same code since infiniband-diags 1.2 (2007, ``smpquery.c`` and
libibmad's ``mad_dump_sltovl``/``mad_dump_vlarbitration``, unchanged since 2008) through rdma-core today::

       0: 0xffff 0x8010 0x0020 0x0000 0x0000 0x0000 0x0000 0x0000      (pkeys: 8 entries a row)
    64 pkeys capacity for this port

    # SL2VL table: Lid 2                                               (sl2vl)
    #                 SL: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|
    ports: in  0, out  3: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14| 7|

    # VLArbitration tables: Lid 1 port 3 LowCap 8 HighCap 8            (vlarb)
    # Low priority VL Arbitration Table:
    VL    : |0x0 |0x1 |0x2 |...
    WEIGHT: |0x0 |0x4 |0x4 |...
    # No VLArbitration tables (BSP0): Lid 1 port 0                     (a base switch port 0 has none)

A pkeys row may hold fewer than 8 entries (other implementations print the last row short). A line that is
not the operation's (an ``ibwarn:`` line, a libibmad ``src/query_smp.c:...`` complaint, a log line, a shell
warning: the probe merges stderr into stdout) is kept as a note on the result, never the end of the output.
Output with none of the operation's lines is not smpquery's (an error message, a missing binary) and output
that ends inside a table was cut short: both are a ParseError that says what was expected and quotes the
line; ``iberror:`` lines are the tool's failure. The headers name the node ``Lid N`` (verify addresses by
LID; ``-D`` would print a directed path, not read here).

Proven on (see tests/fixtures/proven/smpquery.yaml): infiniband-diags 44.0 (rdma-core 44, Debian 12), under
ibsim: pkeys of a CA (two partition layouts, and the default table), sl2vl of CAs and of a switch's out port
with and without QoS, vlarb of a CA, of a switch port and of a base switch port 0; the layouts' code has not
changed since 1.2, which the source history shows (no capture of an older version was found).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.pkey import PKey
from ibprov.probes._text import ParseError, lines, note

__all__ = [
    "Pkeys",
    "Sl2Vl",
    "VlArbitration",
    "argv",
    "parse_pkeys",
    "parse_sl2vl",
    "parse_vlarb",
]

TOOL = "smpquery"

_PKEY_ROW = re.compile(r"^\s*(\d+):((?:\s+0x[0-9a-fA-F]{4})+)\s*$", re.ASCII)
_PKEY_CAPACITY = re.compile(r"^(\d+) pkeys capacity for this port$", re.ASCII)
_SL2VL_HEADER = re.compile(r"^# SL2VL table: Lid (\d+)$", re.ASCII)
_SL2VL_COLUMNS = re.compile(r"^#\s+SL:((?:\s*\|\s*\d+)+)\s*\|$", re.ASCII)
_SL2VL_ROW = re.compile(r"^ports: in\s+(\d+), out\s+(\d+):((?:\s*\|\s*\d+)+)\s*\|$", re.ASCII)
_VLARB_HEADER = re.compile(r"^# VLArbitration tables: Lid (\d+) port (\d+) LowCap (\d+) HighCap (\d+)$", re.ASCII)
_VLARB_NONE = re.compile(r"^# No VLArbitration tables \((.*)\): Lid (\d+) port (\d+)$", re.ASCII)
_VLARB_TABLE = re.compile(r"^# (Low|High) priority VL Arbitration Table:$")
_VLARB_ROW = re.compile(r"^(VL|WEIGHT)\s*:\s*((?:\|\s*0x[0-9a-fA-F]+\s*)+)\|$", re.ASCII)
_PKEYS_EXPECTED = "'   0: 0xffff 0x0000 ...' rows and 'N pkeys capacity for this port'"
_SL2VL_EXPECTED = "'# SL2VL table: Lid N' and 'ports: in N, out N: | 0| 1|...' rows"
_VLARB_EXPECTED = "'# VLArbitration tables: Lid N port N LowCap N HighCap N' or '# No VLArbitration tables'"


def _not_output(first_foreign: tuple[int, str] | None, what: str, expected: str) -> ParseError:
    """The error for output with none of the operation's lines: the first line that came, or nothing."""
    if first_foreign is not None:
        return ParseError(TOOL, first_foreign[0], first_foreign[1], f"not smpquery output: expected {expected}, got")
    return ParseError(TOOL, 0, "", f"no {what} in the output: expected {expected}")


@dataclass(frozen=True)
class Pkeys:
    table: tuple[PKey, ...]  # every entry, in index order, empty ones too
    capacity: int | None
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not smpquery's (warnings, log lines)

    @property
    def pkeys(self) -> tuple[PKey, ...]:
        """The configured P_Keys (the entries that are not empty)."""
        return tuple(p for p in self.table if not p.is_empty)


@dataclass(frozen=True)
class Sl2Vl:
    lid: int
    rows: tuple[tuple[int, int, tuple[int, ...]], ...]  # (in port, out port, VL for SL 0..15)
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not smpquery's (warnings, log lines)

    def vl(self, sl: int, in_port: int = 0, out_port: int = 0) -> int | None:
        for row_in, row_out, vls in self.rows:
            if (row_in, row_out) == (in_port, out_port) and 0 <= sl < len(vls):
                return vls[sl]
        return None


@dataclass(frozen=True)
class VlArbitration:
    lid: int
    port: int
    low_cap: int | None
    high_cap: int | None
    low: tuple[tuple[int, int], ...]  # (VL, weight)
    high: tuple[tuple[int, int], ...]
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not smpquery's (warnings, log lines)


def argv(operation: str, lid: int, port: int | None = None) -> tuple[str, ...]:
    return ("smpquery", operation, str(lid), *([] if port is None else [str(port)]))


def parse_pkeys(text: str) -> Pkeys:
    table: list[PKey] = []
    capacity = None
    notes: list[str] = []
    foreign: tuple[int, str] | None = None
    for line_no, line in lines(TOOL, text, notes):
        if row := _PKEY_ROW.match(line):
            if capacity is not None:
                raise ParseError(TOOL, line_no, line, "a pkey row after the capacity line")
            if int(row[1]) != len(table):
                raise ParseError(TOOL, line_no, line, f"expected the row for index {len(table)}")
            table += [PKey.from_wire(int(p, 16)) for p in row[2].split()]
        elif cap := _PKEY_CAPACITY.match(line.strip()):
            capacity = int(cap[1])
        else:
            notes.append(note(line_no, line))
            foreign = foreign or (line_no, line)
    if not table:
        raise _not_output(foreign, "pkey rows", _PKEYS_EXPECTED)
    if capacity is not None and len(table) < capacity:
        raise ParseError(TOOL, 0, "", f"cut short: {len(table)} pkey entries listed, the capacity line says {capacity}")
    return Pkeys(tuple(table), capacity, tuple(notes))


def parse_sl2vl(text: str) -> Sl2Vl:
    lid = None
    columns: int | None = None
    rows: list[tuple[int, int, tuple[int, ...]]] = []
    notes: list[str] = []
    foreign: tuple[int, str] | None = None
    for line_no, line in lines(TOOL, text, notes):
        if header := _SL2VL_HEADER.match(line):
            if lid is not None:
                raise ParseError(TOOL, line_no, line, "a second SL2VL table header")
            lid = int(header[1])
        elif cols := _SL2VL_COLUMNS.match(line):
            columns = len(cols[1].replace("|", " ").split())
        elif row := _SL2VL_ROW.match(line):
            if lid is None:
                raise ParseError(TOOL, line_no, line, "a row before the '# SL2VL table' header")
            vls = tuple(int(v) for v in row[3].replace("|", " ").split())
            if columns is not None and len(vls) != columns:
                raise ParseError(TOOL, line_no, line, f"the row has {len(vls)} VLs, the SL header {columns}")
            rows.append((int(row[1]), int(row[2]), vls))
        else:
            notes.append(note(line_no, line))
            foreign = foreign or (line_no, line)
    if lid is None:
        raise _not_output(foreign, "'# SL2VL table' header", _SL2VL_EXPECTED)
    return Sl2Vl(lid, tuple(rows), tuple(notes))


def parse_vlarb(text: str) -> VlArbitration:
    head: tuple[int, int, int | None, int | None] | None = None
    tables: dict[str, list[tuple[int, int]]] = {"Low": [], "High": []}
    current: str | None = None
    vls: tuple[int, str, list[int]] | None = None  # the VL row waiting for its WEIGHT row
    notes: list[str] = []
    foreign: tuple[int, str] | None = None
    for line_no, line in lines(TOOL, text, notes):
        if match := _VLARB_HEADER.match(line):
            head = (int(match[1]), int(match[2]), int(match[3]), int(match[4]))
        elif match := _VLARB_NONE.match(line):
            head = (int(match[2]), int(match[3]), None, None)
        elif match := _VLARB_TABLE.match(line):
            if vls is not None:
                raise ParseError(TOOL, vls[0], vls[1], "a VL row without its WEIGHT row")
            if head is None:
                raise ParseError(TOOL, line_no, line, "a table before the '# VLArbitration tables' header")
            current = match[1]
        elif (match := _VLARB_ROW.match(line)) and current is not None:
            values = [int(v, 16) for v in match[2].replace("|", " ").split()]
            if match[1] == "VL":
                if vls is not None:
                    raise ParseError(TOOL, vls[0], vls[1], "a VL row without its WEIGHT row")
                vls = (line_no, line, values)
            elif vls is None or len(vls[2]) != len(values):
                raise ParseError(TOOL, line_no, line, "WEIGHT row without a matching VL row")
            else:
                tables[current] += zip(vls[2], values, strict=True)
                vls = None
        else:
            notes.append(note(line_no, line))
            foreign = foreign or (line_no, line)
    if head is None:
        raise _not_output(foreign, "'# VLArbitration tables' header", _VLARB_EXPECTED)
    if vls is not None:
        raise ParseError(TOOL, vls[0], vls[1], "cut short: the output ends before this VL row's WEIGHT row")
    if current is not None and not tables[current]:
        raise ParseError(TOOL, 0, "", f"cut short: the output ends before the {current} priority table's rows")
    return VlArbitration(*head, tuple(tables["Low"]), tuple(tables["High"]), tuple(notes))
