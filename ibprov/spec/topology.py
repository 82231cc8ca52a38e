"""The planned topology: declared switches and cables plus what the fat-tree generator expands to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ibprov.spec.model import ClusterSpec, FatTree, Switch
from ibprov.spec.positions import Path
from ibprov.spec.types import Endpoint
from ibprov.spec.units import Speed, Width


@dataclass(frozen=True)
class PlannedSwitch:
    name: str
    ports: int
    role: str
    node_guid: int | None = None
    description: str | None = None
    model: str | None = None
    generated: bool = False

    @property
    def node_desc(self) -> str:
        return self.description or self.name


@dataclass(frozen=True)
class PlannedLink:
    a: Endpoint
    b: Endpoint
    speed: Speed
    width: Width
    source: Path  # where in the spec this cable comes from (for error positions)

    def __str__(self) -> str:
        return f"{self.a} <-> {self.b}"


@dataclass
class Topology:
    switches: dict[str, PlannedSwitch] = field(default_factory=dict)
    links: list[PlannedLink] = field(default_factory=list)
    problems: list[tuple[Path, str]] = field(default_factory=list)
    # declared switches the fat tree cables beyond their ports (reported once, at the switch)
    misfits: set[str] = field(default_factory=set)


RateFn = Callable[[Endpoint, Endpoint, Speed | None, Width | None], tuple[Speed, Width]]


def _names(prefix: str, count: int) -> list[str]:
    width = max(2, len(str(count)))
    return [f"{prefix}{i + 1:0{width}d}" for i in range(count)]


def fat_tree_problems(ft: FatTree) -> list[tuple[str, str]]:
    """Arithmetic checks of the generator parameters: (field, message) pairs."""
    out: list[tuple[str, str]] = []
    if ft.hosts_per_leaf + ft.uplinks_per_leaf > ft.radix:
        out.append(
            (
                "hosts_per_leaf",
                f"hosts_per_leaf + uplinks_per_leaf = "
                f"{ft.hosts_per_leaf + ft.uplinks_per_leaf} ports, more than the radix {ft.radix}",
            )
        )
    for name, count in (("leaves", ft.leaves), ("spines", ft.spines)):
        if count % ft.pods:
            out.append((name, f"{name} ({count}) must split evenly across {ft.pods} pods"))
    if out:
        return out
    lp, sp = ft.leaves // ft.pods, ft.spines // ft.pods
    if sp == 0:
        if ft.leaves > 1 or ft.uplinks_per_leaf:
            out.append(("spines", "more than one leaf (or any uplink) needs spines"))
        return out
    if ft.uplinks_per_leaf < sp or ft.uplinks_per_leaf % sp:
        out.append(
            (
                "uplinks_per_leaf",
                f"uplinks_per_leaf ({ft.uplinks_per_leaf}) must be a multiple of the "
                f"{sp} spines per pod, so that every leaf reaches every spine of its pod",
            )
        )
        return out
    spine_down = lp * ft.uplinks_per_leaf // sp
    if spine_down + ft.uplinks_per_spine > ft.radix:
        out.append(
            (
                "uplinks_per_spine" if ft.uplinks_per_spine else "uplinks_per_leaf",
                f"each spine needs {spine_down} ports down and {ft.uplinks_per_spine} up, "
                f"more than the radix {ft.radix}",
            )
        )
    if ft.pods > 1 and (ft.cores == 0 or ft.uplinks_per_spine == 0):
        out.append(("cores", "more than one pod needs core switches and uplinks_per_spine"))
    return out + _core_problems(ft, sp)


def _core_problems(ft: FatTree, sp: int) -> list[tuple[str, str]]:
    """Checks of the third level, given ``sp`` spines per pod."""
    if not ft.cores:
        return [("uplinks_per_spine", "uplinks_per_spine needs cores")] if ft.uplinks_per_spine else []
    if ft.cores % sp:
        return [("cores", f"cores ({ft.cores}) must be a multiple of the {sp} spines per pod")]
    group = ft.cores // sp
    if ft.uplinks_per_spine < group or ft.uplinks_per_spine % group:
        return [
            (
                "uplinks_per_spine",
                f"uplinks_per_spine ({ft.uplinks_per_spine}) must be a multiple "
                f"of {group}, the cores each spine connects to",
            )
        ]
    if ft.pods * ft.uplinks_per_spine // group > ft.radix:
        return [
            (
                "cores",
                f"each core needs {ft.pods * ft.uplinks_per_spine // group} ports down, more than the radix {ft.radix}",
            )
        ]
    return []


def build_topology(spec: ClusterSpec) -> Topology:
    topo = Topology()
    for sw in spec.switches:
        topo.switches[sw.name] = _planned(sw)
    hca_rate = {(node.name, hca.device): (hca.speed, hca.width) for node in spec.nodes for hca in node.hcas}

    def rate(a: Endpoint, b: Endpoint, speed: Speed | None, width: Width | None) -> tuple[Speed, Width]:
        for end in (a, b):
            hs, hw = hca_rate.get((end.device, end.hca or ""), (None, None))
            speed, width = speed or hs, width or hw
        return speed or spec.fabric.speed, width or spec.fabric.width

    for i, link in enumerate(spec.fabric.links):
        a, b = link.ends
        speed, width = rate(a, b, link.speed, link.width)
        topo.links.append(PlannedLink(a, b, speed, width, ("fabric", "links", i, "link")))
    if spec.fabric.fat_tree is not None:
        _expand_fat_tree(spec, spec.fabric.fat_tree, topo, rate)
    return topo


def _planned(sw: Switch, *, generated: bool = False) -> PlannedSwitch:
    return PlannedSwitch(sw.name, sw.ports, sw.role, sw.node_guid, sw.description, sw.model, generated)


def _expand_fat_tree(spec: ClusterSpec, ft: FatTree, topo: Topology, rate: RateFn) -> None:
    src: Path = ("fabric", "fat_tree")
    problems = fat_tree_problems(ft)
    if problems:
        topo.problems.extend(((*src, f), m) for f, m in problems)
        return
    leaves = _names(ft.leaf_prefix, ft.leaves)
    spines = _names(ft.spine_prefix, ft.spines)
    cores = _names(ft.core_prefix, ft.cores)
    for names, role in ((leaves, "leaf"), (spines, "spine"), (cores, "core")):
        for name in names:
            declared = topo.switches.get(name)
            if declared is None:
                topo.switches[name] = PlannedSwitch(name, ft.radix, role, generated=True)
            elif declared.role != role:
                topo.problems.append(
                    (src, f"switch {name} is declared as {declared.role}, but the fat tree makes it a {role}")
                )
    used = {end for link in topo.links for end in (link.a, link.b)}
    empty = {str(p) for p in spec.fabric.empty_ports}
    host_ports = [
        Endpoint(node.name, hca.device, port)
        for node in spec.nodes
        if ft.hosts_group is None or ft.hosts_group in node.groups
        for hca in node.hcas
        for port in hca.ports
        if Endpoint(node.name, hca.device, port) not in used and str(Endpoint(node.name, hca.device, port)) not in empty
    ]
    slots = ft.leaves * ft.hosts_per_leaf
    if len(host_ports) > slots:
        topo.problems.append(
            (
                (*src, "hosts_per_leaf"),
                f"{len(host_ports)} HCA ports to cable but only "
                f"{ft.leaves} leaves x {ft.hosts_per_leaf} host ports = {slots}",
            )
        )
        return
    add = topo.links.append
    for i, host in enumerate(host_ports):
        leaf = Endpoint(leaves[i // ft.hosts_per_leaf], None, i % ft.hosts_per_leaf + 1)
        add(PlannedLink(leaf, host, *rate(leaf, host, None, None), src))
    if spines:
        _add_spine_links(spec, ft, topo, leaves, spines)
    if spines and cores:
        _add_core_links(spec, ft, topo, spines, cores)
    _check_declared_fit(spec, ft, topo)


def _add_spine_links(spec: ClusterSpec, ft: FatTree, topo: Topology, leaves: list[str], spines: list[str]) -> None:
    add, src = topo.links.append, ("fabric", "fat_tree")
    lp, sp = ft.leaves // ft.pods, ft.spines // ft.pods
    per_spine = ft.uplinks_per_leaf // sp
    for li, leaf_name in enumerate(leaves):
        pod, in_pod = divmod(li, lp)
        for k in range(ft.uplinks_per_leaf):
            j, c = k % sp, k // sp
            a = Endpoint(leaf_name, None, ft.hosts_per_leaf + 1 + k)
            b = Endpoint(spines[pod * sp + j], None, in_pod * per_spine + c + 1)
            add(PlannedLink(a, b, spec.fabric.speed, spec.fabric.width, src))


def _add_core_links(spec: ClusterSpec, ft: FatTree, topo: Topology, spines: list[str], cores: list[str]) -> None:
    add, src = topo.links.append, ("fabric", "fat_tree")
    lp, sp = ft.leaves // ft.pods, ft.spines // ft.pods
    group = ft.cores // sp
    per_core = ft.uplinks_per_spine // group
    spine_down = lp * ft.uplinks_per_leaf // sp
    for si, spine_name in enumerate(spines):
        pod, j = divmod(si, sp)
        for k in range(ft.uplinks_per_spine):
            core, c = j * group + k % group, k // group
            a = Endpoint(spine_name, None, spine_down + 1 + k)
            b = Endpoint(cores[core], None, pod * per_core + c + 1)
            add(PlannedLink(a, b, spec.fabric.speed, spec.fabric.width, src))


def _check_declared_fit(spec: ClusterSpec, ft: FatTree, topo: Topology) -> None:
    """A declared switch the generator cables beyond its ports: one problem at its ``ports``."""
    highest: dict[str, int] = {}
    for link in topo.links:
        if link.source == ("fabric", "fat_tree"):
            for end in (link.a, link.b):
                if end.hca is None:
                    highest[end.device] = max(highest.get(end.device, 0), end.port)
    for i, sw in enumerate(spec.switches):
        need = highest.get(sw.name, 0)
        if need > sw.ports and sw.name not in topo.misfits:
            topo.misfits.add(sw.name)
            topo.problems.append(
                (
                    ("switches", i, "ports"),
                    f"{sw.name} has {sw.ports} ports, but the fat tree (radix {ft.radix}) cables it up to port "
                    f"{need}: declare ports: {need} or more, or change the fat tree",
                )
            )
