"""Rules across the whole spec. Each rule yields (path, message); all problems are reported in one run."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from ipaddress import IPv4Address, IPv6Address, ip_address
from itertools import chain
from operator import countOf, itemgetter
from typing import TypeVar, cast

from ibprov.clusterspec.model import ClusterSpec, IpoibInterface, Member, Qos, QosTables
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rail_rules import RAIL_RULES, ipoib_nodes
from ibprov.clusterspec.topology import PlannedLink, Topology
from ibprov.clusterspec.types import Endpoint, parse_endpoint

Finding = tuple[Path, str]
T = TypeVar("T")
Rule = Callable[[ClusterSpec, Topology], Iterator[Finding]]

QOS_ENGINES = {"lash", "dfsssp", "torus-2QoS"}
NO_LMC_ENGINES = {"ftree", "lash"}


def _dupes(items: list[tuple[object, Path]], what: str) -> Iterator[Finding]:
    first: dict[object, Path] = {}
    for key, path in items:
        if key in first:
            yield (
                path,
                f"duplicate {what} {key if not isinstance(key, int) else f'0x{key:016x}'} (also at {_fmt(first[key])})",
            )
        else:
            first[key] = path


def _fmt(path: Path) -> str:
    from ibprov.clusterspec.positions import format_path

    return format_path(path)


def names_are_unique(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from _dupes([(n.name, ("nodes", i, "name")) for i, n in enumerate(spec.nodes)], "node name")
    yield from _dupes([(s.name, ("switches", i, "name")) for i, s in enumerate(spec.switches)], "switch name")
    nodes = {n.name for n in spec.nodes}
    for i, sw in enumerate(spec.switches):
        if sw.name in nodes:
            yield ("switches", i, "name"), f"{sw.name} is both a node and a switch"
    groups = {g for n in spec.nodes for g in n.groups}
    for i, node in enumerate(spec.nodes):
        if node.name in groups:
            yield ("nodes", i, "name"), f"{node.name} is both a node name and a group name"
        if len({h.device for h in node.hcas}) != len(node.hcas):
            yield from _dupes(
                [(h.device, ("nodes", i, "hcas", j, "device")) for j, h in enumerate(node.hcas)],
                f"HCA on {node.name}:",
            )
    names = Counter(n.name for n in spec.nodes)
    addresses: list[tuple[object, Path]] = [
        ((n.address or n.name), ("nodes", i, "address" if n.address else "name"))
        for i, n in enumerate(spec.nodes)
        if n.address or names[n.name] == 1
    ]  # else: duplicate name
    yield from _dupes(addresses, "node address")
    yield from _dupes([(p.name, ("partitions", i, "name")) for i, p in enumerate(spec.partitions)], "partition name")
    yield from _dupes([(q.name, ("qos", "levels", i, "name")) for i, q in enumerate(spec.qos.levels)], "qos level")


def guids_are_unique(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    node_guids: list[tuple[object, Path]] = []
    port_guids: list[tuple[object, Path]] = []
    for i, node in enumerate(spec.nodes):
        for j, hca in enumerate(node.hcas):
            if hca.node_guid is not None:
                node_guids.append((hca.node_guid, ("nodes", i, "hcas", j, "node_guid")))
            if hca.port_guids:
                port_guids += [(g, ("nodes", i, "hcas", j, "port_guids", p)) for p, g in hca.port_guids.items()]
    for i, sw in enumerate(spec.switches):
        if sw.node_guid is not None:
            node_guids.append((sw.node_guid, ("switches", i, "node_guid")))
    yield from _dupes(node_guids, "node GUID")
    yield from _dupes(port_guids, "port GUID")


def partitions_are_consistent(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from _dupes([(f"0x{p.pkey:04x}", ("partitions", i, "pkey")) for i, p in enumerate(spec.partitions)], "pkey")
    nodes = {n.name for n in spec.nodes}
    groups = {g for n in spec.nodes for g in n.groups}
    for i, part in enumerate(spec.partitions):
        for j, member in enumerate(part.members):
            path: Path = ("partitions", i, "members", j)
            if member.node is not None and member.node not in nodes:
                yield (*path, "node"), f"unknown node {member.node!r}{_hint(member.node, nodes | groups)}"
            if member.group is not None and member.group not in groups:
                yield (*path, "group"), f"unknown group {member.group!r}{_hint(member.group, groups)}"
        yield from _member_conflicts(i, part.name, part.defmember, part.members)
        if part.sl and not spec.qos.enabled:
            yield (
                ("partitions", i, "sl"),
                (
                    f"sl {part.sl} has no effect while qos.enabled is false: "
                    "OpenSM silently forces the partition SL to 0"
                ),
            )


def _member_conflicts(i: int, name: str, defmember: str, members: tuple[Member, ...]) -> Iterator[Finding]:
    """The same node, group or ``all`` listed twice in one partition with different memberships."""
    seen: dict[tuple[str, str], tuple[int, str]] = {}
    for j, m in enumerate(members):
        if m.rail is not None:
            continue  # another member than the same selector without a rail: rail_rules checks these
        key = ("node", m.node) if m.node else ("group", m.group) if m.group else ("all", "all: true")
        assert key[1] is not None
        membership = m.membership or defmember
        if key in seen and seen[key][1] != membership:
            first, other = seen[key]
            what = f"{key[0]} {key[1]}" if key[0] != "all" else "all: true"
            yield (
                ("partitions", i, "members", j, "membership" if m.membership else key[0]),
                f"{what} is listed twice in partition {name} with different memberships: {membership} here, "
                f"{other} at partitions[{i}].members[{first}] (list it once)",
            )
        seen.setdefault(key, (j, membership))


def _hint(name: str, choices: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def subnet_managers_are_sound(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    by_name = {n.name: n for n in spec.nodes}
    sm = spec.subnet_manager
    seen: dict[tuple[str, str, int], int] = {}
    for i, inst in enumerate(sm.instances):
        path: Path = ("subnet_manager", "instances", i)
        node = by_name.get(inst.node)
        if node is None:
            yield (*path, "node"), f"unknown node {inst.node!r}{_hint(inst.node, set(by_name))}"
            continue
        if not node.hcas:
            yield (*path, "node"), f"node {inst.node} has no HCA to run a subnet manager on"
            continue
        hca = next((h for h in node.hcas if h.device == inst.hca), None) if inst.hca else node.hcas[0]
        if hca is None:
            yield (*path, "hca"), f"node {inst.node} has no HCA {inst.hca!r}"
            continue
        if inst.port not in hca.ports:
            yield (
                (*path, "port"),
                f"{inst.node}/{hca.device} has no port {inst.port} (ports {list(hca.ports)})",
            )
        key = (inst.node, hca.device, inst.port)
        if key in seen:
            yield path, f"a second subnet manager on {inst.node}/{hca.device}:{inst.port}"
        seen[key] = i
    top = max(inst.priority for inst in sm.instances)
    winners = [i for i, inst in enumerate(sm.instances) if inst.priority == top]
    if len(winners) > 1:
        names = ", ".join(sm.instances[i].node for i in winners)
        yield (
            ("subnet_manager", "instances", winners[1], "priority"),
            (
                f"{len(winners)} subnet managers share the highest priority {top} ({names}): give exactly one "
                "the highest priority so the master is deterministic"
            ),
        )
    yield from _engine_problems(spec, topo)
    engines = set(sm.routing_engine)
    if sm.lmc and engines & NO_LMC_ENGINES:
        yield (
            ("subnet_manager", "lmc"),
            (f"lmc {sm.lmc} is not supported by {', '.join(sorted(engines & NO_LMC_ENGINES))} (OpenSM falls back)"),
        )
    if engines & QOS_ENGINES and not spec.qos.enabled:
        yield (
            ("subnet_manager", "routing_engine"),
            (f"{', '.join(sorted(engines & QOS_ENGINES))} needs qos.enabled: true (it routes over SLs/VLs)"),
        )


# Engines that read a file ibprov does not write: OpenSM runs without it, i.e. falls back or routes as minhop.
UNSUPPORTED_ENGINES = {
    "torus-2QoS": "needs /etc/opensm/torus-2QoS.conf (the torus' dimensions and links), which ibprov does not write",
    "file": "needs an lfts_file (dumped forwarding tables), which ibprov does not write",
}


def _engine_problems(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """What each listed routing engine needs from the plan (else OpenSM finds out at run time and uses minhop)."""
    path: Path = ("subnet_manager", "routing_engine")
    engines = spec.subnet_manager.routing_engine
    for k, engine in enumerate(engines):
        if engine in engines[:k]:
            yield path, f"{engine} is listed twice"
    tiers = {s.role for s in topo.switches.values()}
    for engine in dict.fromkeys(engines):
        if engine in UNSUPPORTED_ENGINES:
            yield path, f"{engine} {UNSUPPORTED_ENGINES[engine]}: use ftree, updn or minhop"
        elif engine == "ftree":
            yield from _ftree_problems(topo, path)
        elif engine == "dor" and tiers & {"spine", "core"}:
            yield (
                path,
                "dor routes meshes and tori by dimension; this fabric is a tree (it has spine or core switches): "
                "use ftree, updn or minhop",
            )


def _ftree_problems(topo: Topology, path: Path) -> Iterator[Finding]:
    """ftree ranks the switches from the leaves (where the CAs are) up; it needs at least two levels."""
    roles = {name: s.role for name, s in topo.switches.items()}
    if not set(roles.values()) & {"spine", "core"}:
        yield (
            path,
            "ftree needs a fat tree of at least two switch levels, and this fabric has no spine or core switch: "
            "add spines (fabric.fat_tree.spines or switches with role: spine) or use updn or minhop",
        )
        return
    leaves = sorted(name for name, role in roles.items() if role == "leaf")
    if len(leaves) < 2:
        yield (
            path,
            f"ftree needs at least two leaf switches, and this fabric has {len(leaves)}: OpenSM finds no fat tree "
            "in it ('Failed to find leaf switches') and routes with minhop; use updn or minhop",
        )
        return
    up: set[str] = set()
    upper = {name for name, role in roles.items() if role in ("spine", "core")}
    not_leaf = {name for name, role in roles.items() if role != "leaf"}
    for link in topo.links:
        (ad, ah, _ap), (bd, bh, _bp) = link.a, link.b
        if ah is None and bh is None:  # switch to switch: the lower end has an uplink
            if bd in upper:
                up.add(ad)
            if ad in upper:
                up.add(bd)
        elif ah is None or bh is None:  # an HCA and a switch: the switch must be a leaf
            hca, switch = (link.b, ad) if ah is None else (link.a, bd)
            if switch in not_leaf:
                yield (
                    link.source,
                    f"ftree needs every HCA on a leaf switch, but {hca} is cabled to {roles[switch]} {switch}",
                )
    for name, role in roles.items():
        if role == "leaf" and name not in up:
            yield path, f"ftree needs every leaf cabled to a spine, and {name} has no uplink"
            return


def cabling_is_consistent(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from topo.problems
    check_end = _end_checker(spec, topo)
    exists = _end_exists(spec, topo)
    trusted = not topo.misfits  # see _existing_links
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
            yield ("fabric", "empty_ports", i), f"{end} is declared empty but is cabled at {_fmt(used[end])}"
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
                yield link.source, f"{end} is cabled twice (also at {_fmt(used[end])})"
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


def fabric_is_connected(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """Every cabled HCA port is reachable from the master SM's port: OpenSM manages only the part it reaches."""
    sm = max(spec.subnet_manager.instances, key=lambda inst: inst.priority)
    node = next((n for n in spec.nodes if n.name == sm.node), None)
    hca = next((h for h in node.hcas if h.device == sm.hca or sm.hca is None), None) if node else None
    if hca is None:
        return  # reported by subnet_managers_are_sound
    if _connected_with_the_fat_tree(spec, topo, (sm.node, hca.device)):
        return
    links = _existing_links(spec, topo)  # the others are reported by cabling_is_consistent
    # one edge per pair of devices: a fat tree has many parallel cables between the same two switches
    adjacent: dict[Device, list[Device]] = defaultdict(list)
    for a, b in {(link.a[:2], link.b[:2]) for link in links}:
        adjacent[a].append(b)
        adjacent[b].append(a)
    master_key: Device = (sm.node, hca.device)
    master = f"{sm.node}/{hca.device}"
    if master_key not in adjacent:
        return  # its port is uncabled: reported by cabling_is_consistent
    reached = _reached(adjacent, master_key)
    if all(key in reached for key in adjacent):
        return
    root = _components(adjacent)
    cut: dict[Device, list[tuple[Endpoint, Path]]] = {}
    for link in links:
        for end in (link.a, link.b):
            key = end[:2]
            if end.hca is not None and key not in reached:
                cut.setdefault(root(key), []).append((end, link.source))
    for ends in cut.values():
        end, source = ends[0]
        more = f" and {len(ends) - 1} more HCA port{'s' if len(ends) > 2 else ''}" if len(ends) > 1 else ""
        yield (
            source,
            f"{end}{more} cannot reach the subnet manager on {master}:{sm.port}: no cable joins this part of "
            "the fabric to the rest, and OpenSM manages only the part its port reaches",
        )


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


