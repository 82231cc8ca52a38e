"""``ibnetdiscover`` (topology file), ``ibnetdiscover -p`` (one line per port) and ``-l`` (node list).

The topology file names every node by its node GUID (``"S-<hex>"``, ``"H-<hex>"``, ``"R-<hex>"``);
``-p`` prints only port GUIDs (for a switch, the GUID of its port 0), so there ``Node.guid`` and
``LinkEnd.node_guid`` are None and nodes are keyed by that port GUID. Each link appears once.

Every infiniband-diags prints the same topology file since 2007 (port GUIDs were added then): the header
comments, per node ``vendid=``/``devid=``/``sysimgguid=``/``switchguid=``/``caguid=`` lines, the node line
(``Switch\t36 "S-..."\t\t# "desc" enhanced port 0 lid 3 lmc 0``) and one line per connected port ending in
width and speed: ``4xSDR``/``4xDDR``/``4xQDR`` (1.5), ``4xFDR10``/``4xFDR``/``4xEDR`` (1.6, MLNX_OFED),
``4xHDR``, ``2xNDR``/``4xNDR`` (rdma-core 33+), ``4xXDR`` (rdma-core 47+); ``4x???``/``??...`` for what the
version does not know (read as None). ``-f`` appends ``s=1 w=2 v=4`` (MLNX_OFED also ``e=4``). ``-g``
(grouping) adds ``Chassis N (guid ...)``, ``Non-Chassis Nodes`` and ``Hostname:`` lines, ``# Chassis``
comments on the ``sysimgguid=``/``switchguid=`` lines and ``[ext N]`` after port numbers: all read past.

What is ibnetdiscover's own and what is not. A line that starts like one of its own lines -- a
``NAME=0x`` header, a ``Switch``/``Ca``/``Rt`` node line (``Switch  36 "``), a port line (``[N]``), a
``-p`` line (``SW  3  1 0x...``) or a ``-l`` line (``Switch : 0x...``) -- must read as one: if it does not
(a GUID cut or redacted, a port line before any node) that is a ParseError quoting it. ``#`` lines are the
file's comments. Every other line (an ``ibwarn:``, a libibumad ``src/query_smp.c:228; ... bad status 110``
message, a kernel or syslog line, a shell prompt, an ellipsis a post put in) is kept as a note on the result
(``Fabric.notes``, "line N: TEXT"), never the end of the output. Output with no node at all but such lines is
not ibnetdiscover's (a missing binary, an error message), and a node block (``vendid=`` ...) that ends
before its node line was cut short: both are a ParseError saying what was expected and quoting the line.
Empty output is an empty Fabric (the callers say what that means).

Proven on (tests/fixtures/ibnetdiscover and tests/fixtures/sim, see tests/fixtures/proven/ibnetdiscover.yaml):
the infiniband-diags man page's example (OFED 1.2-era, 2007, SDR, ``# Max of 3 hops discovered``, ``1xSDR``),
a Voltaire 4036 QDR/DDR fabric (1.5 era, version not posted), EDR and HDR ``-p`` (infiniband_exporter's
fixtures), an HDR ``-f`` with ``e=`` (MLNX_OFED), NDR200 ``2xNDR`` (MQM9700, redacted), a Quantum-3 router
with ``1xXDR`` (recent rdma-core, version not posted) and infiniband-diags 44.0 (rdma-core 44, Debian 12;
ibsim) in all four modes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from ibprov.probes._text import ParseError, hex_int, lines, note

__all__ = ["Fabric", "Link", "LinkEnd", "Node", "NodePort", "argv", "initiated_from", "parse"]

TOOL = "ibnetdiscover"
NodeType = Literal["CA", "SW", "RT"]

_TYPE_WORD: dict[str, NodeType] = {"Ca": "CA", "Switch": "SW", "Rt": "RT", "Router": "RT"}
_TYPE_LETTER: dict[str, NodeType] = {"H": "CA", "S": "SW", "R": "RT"}
_TYPE_CODE: dict[str, NodeType] = {"CA": "CA", "SW": "SW", "RT": "RT"}
_HX = r"[0-9a-fA-F]+"

_HEADER = re.compile(
    rf"^(vendid|devid|sysimgguid|caguid|rtguid|switchguid)=0x({_HX})(?:\(({_HX})\))?(?:\s+#.*)?$"  # -g: # Chassis
)
_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-(' + _HX + r')"\s+#\s+"(.*)"(.*)$')
_SWITCH_TAIL = re.compile(r"^\s+(?:enhanced|base) port 0 lid (\d+) lmc (\d+)$")
_EXT = r"(?:\[ext \d+\])?"  # -g: the external port number of a chassis port
_PORT = re.compile(
    rf"^\[(\d+)\]{_EXT}(?:\(({_HX})\))?\s+\"([SHR])-({_HX})\"\[(\d+)\]{_EXT}(?:\s*\(({_HX})\))?\s+#\s+"
    r'(?:lid (\d+) lmc (\d+) )?"(.*)" lid (\d+) (.+)$'
)
_LINK_TOKEN = re.compile(r"^(\d+x|\?\?) ?(\S+(?: \(\d+\))?)((?: [a-z]=\d+)*)(?: slot \d+| \(scp\))?$")
_PORTS_LINE = re.compile(
    rf"^(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x({_HX})\s+(\d+x|\?\?)\s+(\S+)\s+"
    rf"(?:-\s+(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x({_HX})\s+\( '(.*)' - '(.*)' \)|'(.*)')$"
)
_LIST_LINE = re.compile(rf'^(Switch|Ca|Router)\s*:\s*0x({_HX}) ports (\d+) devid 0x{_HX} vendid 0x{_HX} "(.*)"$')
# -g (grouping) lines of ibnetdiscover's own that carry nothing the Fabric keeps
_GROUPING = re.compile(rf"^(?:Non-Chassis Nodes|Chassis \d+(?: \(guid 0x{_HX}\))?|Hostname: .*)$")
# How each kind of ibnetdiscover line starts: a line that starts so must read as one (else ParseError).
_OWN = (
    (re.compile(r"^(?:vendid|devid|sysimgguid|caguid|rtguid|switchguid)="), "a 'NAME=0xHEX' node header line"),
    (re.compile(r'^(?:Switch|Ca|Rt)\s+\d+\s+"'), 'a node line (\'Switch\\t36 "S-GUID"\\t\\t# "DESC" ...\')'),
    (re.compile(r"^\[\d+\]"), 'a port line (\'[N]\\t"S-GUID"[N]\\t\\t# "DESC" lid N 4xEDR\')'),
    (re.compile(r"^(?:CA|SW|RT)\s+\d+\s+\d+\s+0x"), "a -p port line ('SW  LID PORT 0xGUID 4x EDR ...')"),
    (re.compile(r"^(?:Switch|Ca|Router)\s*:\s*0x"), "a -l node line ('Switch : 0xGUID ports N ...')"),
)
_EXPECTED = "a topology file ('vendid=', 'Switch'/'Ca' node lines, '[N]' port lines), -p or -l lines"


@dataclass(frozen=True)
class NodePort:
    """A CA or router port as the topology file shows it."""

    number: int
    guid: int | None
    lid: int | None


@dataclass(frozen=True)
class Node:
    type: NodeType
    guid: int | None  # node GUID; None in -p mode
    description: str
    port_count: int | None  # None in -p mode
    lid: int | None = None  # switch port-0 LID
    port_guid: int | None = None  # switch port-0 GUID
    ports: tuple[NodePort, ...] = ()  # CA/router ports
    sysimgguid: int | None = None  # the block's SystemImageGUID (``sysimgguid=``); None in -p/-l mode


@dataclass(frozen=True)
class LinkEnd:
    type: NodeType
    node_guid: int | None
    port: int
    port_guid: int | None  # CA/router port GUID; switch port-0 GUID in -p mode
    lid: int | None
    description: str


@dataclass(frozen=True)
class Link:
    a: LinkEnd
    b: LinkEnd
    width: str | None  # '4x'; None when printed as '??'
    speed: str | None  # 'EDR', 'HDR', 'NDR', ...; None when printed as '???'
    extra: tuple[tuple[str, int], ...] = ()  # -f: (('s', 4), ('w', 2), ('v', 4), ('e', 4))


@dataclass(frozen=True)
class Fabric:
    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    initiated_from: int | None = None  # the node GUID of "# Initiated from node <guid> port <guid>"
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not ibnetdiscover's (warnings, log lines)

    def node(self, guid: int) -> Node | None:
        """The node with this node GUID (or, in -p mode, this port GUID)."""
        return next((n for n in self.nodes if guid in (n.guid, n.port_guid, *(p.guid for p in n.ports))), None)


def argv(*, ports: bool = False, full: bool = False) -> tuple[str, ...]:
    return ("ibnetdiscover", *(["-p"] if ports else []), *(["-f"] if full else []))


def parse(text: str) -> Fabric:
    builder = _Builder()
    notes: list[str] = []
    first_foreign: tuple[int, str] | None = None
    for line_no, line in lines(TOOL, text, notes):
        if builder.feed(line_no, line):
            continue
        own = next((what for start, what in _OWN if start.match(line)), None)
        if own is not None:
            raise ParseError(TOOL, line_no, line, builder.why or f"expected {own}, got")
        notes.append(note(line_no, line))
        first_foreign = first_foreign or (line_no, line)
    builder.finish()
    if not builder.nodes and first_foreign is not None:
        raise _foreign(*first_foreign)
    return replace(builder.fabric(), initiated_from=builder.origin, notes=tuple(notes))


def _foreign(line_no: int, line: str) -> ParseError:
    """Output that is not ibnetdiscover's: the error at its first line, saying what was expected."""
    error = ParseError(TOOL, line_no, line)
    error.args = (f"{error}; not ibnetdiscover output: expected {_EXPECTED}",)
    return error


