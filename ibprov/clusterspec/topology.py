"""The planned topology: declared switches and cables plus what the fat-tree generator expands to."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from ibprov.clusterspec.model import ClusterSpec, FatTree, Switch
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rails import Rails
from ibprov.clusterspec.types import Endpoint, parse_endpoint
from ibprov.clusterspec.units import Speed, Width


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


class PlannedLink(NamedTuple):
    """One planned cable (a named tuple: a large fat tree plans hundreds of thousands of them)."""

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
    # the fat tree could not be expanded: its host ports are not cabled (and not reported one by one)
    fat_tree_failed: bool = False
    # every device the generated fat tree cables (switches, and (node, HCA) pairs): one connected piece
    fat_tree_devices: set[tuple[str, str | None]] = field(default_factory=set)


RateFn = Callable[[Endpoint, Endpoint, Speed | None, Width | None], tuple[Speed, Width]]


def _names(prefix: str, count: int) -> list[str]:
    width = max(2, len(str(count)))
    return [f"{prefix}{i + 1:0{width}d}" for i in range(count)]


def unit_shape(ft: FatTree, rails: int) -> tuple[int, int, int]:
    """A rail-optimized scalable unit with ``rails`` rails: (leaves per unit, leaves per rail, nodes per unit)."""
    unit_leaves = ft.unit_leaves or rails
    per_rail = max(1, unit_leaves // rails)
    return unit_leaves, per_rail, ft.unit_nodes or per_rail * ft.hosts_per_leaf


def fat_tree_problems(ft: FatTree, rails: int = 1, nodes: int | None = None) -> list[tuple[str, str]]:
    """Arithmetic checks of the generator parameters: (field, message) pairs.

    ``rails`` is the number of HCA ports on each cabled node, ``nodes`` the number of cabled nodes
    (None: not known yet; the rail-optimized units are then checked without it).
    """
    out = _tree_problems(ft)
    if ft.rails == "rail-optimized":
        out += _unit_problems(ft, rails, nodes)
    else:
        out += [
            (name, f"{name} is a parameter of the scalable units of rails: rail-optimized (rails is {ft.rails})")
            for name in ("unit_nodes", "unit_leaves")
            if getattr(ft, name) is not None
        ]
    return out


def _unit_problems(ft: FatTree, rails: int, nodes: int | None) -> list[tuple[str, str]]:
    """Checks of rail-optimized scalable units: they fill the leaves, and the leaves are whole units."""
    unit_leaves, per_rail, unit_nodes = unit_shape(ft, rails)
    if unit_leaves % rails:
        up = _ceil(unit_leaves, rails) * rails
        return [
            (
                "unit_leaves",
                f"unit_leaves ({unit_leaves}) must be a multiple of the {rails} rails (HCA ports per node), so that "
                f"every rail has as many leaves in a unit: e.g. unit_leaves: {up}",
            )
        ]
    out: list[tuple[str, str]] = []
    room = per_rail * ft.hosts_per_leaf
    if unit_nodes > room:
        out.append(
            (
                "unit_nodes",
                f"a unit of {unit_nodes} nodes needs {unit_nodes} host ports on each rail, but a rail has "
                f"{per_rail} lea{'f' if per_rail == 1 else 'ves'} x {ft.hosts_per_leaf} host ports = {room} in a "
                f"unit: unit_nodes at most {room}, or unit_leaves {rails * _ceil(unit_nodes, ft.hosts_per_leaf)}",
            )
        )
    if ft.leaves % unit_leaves:
        low, high = ft.leaves // unit_leaves * unit_leaves, _ceil(ft.leaves, unit_leaves) * unit_leaves
        fits = f"{low} or {high}" if low else f"{high}"
        out.append(
            (
                "leaves",
                f"leaves ({ft.leaves}) must be whole scalable units of {unit_leaves} leaves "
                f"({rails} rails x {per_rail}): e.g. leaves: {fits}",
            )
        )
    elif ft.pods > 1 and ft.leaves % ft.pods == 0 and (ft.leaves // ft.pods) % unit_leaves:
        out.append(
            (
                "pods",
                f"each of the {ft.pods} pods has {ft.leaves // ft.pods} leaves, not whole units of {unit_leaves}: "
                "a scalable unit must not straddle two pods",
            )
        )
    if nodes is not None and not out:
        units = _ceil(nodes, unit_nodes)
        if units * unit_leaves > ft.leaves:
            out.append(
                (
                    "leaves",
                    f"{nodes} nodes make {units} scalable units of {unit_nodes} (unit_nodes), which need "
                    f"{units * unit_leaves} leaves ({unit_leaves} per unit), but leaves is {ft.leaves}",
                )
            )
    return out


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _tree_problems(ft: FatTree) -> list[tuple[str, str]]:
    """Checks of the switch tiers (radix, pods, spines, cores), whatever the rails."""
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
    rails = Rails.of(spec)
    unclear = rails.problems(spec)  # mpi.rails that do not say which port carries a rail, fat tree or not
    topo.problems.extend(unclear)
    if spec.fabric.fat_tree is not None:
        _expand_fat_tree(spec, spec.fabric.fat_tree, topo, rate, rails, bool(unclear))
    return topo


def routing_roots(spec: ClusterSpec, topo: Topology) -> list[str]:
    """The switches updn, dnup and ftree route from (root_guid_file): subnet_manager.roots, else the top tier
    (the core switches, else the spines), by name; none in a fabric of leaves only (OpenSM then guesses)."""
    if spec.subnet_manager.roots:
        return list(spec.subnet_manager.roots)
    switches = topo.switches
    top = "core" if any(s.role == "core" for s in switches.values()) else "spine"
    return sorted(name for name, s in switches.items() if s.role == top)


def _planned(sw: Switch, *, generated: bool = False) -> PlannedSwitch:
    return PlannedSwitch(sw.name, sw.ports, sw.role, sw.node_guid, sw.description, sw.model, generated)


def _expand_fat_tree(
    spec: ClusterSpec, ft: FatTree, topo: Topology, rate: RateFn, rails: Rails, unclear: bool = False
) -> None:
    src: Path = ("fabric", "fat_tree")
    problems = _tree_problems(ft) if ft.rails == "rail-optimized" else fat_tree_problems(ft)
    if problems:
        topo.problems.extend(((*src, f), m) for f, m in problems)
        topo.fat_tree_failed = True
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
    skip = used | {parse_endpoint(p) for p in spec.fabric.empty_ports}
    if unclear:
        topo.fat_tree_failed = True  # which port carries a rail is unclear (reported by build_topology)
        return
    cabled = _cabled_nodes(spec, ft, rails)
    first = len(topo.links)  # the generator's host cables start here
    if ft.rails == "rail-optimized":
        odd_nodes = [] if rails.named else _rail_count_problems(spec, cabled)
        if odd_nodes:
            topo.problems.extend(odd_nodes)
            topo.fat_tree_failed = True
            return
        count = len(rails.names) if rails.named else len(cabled[0][1]) if cabled else 1
        problems = fat_tree_problems(ft, count, len(cabled))
        if problems:
            topo.problems.extend(((*src, f), m) for f, m in problems)
            topo.fat_tree_failed = True
            return
        _cable_rails(ft, topo, leaves, cabled, skip, rate, count)
    elif not _cable_node_grouped(ft, topo, leaves, cabled, skip, rate):
        topo.fat_tree_failed = True
        return
    hosts = {link.b[:2] for link in topo.links[first:]}
    topo.fat_tree_devices = hosts | {(name, None) for name in (*leaves, *spines, *cores)}
    if spines:
        _add_spine_links(spec, ft, topo, leaves, spines)
    if spines and cores:
        _add_core_links(spec, ft, topo, spines, cores)
    _check_declared_fit(spec, ft, topo)


Cabled = list[tuple[int, list[Endpoint | None]]]  # (node index, its ports by rail: None where it lacks a rail)


def _cabled_nodes(spec: ClusterSpec, ft: FatTree, rails: Rails) -> Cabled:
    """The nodes the fat tree cables (those of hosts_group, with a port on a rail) and their ports by rail."""
    group = ft.hosts_group
    if not rails.named:  # the hot path of a large spec: every port, in order
        return [
            (i, rails.ports(node))
            for i, node in enumerate(spec.nodes)
            if node.hcas and (group is None or group in node.groups)
        ]
    out: Cabled = []
    for i, node in enumerate(spec.nodes):
        if group is None or group in node.groups:
            ports = rails.ports(node)
            if any(end is not None for end in ports):
                out.append((i, ports))
    return out


def _rail_count_problems(spec: ClusterSpec, cabled: Cabled) -> list[tuple[Path, str]]:
    """Rail-optimized: every cabled node has as many HCA ports (rails) as the most common count."""
    counts = Counter(len(ports) for _i, ports in cabled)
    if len(counts) < 2:
        return []
    rails, _n = counts.most_common(1)[0]
    return [
        (
            ("nodes", i, "hcas"),
            f"{spec.nodes[i].name} has {len(ports)} HCA port{'s' if len(ports) != 1 else ''}, but "
            f"{counts[rails]} of the nodes fabric.fat_tree cables have {rails}: rails: rail-optimized needs the "
            f"same number of rails (HCA ports) on every node it cables (list {rails}, or cable this node by "
            "fabric.links and leave it out of fat_tree.hosts_group)",
        )
        for i, ports in cabled
        if len(ports) != rails
    ]


def _cable_rails(
    ft: FatTree,
    topo: Topology,
    leaves: list[str],
    cabled: Cabled,
    skip: set[Endpoint],
    rate: RateFn,
    rails: int,
) -> None:
    """Rail-optimized: node k of a unit puts its port r on the k-th host port of the unit's leaf group r
    (a node without rail r leaves that port free)."""
    add, src = topo.links.append, ("fabric", "fat_tree")
    unit_leaves, per_rail, unit_nodes = unit_shape(ft, rails)
    hpl = ft.hosts_per_leaf
    # hot at 10^5 ports: a cable's rate is its HCA's (a leaf port has none), looked up once per HCA; the
    # named tuples are built without their keyword-parsing __new__
    hca_rate: dict[tuple[str, str | None], tuple[Speed, Width]] = {}
    new_tuple = tuple.__new__
    for k, (_i, ports) in enumerate(cabled):
        unit, slot = divmod(k, unit_nodes)
        in_group, port = divmod(slot, hpl)
        first = unit * unit_leaves + in_group
        for r, host in enumerate(ports):
            if host is None or (skip and host in skip):
                continue  # no such rail, cabled by hand or left empty: its leaf port stays free, the others stay
            leaf = new_tuple(Endpoint, (leaves[first + r * per_rail], None, port + 1))
            speed_width = hca_rate.get((host.device, host.hca))
            if speed_width is None:
                speed_width = hca_rate[(host.device, host.hca)] = rate(leaf, host, None, None)
            add(new_tuple(PlannedLink, (leaf, host, *speed_width, src)))


def _cable_node_grouped(
    ft: FatTree,
    topo: Topology,
    leaves: list[str],
    cabled: Cabled,
    skip: set[Endpoint],
    rate: RateFn,
) -> bool:
    """Node-grouped: each node's ports, one after the other, on one leaf (the next leaf when they do not fit)."""
    add, src = topo.links.append, ("fabric", "fat_tree")
    hpl = ft.hosts_per_leaf
    todo = [[p for p in ports if p is not None and p not in skip] for _i, ports in cabled]
    total = sum(map(len, todo))
    slots = ft.leaves * hpl
    if total > slots:
        topo.problems.append(
            (
                (*src, "hosts_per_leaf"),
                f"{total} HCA ports to cable but only {ft.leaves} leaves x {hpl} host ports = {slots}",
            )
        )
        return False
    widest = max(map(len, todo), default=0)
    if widest > hpl:
        topo.problems.append(
            (
                (*src, "hosts_per_leaf"),
                f"a node has {widest} HCA ports to cable, more than the {hpl} host ports of a leaf, and "
                f"rails: node-grouped keeps a node's ports on one leaf: hosts_per_leaf {widest} or more, "
                "or rails: rail-optimized",
            )
        )
        return False
    plan: list[tuple[int, int, Endpoint]] = []
    leaf, nxt = 0, 0
    for ports in todo:
        if nxt + len(ports) > hpl:
            leaf, nxt = leaf + 1, 0
        for host in ports:
            plan.append((leaf, nxt, host))
            nxt += 1
    if plan and plan[-1][0] >= ft.leaves:
        topo.problems.append(
            (
                (*src, "hosts_per_leaf"),
                f"{total} HCA ports to cable, but with each node's ports kept on one leaf they need "
                f"{plan[-1][0] + 1} leaves of {hpl} host ports, and leaves is {ft.leaves}: more leaves, "
                f"hosts_per_leaf a multiple of {widest}, or rails: rail-optimized",
            )
        )
        return False
    for li, port, host in plan:
        end = Endpoint(leaves[li], None, port + 1)
        add(PlannedLink(end, host, *rate(end, host, None, None), src))
    return True


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
    named = {*_names(ft.leaf_prefix, ft.leaves), *_names(ft.spine_prefix, ft.spines), *_names(ft.core_prefix, ft.cores)}
    declared = {sw.name for sw in spec.switches} & named
    if not declared:
        return  # the fat tree cables only switches it generates itself (with radix ports)
    highest: dict[str, int] = {}
    for link in topo.links:
        if link.source == ("fabric", "fat_tree"):
            for end in (link.a, link.b):
                if end.hca is None and end.device in declared:
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


