"""``dump_lfts`` / ``dump_fts`` (every switch) and ``ibroute <switch>`` (one): unicast forwarding tables.

Both print one block per switch (infiniband-diags 44, ``ibroute.c`` / ``dump_fts.c``)::

    Unicast lids [0x0-0x7] of switch DR path slid 0; dlid 0; 0,1,35,2 guid 0x0000000000200001 (Leaf2):
      Lid  Out   Destination
           Port     Info
    0x0001 035 : (Channel Adapter portguid 0x0000000000100001: 'node01 mlx5_0')
    0x0003 000 : (Switch portguid 0x0000000000200001: 'Leaf2')
    7 valid lids dumped

``ibroute`` names the switch ``Lid 2`` where ``dump_fts`` gives its directed path. Out port 0 is the
switch itself. The destination is ``: (<type> portguid 0x<guid>: '<description>')`` when the tool could
query it, ``: (unknown node and type)`` when not, ``: (illegal port)`` for an out port beyond the
switch's ports (shown with ``-a`` only), ``: (path #N out of M[: portguid 0x<guid>])`` for the extra LIDs
of an LMC > 0 port, and nothing with ``-n``. The footer counts the entries (``N lids dumped`` with
``-a``); a block whose count disagrees is refused as truncated. Debian's ``dump_lfts`` is a shell
wrapper that runs ``dump_fts`` and then prints ``*** WARNING ***: this command has been replaced by
dump_fts`` between blank lines: that line is a note.

The layout is the one ``ibroute.c`` has printed since infiniband-diags 1.2 (2007); before 1.6.2 (2012)
``dump_lfts.sh`` ran ``ibroute`` switch by switch (headers ``of switch Lid N``), since then ``dump_fts``
reaches each switch by directed path. Old diags cut a 64-character node description to 62 in the
destination and dropped its closing quote (``mad_dump_string``): read too.

A line that is not the tool's (an ``ibwarn:`` line, a libibmad ``src/query_smp.c:...`` complaint, a log
line, a shell warning: the probe merges stderr into stdout) is kept as a note on :class:`Lfts`, never the
end of a table. Output that lists no table but has such lines is not the tool's (a missing binary, an
error message): a ParseError quoting the first of them; a table cut short (no footer, a footer that does
not count its entries) is one too.

Proven on (tests/fixtures/proven/lfts.yaml): infiniband-diags 44.0 (Debian 12) under ibsim: dump_lfts with
and without stderr merged, ibroute, ibroute -n, ibroute -a with a LID range, and OpenSM 3.3.23's
opensm-lfts.dump; no whole capture of real hardware or of an older version was found.

Known gap of the tools (infiniband-diags 44, seen on a 2,048-node twin whose top LID is 2368 = 37 x 64):
they read the LFT blocks ``startlid / 64`` up to, not including, ``ALIGN(top, 64) / 64``, so when the
top LID is a multiple of 64 the header announces it but no table lists it. Nothing here can tell that
from an entry the switch does not have; the route-aware schedule notes host ports left without an entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ibprov.probes._text import ParseError, hex_int, lines, note

__all__ = ["Destination", "Lfts", "SwitchLft", "argv", "ibroute_argv", "parse", "parse_any", "parse_opensm_dump"]

TOOL = "dump_lfts"

_HX = r"[0-9a-fA-F]+"
_HEADER = re.compile(rf"^Unicast lids \[0x({_HX})-0x({_HX})\] of switch (.+?) guid 0x({_HX}) \((.*)\):$")
_COLUMNS = ("  Lid  Out   Destination", "       Port     Info")
_ENTRY = re.compile(rf"^0x({_HX}) (\d{{3}})(?: (.*))?$")
_RESOLVED = re.compile(rf"^: \((.+?) portguid 0x({_HX}): '(.*?)'?\)$")
_UNRESOLVED = re.compile(
    rf"^: \((?:unknown node and type|illegal port|path #\d+ (?:- illegal port|out of \d+(?:: portguid 0x{_HX})?))\)$"
)
_FOOTER = re.compile(r"^(\d+) (valid )?lids dumped$")
_WARNING = re.compile(r"^\*\*\* WARNING \*\*\*: ")
_LID_ADDRESS = re.compile(r"^Lid (\d+)$")


@dataclass(frozen=True)
class Destination:
    """What the tool found at a LID: ``kind`` as printed (``Channel Adapter``, ``Switch``, ``Router``)."""

    kind: str
    port_guid: int
    description: str


@dataclass(frozen=True)
class SwitchLft:
    """One switch's linear forwarding table: destination LID -> out port (0: the switch itself)."""

    guid: int  # node GUID
    description: str
    address: str  # how the tool reached it: 'Lid 2' (ibroute) or 'DR path slid 0; dlid 0; 0,1,35' (dump_fts)
    lid_range: tuple[int, int]  # the range the header announces
    ports: Mapping[int, int]
    destinations: Mapping[int, Destination]  # the LIDs the tool resolved

    @property
    def lid(self) -> int | None:
        """The switch's LID when the tool addressed it by LID (``ibroute``), else None."""
        match = _LID_ADDRESS.match(self.address)
        return int(match[1]) if match else None

    def out_port(self, lid: int) -> int | None:
        return self.ports.get(lid)


