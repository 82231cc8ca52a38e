"""``saquery`` record dumps: NodeRecord (default / ``-N``), PortInfoRecord under ``IsSM ports`` (``-s``),
PKeyTableRecord (``--smkey <key> PKeyTableRecord``), MCMemberRecord (``-g`` groups, ``-m`` members) and
PathRecord (``-p``). Records of other types are read and dropped; unknown fields are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ibprov.verify.collect._text import ParseError, lines, num

__all__ = [
    "McMemberRecord",
    "NodeRecord",
    "PathRecord",
    "PkeyTableRecord",
    "SaRecords",
    "SmPortRecord",
    "argv",
    "parse",
]

TOOL = "saquery"
Query = Literal["nodes", "sm", "pkeys", "mcgroups", "mcmembers"]

_RECORD = re.compile(r"^(\w+) (?:(group|member) )?dump:$")
_SECTION = re.compile(r"^(IsSM|IsSMdisabled) ports$")
_FIELD = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_ ]*?)\.+(.*)$")
_PKEY_ROW = re.compile(r"^\s*(0x[0-9a-fA-F]{4}(?:\s+0x[0-9a-fA-F]{4})*)$")
_SA_ERROR = re.compile(r"^ERROR: Query result returned")
_NODE_TYPES = {"Channel Adapter": "CA", "Switch": "SW", "Router": "RT"}


@dataclass(frozen=True)
class NodeRecord:
    lid: int
    node_type: str  # "Channel Adapter", "Switch", "Router" (see .type)
    num_ports: int | None
    sys_guid: int | None
    node_guid: int
    port_guid: int
    port_num: int | None
    vendor_id: int | None
    device_id: int | None
    description: str

    @property
    def type(self) -> str:
        return _NODE_TYPES.get(self.node_type, self.node_type)


@dataclass(frozen=True)
class SmPortRecord:
    lid: int  # EndPortLid
    port: int
    base_lid: int | None
    master_sm_base_lid: int | None
    capability_mask: int | None
    is_sm: bool | None  # True under "IsSM ports", False under "IsSMdisabled ports"


@dataclass(frozen=True)
class PkeyTableRecord:
    lid: int
    port: int
    block: int
    pkeys: tuple[int, ...]  # the block's 32 entries in order, membership bit (0x8000) kept

    @property
    def nonzero(self) -> tuple[int, ...]:
        return tuple(p for p in self.pkeys if p & 0x7FFF)


@dataclass(frozen=True)
class McMemberRecord:
    kind: str  # "group" (-g) or "member" (-m)
    mgid: str
    mlid: int
    mtu: int | None  # raw code: selector in bits 7:6, MTU enum in 5:0 (0x84 = exactly 2048)
    rate: int | None  # raw code, same layout (0x87 = exactly 4X QDR 40 Gb/s)
    pkey: int | None
    sl: int | None
    port_gid: str | None = None
    scope_state: int | None = None
    node_description: str | None = None


@dataclass(frozen=True)
class PathRecord:
    sgid: str
    dgid: str
    slid: int
    dlid: int
    pkey: int | None
    sl: int | None
    mtu: int | None
    rate: int | None


@dataclass(frozen=True)
class SaRecords:
    nodes: tuple[NodeRecord, ...] = ()
    sm_ports: tuple[SmPortRecord, ...] = ()
    pkey_tables: tuple[PkeyTableRecord, ...] = ()
    mc_members: tuple[McMemberRecord, ...] = ()
    paths: tuple[PathRecord, ...] = ()


def argv(query: Query = "nodes", *, smkey: str = "1") -> tuple[str, ...]:
    """``smkey`` (PKeyTableRecord only) must match opensm's ``sm_key``; the default there is 1."""
    return {
        "nodes": ("saquery",),
        "sm": ("saquery", "-s"),
        "pkeys": ("saquery", "--smkey", smkey, "PKeyTableRecord"),
        "mcgroups": ("saquery", "-g"),
        "mcmembers": ("saquery", "-m"),
    }[query]


