"""What ``verify --physical`` compares with: every planned cable with the cable it should be, every HCA port
with its rate and BER limits, every HCA with the PCIe link it needs and the GPU it serves, every switch port
with a planned cable.

Where the spec says nothing of a cable, the rule of ``ibprov design`` decides its family: tiers up to
``fabric.cables.copper_max_tier`` (default host-leaf) copper, the ones above optical. The PCIe link an HCA
needs is derived from the fastest planned rate of its ports (:func:`~ibprov.clusterspec.physical.needed_pcie`),
unless the spec sets ``pcie_generation``/``pcie_width``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, cast

from ibprov.clusterspec import LoadedSpec, collector_paused
from ibprov.clusterspec.model import CablePlan, ClusterSpec, Node, PhysicalLimits
from ibprov.clusterspec.physical import CABLE_TIERS, MEDIA, PcieLink, cable_tier, needed_pcie, tier_rank
from ibprov.clusterspec.rails import Rails
from ibprov.clusterspec.types import NON_HOST_GROUPS, Endpoint
from ibprov.clusterspec.units import Speed, Width, data_rate_gbps
from ibprov.twinnet.limits import TwinLimits

__all__ = ["PhysicalPlan", "PlannedCable", "PlannedHca", "PlannedPort", "build_physical_plan", "port_name"]


def port_name(end: Endpoint) -> str:
    """The object a port is in the report: ``node01 mlx5_0 port 1`` (an HCA), ``leaf01 port 33`` (a switch)."""
    return f"{end.device} {end.hca} port {end.port}" if end.hca else f"{end.device} port {end.port}"


class PlannedCable(NamedTuple):
    """One planned cable and what it should be (a named tuple: a large fabric plans hundreds of thousands)."""

    link: str  # "leaf01:1 <-> node01/mlx5_0:1", as the spec writes it
    a: Endpoint
    b: Endpoint
    tier: str  # host-leaf, leaf-spine, leaf-leaf ...
    speed: Speed
    width: Width
    medium: str | None  # dac, acc, aoc, transceiver, copper, optical; None: not planned
    medium_from: str  # where the plan's medium comes from, for the finding
    max_length_m: float | None = None
    part_numbers: tuple[str, ...] = ()
    vendors: tuple[str, ...] = ()

    @property
    def ends(self) -> tuple[Endpoint, Endpoint]:
        return self.a, self.b

    def planned_text(self) -> str:
        parts = [MEDIA.get(self.medium or "", "any medium")]
        if self.max_length_m is not None:
            parts.append(
                f"reach >= {self.max_length_m:g} m" if self.medium == "transceiver" else f"<= {self.max_length_m:g} m"
            )
        if self.part_numbers:
            parts.append("part " + " or ".join(self.part_numbers))
        if self.vendors:
            parts.append("vendor " + " or ".join(self.vendors))
        return ", ".join(parts)


class PlannedPort(NamedTuple):
    """One end of a planned cable: an HCA port (read on its host) or a switch port (in-band from the --via
    host). ``name`` is the object it is in the report (:func:`port_name`)."""

    end: Endpoint
    speed: Speed
    width: Width
    cable: PlannedCable
    name: str

    @property
    def host(self) -> str | None:
        return self.end.device if self.end.hca else None

    @property
    def rate_text(self) -> str:
        return f"{self.speed} {self.width} ({data_rate_gbps(self.speed, self.width):g} Gb/s)"


@dataclass(frozen=True)
class PlannedHca:
    host: str
    device: str
    rate_gbps: float  # its fastest planned port's data rate
    rate_text: str  # "NDR 4x (400 Gb/s)"
    need: PcieLink  # the link it must train at (at least)
    need_from: str  # "derived from NDR 4x (400 Gb/s)" or "nodes[3].hcas[0].pcie_generation"
    explicit: bool  # the spec names the generation or the width: both are required as written
    gpu: int | None = None  # the GPU it serves (GPUDirect RDMA)
    gpu_from: str = ""
    numa_node: int | None = None  # the spec's numa_node

    @property
    def name(self) -> str:
        return f"{self.host} {self.device}"


@dataclass(frozen=True)
class PhysicalPlan:
    cluster: str
    hosts: tuple[str, ...]
    hcas: tuple[PlannedHca, ...]
    host_ports: tuple[PlannedPort, ...]  # the HCA ports of the hosts (NON_HOST_GROUPS nodes are not probed)
    switch_ports: tuple[PlannedPort, ...]
    cables: tuple[PlannedCable, ...]
    cable_ports: tuple[tuple[PlannedPort, PlannedPort], ...]  # per cable, in the same order: its two ends
    limits: PhysicalLimits
    rates_per_hour: Mapping[str, float] = field(default_factory=dict)  # acceptance.error_rates_per_hour
    switch_descriptions: Mapping[str, str] = field(default_factory=dict)  # switch -> its NodeDescription
    twin: str | None = None  # the fabric is the twin: why nothing physical is judged

    @property
    def ports(self) -> tuple[PlannedPort, ...]:
        return self.host_ports + self.switch_ports

    def port_names(self) -> tuple[str, ...]:
        """The objects of the checks over ports: every host port, then every switch port."""
        return tuple(p.name for p in self.host_ports) + tuple(p.name for p in self.switch_ports)


_CablePlan = tuple[str | None, str, float | None, tuple[str, ...], tuple[str, ...]]


def _cable_plan(spec: ClusterSpec, tier: str, explicit: CablePlan | None, source: str) -> _CablePlan:
    """(medium, where it comes from, max length or reach, part numbers, vendors) of a cable of ``tier``."""
    cables = spec.fabric.cables
    by_tier = cables.tiers.get(tier)  # type: ignore[call-overload]
    medium, medium_from = None, ""
    for plan, where in ((explicit, source), (by_tier, f"fabric.cables.tiers.{tier}")):
        if plan is not None and plan.medium is not None:
            medium, medium_from = plan.medium, where
            break
    if medium is None:
        cut = ("none", *CABLE_TIERS).index(cables.copper_max_tier)
        copper = tier_rank(tier) <= cut
        medium = "copper" if copper else "optical"
        medium_from = f"fabric.cables.copper_max_tier {cables.copper_max_tier} (ibprov design's rule)"

    def pick(name: str) -> object:
        for plan in (explicit, by_tier):
            value = getattr(plan, name) if plan is not None else None
            if value:
                return value
        return None

    return (
        medium,
        medium_from,
        cast("float | None", pick("max_length_m")),
        tuple(cast("tuple[str, ...]", pick("part_numbers") or ())),
        tuple(cast("tuple[str, ...]", pick("vendors") or cables.vendors)),
    )


def _gpus(spec: ClusterSpec, node: Node, rails: Rails, rail_optimized: bool) -> dict[tuple[str, int], tuple[int, str]]:
    """(device, port) -> (the GPU it serves, where that comes from)."""
    out: dict[tuple[str, int], tuple[int, str]] = {}
    for r, end in enumerate(rails.ports(node)):
        if end is None or end.hca is None:
            continue
        if rails.named and spec.mpi.rails[r].gpu is not None:
            out[(end.hca, end.port)] = (spec.mpi.rails[r].gpu, f"mpi.rails[{r}].gpu")  # type: ignore[assignment]
        elif rail_optimized and node.gpus and r < node.gpus:
            out[(end.hca, end.port)] = (r, f"rail {r} of a rail-optimized fabric serves GPU {r}")
    return out


@collector_paused()
def build_physical_plan(loaded: LoadedSpec, *, twin: TwinLimits | None = None) -> PhysicalPlan:
    spec = loaded.spec
    topo = loaded.topology
    roles = {name: sw.role for name, sw in topo.switches.items()}
    position = {n.name: i for i, n in enumerate(spec.nodes)}
    hosts = [n for n in spec.nodes if not set(n.groups) & set(NON_HOST_GROUPS)]
    host_names = {n.name for n in hosts}
    cables: list[PlannedCable] = []
    cable_ports: list[tuple[PlannedPort, PlannedPort]] = []
    host_ports: list[PlannedPort] = []
    switch_ports: list[PlannedPort] = []
    explicit_links = spec.fabric.links
    by_tier: dict[str, _CablePlan] = {}  # the plan of a tier's cables that the spec names no cable of
    for link in topo.links:
        a, b = link.a, link.b
        role_a = "host" if a.hca else roles.get(a.device, "leaf")
        role_b = "host" if b.hca else roles.get(b.device, "leaf")
        tier = cable_tier(role_a, role_b)
        if link.source[:2] == ("fabric", "links") and explicit_links[int(link.source[2])].cable is not None:
            index = int(link.source[2])
            planned = _cable_plan(spec, tier, explicit_links[index].cable, f"fabric.links[{index}].cable")
        else:
            planned = by_tier.get(tier) or by_tier.setdefault(tier, _cable_plan(spec, tier, None, ""))
        cable = PlannedCable(f"{a} <-> {b}", a, b, tier, link.speed, link.width, *planned)
        cables.append(cable)
        ends = (
            PlannedPort(a, link.speed, link.width, cable, port_name(a)),
            PlannedPort(b, link.speed, link.width, cable, port_name(b)),
        )
        cable_ports.append(ends)
        for port in ends:
            if port.end.hca is None:
                switch_ports.append(port)
            elif port.end.device in host_names:
                host_ports.append(port)
    rails = Rails.of(spec)
    rail_optimized = spec.fabric.fat_tree is not None and spec.fabric.fat_tree.rails == "rail-optimized"
    hcas: list[PlannedHca] = []
    for node in hosts:
        gpus = _gpus(spec, node, rails, rail_optimized)
        index = position[node.name]
        for j, hca in enumerate(node.hcas):
            speed, width = hca.speed or spec.fabric.speed, hca.width or spec.fabric.width
            rate = data_rate_gbps(speed, width)
            derived = needed_pcie(rate)
            pinned = hca.pcie_generation is not None or hca.pcie_width is not None
            need = PcieLink(hca.pcie_generation or derived.generation, hca.pcie_width or derived.width)
            where = f"nodes[{index}].hcas[{j}]"
            need_from = f"{where}.pcie_generation/pcie_width" if pinned else f"derived from {speed} {width}"
            gpu, gpu_from = hca.gpu, f"{where}.gpu" if hca.gpu is not None else ""
            if gpu is None:
                found = [gpus[(hca.device, p)] for p in hca.ports if (hca.device, p) in gpus]
                gpu, gpu_from = found[0] if found else (None, "")
            hcas.append(
                PlannedHca(
                    node.name, hca.device, rate, f"{speed} {width} ({rate:g} Gb/s)", need, need_from, pinned,
                    gpu, gpu_from, hca.numa_node,
                )
            )  # fmt: skip
    return PhysicalPlan(
        cluster=spec.cluster.name,
        hosts=tuple(n.name for n in hosts),
        hcas=tuple(hcas),
        host_ports=tuple(host_ports),
        switch_ports=tuple(switch_ports),
        cables=tuple(cables),
        cable_ports=tuple(cable_ports),
        limits=spec.acceptance.physical,
        rates_per_hour={str(k): v for k, v in spec.acceptance.error_rates_per_hour.items()},
        switch_descriptions={name: sw.node_desc for name, sw in topo.switches.items()},
        twin=twin.physical if twin is not None else None,
    )
