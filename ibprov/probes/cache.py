"""The fabric cache ``ibnetdiscover --cache FILE`` writes (libibnetdisc, rdma-core v44, format version 1).

verify discovers the fabric once, with ``ibnetdiscover --cache``, and lets iblinkinfo and ibqueryerrors
``--load-cache`` it instead of discovering again. The cache also holds every port's raw PortInfo, and
with it the CapabilityMask: its IsSM bit marks the ports a subnet manager runs on. Reading that bit here
finds every SM with no extra query, where asking SMInfo of every port would cost one process per port.

Layout (little-endian; see libibnetdisc/ibnetdisc_cache.c): a 28-byte header (magic 0x8FE7832B, version 1,
node count, port count, from-node GUID, max hops), then each node (2+1+1 bytes SMA LID/LMC/enhanced
port 0, 64 bytes SwitchInfo, 8 bytes GUID, 1 byte type, 1 byte port count, 64 bytes NodeInfo, 64 bytes
NodeDescription, 1 byte number of stored ports, then 9 bytes per stored port), then each port (8 bytes
GUID, 1 byte port number, 1 byte external port number, 2 bytes base LID, 1 byte LMC, 64 bytes PortInfo
in wire order (big-endian), 8 bytes owning node GUID, 1 byte remote flag, 8 bytes remote GUID, 1 byte
remote port).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ibprov.probes import ParseError

__all__ = ["CachedPort", "FabricCache", "decode"]

TOOL = "ibnetdiscover --cache"
MAGIC = 0x8FE7832B
VERSION = 1
IS_SM = 0x00000002  # PortInfo CapabilityMask bit 1
_SMP = 64
_HEADER = struct.Struct("<IIIIQI")
_NODE = struct.Struct(f"<HBB{_SMP}sQBB{_SMP}s{_SMP}sB")
_PORT = struct.Struct(f"<QBBHB{_SMP}sQBQB")
_KEY = 9
_NODE_TYPES = {1: "CA", 2: "SW", 3: "RT"}


@dataclass(frozen=True)
class CachedPort:
    guid: int
    number: int
    lid: int
    node_guid: int
    capability_mask: int

    @property
    def is_sm(self) -> bool:
        return bool(self.capability_mask & IS_SM)


@dataclass(frozen=True)
class FabricCache:
    from_node_guid: int
    node_types: dict[int, str]  # node GUID -> "CA", "SW", "RT"
    ports: tuple[CachedPort, ...]
    partition_caps: dict[int, int] = field(default_factory=dict)  # node GUID -> NodeInfo PartitionCap

    def sm_ports(self) -> list[CachedPort]:
        """Ports whose CapabilityMask says a subnet manager runs there (a switch: its port 0)."""
        return [p for p in self.ports if p.is_sm and (p.number == 0 or self.node_types.get(p.node_guid) != "SW")]


def decode(data: bytes) -> FabricCache:
    """Read a cache file; ParseError (with the byte offset) if it is not one this module knows."""
    if len(data) < _HEADER.size:
        raise ParseError(TOOL, 0, "", f"{len(data)} bytes is too short for a cache file")
    magic, version, node_count, port_count, from_guid, _hops = _HEADER.unpack_from(data, 0)
    if magic != MAGIC or version != VERSION:
        raise ParseError(TOOL, 0, "", f"not a version {VERSION} fabric cache (magic 0x{magic:08x}, version {version})")
    offset = _HEADER.size
    types: dict[int, str] = {}
    caps: dict[int, int] = {}
    try:
        for _ in range(node_count):
            fields = _NODE.unpack_from(data, offset)
            guid, node_type, info, stored = fields[4], fields[5], fields[7], fields[9]
            types[guid] = _NODE_TYPES.get(node_type, "??")
            caps[guid] = int.from_bytes(info[28:30], "big")  # NodeInfo in wire order: PartitionCap
            offset += _NODE.size + _KEY * stored
        ports = []
        for _ in range(port_count):
            guid, number, _ext, lid, _lmc, info, node_guid, _flag, _rguid, _rport = _PORT.unpack_from(data, offset)
            ports.append(CachedPort(guid, number, lid, node_guid, int.from_bytes(info[20:24], "big")))
            offset += _PORT.size
    except struct.error:
        raise ParseError(TOOL, 0, "", f"truncated at byte {offset} of {len(data)}") from None
    if offset != len(data):
        raise ParseError(TOOL, 0, "", f"{len(data) - offset} bytes left over after the last port")
    return FabricCache(from_guid, types, tuple(ports), caps)