@dataclass(frozen=True)
class Lfts:
    switches: tuple[SwitchLft, ...]
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not the tool's (warnings, log lines)

    def switch(self, guid: int) -> SwitchLft | None:
        """The table of the switch with this node GUID."""
        return next((s for s in self.switches if s.guid == guid), None)


def argv() -> tuple[str, ...]:
    """Every switch's table (Debian names the script ``dump_lfts``; upstream installs ``dump_lfts.sh``)."""
    return ("dump_lfts",)


def ibroute_argv(switch_lid: int) -> tuple[str, ...]:
    """One switch's table."""
    return ("ibroute", str(switch_lid))


class _Block:
    def __init__(self, line_no: int, line: str, m: re.Match[str]) -> None:
        self.line_no, self.line = line_no, line
        self.lid_range = (hex_int(m[1]), hex_int(m[2]))
        self.address, self.guid, self.description = m[3], hex_int(m[4]), m[5]
        self.columns = 0  # column header lines seen
        self.ports: dict[int, int] = {}
        self.destinations: dict[int, Destination] = {}

    def entry(self, m: re.Match[str]) -> str | None:
        """Add an entry; a reason when it cannot be."""
        lid, port, info = hex_int(m[1]), int(m[2]), m[3] or ""
        if self.columns != len(_COLUMNS):
            return "an entry before the column header"
        if lid in self.ports:
            return f"LID 0x{lid:04x} listed twice"
        if not self.lid_range[0] <= lid <= self.lid_range[1]:
            return f"LID 0x{lid:04x} outside the announced range"
        if port > 255:
            return "out port above 255"
        if resolved := _RESOLVED.match(info):
            self.destinations[lid] = Destination(resolved[1], hex_int(resolved[2]), resolved[3])
        elif info and not _UNRESOLVED.match(info):
            return "unknown destination"
        self.ports[lid] = port
        return None

    def table(self) -> SwitchLft:
        return SwitchLft(
            self.guid,
            self.description,
            self.address,
            self.lid_range,
            MappingProxyType(self.ports),
            MappingProxyType(self.destinations),
        )


_EXPECTED = "'Unicast lids [0xN-0xN] of switch ... guid 0x... (...):' tables"


def _not_output(tool: str, foreign: tuple[int, str] | None, expected: str = _EXPECTED) -> ParseError | None:
    """The error for output that lists no table but has lines that are not the tool's, else None."""
    if foreign is None:
        return None
    return ParseError(tool, foreign[0], foreign[1], f"not {tool} output: expected {expected}, got")


def parse(text: str, tool: str = TOOL) -> Lfts:
    """The tables in ``dump_lfts``/``dump_fts``/``ibroute`` output (``tool`` names the tool in errors)."""
    tables: list[SwitchLft] = []
    notes: list[str] = []
    foreign: tuple[int, str] | None = None  # the first line that is not the tool's (nor its wrapper's)
    block: _Block | None = None
    for line_no, line in lines(tool, text, notes):
        if block is not None and block.columns == len(_COLUMNS) and (entry := _ENTRY.match(line)):
            reason = block.entry(entry)  # the common case first: an entry of the open table
            if reason:
                raise ParseError(tool, line_no, line, reason)
            continue
        if header := _HEADER.match(line):
            if block is not None:
                raise ParseError(tool, line_no, line, "a new table before the last one's 'lids dumped' line")
            block = _Block(line_no, line, header)
        elif block is not None and block.columns < len(_COLUMNS) and line == _COLUMNS[block.columns].rstrip():
            block.columns += 1
        elif entry := _ENTRY.match(line):
            reason = "an entry before any 'Unicast lids' header" if block is None else block.entry(entry)
            if reason:
                raise ParseError(tool, line_no, line, reason)
        elif block is not None and (footer := _FOOTER.match(line)):
            if int(footer[1]) != len(block.ports):
                raise ParseError(tool, line_no, line, f"the table has {len(block.ports)} entries")
            tables.append(block.table())
            block = None
        else:
            notes.append(note(line_no, line))
            if foreign is None and not _WARNING.match(line):
                foreign = (line_no, line)
    if block is not None:
        raise ParseError(tool, block.line_no, block.line, "the table ends without its 'lids dumped' line")
    if not tables and (error := _not_output(tool, foreign)):
        raise error
    return Lfts(tuple(tables), tuple(notes))


