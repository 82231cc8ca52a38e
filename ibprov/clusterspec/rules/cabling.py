"""Cables: each end a port that exists, no port cabled twice or to itself, every HCA port cabled or declared
empty, every declared switch cabled, the fat tree's hosts group a group of nodes. The generator's own cables
are checked all at once where they can be (a large fat tree has hundreds of thousands)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from itertools import chain
from operator import countOf, itemgetter

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path, format_path
from ibprov.clusterspec.rules.findings import Finding, hint
from ibprov.clusterspec.topology import PlannedLink, Topology
from ibprov.clusterspec.types import Endpoint, parse_endpoint

FAT_TREE_SOURCE: Path = ("fabric", "fat_tree")


def cabling_is_consistent(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from topo.problems
    check_end = _end_checker(spec, topo)
    exists = end_exists(spec, topo)
    trusted = not topo.misfits  # see existing_links
    used: dict[Endpoint, Path] = {}
    first = _generated_from(spec, topo) if trusted else None
    head = topo.links if first is None else topo.links[:first]
    yield from _cabling_problems(topo, head, used, trusted, check_end, exists)
    if first is not None:
        # The generator's own cables, all at once: each end is a port that exists (trusted); if no two ends
        # are the same port and none is a port cabled before them, the loop finds nothing in them.
        tail = topo.links[first:]
        ends = dict.fromkeys(chain(map(itemgetter(0), tail), map(itemgetter(1), tail)), FAT_TREE_SOURCE)
        if len(ends) == 2 * len(tail) and ends.keys().isdisjoint(used):
            ends.update(used)
            used = ends
        else:
            yield from _cabling_problems(topo, tail, used, trusted, check_end, exists)
    empty: dict[Endpoint, int] = {}
    for i, text in enumerate(spec.fabric.empty_ports):
        end = parse_endpoint(text)
        problem = check_end(end)
        if problem:
            yield ("fabric", "empty_ports", i), problem
        elif end in used:
            yield ("fabric", "empty_ports", i), f"{end} is declared empty but is cabled at {format_path(used[end])}"
        empty[end] = i
    yield from _uncabled_ports(spec, topo, used, empty)


def _cabling_problems(
    topo: Topology,
    links: list[PlannedLink],
    used: dict[Endpoint, Path],
    trusted: bool,
    check_end: Callable[[Endpoint], str | None],
    exists: Callable[[Endpoint], bool],
) -> Iterator[Finding]:
    """Cables to themselves, to ports that do not exist, or to a port already in ``used`` (which it fills)."""
    for link in links:
        if link.a == link.b:
            yield link.source, f"{link.a} is cabled to itself"
            continue
        known = trusted and link.source == FAT_TREE_SOURCE
        if known and link.a not in used and link.b not in used:  # the common case: both ends are new
            used[link.a] = used[link.b] = link.source
            continue
        for end in (link.a, link.b):
            if end not in used and (known or exists(end)):  # the common case, without building a message
                used[end] = link.source
                continue
            problem = check_end(end)
            if problem and end.hca is None and end.device in topo.misfits and link.source == ("fabric", "fat_tree"):
                continue  # reported once, at the declared switch
            if problem:
                yield link.source, problem
            elif end in used:
                yield link.source, f"{end} is cabled twice (also at {format_path(used[end])})"
            else:
                used[end] = link.source


def _generated_from(spec: ClusterSpec, topo: Topology) -> int | None:
    """Where the fat tree generator's cables start in ``topo.links`` if every cable from there on is one of
    them (they follow the cables given by hand); None otherwise. A scan at C speed, for the bulk checks."""
    first = len(spec.fabric.links)
    if spec.fabric.fat_tree is None or first >= len(topo.links):
        return None
    sources = set(map(itemgetter(4), topo.links[first:]))
    return first if sources == {FAT_TREE_SOURCE} else None


def switches_are_cabled(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """A declared switch with no cable at all is on no fabric: the SM never reaches it, the twin would run it
    alone, and verify would report it missing."""
    if not spec.switches:
        return  # the fat tree's own switches are cabled by construction
    cabled = {end.device for link in topo.links for end in (link.a, link.b) if end.hca is None}
    for i, sw in enumerate(spec.switches):
        if sw.name not in cabled:
            yield (
                ("switches", i, "name"),
                f"switch {sw.name} has no cable: no subnet manager can reach it; cable it (fabric.links or "
                "fabric.fat_tree) or remove it",
            )


def existing_links(spec: ClusterSpec, topo: Topology) -> list[PlannedLink]:
    """The links both of whose ends exist. The generator's own cables do, unless it cabled a declared
    switch beyond its ports (a misfit): their ends are generated switch ports within the radix and the
    nodes' listed HCA ports."""
    exists = end_exists(spec, topo)
    trusted = not topo.misfits
    return [
        link
        for link in topo.links
        if (trusted and link.source == FAT_TREE_SOURCE) or (exists(link.a) and exists(link.b))
    ]