FAT_TREE_SOURCE: Path = ("fabric", "fat_tree")
Device = tuple[str, str | None]  # (switch, None) or (node, HCA)


FAT_TREE_PIECE: Device = ("<fat tree>", None)


def _connected_with_the_fat_tree(spec: ClusterSpec, topo: Topology, master: Device) -> bool:
    """A quick proof that everything is connected: the generated fat tree is one connected piece by
    construction (every leaf reaches every spine of its pod, the cores join the pods), so it counts as one
    device and only the cables given by hand are walked. False: no proof (the full check decides)."""
    if not topo.fat_tree_devices or topo.misfits:
        return False
    exists = _end_exists(spec, topo)
    piece = topo.fat_tree_devices

    def device(end: Endpoint) -> Device:
        key = end[:2]
        return FAT_TREE_PIECE if key in piece else key

    adjacent: dict[Device, list[Device]] = defaultdict(list)
    adjacent[FAT_TREE_PIECE] = []
    for link in topo.links:
        if link.source != FAT_TREE_SOURCE and exists(link.a) and exists(link.b):
            a, b = device(link.a), device(link.b)
            adjacent[a].append(b)
            adjacent[b].append(a)
    start = FAT_TREE_PIECE if master in piece else master
    if start not in adjacent:
        return False
    reached = _reached(adjacent, start)
    return all(key in reached for key in adjacent)


