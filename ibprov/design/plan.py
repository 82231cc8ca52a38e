"""Design a fat tree: the fewest switches that cable N hosts (R HCA ports each) at a blocking ratio with
radix-port switches.

Pure functions. :func:`design` searches the parameters of the spec's fat-tree generator
(:class:`ibprov.clusterspec.model.FatTree`) and checks the result with the generator's own arithmetic
(:func:`ibprov.clusterspec.topology.fat_tree_problems`), so it never proposes what ``ibprov validate`` rejects.

* One leaf when the hosts fit on one switch.
* Two levels (leaves + spines) when they fit under one spine layer.
* Three levels otherwise: pods of leaves and spines, joined by core switches.

The blocking ratio is applied at the leaves (host ports : uplinks); spines are non-blocking towards
the cores (as many uplinks as downlinks).

Nodes with several HCA ports (``rails``) are cabled rail-optimized by default: scalable units of
``unit_nodes`` nodes, each with ``rails`` x L leaves, HCA port i of every node of a unit on the unit's
leaves for rail i (L = unit_nodes / host ports per leaf, rounded up). Pods hold whole units. Node-grouped
puts all of a node's ports on one leaf instead.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from ibprov.clusterspec.model import FatTree, RailLayout
from ibprov.clusterspec.topology import fat_tree_problems
from ibprov.clusterspec.types import NAME_RE
from ibprov.errors import IbprovError

__all__ = [
    "MAX_NODES",
    "Design",
    "DesignError",
    "Shape",
    "cluster_name",
    "command_args",
    "design",
    "format_ratio",
    "node_names",
    "parse_blocking",
    "plan_lines",
    "spec_text",
]

MAX_NODES = 1_000_000


class DesignError(IbprovError):
    """The requested fabric cannot be built (or the request is malformed)."""


@dataclass(frozen=True)
class Shape:
    """What is cabled: ``nodes`` nodes with ``rails`` HCA ports each, in ``layout``."""

    nodes: int
    rails: int = 1
    layout: RailLayout = "node-grouped"
    unit_nodes: int | None = None  # rail-optimized: nodes per scalable unit (None: a full leaf's worth)

    @property
    def ports(self) -> int:
        return self.nodes * self.rails

    def leaves_for(self, hosts: int) -> tuple[int, int, int] | None:
        """Leaves with ``hosts`` host ports: (leaves needed, leaves per unit (1: no units), nodes per unit);
        None when a node does not fit."""
        if self.layout == "rail-optimized":
            unit = self.unit_nodes or hosts
            per_unit = self.rails * _ceil(unit, hosts)
            return _ceil(self.nodes, unit) * per_unit, per_unit, unit
        per_leaf = hosts // self.rails
        return None if per_leaf == 0 else (_ceil(self.nodes, per_leaf), 1, 0)


@dataclass(frozen=True)
class Design:
    nodes: int
    radix: int
    target: Fraction  # the requested blocking, down:up (1 = non-blocking)
    fat_tree: FatTree
    rails: int = 1

    @property
    def layout(self) -> str:
        return self.fat_tree.rails

    @property
    def ports(self) -> int:
        """Node ports to cable: nodes x rails."""
        return self.nodes * self.rails

    @property
    def levels(self) -> int:
        ft = self.fat_tree
        return 1 if ft.spines == 0 else (3 if ft.cores else 2)

    @property
    def switches(self) -> int:
        return self.fat_tree.leaves + self.fat_tree.spines + self.fat_tree.cores

    @property
    def tiers(self) -> dict[str, int]:
        """Switches per tier (leaf, spine, core), tiers without switches left out."""
        ft = self.fat_tree
        return {k: v for k, v in (("leaf", ft.leaves), ("spine", ft.spines), ("core", ft.cores)) if v}

    @property
    def achieved(self) -> Fraction:
        """Blocking at the leaves (host ports : uplinks); a single switch is non-blocking."""
        ft = self.fat_tree
        return Fraction(ft.hosts_per_leaf, ft.uplinks_per_leaf) if ft.uplinks_per_leaf else Fraction(1)

    @property
    def spine_down(self) -> int:
        ft = self.fat_tree
        if not ft.spines:
            return 0
        return ft.leaves // ft.pods * ft.uplinks_per_leaf // (ft.spines // ft.pods)

    @property
    def core_down(self) -> int:
        ft = self.fat_tree
        if not ft.cores:
            return 0
        return ft.pods * ft.uplinks_per_spine // (ft.cores // (ft.spines // ft.pods))

    @property
    def cables(self) -> dict[str, int]:
        ft = self.fat_tree
        out = {"host-leaf": self.ports}
        if ft.spines:
            out["leaf-spine"] = ft.leaves * ft.uplinks_per_leaf
        if ft.cores:
            out["spine-core"] = ft.spines * ft.uplinks_per_spine
        return out

    @property
    def free_ports(self) -> dict[str, int]:
        """Ports without a cable on each switch of a level (leaves: on a full leaf)."""
        ft = self.fat_tree
        out = {"leaf": ft.radix - ft.hosts_per_leaf - ft.uplinks_per_leaf}
        if ft.spines:
            out["spine"] = ft.radix - self.spine_down - ft.uplinks_per_spine
        if ft.cores:
            out["core"] = ft.radix - self.core_down
        return out

    @property
    def spare_host_ports(self) -> int:
        """Host ports of the leaves that no host uses (room to grow)."""
        return self.fat_tree.leaves * self.fat_tree.hosts_per_leaf - self.ports


def parse_blocking(text: str) -> Fraction:
    """``"2:1"`` -> 2; ``"1:1"`` -> 1; ``"1.5:1"`` -> 3/2. Blocking below 1:1 means nothing."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*", text)
    if not match or Fraction(match[2]) == 0:
        raise DesignError(f"blocking {text!r}: write DOWN:UP, e.g. 1:1 (non-blocking) or 2:1")
    ratio = Fraction(match[1]) / Fraction(match[2])
    if ratio < 1:
        raise DesignError(f"blocking {text}: more uplinks than host ports gains nothing; use 1:1")
    return ratio


