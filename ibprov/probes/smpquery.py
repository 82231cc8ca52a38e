"""``smpquery pkeys|sl2vl|vlarb <lid> [port]``: one parser per operation verify sends."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.pkey import PKey
from ibprov.probes._text import ParseError, lines

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

_PKEY_ROW = re.compile(r"^\s*(\d+):((?:\s+0x[0-9a-fA-F]{4})+)$", re.ASCII)
_PKEY_CAPACITY = re.compile(r"^(\d+) pkeys capacity for this port$", re.ASCII)
_SL2VL_HEADER = re.compile(r"^# SL2VL table: Lid (\d+)$", re.ASCII)
_SL2VL_COLUMNS = re.compile(r"^#\s+SL:((?:\s*\|\s*\d+)+)\s*\|$", re.ASCII)
_SL2VL_ROW = re.compile(r"^ports: in\s+(\d+), out\s+(\d+):((?:\s*\|\s*\d+)+)\s*\|$", re.ASCII)
_VLARB_HEADER = re.compile(r"^# VLArbitration tables: Lid (\d+) port (\d+) LowCap (\d+) HighCap (\d+)$", re.ASCII)
_VLARB_NONE = re.compile(r"^# No VLArbitration tables \((.*)\): Lid (\d+) port (\d+)$", re.ASCII)
_VLARB_TABLE = re.compile(r"^# (Low|High) priority VL Arbitration Table:$")
_VLARB_ROW = re.compile(r"^(VL|WEIGHT)\s*:\s*((?:\|\s*0x[0-9a-fA-F]+\s*)+)\|$", re.ASCII)


@dataclass(frozen=True)
class Pkeys:
    table: tuple[PKey, ...]  # every entry, in index order, empty ones too
    capacity: int | None

    @property
    def pkeys(self) -> tuple[PKey, ...]:
        """The configured P_Keys (the entries that are not empty)."""
        return tuple(p for p in self.table if not p.is_empty)


@dataclass(frozen=True)
class Sl2Vl:
    lid: int
    rows: tuple[tuple[int, int, tuple[int, ...]], ...]  # (in port, out port, VL for SL 0..15)

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


def argv(operation: str, lid: int, port: int | None = None) -> tuple[str, ...]:
    return ("smpquery", operation, str(lid), *([] if port is None else [str(port)]))


def parse_pkeys(text: str) -> Pkeys:
    table: list[PKey] = []
    capacity = None
    for line_no, line in lines(TOOL, text):
        if row := _PKEY_ROW.match(line):
            if int(row[1]) != len(table):
                raise ParseError(TOOL, line_no, line, f"expected the row for index {len(table)}")
            table += [PKey.from_wire(int(p, 16)) for p in row[2].split()]
        elif cap := _PKEY_CAPACITY.match(line.strip()):
            capacity = int(cap[1])
        elif not line.startswith("#"):
            raise ParseError(TOOL, line_no, line)
    if not table:
        raise ParseError(TOOL, 0, "", "no pkey rows in the output")
    return Pkeys(tuple(table), capacity)


def parse_sl2vl(text: str) -> Sl2Vl:
    lid = None
    rows: list[tuple[int, int, tuple[int, ...]]] = []
    for line_no, line in lines(TOOL, text):
        if header := _SL2VL_HEADER.match(line):
            lid = int(header[1])
        elif row := _SL2VL_ROW.match(line):
            vls = tuple(int(v) for v in row[3].replace("|", " ").split())
            rows.append((int(row[1]), int(row[2]), vls))
        elif not (_SL2VL_COLUMNS.match(line) or line.startswith("#")):
            raise ParseError(TOOL, line_no, line)
    if lid is None:
        raise ParseError(TOOL, 0, "", "no '# SL2VL table' header in the output")
    return Sl2Vl(lid, tuple(rows))


def parse_vlarb(text: str) -> VlArbitration:
    head: tuple[int, int, int | None, int | None] | None = None
    tables: dict[str, list[tuple[int, int]]] = {"Low": [], "High": []}
    current: str | None = None
    vls: list[int] | None = None
    for line_no, line in lines(TOOL, text):
        if match := _VLARB_HEADER.match(line):
            head = (int(match[1]), int(match[2]), int(match[3]), int(match[4]))
        elif match := _VLARB_NONE.match(line):
            head = (int(match[2]), int(match[3]), None, None)
        elif match := _VLARB_TABLE.match(line):
            current, vls = match[1], None
        elif (match := _VLARB_ROW.match(line)) and current is not None:
            values = [int(v, 16) for v in match[2].replace("|", " ").split()]
            if match[1] == "VL":
                vls = values
            elif vls is None or len(vls) != len(values):
                raise ParseError(TOOL, line_no, line, "WEIGHT row without a matching VL row")
            else:
                tables[current] += zip(vls, values, strict=True)
                vls = None
        elif not line.startswith("#"):
            raise ParseError(TOOL, line_no, line)
    if head is None:
        raise ParseError(TOOL, 0, "", "no '# VLArbitration tables' header in the output")
    return VlArbitration(*head, tuple(tables["Low"]), tuple(tables["High"]))
