"""The routing model: the fabric's switches and cables, its CA ports with their LIDs, and every switch's
linear forwarding table (LFT), held as arrays so that a 100,000-endpoint fabric fits in memory and is audited
by destination blocks (:mod:`ibprov.routing.audit`).

One model for every reader of routes: built from a discovered fabric (``ibnetdiscover``) and the tables
``dump_lfts``/``ibroute`` or OpenSM's ``opensm-lfts.dump`` print (:func:`from_discovery`), or from the
offline up*/down* model of a planned fat tree (:mod:`ibprov.routing.offline`). Verify's routing audit and
the route-aware perftest schedule read it.

Indices, not names, inside: switch ``s`` is ``names[s]``; a *channel* is one direction of a switch-to-switch
cable, identified by the port it leaves (``chan[s, port]``); CA ports are ``cas[i]``. An LFT entry of
:data:`NO_ENTRY` means the switch has no entry for that LID.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ibprov.probes.ibnetdiscover import Fabric
from ibprov.probes.lfts import Lfts

__all__ = ["NO_ENTRY", "CaPort", "ModelBuilder", "RoutingModel", "from_discovery"]

NO_ENTRY = 255  # an LFT entry the switch does not have (IBA: 255 is no port)
MAX_PORT = 254

IntArray = npt.NDArray[np.int32]
ByteArray = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class CaPort:
    """A CA port cabled to a switch port: its name (``node01/mlx5_0:1``), base LID and LMC."""

    name: str
    lid: int
    switch: int
    port: int
    lmc: int = 0

    @property
    def lids(self) -> range:
        return range(self.lid, self.lid + (1 << self.lmc))


@dataclass
class RoutingModel:
    """Switches, cables, CA ports and forwarding tables (see the module docstring)."""

    names: list[str]  # switch index -> name
    guids: list[int]  # switch index -> node GUID (0 when unknown)
    lids: list[int]  # switch index -> management LID (port 0; 0 when unknown)
    ports: int  # highest port number + 1 (columns of the port tables)
    peer: IntArray  # [switch, port] -> switch at the other end of the cable, -1 none
    peer_port: IntArray  # [switch, port] -> port at the other end, -1 none
    cas: list[CaPort]
    lft: ByteArray  # [switch, lid] -> out port, NO_ENTRY none
    source: str = ""  # where the tables come from, for reports

    def __post_init__(self) -> None:
        s, _p = self.peer.shape
        self.chan: IntArray = np.full((s, 256), -1, dtype=np.int32)  # [switch, port] -> channel leaving by it
        src, sport = np.nonzero(self.peer >= 0)
        self.chan[src, sport] = np.arange(len(src), dtype=np.int32)
        self.chan_src: IntArray = src.astype(np.int32)
        self.chan_port: IntArray = sport.astype(np.int32)
        self.chan_dst: IntArray = self.peer[src, sport].astype(np.int32)
        self.chan_dport: IntArray = self.peer_port[src, sport].astype(np.int32)
        self.ca_at: dict[tuple[int, int], int] = {(ca.switch, ca.port): i for i, ca in enumerate(self.cas)}
        self.cas_on: IntArray = np.bincount(
            np.array([ca.switch for ca in self.cas], dtype=np.int64), minlength=len(self.names)
        ).astype(np.int32)

    @property
    def switch_count(self) -> int:
        return len(self.names)

    @property
    def channel_count(self) -> int:
        return len(self.chan_src)

    @property
    def top_lid(self) -> int:
        return int(self.lft.shape[1]) - 1

    def channel_name(self, c: int) -> str:
        """``leaf01:17 → spine02:3``."""
        return (
            f"{self.names[self.chan_src[c]]}:{self.chan_port[c]} → {self.names[self.chan_dst[c]]}:{self.chan_dport[c]}"
        )

    def port_name(self, switch: int, port: int) -> str:
        return f"{self.names[switch]}:{port}"

    def lid_owner(self) -> dict[int, str]:
        """LID -> what holds it (a CA port's name, a switch's name), for reports."""
        owner = {lid: ca.name for ca in self.cas for lid in ca.lids}
        owner.update({lid: f"{name} (switch)" for name, lid in zip(self.names, self.lids, strict=True) if lid})
        return owner

    def out_port(self, switch: int, lid: int) -> int | None:
        if lid > self.top_lid:
            return None
        port = int(self.lft[switch, lid])
        return None if port == NO_ENTRY else port

    def walk(self, switch: int, lid: int, limit: int = 256) -> tuple[list[int], str]:
        """The channels a packet for ``lid`` crosses from ``switch``, and how the walk ends: ``delivered``,
        ``dead end`` (no entry, or a port without a cable that is not the destination) or ``loop``."""
        target = self._target(lid)
        path: list[int] = []
        x = switch
        for _ in range(limit):
            port = self.out_port(x, lid)
            if port is None:
                return path, "dead end"
            if (x, port) == target:
                return path, "delivered"
            c = int(self.chan[x, port])
            if c < 0:
                return path, "dead end"
            path.append(c)
            x = int(self.chan_dst[c])
        return path, "loop"

    def _target(self, lid: int) -> tuple[int, int] | None:
        for i, ca in enumerate(self.cas):
            if lid in ca.lids:
                return self.cas[i].switch, self.cas[i].port
        for s, own in enumerate(self.lids):
            if own == lid:
                return s, 0
        return None


class ModelBuilder:
    """Build a :class:`RoutingModel` switch by switch (the readers and the offline model use it)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.guids: list[int] = []
        self.lids: list[int] = []
        self.index: dict[int, int] = {}  # node GUID -> switch index
        self.cables: list[tuple[int, int, int, int]] = []
        self.cas: list[CaPort] = []
        self.tables: dict[int, Mapping[int, int]] = {}  # switch index -> {lid: port}

    def switch(self, name: str, guid: int = 0, lid: int = 0) -> int:
        if guid and guid in self.index:
            return self.index[guid]
        self.names.append(name)
        self.guids.append(guid)
        self.lids.append(lid)
        s = len(self.names) - 1
        if guid:
            self.index[guid] = s
        return s

    def cable(self, a: int, aport: int, b: int, bport: int) -> None:
        self.cables.append((a, aport, b, bport))

    def ca(self, name: str, lid: int, switch: int, port: int, lmc: int = 0) -> None:
        self.cas.append(CaPort(name, lid, switch, port, lmc))

    def build(self, lft: ByteArray | None = None, *, source: str = "") -> RoutingModel:
        """The model; ``lft`` given whole (offline model), or from the tables added to :attr:`tables`."""
        ports = max([p for a, ap, b, bp in self.cables for p in (ap, bp)] + [ca.port for ca in self.cas] + [0]) + 1
        n = len(self.names)
        peer = np.full((n, ports), -1, dtype=np.int32)
        peer_port = np.full((n, ports), -1, dtype=np.int32)
        for a, aport, b, bport in self.cables:
            if peer[a, aport] >= 0 or peer[b, bport] >= 0 or (a, aport) == (b, bport):
                continue  # a port holds one cable; a duplicate listing adds nothing
            peer[a, aport], peer_port[a, aport] = b, bport
            peer[b, bport], peer_port[b, bport] = a, aport
        if lft is None:
            top = max([lid for t in self.tables.values() for lid in t] + [lid for ca in self.cas for lid in ca.lids])
            top = max([top, *self.lids])
            lft = np.full((n, top + 1), NO_ENTRY, dtype=np.uint8)
            for s, table in self.tables.items():
                if table:
                    lids = np.fromiter(table.keys(), dtype=np.int64, count=len(table))
                    outs = np.fromiter(table.values(), dtype=np.int64, count=len(table))
                    ok = outs <= MAX_PORT
                    lft[s, lids[ok]] = outs[ok].astype(np.uint8)
        return RoutingModel(self.names, self.guids, self.lids, ports, peer, peer_port, self.cas, lft, source)