_HCA_PORTS: list[tuple[ClusterSpec, dict[tuple[str, str], frozenset[int]]]] = []  # the last spec's


def _hca_ports(spec: ClusterSpec) -> dict[tuple[str, str], frozenset[int]]:
    """(node, HCA) -> its ports, built once per spec (several rules ask, and only when a cable needs it)."""
    if _HCA_PORTS and _HCA_PORTS[0][0] is spec:
        return _HCA_PORTS[0][1]
    ports = {(n.name, h.device): frozenset(h.ports) for n in spec.nodes for h in n.hcas}
    _HCA_PORTS[:] = [(spec, ports)]
    return ports


def end_exists(spec: ClusterSpec, topo: Topology) -> Callable[[Endpoint], bool]:
    """A fast test that a cable end exists (what :func:`_end_checker` finds nothing wrong with)."""
    hca_ports: dict[tuple[str, str], frozenset[int]] | None = None
    switch_ports = {name: sw.ports for name, sw in topo.switches.items()}
    no_ports: frozenset[int] = frozenset()

    def exists(end: Endpoint) -> bool:
        nonlocal hca_ports
        if end.hca is None:
            return end.port <= switch_ports.get(end.device, 0)
        if hca_ports is None:
            hca_ports = _hca_ports(spec)
        return end.port in hca_ports.get((end.device, end.hca), no_ports)

    return exists


def _end_checker(spec: ClusterSpec, topo: Topology) -> Callable[[Endpoint], str | None]:
    """A function that says what is wrong with a cable end (None: it exists)."""

    nodes: set[str] = set()  # filled at the first call: most specs never have a cable end in question

    def check_end(end: Endpoint) -> str | None:
        if not nodes:
            nodes.update(n.name for n in spec.nodes)
        if end.hca is None:
            sw = topo.switches.get(end.device)
            if sw is None:
                if end.device in nodes:
                    return f"{end.device} is a node: write NODE/HCA:PORT"
                return f"{end.device} is not a known switch{hint(end.device, topo.switches)}"
            if end.port > sw.ports:
                return f"{end.device} has {sw.ports} ports, there is no port {end.port}"
            return None
        ports = _hca_ports(spec).get((end.device, end.hca))
        if ports is None:
            if end.device not in nodes:
                return f"unknown node {end.device!r}{hint(end.device, nodes)}"
            return f"node {end.device} has no HCA {end.hca!r}"
        if end.port not in ports:
            return f"{end.device}/{end.hca} has no port {end.port} (ports {sorted(ports)})"
        return None

    return check_end


def _uncabled_ports(
    spec: ClusterSpec, topo: Topology, used: dict[Endpoint, Path], empty: dict[Endpoint, int]
) -> Iterator[Finding]:
    ft = spec.fabric.fat_tree
    groups = {g for n in spec.nodes for g in n.groups}
    # when the fat tree cannot be expanded, its host ports are not cabled: do not report each of them
    ft_failed = ft is not None and (
        topo.fat_tree_failed
        or any(path[:2] == ("fabric", "fat_tree") for path, _ in topo.problems)
        or (ft.hosts_group is not None and ft.hosts_group not in groups)
    )
    if len(used) - countOf(map(itemgetter(1), used), None) == sum(len(h.ports) for n in spec.nodes for h in n.hcas):
        return  # as many HCA ports cabled as there are (each cabled end exists and is counted once): none is left
    for i, node in enumerate(spec.nodes):
        if ft_failed and ft is not None and (ft.hosts_group not in groups or ft.hosts_group in node.groups):
            continue
        for j, hca in enumerate(node.hcas):
            for port in hca.ports:
                end = Endpoint(node.name, hca.device, port)
                if end not in used and end not in empty:
                    yield (
                        ("nodes", i, "hcas", j, "ports"),
                        f"{end} is not cabled: add a link or list it in fabric.empty_ports",
                    )


def fat_tree_group_exists(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    ft = spec.fabric.fat_tree
    if ft is not None and ft.hosts_group is not None:
        groups = Counter(g for n in spec.nodes for g in n.groups)
        if ft.hosts_group not in groups:
            yield ("fabric", "fat_tree", "hosts_group"), f"no node is in group {ft.hosts_group!r}"
