"""What ``verify --nodes`` compares with: per host its HCA ports, IPoIB interfaces and whether it runs an SM."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.ipoib import planned_interfaces
from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.types import NON_HOST_GROUPS, Endpoint
from ibprov.clusterspec.units import data_rate_gbps
from ibprov.identity.guids import PLACEHOLDER_DEVICE as PLACEHOLDER
from ibprov.identity.guids import GuidBook
from ibprov.twinnet.limits import TwinLimits

__all__ = ["NodePlan", "PlannedPort", "build_node_plan", "ping_commands"]


@dataclass(frozen=True)
class PlannedPort:
    host: str
    device: str
    port: int
    rate_gbps: float
    rate_text: str  # "HDR 4x (200 Gb/s)"
    firmware: str | None
    twin_rate_gbps: float | None = None  # on the twin: the rate its cable runs at instead (twin limits)
    twin_rate_text: str = ""  # "HDR 4x (200 Gb/s)"
    seen_as: str = ""  # the device name the host shows it under, when not ``device`` (the twin's ibsim0)
    hidden: bool = False  # the host cannot show it at all (a node container sees only its first HCA)
    # discover's placeholder name (``hca3``, from a "<host> HCA-3" description): the HCA is found on the
    # host by this node GUID instead of by name
    placeholder_guid: int | None = None

    @property
    def device_on_host(self) -> str:
        return self.seen_as or self.device

    @property
    def judged_gbps(self) -> float:
        """The rate the port is judged against: the twin's stand-in where there is one, else the plan's."""
        return self.rate_gbps if self.twin_rate_gbps is None else self.twin_rate_gbps

    @property
    def name(self) -> str:
        return f"{self.host} {self.device} port {self.port}"


@dataclass(frozen=True)
class NodePlan:
    """What verify --nodes compares with: per host its HCA ports, IPoIB interfaces and whether it runs an SM."""

    cluster: str
    spec: str
    hosts: tuple[str, ...]
    ports: tuple[PlannedPort, ...]
    sm_hosts: frozenset[str] = frozenset()
    sm_owner: str = ""  # a switch or UFM SM runs the subnet: who (a host OpenSM beside it is a double SM)
    stack_version: str | None = None
    ipoib: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # host -> interface -> "addr/prefix"
    on_files: frozenset[str] = frozenset()  # what is judged on its configuration files (the twin: memlock, ipoib)
    unseen: frozenset[str] = frozenset()  # what the hosts cannot show at all (the twin: firmware)
    ping: Mapping[str, str] = field(default_factory=dict)  # host -> the `ansible ... -m ping` to paste


def ping_commands(hosts: tuple[str, ...], inventory: Mapping[str, Any] | str | None) -> dict[str, str]:
    """Per host, the ad-hoc ping an admin can paste to see why Ansible cannot reach it, naming the inventory
    verify used: ``-i DIR`` for an inventory path; for the inventory built from the spec's addresses (a
    mapping) the host's address and user as an inline inventory (``-i 'ADDRESS,' -u USER``)."""
    if inventory is None:
        return {}
    if isinstance(inventory, str):
        return {h: f"ansible {shlex.quote(h)} -i {shlex.quote(inventory)} -m ping" for h in hosts}
    entries: Mapping[str, Any] = inventory.get("all", {}).get("hosts", {}) or {}
    out = {}
    for host in hosts:
        entry = entries.get(host) or {}
        if entry.get("ansible_connection") == "local":
            out[host] = f"ansible {shlex.quote(host)} -i {shlex.quote(host + ',')} -c local -m ping"
            continue
        address = str(entry.get("ansible_host") or host)
        user = entry.get("ansible_user")
        by_user = f" -u {shlex.quote(str(user))}" if user else ""
        out[host] = f"ansible all -i {shlex.quote(address + ',')}{by_user} -m ping"
    return out


def build_node_plan(
    loaded: LoadedSpec, *, twin: TwinLimits | None = None, inventory: Mapping[str, Any] | str | None = None
) -> NodePlan:
    """What every host should show; ``twin``: the hosts are the twin's (ports judged at its rates; only the
    nodes it gave a container are hosts, the others are simulated HCAs with nothing to log in to);
    ``inventory``: what the hosts are reached through (named in the unreachable hint)."""

    spec = loaded.spec
    cables = {end: link for link in loaded.topology.links for end in (link.a, link.b)}
    book = GuidBook.for_spec(loaded)
    nodes = [
        n
        for n in spec.nodes
        if (twin is None or not twin.containers or n.name in twin.containers)
        and not set(n.groups) & set(NON_HOST_GROUPS)  # a SHARP node or UFM appliance is no host to log in to
    ]
    ports = []
    for node in nodes:
        for index, hca in enumerate(node.hcas):
            seen_as = twin.device_name if twin is not None and twin.containers else ""
            hidden = bool(seen_as) and index > 0
            placeholder = book.hca_guid(node.name, hca.device) if PLACEHOLDER.match(hca.device) else None
            speed, width = hca.speed or spec.fabric.speed, hca.width or spec.fabric.width
            rate = data_rate_gbps(speed, width)
            for port in hca.ports:
                text = f"{speed} {width} ({rate:g} Gb/s)"
                cable = cables.get(Endpoint(node.name, hca.device, port))
                stand_in = twin.stand_in(cable.a, cable.b) if twin is not None and cable is not None else None
                twin_rate, twin_text = None, ""
                if stand_in is not None:
                    twin_rate = data_rate_gbps(stand_in.twin_speed, stand_in.twin_width)
                    twin_text = f"{stand_in.twin_speed} {stand_in.twin_width} ({twin_rate:g} Gb/s)"
                ports.append(
                    PlannedPort(
                        node.name,
                        hca.device,
                        port,
                        rate,
                        text,
                        hca.firmware,
                        twin_rate,
                        twin_text,
                        seen_as,
                        hidden,
                        placeholder,
                    )
                )
    names = {n.name for n in nodes}
    ipoib = {
        host: {i.name: i.cidr for i in ifaces} for host, ifaces in planned_interfaces(spec).items() if host in names
    }
    return NodePlan(
        cluster=spec.cluster.name,
        spec=str(loaded.path) if loaded.path else "",
        hosts=tuple(n.name for n in nodes),
        ports=tuple(ports),
        sm_hosts=frozenset(i.node for i in spec.subnet_manager.instances),
        sm_owner=_sm_owner(spec),
        stack_version=spec.stack.version,
        ipoib=ipoib,
        on_files=frozenset(twin.judged_on_files) if twin is not None else frozenset(),
        unseen=frozenset(twin.unseen) if twin is not None and twin.containers else frozenset(),
        ping=ping_commands(tuple(n.name for n in nodes), inventory),
    )


def _sm_owner(spec: ClusterSpec) -> str:
    sm = spec.subnet_manager
    if sm.backend == "switch" and sm.switch is not None:
        return f"the embedded SM of switch {sm.switch.name}"
    return "UFM's SM" if sm.backend == "ufm" else ""
