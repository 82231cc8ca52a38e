"""What the fabric showed: nodes, links, port states, error counters, subnet managers, PKey and QoS tables.

Plain data, built by :mod:`ibprov.verify.fabric.collect` from the diags (or by hand in tests). A port is named by
:class:`PortRef` (node GUID, port number); CA ports also have a port GUID, which is what the plan knows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from ibprov.pkey import PKey

__all__ = [
    "LinkState",
    "Observation",
    "ObservedLink",
    "ObservedNode",
    "ObservedSm",
    "PortRef",
    "QueryFailure",
    "Soak",
]

NodeType = Literal["CA", "SW", "RT"]


class PortRef(NamedTuple):
    node_guid: int
    port: int


@dataclass(frozen=True)
class ObservedNode:
    guid: int  # node GUID
    type: NodeType
    description: str
    ports: Mapping[int, tuple[int | None, int | None]] = field(default_factory=dict)  # CA: port -> (GUID, LID)
    lid: int | None = None  # a switch's port-0 LID
    port0_guid: int | None = None  # a switch's port-0 GUID

    def port_guid(self, port: int) -> int | None:
        return self.ports.get(port, (None, None))[0]


@dataclass(frozen=True)
class ObservedLink:
    a: PortRef
    b: PortRef
    width: str | None  # "4x"; None when the tool printed "??"
    speed: str | None  # "HDR"; None when the tool printed "???"


@dataclass(frozen=True)
class LinkState:
    state: str  # Down, Initialize, Armed, Active
    phys_state: str  # Polling, LinkUp, Disabled, ...

    @property
    def active(self) -> bool:
        return self.state == "Active" and self.phys_state == "LinkUp"

    @property
    def no_signal(self) -> bool:
        """Nothing at the other end: no cable, or the peer is powered off."""
        return self.state == "Down" and self.phys_state in ("Polling", "Sleep")

    def __str__(self) -> str:
        return f"{self.state}/{self.phys_state}"


@dataclass(frozen=True)
class ObservedSm:
    port: PortRef
    port_guid: int
    lid: int
    priority: int
    state: str  # MASTER, STANDBY, DISCOVER, NOTACT
    activity_count: int = 0


@dataclass(frozen=True)
class Soak:
    seconds: float  # between clearing the counters and reading them again
    deltas: Mapping[PortRef, Mapping[str, int]]  # only ports where some counter moved


@dataclass(frozen=True)
class QueryFailure:
    port: PortRef | None
    tool: str  # "smpquery pkeys"
    reason: str


@dataclass
class Observation:
    nodes: dict[int, ObservedNode] = field(default_factory=dict)
    links: list[ObservedLink] = field(default_factory=list)
    states: dict[PortRef, LinkState] = field(default_factory=dict)
    counters: dict[PortRef, Mapping[str, int]] = field(default_factory=dict)  # ports with a non-zero counter
    soak: Soak | None = None
    sms: list[ObservedSm] = field(default_factory=list)
    pkeys: dict[int, tuple[PKey, ...]] = field(default_factory=dict)  # CA port GUID -> non-empty entries
    sl2vl: dict[int, tuple[int, ...]] = field(default_factory=dict)  # CA port GUID -> VL of SL 0..15
    vlarb: dict[int, tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]] = field(
        default_factory=dict
    )  # CA port GUID -> (high, low) (VL, weight) entries
    # switch egress port -> (in port, VL of SL 0..15) per ingress port, as ``smpquery sl2vl LID OUT`` shows it
    switch_sl2vl: dict[PortRef, tuple[tuple[int, tuple[int, ...]], ...]] = field(default_factory=dict)
    switch_vlarb: dict[PortRef, tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]] = field(
        default_factory=dict
    )  # switch port -> (high, low) (VL, weight) entries; absent for a port without VLArb tables (base port 0)
    switch_qos_ports: tuple[int, int] = (0, 0)  # switch ports whose QoS tables were read, of those that could be
    failures: list[QueryFailure] = field(default_factory=list)
    from_port: str | None = None  # the port the diags ran from
    # diag -> the lines its output had besides the tool's own ("line N: TEXT"; per-port queries prefixed with
    # their target), in the order the diags ran: read past, shown in the section's notes
    diag_notes: dict[str, list[str]] = field(default_factory=dict)

    def keep_notes(self, tool: str, parsed: object, target: str = "") -> None:
        """Keep what a parsed diag result read past (its ``notes``, when the reader has them)."""
        notes: tuple[str, ...] = getattr(parsed, "notes", ()) or ()
        if notes:
            self.diag_notes.setdefault(tool, []).extend(f"{target}: {n}" if target else n for n in notes)

    def guid_index(self) -> dict[int, PortRef]:
        """Port GUID -> port, for every CA port; and a switch's port-0 GUID -> its port 0.

        ibqueryerrors and iblinkinfo -l name a port this way (a switch by its port-0 GUID + port number)."""
        index: dict[int, PortRef] = {}
        for node in self.nodes.values():
            if node.type == "SW":
                index[node.guid] = PortRef(node.guid, 0)
                if node.port0_guid is not None:
                    index[node.port0_guid] = PortRef(node.guid, 0)
            else:
                index.update((g, PortRef(node.guid, p)) for p, (g, _lid) in node.ports.items() if g is not None)
        return index

    @property
    def master(self) -> ObservedSm | None:
        masters = [s for s in self.sms if s.state == "MASTER"]
        return masters[0] if len(masters) == 1 else None