def _reached(adjacent: dict[Device, list[Device]], start: Device) -> set[Device]:
    reached, todo = {start}, [start]
    while todo:
        for peer in adjacent[todo.pop()]:
            if peer not in reached:
                reached.add(peer)
                todo.append(peer)
    return reached


def _components(adjacent: dict[Device, list[Device]]) -> Callable[[Device], Device]:
    """Union-find over the devices: a function from a device to its component's representative."""
    parent: dict[Device, Device] = {}

    def root(key: Device) -> Device:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for a, nexts in adjacent.items():
        for b in nexts:
            parent[root(a)] = root(b)
    return root


def _existing_links(spec: ClusterSpec, topo: Topology) -> list[PlannedLink]:
    """The links both of whose ends exist. The generator's own cables do, unless it cabled a declared
    switch beyond its ports (a misfit): their ends are generated switch ports within the radix and the
    nodes' listed HCA ports."""
    exists = _end_exists(spec, topo)
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


def _end_exists(spec: ClusterSpec, topo: Topology) -> Callable[[Endpoint], bool]:
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
                return f"{end.device} is not a known switch{_hint(end.device, set(topo.switches))}"
            if end.port > sw.ports:
                return f"{end.device} has {sw.ports} ports, there is no port {end.port}"
            return None
        ports = _hca_ports(spec).get((end.device, end.hca))
        if ports is None:
            if end.device not in nodes:
                return f"unknown node {end.device!r}{_hint(end.device, nodes)}"
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


