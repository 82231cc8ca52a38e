"""What ``verify --nodes`` compares with: per host its HCA ports, IPoIB interfaces and whether it runs an SM."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ibprov.spec import LoadedSpec
from ibprov.spec.units import data_rate_gbps

__all__ = ["NodePlan", "PlannedPort", "build_node_plan"]


@dataclass(frozen=True)
class PlannedPort:
    host: str
    device: str
    port: int
    rate_gbps: float
    rate_text: str  # "HDR 4x (200 Gb/s)"
    firmware: str | None

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
    stack_version: str | None = None
    ipoib: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # host -> interface -> "addr/prefix"


def build_node_plan(loaded: LoadedSpec) -> NodePlan:
    from ibprov.render.inventory import ipoib_vars

    spec = loaded.spec
    ports = []
    for node in spec.nodes:
        for hca in node.hcas:
            speed, width = hca.speed or spec.fabric.speed, hca.width or spec.fabric.width
            rate = data_rate_gbps(speed, width)
            for port in hca.ports:
                text = f"{speed} {width} ({rate:g} Gb/s)"
                ports.append(PlannedPort(node.name, hca.device, port, rate, text, hca.firmware))
    ipoib = {host: {str(i["name"]): str(i["address"]) for i in ifaces} for host, ifaces in ipoib_vars(loaded).items()}
    return NodePlan(
        cluster=spec.cluster.name,
        spec=str(loaded.path) if loaded.path else "",
        hosts=tuple(n.name for n in spec.nodes),
        ports=tuple(ports),
        sm_hosts=frozenset(i.node for i in spec.subnet_manager.instances),
        stack_version=spec.stack.version,
        ipoib=ipoib,
    )
