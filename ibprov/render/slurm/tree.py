"""The Slurm view of the cabling: which Slurm leaf each node is under, and the switches above the leaves.

One core, :func:`tree_from_cabling`, works on neutral input (host -> the switches its HCA ports are cabled
to, the switch-to-switch cables, each switch's tier), so that the plan (:func:`plan_tree`, from the spec's
declared and fat-tree cables) and a discovered fabric (``ibprov discover``) come out in the same shape and
``verify --scheduler`` compares like with like.

**A Slurm leaf is the set of IB switches a host is cabled to.** Slurm's topology/tree places a job on the
nodes under as few leaf switches as it can (``--switches=N``), because nodes under one leaf are one switch
hop apart. A host on one leaf switch is under that switch. A rail-optimized host has one HCA port per rail,
each cabled to that rail's leaf in its scalable unit: the unit's hosts all share the same set of rail leaves,
and any two of them are one switch hop apart *on every rail*. So the set is the Slurm leaf: a scalable unit
becomes one Slurm leaf (``leaf01-leaf08``), and Slurm packs a job into a unit, which is what NCCL and MPI
rails want. Naming each IB rail leaf separately instead would list every host under eight leaves, which
topology/tree cannot express (a node sits under one leaf). The names come from
:func:`ibprov.clusterspec.scheduler.leaf_names` (deterministic, unique, at most 64 characters, no character
that breaks a hostlist), which the spec's rules use too.

**Above the leaves** (``scheduler.topology.top``):

* ``single`` (the default): one switch, ``top_name``, over every Slurm leaf (only when there are two or
  more). Slurm's topology guide recommends leaves plus one top switch for large trees: listing every switch
  link makes the scheduler slower, and in a non-blocking fat tree every leaf reaches every other through any
  spine at the same cost, so the spine and core lines add nothing the scheduler can use.
* ``cabled``: the spine and core switches as cabled, each over the switches of a lower tier it has a cable
  to (IB leaves replaced by the Slurm leaves they belong to). For a tree that is *not* non-blocking
  (oversubscribed spines, pods joined by few cores), where the path between leaves matters. A cable
  between two switches of one tier (a ring, a torus) has no place in a tree and is left out (the spec warns).
* ``none``: no switch above the leaves: Slurm never places a job across leaves (separate islands).

The tiers come from the spec's switch roles; for a discovered fabric, pass none and they are the hop
distance from the host-facing switches (:func:`hop_tiers`). A switch with hosts is always a leaf here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import SlurmTopology
from ibprov.clusterspec.scheduler import host_switches, leaf_names
from ibprov.hostlist import natural_key

__all__ = ["TIERS", "SlurmLeaf", "SlurmTree", "SlurmUpper", "hop_tiers", "plan_tree", "tree_from_cabling"]

TIERS = ("leaf", "spine", "core")  # bottom up: a switch lists the switches of lower tiers it is cabled to


@dataclass(frozen=True)
class SlurmLeaf:
    """One Slurm leaf: the IB switches its nodes are cabled to (natural order) and its nodes (natural order)."""

    name: str
    ib_switches: tuple[str, ...]
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class SlurmUpper:
    """A switch above the leaves and the switches (Slurm leaves or upper switches) under it, natural order."""

    name: str
    switches: tuple[str, ...]


@dataclass(frozen=True)
class SlurmTree:
    """Slurm's tree of one fabric: leaves and upper switches in natural order of their names, the leaf of
    every node, and the nodes cabled to no switch (Slurm's tree cannot hold them; the spec refuses them)."""

    leaves: tuple[SlurmLeaf, ...] = ()
    uppers: tuple[SlurmUpper, ...] = ()
    node_leaf: dict[str, str] = field(default_factory=dict)
    unplaced: tuple[str, ...] = ()

    @property
    def leaf_names(self) -> tuple[str, ...]:
        return tuple(leaf.name for leaf in self.leaves)


def tree_from_cabling(
    host_leaves: Mapping[str, frozenset[str]],
    switch_links: Iterable[tuple[str, str]],
    tiers: Mapping[str, str] | None = None,
    options: SlurmTopology | None = None,
) -> SlurmTree:
    """Slurm's tree from the cabling: ``host_leaves`` (host -> the switches its HCA ports are cabled to),
    ``switch_links`` (switch-to-switch cables, each once or both ways, parallel cables alike), ``tiers``
    (switch -> leaf, spine or core; None: :func:`hop_tiers`) and what to put above the leaves (``options``,
    default ``scheduler.topology``'s defaults)."""
    options = options or SlurmTopology()
    links = {(a, b) for a, b in switch_links if a != b}
    switches = {s for pair in links for s in pair} | {s for sw in host_leaves.values() for s in sw}
    tiers = dict(tiers) if tiers is not None else hop_tiers(host_leaves, links)
    names = leaf_names(host_leaves.values(), taken=switches | set(tiers))
    members: dict[str, list[str]] = {}
    node_leaf: dict[str, str] = {}
    for host, ib in host_leaves.items():
        if ib:
            node_leaf[host] = names[ib]
            members.setdefault(names[ib], []).append(host)
    ib_of = {name: tuple(sorted(ib, key=natural_key)) for ib, name in names.items()}
    leaves = tuple(
        SlurmLeaf(name, ib_of[name], tuple(sorted(nodes, key=natural_key)))
        for name, nodes in sorted(members.items(), key=lambda item: natural_key(item[0]))
    )
    unplaced = tuple(sorted((h for h, ib in host_leaves.items() if not ib), key=natural_key))
    uppers: tuple[SlurmUpper, ...] = ()
    if options.top == "single" and len(leaves) > 1:
        uppers = (SlurmUpper(options.top_name, tuple(leaf.name for leaf in leaves)),)
    elif options.top == "cabled":
        uppers = _cabled(leaves, links, tiers)
    return SlurmTree(leaves, uppers, node_leaf, unplaced)


def _cabled(
    leaves: tuple[SlurmLeaf, ...], links: set[tuple[str, str]], tiers: Mapping[str, str]
) -> tuple[SlurmUpper, ...]:
    """Every switch above the leaves with the lower-tier switches it is cabled to; an IB leaf stands for the
    Slurm leaves it belongs to, a switch with hosts is a leaf whatever its role."""
    host_facing = {ib: None for leaf in leaves for ib in leaf.ib_switches}
    slurm_of: dict[str, set[str]] = {}
    for leaf in leaves:
        for ib in leaf.ib_switches:
            slurm_of.setdefault(ib, set()).add(leaf.name)

    def rank(switch: str) -> int:
        if switch in host_facing:
            return 0
        tier = tiers.get(switch, "leaf")
        return TIERS.index(tier) if tier in TIERS else 0

    children: dict[str, set[str]] = {}
    for a, b in links:
        ra, rb = rank(a), rank(b)
        if ra == rb:
            continue  # a cable within a tier: no place in a tree
        upper, lower = (a, b) if ra > rb else (b, a)
        below = slurm_of.get(lower, set()) if rank(lower) == 0 else {lower}
        if below:
            children.setdefault(upper, set()).update(below)
    return tuple(
        SlurmUpper(name, tuple(sorted(under, key=natural_key)))
        for name, under in sorted(children.items(), key=lambda item: natural_key(item[0]))
    )


def hop_tiers(host_leaves: Mapping[str, frozenset[str]], switch_links: Iterable[tuple[str, str]]) -> dict[str, str]:
    """A discovered fabric's tiers: the switches with hosts are leaves, those one cable from a leaf are
    spines, the rest (two or more cables away) cores; a switch that no leaf reaches is a core."""
    graph: dict[str, set[str]] = {}
    for a, b in switch_links:
        if a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set()).add(a)
    start = {s for switches in host_leaves.values() for s in switches}
    hops = dict.fromkeys(start, 0)
    queue = deque(sorted(start))
    while queue:
        here = queue.popleft()
        for nxt in graph.get(here, ()):
            if nxt not in hops:
                hops[nxt] = hops[here] + 1
                queue.append(nxt)
    return {s: TIERS[min(hops.get(s, 2), 2)] for s in (*graph, *start)}


def plan_tree(loaded: LoadedSpec) -> SlurmTree:
    """The planned Slurm tree: the scheduler's nodes (:func:`~ibprov.clusterspec.scheduler.scheduler_nodes`)
    and the spec's cables (declared and generated), tiers from the switch roles, ``scheduler.topology``."""
    spec, topo = loaded.spec, loaded.topology
    switch_links = [(link.a.device, link.b.device) for link in topo.links if link.a.hca is None and link.b.hca is None]
    tiers = {name: s.role for name, s in topo.switches.items()}
    options = spec.scheduler.topology if spec.scheduler is not None else None
    return tree_from_cabling(host_switches(spec, topo), switch_links, tiers, options)