def format_ratio(ratio: Fraction) -> str:
    """2 -> '2:1'; 3/2 -> '3:2'; 13/6 -> '13:6 (2.17:1)'."""
    if ratio.denominator <= 4:
        return f"{ratio.numerator}:{ratio.denominator}"
    return f"{ratio.numerator}:{ratio.denominator} ({float(ratio):.2f}:1)"


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _uplinks(hosts: int, radix: int, target: Fraction) -> range:
    """Uplink counts that keep a leaf with ``hosts`` host ports within the target blocking."""
    least = max(1, math.ceil(Fraction(hosts) / target))
    return range(least, radix - hosts + 1)


# A candidate: (sort key, FatTree keyword arguments). Keys: fewest switches, then fewest cables.
_Candidate = tuple[tuple[int, ...], dict[str, int]]


def _units(found: tuple[int, int, int], shape: Shape) -> dict[str, int]:
    _leaves, per_unit, unit = found
    return {"unit_nodes": unit, "unit_leaves": per_unit} if shape.layout == "rail-optimized" else {}


def _two_level(shape: Shape, radix: int, target: Fraction) -> _Candidate | None:
    best: _Candidate | None = None
    for hosts in range(1, radix):
        found = shape.leaves_for(hosts)
        if found is None:
            continue
        leaves = found[0]
        for up in _uplinks(hosts, radix, target):
            least = _ceil(leaves * up, radix)  # every spine takes at most `radix` leaf uplinks
            spines = next((d for d in _divisors(up) if d >= least), None)
            if spines is None:
                continue
            key = (leaves + spines, leaves * up, -hosts)
            if best is None or key < best[0]:
                params = {"leaves": leaves, "spines": spines, "hosts_per_leaf": hosts, "uplinks_per_leaf": up}
                best = (key, {**params, **_units(found, shape)})
    return best


def _cores_for(pods: int, up: int, radix: int) -> int | None:
    """Cores each spine connects to (a divisor of its uplinks), so that no core needs more than radix."""
    least = _ceil(pods * up, radix)
    return next((g for g in _divisors(up) if g >= least), None)


def _three_level(shape: Shape, radix: int, target: Fraction) -> _Candidate | None:
    best: _Candidate | None = None
    half = radix // 2  # a non-blocking spine gives half its ports to the leaves
    for hosts in range(1, radix):
        found = shape.leaves_for(hosts)
        if found is None:
            continue
        total_leaves, granule, _unit = found  # pods hold whole units of `granule` leaves
        units = total_leaves // granule
        for up in _uplinks(hosts, radix, target):
            for per_pod in _divisors(up):  # spines per pod
                per_spine = up // per_pod  # cables from one leaf to one spine
                most = half // per_spine // granule  # units per pod
                if most < 1:
                    continue
                first = _ceil(units, most)
                for pods in range(max(2, first), min(radix, first + 2) + 1):
                    lp = _ceil(units, pods) * granule
                    down = lp * per_spine
                    for spine_up in range(down, radix - down + 1):
                        group = _cores_for(pods, spine_up, radix)
                        if group is None:
                            continue
                        cores = per_pod * group
                        key = (pods * (lp + per_pod) + cores, pods * lp * up + pods * per_pod * spine_up, -hosts)
                        if best is None or key < best[0]:
                            params = {
                                "leaves": pods * lp,
                                "spines": pods * per_pod,
                                "hosts_per_leaf": hosts,
                                "uplinks_per_leaf": up,
                                "pods": pods,
                                "cores": cores,
                                "uplinks_per_spine": spine_up,
                            }
                            best = (key, {**params, **_units(found, shape)})
                        break  # more spine uplinks only add cables
    return best


