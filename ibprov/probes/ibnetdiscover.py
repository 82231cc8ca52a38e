"""``ibnetdiscover`` (topology file), ``ibnetdiscover -p`` (one line per port) and ``-l`` (node list).

The topology file names every node by its node GUID (``"S-<hex>"``, ``"H-<hex>"``, ``"R-<hex>"``);
``-p`` prints only port GUIDs (for a switch, the GUID of its port 0), so there ``Node.guid`` and
``LinkEnd.node_guid`` are None and nodes are keyed by that port GUID. Each link appears once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ibprov.probes._text import ParseError, hex_int, lines

__all__ = ["Fabric", "Link", "LinkEnd", "Node", "NodePort", "argv", "initiated_from", "parse"]

TOOL = "ibnetdiscover"
NodeType = Literal["CA", "SW", "RT"]

_TYPE_WORD: dict[str, NodeType] = {"Ca": "CA", "Switch": "SW", "Rt": "RT", "Router": "RT"}
_TYPE_LETTER: dict[str, NodeType] = {"H": "CA", "S": "SW", "R": "RT"}
_TYPE_CODE: dict[str, NodeType] = {"CA": "CA", "SW": "SW", "RT": "RT"}
_HX = r"[0-9a-fA-F]+"

_HEADER = re.compile(rf"^(vendid|devid|sysimgguid|caguid|rtguid|switchguid)=0x({_HX})(?:\(({_HX})\))?$")
_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-(' + _HX + r')"\s+#\s+"(.*)"(.*)$')
_SWITCH_TAIL = re.compile(r"^\s+(?:enhanced|base) port 0 lid (\d+) lmc (\d+)$")
_PORT = re.compile(
    rf"^\[(\d+)\](?:\(({_HX})\))?\s+\"([SHR])-({_HX})\"\[(\d+)\](?:\(({_HX})\))?\s+#\s+"
    r'(?:lid (\d+) lmc (\d+) )?"(.*)" lid (\d+) (.+)$'
)
_LINK_TOKEN = re.compile(r"^(\d+x|\?\?) ?(\S+(?: \(\d+\))?)((?: [a-z]=\d+)*)$")
_PORTS_LINE = re.compile(
    rf"^(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x({_HX})\s+(\d+x|\?\?)\s+(\S+)\s+"
    rf"(?:-\s+(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x({_HX})\s+\( '(.*)' - '(.*)' \)|'(.*)')$"
)
_LIST_LINE = re.compile(rf'^(Switch|Ca|Router)\s*:\s*0x({_HX}) ports (\d+) devid 0x{_HX} vendid 0x{_HX} "(.*)"$')


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

    def node(self, guid: int) -> Node | None:
        """The node with this node GUID (or, in -p mode, this port GUID)."""
        return next((n for n in self.nodes if guid in (n.guid, n.port_guid, *(p.guid for p in n.ports))), None)


def argv(*, ports: bool = False, full: bool = False) -> tuple[str, ...]:
    return ("ibnetdiscover", *(["-p"] if ports else []), *(["-f"] if full else []))


def parse(text: str) -> Fabric:
    builder = _Builder()
    for line_no, line in lines(TOOL, text):
        if not builder.feed(line):
            raise ParseError(TOOL, line_no, line)
    fabric = builder.fabric()
    origin = initiated_from(text)
    return Fabric(fabric.nodes, fabric.links, origin) if origin is not None else fabric


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

    def fabric(self) -> Fabric:
        return Fabric(tuple(self.nodes.values()), tuple(self.links.values()))

    def feed(self, line: str) -> bool:
        if line.startswith("#"):
            return True
        if header := _HEADER.match(line):
            if header[1] == "switchguid" and header[3]:
                self.switch_port_guid = hex_int(header[3])
            elif header[1] == "sysimgguid":
                self.sysimgguid = hex_int(header[2])
            return True
        if node := _NODE.match(line):
            return self._node(node)
        if port := _PORT.match(line):
            return self._port(port)
        if ports_line := _PORTS_LINE.match(line):
            return self._ports_line(ports_line)
        if listed := _LIST_LINE.match(line):
            guid = hex_int(listed[2])
            self.nodes[guid] = Node(_TYPE_WORD[listed[1]], guid, listed[4], int(listed[3]))
            return True
        return False

    def _node(self, m: re.Match[str]) -> bool:
        node_type, guid = _TYPE_WORD[m[1]], hex_int(m[4])
        if _TYPE_LETTER[m[3]] != node_type:
            return False
        lid = None
        if node_type == "SW":
            tail = _SWITCH_TAIL.match(m[6])
            if not tail:
                return False
            lid = int(tail[1])
        elif m[6].strip():
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
