"""Design a fat tree: the fewest switches that cable N hosts at a blocking ratio with R-port switches.

Pure functions. :func:`design` searches the parameters of the spec's fat-tree generator
(:class:`ibprov.spec.model.FatTree`) and checks the result with the generator's own arithmetic
(:func:`ibprov.spec.topology.fat_tree_problems`), so it never proposes what ``ibprov validate`` rejects.

* One leaf when the hosts fit on one switch.
* Two levels (leaves + spines) when they fit under one spine layer.
* Three levels otherwise: pods of leaves and spines, joined by core switches.

The blocking ratio is applied at the leaves (host ports : uplinks); spines are non-blocking towards
the cores (as many uplinks as downlinks).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from ibprov.errors import IbprovError
from ibprov.spec.model import FatTree
from ibprov.spec.topology import fat_tree_problems
from ibprov.spec.types import NAME_RE

__all__ = [
    "Design",
    "DesignError",
    "cluster_name",
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
class Design:
    nodes: int
    radix: int
    target: Fraction  # the requested blocking, down:up (1 = non-blocking)
    fat_tree: FatTree

    @property
    def levels(self) -> int:
        ft = self.fat_tree
        return 1 if ft.spines == 0 else (3 if ft.cores else 2)

    @property
    def switches(self) -> int:
        return self.fat_tree.leaves + self.fat_tree.spines + self.fat_tree.cores

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
        out = {"host-leaf": self.nodes}
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
        return self.fat_tree.leaves * self.fat_tree.hosts_per_leaf - self.nodes


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


def _two_level(n: int, radix: int, target: Fraction) -> _Candidate | None:
    best: _Candidate | None = None
    for hosts in range(1, radix):
        leaves = _ceil(n, hosts)
        for up in _uplinks(hosts, radix, target):
            least = _ceil(leaves * up, radix)  # every spine takes at most `radix` leaf uplinks
            spines = next((d for d in _divisors(up) if d >= least), None)
            if spines is None:
                continue
            key = (leaves + spines, leaves * up, -hosts)
            if best is None or key < best[0]:
                best = (key, {"leaves": leaves, "spines": spines, "hosts_per_leaf": hosts, "uplinks_per_leaf": up})
    return best


def _cores_for(pods: int, up: int, radix: int) -> int | None:
    """Cores each spine connects to (a divisor of its uplinks), so that no core needs more than radix."""
    least = _ceil(pods * up, radix)
    return next((g for g in _divisors(up) if g >= least), None)


def _three_level(n: int, radix: int, target: Fraction) -> _Candidate | None:
    best: _Candidate | None = None
    half = radix // 2  # a non-blocking spine gives half its ports to the leaves
    for hosts in range(1, radix):
        total_leaves = _ceil(n, hosts)
        for up in _uplinks(hosts, radix, target):
            for per_pod in _divisors(up):  # spines per pod
                per_spine = up // per_pod  # cables from one leaf to one spine
                most = half // per_spine  # leaves per pod
                if most < 1:
                    continue
                first = _ceil(total_leaves, most)
                for pods in range(max(2, first), min(radix, first + 2) + 1):
                    lp = _ceil(total_leaves, pods)
                    down = lp * per_spine
                    for spine_up in range(down, radix - down + 1):
                        group = _cores_for(pods, spine_up, radix)
                        if group is None:
                            continue
                        cores = per_pod * group
                        key = (pods * (lp + per_pod) + cores, pods * lp * up + pods * per_pod * spine_up, -hosts)
                        if best is None or key < best[0]:
                            best = (
                                key,
                                {
                                    "leaves": pods * lp,
                                    "spines": pods * per_pod,
                                    "hosts_per_leaf": hosts,
                                    "uplinks_per_leaf": up,
                                    "pods": pods,
                                    "cores": cores,
                                    "uplinks_per_spine": spine_up,
                                },
                            )
                        break  # more spine uplinks only add cables
    return best


def design(nodes: int, radix: int, blocking: Fraction = Fraction(1)) -> Design:
    """The fat tree with the fewest switches (then the fewest cables) for ``nodes`` single-port hosts."""
    if not 1 <= nodes <= MAX_NODES:
        raise DesignError(f"--nodes must be between 1 and {MAX_NODES}")
    if not 4 <= radix <= 254:
        raise DesignError("--radix must be between 4 and 254 (ports per switch)")
    if blocking < 1:
        raise DesignError("blocking below 1:1 gains nothing; use 1:1")
    if nodes <= radix:
        params: dict[str, int] = {"leaves": 1, "spines": 0, "hosts_per_leaf": nodes, "uplinks_per_leaf": 0}
    else:
        found = _two_level(nodes, radix, blocking) or _three_level(nodes, radix, blocking)
        if found is None:
            raise DesignError(
                f"{nodes} hosts do not fit a three-level fat tree of {radix}-port switches at blocking "
                f"{format_ratio(blocking)} (ibprov's generator builds up to three levels): "
                "use bigger switches or more blocking"
            )
        params = found[1]
    ft = FatTree.model_validate({"radix": radix, "hosts_group": "compute", **params})
    problems = fat_tree_problems(ft)
    if problems:  # the search and the generator disagree: a bug, never a plan to hand out
        raise DesignError(f"internal: designed fat tree is invalid: {problems}")
    return Design(nodes, radix, blocking, ft)


def plan_lines(d: Design) -> list[str]:
    """The plan, as ``ibprov design`` prints it."""
    ft = d.fat_tree
    out = [
        f"fat tree for {d.nodes} hosts with {d.radix}-port switches, blocking {format_ratio(d.target)} requested",
    ]
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
    lines = [
        f"# Fat tree designed by `ibprov design --nodes {d.nodes} --radix {d.radix} "
        f"--blocking {format_ratio(d.target)}`:",
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
        *(f"  - {{name: {n}, groups: [compute], hcas: [{{device: mlx5_0}}]}}" for n in names),
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