def _unique_names(fabric: Fabric, names: Mapping[int, str]) -> dict[int, str]:
    counts: dict[str, int] = {}
    for node in fabric.nodes:
        if node.type == "SW":
            counts[node.description] = counts.get(node.description, 0) + 1
    out: dict[int, str] = {}
    for node in fabric.nodes:
        if node.type == "SW" and node.guid is not None:
            unique = counts[node.description] == 1 and node.description
            out[node.guid] = names.get(node.guid) or (node.description if unique else f"0x{node.guid:016x}")
    return out


def ca_name(description: str, node_guid: int | None, port: int) -> str:
    """A CA port's name from its NodeDescription: rdma-core sets ``'<host> <device>'`` (``node03 mlx5_0`` ->
    ``node03/mlx5_0:1``); any other description is kept whole, with the port."""
    words = description.split()
    if len(words) == 2:
        return f"{words[0]}/{words[1]}:{port}"
    shown = description or (f"0x{node_guid:016x}" if node_guid is not None else "ca")
    return f"{shown}:{port}"


def from_discovery(
    fabric: Fabric,
    lfts: Lfts,
    *,
    switch_names: Mapping[int, str] | None = None,
    ca_names: Mapping[int, str] | None = None,
    lmc: int = 0,
    source: str = "LFTs (dump_lfts)",
) -> RoutingModel:
    """The model of a discovered fabric: ``fabric`` from ``ibnetdiscover`` (node GUIDs, LIDs), ``lfts`` from
    ``dump_lfts``/``ibroute``/``opensm-lfts.dump``. ``switch_names`` maps node GUIDs to names (default the
    NodeDescription), ``ca_names`` CA port GUIDs to names (default :func:`ca_name`); ``lmc`` as the SM runs."""
    names = _unique_names(fabric, switch_names or {})
    b = ModelBuilder()
    for node in fabric.nodes:
        if node.type == "SW" and node.guid is not None:
            b.switch(names[node.guid], node.guid, node.lid or 0)
    seen: set[tuple[int, int]] = set()
    for link in fabric.links:
        ends = sorted((link.a, link.b), key=lambda end: end.type != "SW")  # a switch end first
        sw, other = ends
        if sw.type != "SW" or sw.node_guid is None or sw.node_guid not in b.index:
            continue
        s = b.index[sw.node_guid]
        if other.type == "SW" and other.node_guid is not None and other.node_guid in b.index:
            b.cable(s, sw.port, b.index[other.node_guid], other.port)
        elif other.type == "CA" and other.lid is not None and (s, sw.port) not in seen:
            seen.add((s, sw.port))
            planned = (ca_names or {}).get(other.port_guid) if other.port_guid is not None else None
            name = planned or ca_name(other.description, other.node_guid, other.port)
            b.ca(name, other.lid, s, sw.port, lmc)
    for table in lfts.switches:
        s_index = b.index.get(table.guid)
        if s_index is not None:
            b.tables[s_index] = table.ports
    return b.build(source=source)
