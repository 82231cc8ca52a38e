"""Advice on a valid spec: what OpenSM will run as planned, but not as safely as it could. Each rule yields
findings (path, message) like the rules of :mod:`ibprov.clusterspec.rules`; :func:`advise` runs them, in the
order of :data:`ADVICE`, once the spec is valid, and the loader keeps them as located warnings.

* :func:`routing_is_deadlock_free`: the routing engine OpenSM uses (the first listed, when it succeeds) keeps
  the planned switches free of credit loops; where it may not, the message names the cycle and the fix
* :func:`roots_are_read`: subnet_manager.roots is read by one of the listed engines
* :func:`slurm_tree_fits`: Slurm's tree (scheduler.topology.top) says what the fabric is: no cable it must
  leave out (top: cabled on a ring or torus), no jobs kept to one leaf by accident (top: none)
* :func:`.backend_advice.backend_settings_are_sent`: what a switch or UFM SM keeps as the product has it

Which engine is deadlock-free where (OpenSM's man page, doc/current-routing.txt): minhop and sssp on
topologies without cycles, or on a tiered tree whose cables join adjacent tiers (their minimal routes go up,
then down); dor on meshes and hypercubes cabled in dimension order, and on tori whose rings have at most
three switches (:func:`dimension_rings`), not on larger tori; ftree on fat trees (it routes a cable between
two switches of one tier as a horizontal link, with no such promise); updn and dnup wherever they have roots
(without a root_guid_file OpenSM guesses them from hop counts and, finding none, falls back to the next
engine, else minhop).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from ibprov.clusterspec.backend_advice import backend_settings_are_sent
from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.findings import Finding, Rule
from ibprov.clusterspec.scheduler import host_switches
from ibprov.clusterspec.topology import PlannedLink, Topology, routing_roots

__all__ = ["ADVICE", "advise"]

ENGINE: Path = ("subnet_manager", "routing_engine")
# engines whose routes can close a credit loop on any cycle of the switches (dor: unless it is a mesh)
LOOPING = {"minhop", "sssp", "dor"}
ROOTED = {"updn", "dnup", "ftree"}
RING_SHOWN = 8  # switches of a cycle named in a message, at most
# a dimension that closes into a ring of this many switches or fewer keeps dor free of credit loops: every
# switch of the ring is one hop from every other, so no route takes two hops round it
RING_SAFE = 3


@dataclass(frozen=True)
class Loop:
    """A cable between two switches of one tier that lies on a cycle of the switch graph, and that cycle."""

    cable: PlannedLink
    role: str
    ring: tuple[str, ...]  # from one end of the cable, across it, and round back to that end

    @property
    def text(self) -> str:
        ring = self.ring
        if len(ring) > RING_SHOWN:
            ring = (*ring[: RING_SHOWN - 2], "…", ring[-1])
        return " - ".join(ring)


def routing_is_deadlock_free(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """The first routing engine keeps this fabric free of credit loops (or falls back to one that does)."""
    engines = spec.subnet_manager.routing_engine
    first = engines[0]
    if first not in LOOPING | ROOTED:
        return
    loop = find_loop(topo)
    if loop is None:
        return
    tiered = any(s.role != "leaf" for s in topo.switches.values())
    where = (
        f"{loop.cable} joins two {loop.role} switches into a cycle ({loop.text})"
        if tiered
        else f"its switches form a cycle ({loop.text})"
    )
    if first in ("minhop", "sssp"):
        name = "minhop" if first == "minhop" else "sssp (dfsssp without its layers)"
        yield (
            ENGINE,
            f"{name} is not deadlock-free on this fabric: {where}, and routes around it may close a credit loop; "
            f"{_updn_fix(spec, topo, loop)}, or lash or dfsssp{'' if spec.qos.enabled else ' with qos.enabled: true'}",
        )
    elif first == "dor":  # a tree is an error (rules.routing): here the switches are one tier
        dimensions = dimension_rings(topo)
        if dimensions is None:
            yield (
                ENGINE,
                f"dor is deadlock-free on meshes and hypercubes, not on tori: {where}, and its cables are not in "
                "dimension order (each dimension one pair of port numbers, the same on every switch), so its "
                f"routes may close a credit loop; {_updn_fix(spec, topo, loop)}",
            )
        elif ring := next((r for r in dimensions if len(r) > RING_SAFE), None):
            text = " - ".join((*ring, ring[0]) if len(ring) < RING_SHOWN else (*ring[: RING_SHOWN - 2], "…", ring[0]))
            yield (
                ENGINE,
                f"dor is deadlock-free on meshes and hypercubes, not on tori: one dimension closes into a ring of "
                f"{len(ring)} switches ({text}), and routes of two hops or more round it close a credit loop; "
                f"{_updn_fix(spec, topo, loop)}",
            )
    elif first == "ftree":  # one tier only is an error (rules.routing): here the fabric is tiered
        yield (
            ENGINE,
            f"ftree is deadlock-free on a fat tree whose cables join adjacent tiers, but {where}: ftree routes it "
            "as a horizontal link, which OpenSM does not promise to keep free of credit loops; remove the cable, "
            f"or {_updn_fix(spec, topo, loop)}",
        )
    elif first in ("updn", "dnup") and not routing_roots(spec, topo):
        fallback = engines[1] if len(engines) > 1 else "minhop"
        unsafe = ", which is not deadlock-free here" if fallback in LOOPING else ""
        yield (
            ENGINE,
            f"{first} has no roots: the plan has no spine or core switch, so OpenSM guesses them from hop counts, "
            f"and on a cycle of like switches ({loop.text}) it can find none and route with {fallback} "
            f"instead{unsafe}; name them in subnet_manager.roots (e.g. roots: [{loop.ring[0]}])",
        )


def dimension_rings(topo: Topology) -> list[tuple[str, ...]] | None:
    """The rings the dimensions of a grid of switches close into (a torus has one per row of each dimension;
    a mesh none), or None when the cables between switches are not in dimension order.

    Dimension order, as dor needs it: every switch-to-switch cable joins port ``p`` of one switch to port
    ``q`` of the next, one pair of port numbers per dimension, the same on every switch (each dimension's
    cables reach every switch), so that each switch has at most one cable out of each ``p`` and into each
    ``q``. Following the ``p`` ports from switch
    to switch then walks a row of that dimension; a walk that comes back to its start is a ring."""
    step: dict[tuple[int, int], dict[str, str]] = {}  # (p, q) -> switch -> the next switch through p
    into: dict[tuple[int, int], set[str]] = {}
    for link in topo.links:
        a, b = link.a, link.b
        if a.hca is not None or b.hca is not None:
            continue
        if a.port == b.port:
            return None  # p to p: which way is "next" cannot be told
        (low, high) = (a, b) if a.port < b.port else (b, a)
        key = (low.port, high.port)
        nxt, seen = step.setdefault(key, {}), into.setdefault(key, set())
        if low.device in nxt or high.device in seen:
            return None  # two cables out of one p (or into one q): not one row per dimension
        nxt[low.device] = high.device
        seen.add(high.device)
    switches = {sw for nxt in step.values() for pair in nxt.items() for sw in pair}
    if any({sw for pair in nxt.items() for sw in pair} != switches for nxt in step.values()):
        return None  # a pair of ports used on some switches only: not a dimension of the grid
    rings: list[tuple[str, ...]] = []
    for nxt in step.values():
        done: set[str] = set()
        for start in nxt:
            walk: list[str] = []
            node: str | None = start
            while node is not None and node not in done and node not in walk:
                walk.append(node)
                node = nxt.get(node)
            done.update(walk)
            if node is not None and node in walk:
                rings.append(tuple(walk[walk.index(node) :]))
    return sorted(rings, key=lambda r: (-len(r), r))


def roots_are_read(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """subnet_manager.roots is for updn, dnup and ftree: with none of them listed, OpenSM never reads it."""
    sm = spec.subnet_manager
    if sm.roots and not set(sm.routing_engine) & ROOTED:
        yield (
            ("subnet_manager", "roots"),
            f"roots are read by updn, dnup and ftree, and routing_engine lists none of them "
            f"({', '.join(sm.routing_engine)}): OpenSM ignores them",
        )


def _updn_fix(spec: ClusterSpec, topo: Topology, loop: Loop) -> str:
    """Route with updn: from the roots the plan has, else from roots to name."""
    if spec.subnet_manager.roots:
        return "use updn (from subnet_manager.roots)"
    roots = routing_roots(spec, topo)
    if roots:
        return f"use updn (from the {topo.switches[roots[0]].role} switches)"
    return f"use updn with subnet_manager.roots (e.g. roots: [{loop.ring[0]}])"


def find_loop(topo: Topology) -> Loop | None:
    """The first cable (in the spec's order) between two switches of one tier that lies on a cycle of the
    switch graph, with that cycle; None when every cycle runs between adjacent tiers (or there is none).

    Cables between two tiers alone make cycles whose minimal routes go up, then down: no credit loop. A
    cable within a tier that is no bridge closes a cycle routes can go round."""
    roles = {name: s.role for name, s in topo.switches.items()}
    graph: dict[str, dict[str, None]] = {}  # switch -> its neighbour switches, in the spec's order
    within: list[PlannedLink] = []
    for link in topo.links:
        a, b = link.a.device, link.b.device
        if link.a.hca is not None or link.b.hca is not None or a == b:
            continue
        graph.setdefault(a, {})[b] = None
        graph.setdefault(b, {})[a] = None
        if roles.get(a) == roles.get(b):
            within.append(link)
    if not within:
        return None
    bridges = _bridges(graph)
    for link in within:
        a, b = link.a.device, link.b.device
        if frozenset((a, b)) not in bridges:
            return Loop(link, roles[a], (a, *_path(graph, b, a)))
    return None


def _bridges(graph: dict[str, dict[str, None]]) -> set[frozenset[str]]:
    """The edges whose removal splits their piece of the graph (Tarjan's low links, without recursion)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    bridges: set[frozenset[str]] = set()
    for start in graph:
        if start in order:
            continue
        order[start] = low[start] = len(order)
        stack = [(start, "", iter(graph[start]))]
        while stack:
            node, parent, neighbours = stack[-1]
            for nxt in neighbours:
                if nxt == parent:
                    continue
                if nxt in order:
                    low[node] = min(low[node], order[nxt])
                else:
                    order[nxt] = low[nxt] = len(order)
                    stack.append((nxt, node, iter(graph[nxt])))
                    break
            else:
                stack.pop()
                if stack:
                    low[parent] = min(low[parent], low[node])
                    if low[node] > order[parent]:
                        bridges.add(frozenset((parent, node)))
    return bridges


def _path(graph: dict[str, dict[str, None]], start: str, goal: str) -> tuple[str, ...]:
    """A shortest path from ``start`` to ``goal`` that does not take the edge between them."""
    came: dict[str, str] = {start: start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in graph[node]:
            if nxt in came or (node == start and nxt == goal):
                continue
            came[nxt] = node
            if nxt == goal:
                path = [goal]
                while path[-1] != start:
                    path.append(came[path[-1]])
                return tuple(reversed(path))
            queue.append(nxt)
    return (start, goal)  # not reached: the edge is on a cycle


def slurm_tree_fits(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """Slurm's topology/tree holds what the fabric is: ``top: cabled`` cannot list a cable between two switches
    of one tier (a ring, a torus: it is left out), and ``top: none`` keeps every job on one Slurm leaf."""
    scheduler = spec.scheduler
    if scheduler is None or scheduler.topology.plugin != "tree":
        return
    path: Path = ("scheduler", "topology", "top")
    if scheduler.topology.top == "cabled":
        roles = {name: s.role for name, s in topo.switches.items()}
        for link in topo.links:
            a, b = link.a.device, link.b.device
            if link.a.hca is None and link.b.hca is None and a != b and roles.get(a) == roles.get(b):
                upper = any(role != "leaf" for role in roles.values())
                effect = (
                    "Slurm places jobs as if it were not there"
                    if upper
                    else "with no spine or core there is no switch above the leaves, and no job spans two of them"
                )
                yield (
                    path,
                    f"top: cabled lists each switch under the switches of the tier above it, and {link} joins two "
                    f"{roles[a]} switches: Slurm's tree has no place for a cable within a tier (a ring, a torus), so "
                    f"it is left out, and {effect}; top: single puts one switch over every leaf",
                )
                return
    elif scheduler.topology.top == "none":
        leaves = {under for under in host_switches(spec, topo).values() if under}
        if len(leaves) > 1:
            yield (
                path,
                f"top: none puts no switch above the {len(leaves)} Slurm leaves: Slurm never runs a job across "
                "two of them (right for separate fabric islands only); top: single lets jobs span leaves",
            )


ADVICE: tuple[Rule, ...] = (routing_is_deadlock_free, roots_are_read, slurm_tree_fits, backend_settings_are_sent)


def advise(spec: ClusterSpec, topo: Topology) -> list[Finding]:
    return [finding for rule in ADVICE for finding in rule(spec, topo)]