# OpenSM's own dump (osm_dump.c, written to dump_files_dir while log flag 0x40 is set), 3.3.23:
#   Unicast lids [0-10] of switch Lid 2 guid 0x0000000000200000 ('S0'):
#   0x0001 001 # Channel Adapter portguid 0x0000000000100001: 'H0'
#   10 lids dumped
# The footer is the top LID (``max_lid``), whatever the number of entries: a LID the switch has no route to
# (out port 255, or a LID no port holds) is not listed, so ftree and updn tables have gaps. A LID held by no
# port but routed reads ``# unknown node and type``.
_OSM_HEADER = re.compile(rf"^Unicast lids \[(\d+)-(\d+)\] of switch Lid (\d+) guid 0x({_HX}) \('(.*)'\):$")
_OSM_ENTRY = re.compile(rf"^0x({_HX}) (\d{{3}})(?: # (.*))?$")
_OSM_RESOLVED = re.compile(rf"^(.+?) portguid 0x({_HX}): '(.*)'$")
OPENSM_DUMP = "opensm-lfts.dump"


def parse_opensm_dump(text: str, tool: str = OPENSM_DUMP) -> Lfts:
    """The tables in OpenSM's ``opensm-lfts.dump`` (the same data as ``dump_lfts``, its own layout: no column
    header, ``#`` before the destination, decimal LID range, the switch by LID). Lines that are not the
    dump's are notes, as in :func:`parse`."""
    tables: list[SwitchLft] = []
    notes: list[str] = []
    foreign: tuple[int, str] | None = None
    head: re.Match[str] | None = None
    head_at = (0, "")
    ports: dict[int, int] = {}
    dests: dict[int, Destination] = {}
    for line_no, line in lines(tool, text, notes):
        if header := _OSM_HEADER.match(line):
            if head is not None:
                raise ParseError(tool, line_no, line, "a new table before the last one's 'lids dumped' line")
            head, head_at, ports, dests = header, (line_no, line), {}, {}
        elif head is not None and (entry := _OSM_ENTRY.match(line)):
            lid, port = hex_int(entry[1]), int(entry[2])
            if lid in ports:
                raise ParseError(tool, line_no, line, f"LID 0x{lid:04x} listed twice")
            if port > 255:
                raise ParseError(tool, line_no, line, "out port above 255")
            ports[lid] = port
            if entry[3] and (resolved := _OSM_RESOLVED.match(entry[3])):
                dests[lid] = Destination(resolved[1], hex_int(resolved[2]), resolved[3])
        elif head is not None and (footer := _FOOTER.match(line)):
            # OpenSM prints the table's top LID here, not a count (osm_dump.c since 2007): the LIDs it did not
            # route (no path, a LID no port holds) are left out, so a table may have gaps and fewer entries
            low, top = int(head[1]), int(head[2])
            if int(footer[1]) != top:
                raise ParseError(tool, line_no, line, f"the footer does not repeat the header's top LID {top}")
            if outside := sorted(lid for lid in ports if not low <= lid <= top):
                raise ParseError(tool, line_no, line, f"LID 0x{outside[0]:04x} is outside the header's {low}-{top}")
            tables.append(
                SwitchLft(
                    hex_int(head[4]),
                    head[5],
                    f"Lid {head[3]}",
                    (int(head[1]), int(head[2])),
                    MappingProxyType(ports),
                    MappingProxyType(dests),
                )
            )
            head = None
        else:
            notes.append(note(line_no, line))
            foreign = foreign or (line_no, line)
    if head is not None:
        raise ParseError(tool, *head_at, "cut short: the last table ends without its 'lids dumped' line")
    if not tables and (error := _not_output(tool, foreign, "'Unicast lids [N-N] of switch Lid N guid 0x... ('...'):'")):
        raise error
    return Lfts(tuple(tables), tuple(notes))


def parse_any(text: str) -> Lfts:
    """``dump_lfts``/``ibroute`` output or OpenSM's ``opensm-lfts.dump``, told apart by the first header."""
    for line in text.splitlines():
        if _OSM_HEADER.match(line):
            return parse_opensm_dump(text)
        if line.startswith("Unicast lids [0x"):
            break
    return parse(text)