def design(
    nodes: int,
    radix: int,
    blocking: Fraction = Fraction(1),
    *,
    rails: int = 1,
    layout: str | None = None,
    unit_nodes: int | None = None,
) -> Design:
    """The fat tree with the fewest switches (then the fewest cables) for ``nodes`` hosts with ``rails``
    HCA ports each (rail-optimized by default when there are several; node-grouped otherwise)."""
    if not 1 <= nodes <= MAX_NODES:
        raise DesignError(f"--nodes must be between 1 and {MAX_NODES}")
    if not 4 <= radix <= 254:
        raise DesignError("--radix must be between 4 and 254 (ports per switch)")
    if not 1 <= rails <= radix:
        raise DesignError(f"--rails must be between 1 and the radix {radix} (HCA ports per node)")
    if blocking < 1:
        raise DesignError("blocking below 1:1 gains nothing; use 1:1")
    chosen: RailLayout
    if layout is None:
        chosen = "rail-optimized" if rails > 1 else "node-grouped"
    elif layout in ("rail-optimized", "node-grouped"):
        chosen = "rail-optimized" if layout == "rail-optimized" else "node-grouped"
    else:
        raise DesignError(f"layout {layout!r}: rail-optimized or node-grouped")
    if unit_nodes is not None and chosen != "rail-optimized":
        raise DesignError("--unit-nodes sizes the scalable units of a rail-optimized fabric (--rails 2 or more)")
    if unit_nodes is not None and not 1 <= unit_nodes <= nodes:
        raise DesignError(f"--unit-nodes must be between 1 and --nodes ({nodes})")
    shape = Shape(nodes, rails, chosen, unit_nodes)
    if shape.ports <= radix and unit_nodes is None:
        # one switch: every port on the same crossbar, so rails need no leaves of their own
        params: dict[str, int | str] = {"leaves": 1, "spines": 0, "hosts_per_leaf": shape.ports, "uplinks_per_leaf": 0}
    else:
        found = _two_level(shape, radix, blocking) or _three_level(shape, radix, blocking)
        if found is None:
            raise DesignError(
                f"{nodes} hosts{f' x {rails} HCA ports' if rails > 1 else ''} do not fit a three-level fat tree of "
                f"{radix}-port switches at blocking {format_ratio(blocking)} (ibprov's generator builds up to "
                "three levels): use bigger switches or more blocking"
                + (", or smaller units (--unit-nodes)" if unit_nodes else "")
            )
        params = {**found[1], **({"rails": "rail-optimized"} if chosen == "rail-optimized" else {})}
    ft = FatTree.model_validate({"radix": radix, "hosts_group": "compute", **params})
    problems = fat_tree_problems(ft, rails, nodes)
    if problems:  # the search and the generator disagree: a bug, never a plan to hand out
        raise DesignError(f"internal: designed fat tree is invalid: {problems}")
    return Design(nodes, radix, blocking, ft, rails)