def ipoib_is_consistent(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    parts = {p.name: p for p in spec.partitions}
    members = _partition_nodes(spec)
    everyone = members["default"]
    for i, a in enumerate(spec.ipoib):
        for j in range(i):
            b = spec.ipoib[j]
            if a.subnet.version == b.subnet.version and a.subnet.overlaps(b.subnet):
                yield ("ipoib", i, "subnet"), f"{a.subnet} overlaps {b.subnet} (ipoib[{j}])"
    names: list[tuple[object, Path]] = []
    used: dict[object, Path] = {}
    for i, iface in enumerate(spec.ipoib):
        path: Path = ("ipoib", i)
        if iface.partition != "default" and iface.partition not in parts:
            yield (
                (*path, "partition"),
                f"unknown partition {iface.partition!r}{_hint(iface.partition, set(parts))}",
            )
            continue
        part_mtu = spec.default_partition.mtu if iface.partition == "default" else parts[iface.partition].mtu
        ipoib_flag = spec.default_partition.ipoib if iface.partition == "default" else parts[iface.partition].ipoib
        if not ipoib_flag:
            yield (
                (*path, "partition"),
                (
                    f"partition {iface.partition} has ipoib: false, so OpenSM creates no "
                    "broadcast group and the interface cannot come up"
                ),
            )
        if iface.mode == "datagram" and iface.effective_mtu > (part_mtu or 2048) - 4:
            yield (
                (*path, "mtu"),
                (
                    f"datagram mtu {iface.effective_mtu} does not fit the partition's IB MTU "
                    f"{part_mtu or 2048} (at most {(part_mtu or 2048) - 4})"
                ),
            )
        yield from _name_problems(spec, iface, path)
        names.append((interface_name(spec, iface), (*path, "name")))
        nodes_in = members.get(iface.partition, set())
        for node, addr in iface.addresses.items():
            if node not in everyone:
                yield (*path, "addresses", node), f"unknown node {node!r}{_hint(node, everyone)}"
                continue
            yield from _address_problems(iface, addr, (*path, "addresses", node), node, nodes_in, used)
        # the pool counts the nodes render gives the interface (a rail's: only those with the rail's port)
        getting = set(ipoib_nodes(spec, iface)) if iface.rail is not None and nodes_in else nodes_in
        yield from _pool_problems(spec, iface, path, getting, used)
    yield from _dupes(names, "IPoIB interface")


def _name_problems(spec: ClusterSpec, iface: IpoibInterface, path: Path) -> Iterator[Finding]:
    """An interface name that says another parent or another P_Key than the fields do."""
    if iface.name is None:
        return
    part = next((p for p in spec.partitions if p.name == iface.partition), None)
    pkey = 0x7FFF if part is None else part.pkey
    base, dot, suffix = iface.name.partition(".")
    if part is not None and iface.name == iface.parent:
        yield (
            (*path, "name"),
            f"{iface.name} is the parent interface itself, which carries the Default partition, not "
            f"{part.name} (0x{pkey:04x}): name it {iface.parent}.{pkey | 0x8000:04x}",
        )
    elif dot and base != iface.parent:
        yield (*path, "name"), f"{iface.name} names parent {base}, but parent is {iface.parent}"
    elif dot and re.fullmatch(r"[0-9a-f]{4}", suffix) and int(suffix, 16) & 0x7FFF != pkey:
        fix = iface.parent if part is None else f"{iface.parent}.{pkey | 0x8000:04x}"
        yield (
            (*path, "name"),
            f"{iface.name} says P_Key 0x{suffix}, but partition {iface.partition} has P_Key 0x{pkey:04x} "
            f"(name it {fix})",
        )


def interface_name(spec: ClusterSpec, iface: IpoibInterface) -> str:
    """The Linux interface name: explicit, the parent for the Default partition, else PARENT.PKEY (ib0.8010)."""
    if iface.name:
        return iface.name
    part = next((p for p in spec.partitions if p.name == iface.partition), None)
    if part is None:
        return iface.parent
    return f"{iface.parent}.{part.pkey | 0x8000:04x}"


def _address_problems(
    iface: IpoibInterface,
    addr: IPv4Address | IPv6Address,
    path: Path,
    node: str,
    nodes_in: set[str],
    used: dict[object, Path],
) -> Iterator[Finding]:
    if node not in nodes_in:
        yield path, f"{node} is not a member of partition {iface.partition}"
    if addr not in iface.subnet:
        yield path, f"{addr} is not inside {iface.subnet}"
    elif addr in (iface.subnet.network_address, iface.subnet.broadcast_address) and iface.subnet.num_addresses > 2:
        yield path, f"{addr} is the network or broadcast address of {iface.subnet}"
    if addr in used:
        yield path, f"address {addr} is used twice (also at {_fmt(used[addr])})"
    used[addr] = path


def _pool_problems(
    spec: ClusterSpec, iface: IpoibInterface, path: Path, nodes_in: set[str], used: dict[object, Path]
) -> Iterator[Finding]:
    need = [n.name for n in spec.nodes if n.name in nodes_in and n.name not in iface.addresses]
    if not need:
        return
    start = iface.pool_start or next(iter(iface.subnet.hosts()), iface.subnet.network_address)
    if start not in iface.subnet:
        yield (*path, "pool_start"), f"{start} is not inside {iface.subnet}"
        return
    last = iface.subnet.broadcast_address
    fixed = {a for a in iface.addresses.values() if int(start) <= int(a) < int(last)}  # the pool skips them
    available = int(last) - int(start) - len(fixed)
    if available < len(need):
        counted = f" once the {len(fixed)} fixed addresses there are counted" if fixed else ""
        yield (
            (*path, "subnet"),
            f"{len(need)} nodes need an address but {iface.subnet} has only {max(available, 0)} from {start}{counted}",
        )
        return
    for addr in ipoib_pool(iface, need):
        if addr in used:
            yield (*path, "pool_start"), f"pool address {addr} is also at {_fmt(used[addr])}"
        used[addr] = (*path, "pool_start")


def ipoib_pool(iface: IpoibInterface, nodes: list[str]) -> list[IPv4Address | IPv6Address]:
    """Addresses handed out, in order, to ``nodes`` (skipping explicitly assigned ones)."""
    taken = set(iface.addresses.values())
    start = iface.pool_start or next(iter(iface.subnet.hosts()), iface.subnet.network_address)
    out: list[IPv4Address | IPv6Address] = []
    cur = int(start)
    while len(out) < len(nodes) and cur < int(iface.subnet.broadcast_address):
        addr = ip_address(cur)
        if addr not in taken:
            out.append(addr)
        cur += 1
    return out


def _partition_nodes(spec: ClusterSpec) -> dict[str, set[str]]:
    """Partition name ('default' included) -> names of member nodes."""
    everyone = {n.name for n in spec.nodes}
    by_group: dict[str, set[str]] = defaultdict(set)
    for n in spec.nodes:
        for g in n.groups:
            by_group[g].add(n.name)
    out = {"default": everyone}
    for part in spec.partitions:
        names: set[str] = set()
        for m in part.members:
            if m.all:
                names |= everyone
            elif m.group:
                names |= by_group.get(m.group, set())
            elif m.node:
                names.add(m.node)
        out[part.name] = names
    return out


def qos_is_well_formed(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from _vl_table_problems(spec.qos)
    if spec.qos.enabled:
        yield from _sl_problems(spec)
        yield from _policy_problems(spec)


def _vl_table_problems(qos: Qos) -> Iterator[Finding]:
    base_vls = qos.max_vls or 15
    tables: list[tuple[Path, QosTables]] = [(("qos",), qos)]
    for name in ("ca", "switch_port0", "switch_external", "router"):
        sub = getattr(qos, name)
        if sub is not None:
            tables.append((("qos", name), sub))
    for path, t in tables:
        vls = t.max_vls or base_vls
        for field in ("vlarb_high", "vlarb_low"):
            for k, (vl, _w) in enumerate(getattr(t, field) or ()):
                if vl >= vls:
                    yield (*path, field, k), f"VL {vl} is not below max_vls {vls}"
                elif vl >= PORT_DATA_VLS:
                    yield (*path, field, k), f"VL {vl} does not exist: {_PORT_VLS}"
        for sl, vl in enumerate(t.sl2vl or ()):
            if vl != 15 and vl >= vls:
                yield (*path, "sl2vl", sl), f"SL {sl} maps to VL {vl}, not below max_vls {vls} (15 = drop)"
            elif vl != 15 and vl >= PORT_DATA_VLS:
                yield (*path, "sl2vl", sl), f"SL {sl} maps to VL {vl}, which does not exist: {_PORT_VLS} (15 = drop)"


# Port classes OpenSM keeps QoS tables for (opensm.conf prefix), each falling back to the qos_* set.
PORT_CLASSES = (
    ("ca", "CA"),
    ("switch_external", "external switch"),
    ("switch_port0", "switch port 0"),
    ("router", "router"),
)
# Data VLs a port has (PortInfo VLCap): 8 on ConnectX HCAs, Quantum switches and ibsim. A VL at or above it in
# a table is silently rewritten by OpenSM (the twin showed VLArb entry 8:184 written as 0:184).
PORT_DATA_VLS = 8
_PORT_VLS = "ports have 8 data VLs (VL 0-7), whatever max_vls says"
# What OpenSM 3.3.23 uses when neither the class nor the qos_* set gives a table (qos_build_config).
DEFAULT_SL2VL = (*range(15), 7)
DEFAULT_VLARB_HIGH = ((0, 4), *((vl, 0) for vl in range(1, 15)))
DEFAULT_VLARB_LOW = ((0, 0), *((vl, 4) for vl in range(1, 15)))


def _effective(qos: Qos, cls: str, name: str, default: T) -> tuple[T, str | None]:
    """The table a port class uses: its own, else the qos_* one, else OpenSM's (source None)."""
    sub = getattr(qos, cls)
    if sub is not None and getattr(sub, name) is not None:
        return cast("T", getattr(sub, name)), f"qos.{cls}.{name}"
    if getattr(qos, name) is not None:
        return cast("T", getattr(qos, name)), f"qos.{name}"
    return default, None


def _sl_problems(spec: ClusterSpec) -> Iterator[Finding]:
    """Every SL in use reaches, on every port class, a VL that exists there and has an arbitration weight."""
    qos = spec.qos
    used_sls: list[tuple[int, Path]] = [
        (p.sl, ("partitions", i, "sl")) for i, p in enumerate(spec.partitions) if p.sl is not None
    ]
    if spec.default_partition.sl is not None:
        used_sls.append((spec.default_partition.sl, ("default_partition", "sl")))
    used_sls += [(lv.sl, ("qos", "levels", i, "sl")) for i, lv in enumerate(qos.levels)]
    used_sls.append((qos.default_sl, ("qos", "default_sl")))
    found: dict[tuple[Path, str], list[str]] = {}
    for sl, path in used_sls:
        for cls, label in PORT_CLASSES:
            message = _sl_class_problem(qos, cls, sl)
            if message:
                found.setdefault((path, message), []).append(label)
    for (path, message), labels in found.items():
        if len(labels) == len(PORT_CLASSES):
            yield path, message
        else:
            yield path, f"{message} (on {', '.join(labels)} ports)"


def _sl_class_problem(qos: Qos, cls: str, sl: int) -> str | None:
    table, table_src = _effective(qos, cls, "sl2vl", DEFAULT_SL2VL)
    vls, vls_src = _effective(qos, cls, "max_vls", 15)
    vl = table[sl]
    if vl == 15:
        return f"SL {sl} is mapped to VL 15 (dropped) by {table_src}"
    if vl >= vls:
        if table_src is None:
            return f"SL {sl} has no data VL with max_vls {vls}: set qos.sl2vl"
        return f"SL {sl} maps to VL {vl} by {table_src}, not below {vls_src or 'max_vls'} {vls}"
    if vl >= PORT_DATA_VLS:
        if table_src is None:
            return f"SL {sl} maps to VL {vl} by OpenSM's default sl2vl, and {_PORT_VLS}: set qos.sl2vl"
        return f"SL {sl} maps to VL {vl} by {table_src}, and {_PORT_VLS}"
    high, high_src = _effective(qos, cls, "vlarb_high", DEFAULT_VLARB_HIGH)
    low, low_src = _effective(qos, cls, "vlarb_low", DEFAULT_VLARB_LOW)
    if not any(v == vl and w > 0 for v, w in (*high, *low)):
        sources = f"{high_src or 'the default vlarb_high'} and {low_src or 'the default vlarb_low'}"
        return (
            f"SL {sl} maps to VL {vl}, which has no weight in {sources}: "
            "its packets are never sent (give VL {vl} a weight)".replace("{vl}", str(vl))
        )
    return None


def _policy_problems(spec: ClusterSpec) -> Iterator[Finding]:
    levels = {lv.name for lv in spec.qos.levels}
    parts = {p.name for p in spec.partitions}
    for i, lv in enumerate(spec.qos.levels):
        if lv.name.upper() == "DEFAULT":
            yield (
                ("qos", "levels", i, "name"),
                "the DEFAULT qos-level is written from qos.default_sl: set default_sl instead of a level named "
                f"{lv.name}",
            )
    yield from _partition_sl_conflicts(spec)
    for i, rule in enumerate(spec.qos.match_rules):
        if rule.qos_level not in levels:
            yield (
                ("qos", "match_rules", i, "qos_level"),
                f"unknown qos level {rule.qos_level!r}{_hint(rule.qos_level, levels)}",
            )
        for j, part in enumerate(rule.partitions):
            if part not in parts:
                yield ("qos", "match_rules", i, "partitions", j), f"unknown partition {part!r}{_hint(part, parts)}"


def _partition_sl_conflicts(spec: ClusterSpec) -> Iterator[Finding]:
    """A partition's sl and the level its first matching rule gives it must agree."""
    levels = {lv.name: lv for lv in spec.qos.levels}
    decided: set[str] = set()
    for i, rule in enumerate(spec.qos.match_rules):
        level = levels.get(rule.qos_level)
        if rule.service_ids or rule.qos_class:
            continue  # matches only part of the partition's traffic
        for j, name in enumerate(rule.partitions):
            part = next((p for p in spec.partitions if p.name == name), None)
            if part is None or name in decided:
                continue
            decided.add(name)
            if level is not None and part.sl is not None and part.sl != level.sl:
                yield (
                    ("qos", "match_rules", i, "partitions", j),
                    f"partition {name} has sl {part.sl}, but this rule gives its traffic level {level.name} "
                    f"with sl {level.sl}: make them agree",
                )


def mpi_rails_exist(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    ports = {(h.device, p) for n in spec.nodes for h in n.hcas for p in h.ports}
    for i, rail in enumerate(spec.mpi.rails):
        for j, dev in enumerate(rail.devices):
            name, _, port = dev.partition(":")
            if (name, int(port)) not in ports:
                yield ("mpi", "rails", i, "devices", j), f"no node has HCA port {dev}"
    yield from _dupes([(r.name, ("mpi", "rails", i, "name")) for i, r in enumerate(spec.mpi.rails)], "rail")


def fat_tree_group_exists(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    ft = spec.fabric.fat_tree
    if ft is not None and ft.hosts_group is not None:
        groups = Counter(g for n in spec.nodes for g in n.groups)
        if ft.hosts_group not in groups:
            yield ("fabric", "fat_tree", "hosts_group"), f"no node is in group {ft.hosts_group!r}"


RULES: tuple[Rule, ...] = (
    names_are_unique,
    guids_are_unique,
    partitions_are_consistent,
    subnet_managers_are_sound,
    cabling_is_consistent,
    fabric_is_connected,
    switches_are_cabled,
    ipoib_is_consistent,
    qos_is_well_formed,
    mpi_rails_exist,
    fat_tree_group_exists,
    *RAIL_RULES,
)


def check(spec: ClusterSpec, topo: Topology) -> list[Finding]:
    return [finding for rule in RULES for finding in rule(spec, topo)]