class _Record:
    def __init__(self, line_no: int, line: str, kind: str, sub: str | None, is_sm: bool | None) -> None:
        self.line_no, self.line, self.kind, self.sub, self.is_sm = line_no, line, kind, sub, is_sm
        self.fields: dict[str, str] = {}
        self.pkeys: list[int] = []

    def text(self, name: str) -> str:
        if name not in self.fields:
            raise ParseError(TOOL, self.line_no, self.line, f"{self.kind} without {name}")
        return self.fields[name]

    def number(self, name: str) -> int:
        return num(TOOL, self.line_no, self.line, self.text(name))

    def opt(self, name: str) -> int | None:
        return self.number(name) if name in self.fields else None


def parse(text: str) -> SaRecords:
    records: list[_Record] = []
    is_sm: bool | None = None
    in_pkeys = False
    for line_no, line in lines(TOOL, text):
        if _SA_ERROR.match(line):
            raise ParseError(TOOL, line_no, line, "the SA returned an error")
        if match := _RECORD.match(line.strip()):
            records.append(_Record(line_no, line, match[1], match[2], is_sm))
            in_pkeys = False
        elif match := _SECTION.match(line.strip()):
            is_sm = match[1] == "IsSM"
        elif records and line.strip() == "PKey Table:":
            in_pkeys = True
        elif records and in_pkeys and (row := _PKEY_ROW.match(line)):
            records[-1].pkeys += [int(p, 16) for p in row[1].split()]
        elif records and (field := _FIELD.match(line)):
            records[-1].fields.setdefault(field[1], field[2].strip())
        elif not line.startswith("#"):
            raise ParseError(TOOL, line_no, line)
    return _collect(records)


def _collect(records: list[_Record]) -> SaRecords:
    nodes = tuple(_node(r) for r in records if r.kind == "NodeRecord")
    sm_ports = tuple(_sm_port(r) for r in records if r.kind == "PortInfoRecord")
    pkeys = tuple(
        PkeyTableRecord(r.number("LID"), r.number("Port"), r.number("Block"), tuple(r.pkeys))
        for r in records
        if r.kind == "PKeyTableRecord"
    )
    members = tuple(_mc_member(r) for r in records if r.kind == "MCMemberRecord")
    paths = tuple(_path(r) for r in records if r.kind == "PathRecord")
    return SaRecords(nodes, sm_ports, pkeys, members, paths)


def _sm_port(r: _Record) -> SmPortRecord:
    return SmPortRecord(
        r.number("EndPortLid"),
        r.number("PortNum"),
        r.opt("base_lid"),
        r.opt("master_sm_base_lid"),
        r.opt("capability_mask"),
        r.is_sm,
    )


def _path(r: _Record) -> PathRecord:
    return PathRecord(
        r.text("sgid"),
        r.text("dgid"),
        r.number("slid"),
        r.number("dlid"),
        r.opt("pkey"),
        r.opt("sl"),
        r.opt("mtu"),
        r.opt("rate"),
    )


def _node(r: _Record) -> NodeRecord:
    return NodeRecord(
        r.number("lid"),
        r.text("node_type"),
        r.opt("num_ports"),
        r.opt("sys_guid"),
        r.number("node_guid"),
        r.number("port_guid"),
        r.opt("port_num"),
        r.opt("vendor_id"),
        r.opt("device_id"),
        r.fields.get("NodeDescription", ""),
    )


def _mc_member(r: _Record) -> McMemberRecord:
    return McMemberRecord(
        r.sub or "group",
        r.text("MGID"),
        r.number("Mlid"),
        r.opt("Mtu"),
        r.opt("Rate"),
        r.opt("pkey"),
        r.opt("SL"),
        r.fields.get("PortGid"),
        r.opt("ScopeState"),
        r.fields.get("NodeDescription"),
    )