@dataclass(frozen=True)
class RailPlan:
    """Rail-optimized cabling: the rail of each HCA port the fat tree cables and of each of its leaves."""

    port_rail: dict[Endpoint, int]  # HCA port -> rail (:class:`~ibprov.clusterspec.rails.Rails`, from 0)
    leaf_rail: dict[str, int]  # generated leaf -> the rail its host ports carry
    leaf_of: dict[Endpoint, str]  # HCA port -> its planned leaf
    rails: Rails = field(default_factory=Rails)

    def rail_name(self, rail: int) -> str:
        """'rail 3 (mlx5_3:1)' (or 'rail0 (mlx5_0:1)' with mpi.rails): the rail and the HCA port that carries
        it on the first node."""
        port = next((end for end, r in self.port_rail.items() if r == rail), None)
        return self.rails.label(rail) + (f" ({port.hca}:{port.port})" if port is not None else "")


def rail_plan(spec: ClusterSpec, topo: Topology) -> RailPlan | None:
    """The rails of a rail-optimized ``fabric.fat_tree`` (None: the spec has no rail-optimized fat tree)."""
    ft = spec.fabric.fat_tree
    if ft is None or ft.rails != "rail-optimized":
        return None
    rails = Rails.of(spec)
    port_rail = {
        end: r
        for node in spec.nodes
        if ft.hosts_group is None or ft.hosts_group in node.groups
        for r, end in enumerate(rails.ports(node))
        if end is not None
    }
    leaf_rail: dict[str, int] = {}
    leaf_of: dict[Endpoint, str] = {}
    for link in topo.links:
        if link.source == ("fabric", "fat_tree") and link.b in port_rail:
            leaf_rail[link.a.device] = port_rail[link.b]
            leaf_of[link.b] = link.a.device
    return RailPlan(port_rail, leaf_rail, leaf_of, rails)
