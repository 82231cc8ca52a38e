"""What verify expects: the planned cables, devices and their GUIDs, SMs, PKey tables, QoS tables, limits.

GUIDs come from the GuidBook (spec, then lock file, then -- on the twin -- synthetic ones). A device whose
GUID is still unknown is looked up on the fabric by its NodeDescription (the way ``ibprov discover``
does), so a first verify works before the lock file exists; a note says which devices were matched so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import Hca, QosTables
from ibprov.clusterspec.topology import PlannedLink
from ibprov.clusterspec.types import Endpoint
from ibprov.identity.guids import GuidBook, LockFile, fmt_guid
from ibprov.identity.partitions import plan_partitions
from ibprov.identity.smports import PlannedSm, planned_sms
from ibprov.pkey import PKey
from ibprov.twinnet.limits import LinkStandIn, TwinLimits
from ibprov.verify.fabric.observation import ObservedNode, PortRef

__all__ = ["SWITCH_QOS_CLASSES", "Plan", "PlannedSm", "build_plan", "endpoint_name"]

_TIER = {"leaf": 0, "spine": 1, "core": 2}


def endpoint_name(end: Endpoint) -> str:
    """``node07 mlx5_0 port 1`` or ``leaf03 port 7``."""
    return f"{end.device} {end.hca} port {end.port}" if end.hca else f"{end.device} port {end.port}"


@dataclass(frozen=True)
class Plan:
    loaded: LoadedSpec
    book: GuidBook
    links: tuple[PlannedLink, ...]
    switch_guids: Mapping[str, int | None]  # switch name -> node GUID
    hca_descriptions: Mapping[tuple[str, str], str]  # (node, device) -> NodeDescription
    port_guids: Mapping[Endpoint, int | None]  # every planned CA port -> port GUID
    sms: tuple[PlannedSm, ...]
    pkeys: Mapping[int, frozenset[PKey]]  # CA port GUID -> the planned P_Key table entries
    partition_names: Mapping[int, str]  # partition key (PKey.base) -> partition name, Default included
    qos: QosTables | None  # the CA tables when QoS is on
    thresholds: Mapping[str, int]
    notes: tuple[str, ...] = ()
    twin: TwinLimits | None = None  # the fabric is the twin: what it runs instead of the plan
    # switch port class (switch_port0, switch_external) -> its tables, when QoS is on
    switch_qos: Mapping[str, QosTables] = field(default_factory=dict)
    _switch_by_guid: dict[int, str] = field(default_factory=dict, repr=False)
    _ca_by_port_guid: dict[int, Endpoint] = field(default_factory=dict, repr=False)
    _hca_by_node_guid: dict[int, tuple[str, str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._switch_by_guid.update({g: n for n, g in self.switch_guids.items() if g is not None})
        self._ca_by_port_guid.update({g: e for e, g in self.port_guids.items() if g is not None})
        for node, device in self.hca_descriptions:
            guid = self.book.hca_guid(node, device)
            if guid is not None:
                self._hca_by_node_guid[guid] = (node, device)

    @property
    def cluster(self) -> str:
        return self.loaded.spec.cluster.name

    def endpoint(self, node: ObservedNode, port: int) -> Endpoint | None:
        """The planned endpoint an observed port is, by GUID; None for a device the plan does not have."""
        if node.type == "SW":
            name = self._switch_by_guid.get(node.guid)
            return None if name is None else Endpoint(name, None, port)
        guid = node.port_guid(port)
        if guid is not None and guid in self._ca_by_port_guid:
            return self._ca_by_port_guid[guid]
        hca = self._hca_by_node_guid.get(node.guid)
        return None if hca is None else Endpoint(hca[0], hca[1], port)

    def switch_name(self, guid: int) -> str | None:
        return self._switch_by_guid.get(guid)

    def tier(self, end: Endpoint) -> tuple[int, str, int]:
        """Sort key that puts the CA end of a cable first, then the lower switch tier."""
        if end.hca:
            return (-1, end.device, end.port)
        role = self.loaded.topology.switches[end.device].role if end.device in self.loaded.topology.switches else ""
        return (_TIER.get(role, 3), end.device, end.port)

    def anchor(self, link: PlannedLink) -> Endpoint:
        """The end a cable is named by: its CA end, else its end on the lower switch tier."""
        return min((link.a, link.b), key=self.tier)

    def device_guid(self, end: Endpoint) -> int | None:
        """A switch's node GUID or a CA port's GUID: what identifies the device at this end."""
        return self.port_guids.get(end) if end.hca else self.switch_guids.get(end.device)

    def stand_in(self, link: PlannedLink) -> LinkStandIn | None:
        """The rate the twin runs this cable at instead of the plan's (None: the plan's, or no twin)."""
        return self.twin.stand_in(link.a, link.b) if self.twin is not None else None


def _descriptions(loaded: LoadedSpec) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    switches = {name: sw.node_desc for name, sw in loaded.topology.switches.items()}
    hcas = {(n.name, h.device): n.description or f"{n.name} {h.device}" for n in loaded.spec.nodes for h in n.hcas}
    return switches, hcas


def _by_guid(
    book: GuidBook, hca: Hca, node: str, device: str, cas: list[ObservedNode]
) -> tuple[int | None, dict[int, int]] | None:
    """None when the spec and lock file give this HCA no GUID at all (not its node's, not one port's).
    Else it is the fabric's device with those GUIDs, and what it adds: its node GUID (when the spec names
    only port GUIDs) and the GUIDs it shows for the ports the spec lacks. A port without a cable shows none
    (and none is derived: node GUID + port is only the twin's numbering), which leaves the HCA identified."""
    lock = book.lock
    known_node = hca.node_guid or lock.hca_nodes.get((node, device))
    known_ports = {g for p in hca.ports if (g := hca.port_guids.get(p) or lock.hca_ports.get((node, device, p)))}
    if known_node is None and not known_ports:
        return None
    same = next((n for n in cas if n.guid == known_node or known_ports & _port_guids(n)), None)
    if same is None:
        return None, {}
    missing = [p for p in hca.ports if book.port_guid(node, device, p) is None]
    ports = {p: g for p in missing if (g := same.port_guid(p)) is not None}
    return (same.guid if known_node is None else None), ports


def _port_guids(node: ObservedNode) -> set[int]:
    return {guid for guid, _lid in node.ports.values() if guid is not None}


def _resolve(loaded: LoadedSpec, book: GuidBook, fabric: Iterable[ObservedNode]) -> tuple[GuidBook, list[str]]:
    """A GuidBook that also knows the GUIDs of devices it lacked, found on the fabric by NodeDescription,
    and the port GUIDs the fabric shows for HCAs it knows by GUID. The note names only the devices that had
    no GUID at all."""
    switch_desc, hca_desc = _descriptions(loaded)
    nodes = list(fabric)
    counts = Counter((n.type, n.description) for n in nodes)
    unique = {(n.type, n.description): n for n in nodes if counts[(n.type, n.description)] == 1}
    switches = dict(book.lock.switches)
    hca_nodes = dict(book.lock.hca_nodes)
    hca_ports = dict(book.lock.hca_ports)
    matched: list[str] = []
    for name, desc in switch_desc.items():
        if book.switch_guid(name) is None and (found := unique.get(("SW", desc))) is not None:
            switches[name] = found.guid
            matched.append(name)
    hcas = {(n.name, h.device): h for n in loaded.spec.nodes for h in n.hcas}
    cas = [n for n in nodes if n.type == "CA"]
    filled = False
    for (node, device), desc in hca_desc.items():
        hca = hcas[(node, device)]
        if all(book.port_guid(node, device, p) is not None for p in hca.ports):
            continue
        identified = _by_guid(book, hca, node, device, cas)
        if identified is not None:  # the device has a GUID: it is not looked up by NodeDescription
            node_guid, ports = identified
            if node_guid is not None:
                hca_nodes[(node, device)] = node_guid
            hca_ports.update({(node, device, port): guid for port, guid in ports.items()})
            filled = filled or node_guid is not None or bool(ports)
            continue
        found = unique.get(("CA", desc))
        if found is None:
            continue
        hca_nodes[(node, device)] = found.guid
        for port in hca.ports:
            guid = found.port_guid(port)
            if guid is not None:
                hca_ports[(node, device, port)] = guid
        matched.append(f"{node}/{device}")
    if not matched and not filled:
        return book, []
    lock = LockFile(switches, hca_nodes, hca_ports)
    resolved = GuidBook(loaded, lock, allow_synthetic=book.allow_synthetic, twin=book.twin)
    if not matched:
        return resolved, []
    shown = ", ".join(matched[:5]) + (f" and {len(matched) - 5} more" if len(matched) > 5 else "")
    note = (
        f"{len(matched)} device(s) have no GUID in the spec or lock file and were matched by "
        f"NodeDescription ({shown}); run `ibprov discover` to pin their GUIDs"
    )
    return resolved, [note]


SWITCH_QOS_CLASSES = ("switch_port0", "switch_external")  # qos_sw0_*, qos_swe_* (the spec's qos: names)


def _qos_tables(loaded: LoadedSpec, port_class: str = "ca") -> QosTables | None:
    """The tables OpenSM gives one class of port (``ca``, ``switch_port0``, ``switch_external``): its
    qos_<class>_* values where set, else the default qos_* set (OpenSM's qos_build_config)."""
    qos = loaded.spec.qos
    if not qos.enabled:
        return None
    own: QosTables | None = getattr(qos, port_class)
    return QosTables(
        max_vls=own.max_vls if own and own.max_vls else qos.max_vls,
        sl2vl=own.sl2vl if own and own.sl2vl else qos.sl2vl,
        vlarb_high=own.vlarb_high if own and own.vlarb_high else qos.vlarb_high,
        vlarb_low=own.vlarb_low if own and own.vlarb_low else qos.vlarb_low,
    )


def _switch_qos(loaded: LoadedSpec) -> dict[str, QosTables]:
    """Per switch port class, its planned tables; none when QoS is off. (torus-2QoS, the one routing engine
    that rewrites these tables itself, is refused by validate.)"""
    if not loaded.spec.qos.enabled:
        return {}
    return {c: t for c in SWITCH_QOS_CLASSES if (t := _qos_tables(loaded, c)) is not None}


def build_plan(
    loaded: LoadedSpec, book: GuidBook, fabric: Iterable[ObservedNode] = (), *, twin: TwinLimits | None = None
) -> Plan:
    """The plan of ``loaded``; ``fabric`` (observed nodes) fills in GUIDs the book does not know. ``twin``:
    the fabric is the twin with these limits (links are judged at the rate the twin runs them)."""
    book, notes = _resolve(loaded, book, fabric)
    spec = loaded.spec
    _, hca_desc = _descriptions(loaded)
    port_guids = {
        Endpoint(n.name, h.device, p): book.port_guid(n.name, h.device, p)
        for n in spec.nodes
        for h in n.hcas
        for p in h.ports
    }
    sms = planned_sms(loaded, book)
    partitions = plan_partitions(loaded, book)
    pkeys = partitions.pkeys(g for g in port_guids.values() if g is not None)
    return Plan(
        loaded=loaded,
        book=book,
        links=tuple(loaded.topology.links),
        switch_guids=MappingProxyType({name: book.switch_guid(name) for name in loaded.topology.switches}),
        hca_descriptions=MappingProxyType(hca_desc),
        port_guids=MappingProxyType(port_guids),
        sms=tuple(sms),
        pkeys=MappingProxyType(pkeys),
        partition_names=MappingProxyType(partitions.names),
        qos=_qos_tables(loaded),
        switch_qos=MappingProxyType(_switch_qos(loaded)),
        thresholds=MappingProxyType({str(k): v for k, v in spec.acceptance.error_thresholds.items()}),
        notes=tuple(notes),
        twin=twin,
    )


def port_name(plan: Plan, nodes: Mapping[int, ObservedNode], ref: PortRef) -> str:
    """The name of an observed port: the planned one, else its GUID and NodeDescription."""
    node = nodes.get(ref.node_guid)
    if node is not None:
        end = plan.endpoint(node, ref.port)
        if end is not None:
            return endpoint_name(end)
        return f'{fmt_guid(node.guid)} "{node.description}" port {ref.port}'
    return f"{fmt_guid(ref.node_guid)} port {ref.port}"