def plan_lines(d: Design) -> list[str]:
    """The plan, as ``ibprov design`` prints it."""
    ft = d.fat_tree
    hosts = f"{d.nodes} hosts" if d.rails == 1 else f"{d.nodes} hosts x {d.rails} HCA ports ({d.layout})"
    out = [f"fat tree for {hosts} with {d.radix}-port switches, blocking {format_ratio(d.target)} requested"]
    if d.levels == 1:
        out.append("levels:    1 (one switch: every host on the same crossbar)")
    else:
        out.append(f"levels:    {d.levels}" + (f" ({ft.pods} pods)" if ft.pods > 1 else ""))
    parts = [f"{ft.leaves} leaf"]
    if ft.spines:
        parts.append(f"{ft.spines} spine" + (f" ({ft.spines // ft.pods} per pod)" if ft.pods > 1 else ""))
    if ft.cores:
        parts.append(f"{ft.cores} core")
    out.append(f"switches:  {d.switches} ({', '.join(parts)})")
    if ft.rails == "rail-optimized":
        assert ft.unit_nodes is not None  # design always writes both
        assert ft.unit_leaves is not None
        units = _ceil(d.nodes, ft.unit_nodes)
        out.append(
            f"units:     {units} scalable unit{'s' if units > 1 else ''} of {ft.unit_nodes} nodes, "
            f"{ft.unit_leaves} leaves each ({ft.unit_leaves // d.rails} per rail)"
        )
    leaf = f"leaf:      {ft.hosts_per_leaf} host ports"
    if ft.spines:
        sp = ft.spines // ft.pods
        leaf += f" + {ft.uplinks_per_leaf} uplinks ({ft.uplinks_per_leaf // sp} to each of {sp} spines)"
    out.append(f"{leaf}, {d.free_ports['leaf']} free; {d.spare_host_ports} host ports spare in all")
    if ft.spines:
        spine = f"spine:     {d.spine_down} down"
        if ft.cores:
            spine += f" + {ft.uplinks_per_spine} up"
        out.append(f"{spine}, {d.free_ports['spine']} free")
    if ft.cores:
        out.append(f"core:      {d.core_down} down, {d.free_ports['core']} free")
    cables = d.cables
    out.append(
        "cables:    " + ", ".join(f"{n} {kind}" for kind, n in cables.items()) + f" ({sum(cables.values())} in all)"
    )
    if d.levels == 1:
        out.append("blocking:  1:1 (single switch)")
    else:
        above = "; spines non-blocking" if ft.cores else ""
        out.append(f"blocking:  {format_ratio(d.achieved)} at the leaves{above}")
    return out


def command_args(d: Design) -> str:
    """The ``ibprov design`` options that make this design."""
    out = f"--nodes {d.nodes} --radix {d.radix} --blocking {format_ratio(d.target)}"
    if d.rails > 1:
        out += f" --rails {d.rails}"
        if d.layout != "rail-optimized" and d.levels > 1:
            out += f" --layout {d.layout}"
    if d.fat_tree.unit_nodes is not None:
        out += f" --unit-nodes {d.fat_tree.unit_nodes}"
    return out


def node_names(count: int) -> list[str]:
    width = max(4, len(str(count)))
    return [f"node{i:0{width}d}" for i in range(1, count + 1)]


def cluster_name(stem: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-_.")[:63]
    return name if re.fullmatch(NAME_RE, name) else "fattree"


def spec_text(d: Design, *, cluster: str = "fattree", speed: str = "HDR") -> str:
    """The fabric part of a spec: cluster, nodes, fabric.fat_tree and subnet_manager."""
    ft = d.fat_tree
    names = node_names(d.nodes)
    single = d.levels == 1
    hcas = ", ".join(f"{{device: mlx5_{i}}}" for i in range(d.rails))
    lines = [
        f"# Fat tree designed by `ibprov design {command_args(d)}`:",
        *(f"#   {line}" for line in plan_lines(d)[1:]),
        "# Fill in: the real host names (keep the order: the generator cables hosts to leaf ports in",
        "# the order the nodes are listed), groups, partitions, IPoIB. GUIDs come from `ibprov discover`.",
        "",
        "version: 1",
        "",
        "cluster:",
        f"  name: {cluster_name(cluster)}",
        "",
        "nodes:",
        *(f"  - {{name: {n}, groups: [compute], hcas: [{hcas}]}}" for n in names),
        "",
        "fabric:",
        f"  speed: {speed}",
        "  width: 4x",
        "  fat_tree:",
        f"    radix: {ft.radix}",
        f"    leaves: {ft.leaves}",
        f"    spines: {ft.spines}",
        f"    hosts_per_leaf: {ft.hosts_per_leaf}",
        f"    uplinks_per_leaf: {ft.uplinks_per_leaf}",
    ]
    if ft.cores:
        lines += [f"    pods: {ft.pods}", f"    cores: {ft.cores}", f"    uplinks_per_spine: {ft.uplinks_per_spine}"]
    if ft.rails == "rail-optimized":
        lines += [f"    rails: {ft.rails}", f"    unit_nodes: {ft.unit_nodes}", f"    unit_leaves: {ft.unit_leaves}"]
    lines += [
        "    hosts_group: compute",
        "",
        "subnet_manager:",
        # ftree needs a tree to route; on a single switch minhop does the same job without complaints
        f"  routing_engine: {'minhop   # a single switch: nothing for ftree to do' if single else 'ftree'}",
        "  instances:",
        f"    - {{node: {names[0]}, priority: 15}}",
    ]
    if len(names) > 1:
        lines.append(f"    - {{node: {names[1]}, priority: 14}}")
    return "\n".join(lines) + "\n"