def initiated_from(text: str) -> int | None:
    """The node GUID the discovery ran from, from the header comment ``# Initiated from node <guid> port <guid>``."""
    for line in text.splitlines()[:8]:
        words = line.split()
        if line.startswith("# Initiated from node ") and len(words) > 4:
            try:
                return int(words[4], 16)
            except ValueError:
                return None
    return None


def _speed(token: str) -> str | None:
    return None if token.startswith("???") or token.startswith("undefined") else token


class _Builder:
    def __init__(self) -> None:
        self.nodes: dict[int, Node] = {}
        self.links: dict[frozenset[tuple[int | None, int]], Link] = {}
        self.current: Node | None = None
        self.switch_port_guid: int | None = None
        self.sysimgguid: int | None = None
        self.block: tuple[int, str] | None = None  # the 'vendid=' line of a node block with no node line yet
        self.why: str | None = None  # why the line just fed, which starts like one of ours, does not read
        self.origin: int | None = None  # "# Initiated from node <guid> port <guid>"

    def fabric(self) -> Fabric:
        return Fabric(tuple(self.nodes.values()), tuple(self.links.values()))

    def finish(self) -> None:
        """The end of the output: a node block without its node line was cut short."""
        if self.block is not None:
            raise ParseError(TOOL, *self.block, "cut short: the output ends before this node block's node line")

    def feed(self, line_no: int, line: str) -> bool:
        self.why = None
        if line.startswith("#"):
            self.origin = self.origin if self.origin is not None else initiated_from(line)
            return True
        if _GROUPING.match(line):
            return True
        if header := _HEADER.match(line):
            return self._header(line_no, line, header)
        if node := _NODE.match(line):
            self.block = None
            return self._node(node)
        if port := _PORT.match(line):
            if self.current is None:
                self.why = "a port line before any Switch/Ca/Rt node line"
                return False
            return self._port(port)
        if ports_line := _PORTS_LINE.match(line):
            return self._ports_line(ports_line)
        if listed := _LIST_LINE.match(line):
            guid = hex_int(listed[2])
            self.nodes[guid] = Node(_TYPE_WORD[listed[1]], guid, listed[4], int(listed[3]))
            return True
        return False

    def _header(self, line_no: int, line: str, m: re.Match[str]) -> bool:
        if m[1] == "vendid":
            if self.block is not None:
                self.why = f"the node block of line {self.block[0]} has no node line before this one"
                return False
            self.block = (line_no, line)
        elif m[1] == "switchguid" and m[3]:
            self.switch_port_guid = hex_int(m[3])
        elif m[1] == "sysimgguid":
            self.sysimgguid = hex_int(m[2])
        return True

    def _node(self, m: re.Match[str]) -> bool:
        node_type, guid = _TYPE_WORD[m[1]], hex_int(m[4])
        if _TYPE_LETTER[m[3]] != node_type:
            self.why = f"a {m[1]} named {m[3]}-GUID"
            return False
        lid = None
        if node_type == "SW":
            tail = _SWITCH_TAIL.match(m[6])
            if not tail:
                self.why = "a Switch line without '(base|enhanced) port 0 lid N lmc N'"
                return False
            lid = int(tail[1])
        elif m[6].strip() not in ("", "(scp)"):
            return False
        port_guid = self.switch_port_guid if node_type == "SW" else None
        self.current = Node(node_type, guid, m[5], int(m[2]), lid, port_guid, sysimgguid=self.sysimgguid)
        self.nodes[guid] = self.current
        self.switch_port_guid = None
        self.sysimgguid = None
        return True

    def _port(self, m: re.Match[str]) -> bool:
        node, token = self.current, _LINK_TOKEN.match(m[11])
        if node is None or node.guid is None or token is None:
            self.why = None if token is not None else f"cannot read the width and speed {m[11]!r}"
            return False
        node_guid, port = node.guid, int(m[1])
        port_guid = hex_int(m[2]) if m[2] else None
        if node.type == "SW":
            lid = node.lid
        else:  # a CA/router port line also names the local port GUID and LID
            lid = int(m[7]) if m[7] else None
            self.current = node = _with_port(node, NodePort(port, port_guid, lid))
            self.nodes[node_guid] = node
        here = LinkEnd(node.type, node_guid, port, port_guid, lid, node.description)
        remote_type = _TYPE_LETTER[m[3]]
        there = LinkEnd(remote_type, hex_int(m[4]), int(m[5]), hex_int(m[6]) if m[6] else None, int(m[10]), m[9])
        extra = tuple((k, int(v)) for k, v in (pair.split("=") for pair in token[3].split()))
        width = None if token[1] == "??" else token[1]
        self._add(Link(here, there, width, _speed(token[2]), extra))
        return True

    def _ports_line(self, m: re.Match[str]) -> bool:
        node_type = _TYPE_CODE[m[1]]
        lid, port, guid = int(m[2]), int(m[3]), hex_int(m[4])
        local_desc = m[11] if m[7] else m[13]
        if guid not in self.nodes:
            if node_type == "SW":
                self.nodes[guid] = Node("SW", None, local_desc, None, lid, guid)
            else:
                self.nodes[guid] = Node(node_type, None, local_desc, None, ports=(NodePort(port, guid, lid),))
        if not m[7]:
            return True  # an unconnected port
        here = LinkEnd(node_type, None, port, guid, lid, local_desc)
        there = LinkEnd(_TYPE_CODE[m[7]], None, int(m[9]), hex_int(m[10]), int(m[8]), m[12])
        self._add(Link(here, there, None if m[5] == "??" else m[5], _speed(m[6])))
        return True

    def _add(self, link: Link) -> None:
        key = frozenset((_end_key(link.a), _end_key(link.b)))
        self.links.setdefault(key, link)


def _end_key(end: LinkEnd) -> tuple[int | None, int]:
    return (end.node_guid if end.node_guid is not None else end.port_guid, end.port)


def _with_port(node: Node, port: NodePort) -> Node:
    ports = (*(p for p in node.ports if p.number != port.number), port)
    return Node(
        node.type, node.guid, node.description, node.port_count, node.lid, node.port_guid, ports, node.sysimgguid
    )
