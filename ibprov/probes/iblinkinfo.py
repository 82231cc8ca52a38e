"""``iblinkinfo`` (node headers + port lines) and ``iblinkinfo -l`` (one self-contained line per port).

Widths and speeds are libibmad's: ``4X`` and the per-lane rate in Gb/s (``53.125`` = HDR), so a link's
rate is lanes x lane rate. The trailing ``(Could be 12X Could be 53.125 Gbps)`` is iblinkinfo's own
"link runs below what both ends support" flag; it is parsed into ``PortLink.could_be``.

The layouts in the field, all read alike: infiniband-diags 1.5 (``Switch 0x<guid> desc:`` headers, switches
only, link column ``( 4X 10.0 Gbps Active/  LinkUp)``), 1.6 (``CA:``/``Switch:``/``Router:`` headers, the speed
right-aligned in 18 columns, ``10.0 Gbps (FDR10)``, ``"Port not available"``), MLNX_OFED and rdma-core
(``( Could be 53.125 Gbps)`` hints, ``undefined (N)`` speeds of a newer link than the tool knows), ``-l``
line mode (the node GUID and description first) and ``-p`` (``(HOQ:N VL_Stall:N)``).

What is iblinkinfo's own and what is not. A node header (``CA: desc:``, ``Switch: 0x<guid> desc:``) and a
port line (one with ``<lid> <port>[<ext>] ==(``) are its own: a port line that does not read (cut off, a
field garbled, no header before it) is a ParseError quoting it, and so is a header no port line follows (the
tool prints a header only with the first port under it). Every other line (an ``ibwarn:``, a libibumad
message, a kernel or syslog line, a shell prompt, an ellipsis a post put in) is kept as a note on the result
(``LinkInfo.notes``, "line N: TEXT"), never the end of the output. Output with no port line but such lines
is not iblinkinfo's (a missing binary, an error message): a ParseError saying what was expected and quoting
its first line. Empty output is an empty LinkInfo.

Proven on (tests/fixtures/iblinkinfo and tests/fixtures/sim, see tests/fixtures/proven/iblinkinfo.yaml): a DDR
ConnectX pair back to back (ArchWiki), QDR ConnectX-2/Infiniscale-IV (CentOS) and ConnectX-3/IS5035 (LegoOS),
1.5/1.6 port lines with a ``%9s`` speed and FDR10, an FDR ``-l`` line (SX6036), EDR SB7700 (2019), HDR Quantum
(MLNX_OFED 5.2), an EDR link below HDR on a Quantum switch (MLNX_OFED 4.x, ``( Could be 53.125 Gbps)``) and
infiniband-diags 44.0 (rdma-core 44, Debian 12; ibsim) in both modes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.probes._text import ParseError, hex_int, lines, note

__all__ = ["LinkHint", "LinkInfo", "PortLink", "RemotePort", "argv", "parse", "parse_port"]

TOOL = "iblinkinfo"

_NODE_TYPES = {"CA": "CA", "Switch": "SW", "Router": "RT"}
# "CA: desc:", "Router: desc:", "Switch: 0x<port-0 GUID> desc:" (1.5: "Switch 0x<node GUID> desc:")
_HEADER = re.compile(r"^(CA|Router): (.*):$|^(Switch):? 0x([0-9a-fA-F]+) (.*):$")
_HEADER_START = re.compile(r"^(?:(?:CA|Router): |Switch:? 0x)")
# "<lid> <port>[<ext>] ==(<link>)==>  <remote>" -- the common tail of every port line.
_PORT = re.compile(r"(\d+)\s+(\d+)\[\s*(\d*)\] ==\((.*?)\)(?: \(HOQ:\d+ VL_Stall:\d+\))?==>(.*)$", re.ASCII)
_PORT_START = re.compile(r"\d+\s+\d+\[\s*\d*\] ==\(", re.ASCII)  # what makes a line a port line, read or not
_PREFIX_DEFAULT_CA = re.compile(r"^\s+0x([0-9a-fA-F]+)\s+$")
_PREFIX_LINE_MODE = re.compile(r'^(?:[<>] )?0x([0-9a-fA-F]+) "(.*?)"\s+$')
_LINK = re.compile(r"^\s*(?:(\d+X|undefined \(\d+\))\s+(.+?)\s+)?(\S+)/\s*(\S+)$", re.ASCII)
_LANE = re.compile(r"^([0-9]+(?:\.[0-9]+)?) Gbps( \(FDR10\))?$", re.ASCII)
_REMOTE = re.compile(r'^\s*(?:0x([0-9a-fA-F]+)\s+)?(\d+)\s+(\d+)\[\s*(\d*)\] "(.*)" \((.*)\)$', re.ASCII)
_REMOTE_DOWN = re.compile(r'^\s*\[\s*\] "" \( \)$')
_REMOTE_MISSING = re.compile(r'^\s*"Port not available"$')
_COULD_BE_WIDTH = re.compile(r"Could be (\d+X)\b", re.ASCII)
_COULD_BE_SPEED = re.compile(r"Could be (?:([0-9]+(?:\.[0-9]+)?) Gbps|(FDR10))", re.ASCII)


@dataclass(frozen=True)
class LinkHint:
    """What ``Could be ...`` names: the better width and/or lane speed both ends support."""

    width: str | None
    lane_gbps: float | None
    fdr10: bool
    text: str


@dataclass(frozen=True)
class RemotePort:
    guid: int | None  # printed in -l mode (and by ibqueryerrors -r) only
    lid: int
    port: int
    ext_port: int | None
    description: str


@dataclass(frozen=True)
class PortLink:
    node_type: str | None  # "CA", "SW", "RT"; None in -l mode (not printed)
    guid: int | None  # port GUID (a switch's port-0 GUID); None on default-mode switch port lines
    description: str
    lid: int  # base LID; a switch port shows the switch's LID
    port: int
    ext_port: int | None
    width: str | None  # "4X"; None while the port is Down
    lane_gbps: float | None  # 25.78125 etc.; None while Down
    fdr10: bool
    state: str  # Down, Initialize, Armed, Active
    phys_state: str  # Polling, LinkUp, Disabled, ...
    remote: RemotePort | None
    peer_missing: bool = False  # up, but iblinkinfo printed "Port not available"
    could_be: LinkHint | None = None

    @property
    def is_up(self) -> bool:
        return self.state != "Down"


@dataclass(frozen=True)
class LinkInfo:
    ports: tuple[PortLink, ...]
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not iblinkinfo's (warnings, log lines)

    def degraded(self) -> tuple[PortLink, ...]:
        return tuple(p for p in self.ports if p.could_be is not None)


def argv(*, line_mode: bool = True) -> tuple[str, ...]:
    return ("iblinkinfo", "-l") if line_mode else ("iblinkinfo",)


_EXPECTED = "'CA: DESC:' / 'Switch: 0xGUID DESC:' headers and 'LID PORT[ ] ==( 4X ... Active/  LinkUp)==> ...' lines"


def parse(text: str) -> LinkInfo:
    ports: list[PortLink] = []
    notes: list[str] = []
    first_foreign: tuple[int, str] | None = None
    node: tuple[str, int | None, str] | None = None  # (type, switch port-0 GUID, description)
    bare: tuple[int, str] | None = None  # the last header while no port line has followed it
    for line_no, line in lines(TOOL, text, notes):
        if (header := _HEADER.match(line)) or _HEADER_START.match(line):
            if header is None:
                raise ParseError(TOOL, line_no, line, "expected a node header 'Switch: 0xGUID DESC:', got")
            if bare is not None:
                raise ParseError(TOOL, *bare, "a node header with no port line under it (the next header follows)")
            node = (_NODE_TYPES[header[1]], None, header[2]) if header[1] else ("SW", hex_int(header[4]), header[5])
            bare = (line_no, line)
            continue
        if not _PORT_START.search(line):
            notes.append(note(line_no, line))
            first_foreign = first_foreign or (line_no, line)
            continue
        bare = None
        port = _PORT.search(line)
        if port is None:
            raise ParseError(TOOL, line_no, line, "expected a port line 'LID PORT[ ] ==(LINK)==> REMOTE', got")
        prefix = line[: port.start()]
        node_type: str | None
        guid: int | None
        if ca := _PREFIX_DEFAULT_CA.match(prefix):
            if node is None:
                raise ParseError(TOOL, line_no, line, "port line before any node header")
            node_type, guid, desc = node[0], hex_int(ca[1]), node[2]
        elif named := _PREFIX_LINE_MODE.match(prefix):
            node_type, guid, desc = None, hex_int(named[1]), named[2].lstrip()
        elif not prefix.strip():
            if node is None:
                raise ParseError(TOOL, line_no, line, "port line before any node header")
            node_type, guid, desc = node
        else:
            raise ParseError(TOOL, line_no, line, "expected '      0xGUID' or '0xGUID \"DESC\"' before the LID, got")
        ports.append(_port(port, node_type, guid, desc, line_no, line))
    if bare is not None:
        raise ParseError(TOOL, *bare, "cut short: the output ends before this node's port lines")
    if not ports and first_foreign is not None:
        error = ParseError(TOOL, *first_foreign)
        error.args = (f"{error}; not iblinkinfo output: expected {_EXPECTED}",)
        raise error
    return LinkInfo(tuple(ports), tuple(notes))


def parse_port(text: str, *, node_type: str | None, guid: int | None, description: str) -> PortLink | None:
    """Parse ``<lid> <port>[..] ==(...)==> <remote>`` (also ibqueryerrors' ``Link info:`` lines)."""
    match = _PORT.match(text.strip())
    if match is None:
        return None
    try:
        return _port(match, node_type, guid, description, 0, text)
    except ParseError:
        return None


def _port(m: re.Match[str], node_type: str | None, guid: int | None, desc: str, no: int, line: str) -> PortLink:
    link = _LINK.match(m[4])
    if link is None:
        raise ParseError(TOOL, no, line, "cannot parse the link state")
    width, lane, fdr10 = link[1], None, False
    if link[2] is not None:
        lane_match = _LANE.match(link[2])
        if lane_match:
            lane, fdr10 = float(lane_match[1]), lane_match[2] is not None
    remote, missing, hint = None, False, None
    if rm := _REMOTE.match(m[5]):
        remote = RemotePort(
            hex_int(rm[1]) if rm[1] else None, int(rm[2]), int(rm[3]), int(rm[4]) if rm[4] else None, rm[5]
        )
        hint = _hint(rm[6])
    elif _REMOTE_MISSING.match(m[5]):
        missing = True
    elif not _REMOTE_DOWN.match(m[5]):
        raise ParseError(TOOL, no, line, "cannot parse the remote port")
    return PortLink(
        node_type,
        guid,
        desc,
        int(m[1]),
        int(m[2]),
        int(m[3]) if m[3] else None,
        width if width and not width.startswith("undefined") else None,
        lane,
        fdr10,
        link[3],
        link[4],
        remote,
        missing,
        hint,
    )


def _hint(text: str) -> LinkHint | None:
    if not text.strip():
        return None
    width = _COULD_BE_WIDTH.search(text)
    speed = _COULD_BE_SPEED.search(text)
    lane = float(speed[1]) if speed and speed[1] else (10.0 if speed and speed[2] else None)
    return LinkHint(width[1] if width else None, lane, bool(speed and speed[2]), text.strip())
