"""Rules across the whole spec. Each rule yields (path, message); all problems are reported in one run."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from ipaddress import IPv4Address, IPv6Address, ip_address

from ibprov.spec.model import ClusterSpec, IpoibInterface, Qos, QosTables
from ibprov.spec.positions import Path
from ibprov.spec.topology import Topology
from ibprov.spec.types import Endpoint, parse_endpoint

Finding = tuple[Path, str]
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
    from ibprov.spec.positions import format_path

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
        if part.sl and not spec.qos.enabled:
            yield (
                ("partitions", i, "sl"),
                (
                    f"sl {part.sl} has no effect while qos.enabled is false: "
                    "OpenSM silently forces the partition SL to 0"
                ),
            )


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


def cabling_is_consistent(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from topo.problems
    check_end = _end_checker(spec, topo)
    used: dict[Endpoint, Path] = {}
    for link in topo.links:
        if link.a == link.b:
            yield link.source, f"{link.a} is cabled to itself"
            continue
        for end in (link.a, link.b):
            problem = check_end(end)
            if problem:
                yield link.source, problem
            elif end in used:
                yield link.source, f"{end} is cabled twice (also at {_fmt(used[end])})"
            else:
                used[end] = link.source
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


def _end_checker(spec: ClusterSpec, topo: Topology) -> Callable[[Endpoint], str | None]:
    """A function that says what is wrong with a cable end (None: it exists)."""
    hca_ports = {(n.name, h.device): set(h.ports) for n in spec.nodes for h in n.hcas}
    nodes = {n.name for n in spec.nodes}

    def check_end(end: Endpoint) -> str | None:
        if end.hca is None:
            sw = topo.switches.get(end.device)
            if sw is None:
                if end.device in nodes:
                    return f"{end.device} is a node: write NODE/HCA:PORT"
                return f"{end.device} is not a known switch{_hint(end.device, set(topo.switches))}"
            if end.port > sw.ports:
                return f"{end.device} has {sw.ports} ports, there is no port {end.port}"
            return None
        ports = hca_ports.get((end.device, end.hca))
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
        any(path[:2] == ("fabric", "fat_tree") for path, _ in topo.problems)
        or (ft.hosts_group is not None and ft.hosts_group not in groups)
    )
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
        names.append((interface_name(spec, iface), (*path, "name")))
        nodes_in = members.get(iface.partition, set())
        for node, addr in iface.addresses.items():
            if node not in everyone:
                yield (*path, "addresses", node), f"unknown node {node!r}{_hint(node, everyone)}"
                continue
            yield from _address_problems(iface, addr, (*path, "addresses", node), node, nodes_in, used)
        yield from _pool_problems(spec, iface, path, nodes_in, used)
    yield from _dupes(names, "IPoIB interface")


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
    available = int(last) - int(start)
    if available < len(need):
        yield (
            (*path, "subnet"),
            (f"{len(need)} nodes need an address but {iface.subnet} has only {max(available, 0)} from {start}"),
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
        for sl, vl in enumerate(t.sl2vl or ()):
            if vl != 15 and vl >= vls:
                yield (*path, "sl2vl", sl), f"SL {sl} maps to VL {vl}, not below max_vls {vls} (15 = drop)"


def _sl_problems(spec: ClusterSpec) -> Iterator[Finding]:
    qos = spec.qos
    sl2vl = (qos.ca.sl2vl if qos.ca and qos.ca.sl2vl else None) or qos.sl2vl
    ca_vls = (qos.ca.max_vls if qos.ca and qos.ca.max_vls else None) or qos.max_vls or 15
    used_sls: list[tuple[int, Path]] = [
        (p.sl, ("partitions", i, "sl")) for i, p in enumerate(spec.partitions) if p.sl is not None
    ]
    used_sls += [(lv.sl, ("qos", "levels", i, "sl")) for i, lv in enumerate(qos.levels)]
    used_sls.append((qos.default_sl, ("qos", "default_sl")))
    for sl, path in used_sls:
        if sl2vl is not None and sl2vl[sl] == 15:
            yield path, f"SL {sl} is mapped to VL 15 (dropped) by qos.sl2vl"
        elif sl2vl is None and sl >= ca_vls:
            yield path, f"SL {sl} has no data VL with max_vls {ca_vls}: set qos.sl2vl"


def _policy_problems(spec: ClusterSpec) -> Iterator[Finding]:
    levels = {lv.name for lv in spec.qos.levels}
    parts = {p.name for p in spec.partitions}
    for i, rule in enumerate(spec.qos.match_rules):
        if rule.qos_level not in levels:
            yield (
                ("qos", "match_rules", i, "qos_level"),
                f"unknown qos level {rule.qos_level!r}{_hint(rule.qos_level, levels)}",
            )
        for j, part in enumerate(rule.partitions):
            if part not in parts:
                yield ("qos", "match_rules", i, "partitions", j), f"unknown partition {part!r}{_hint(part, parts)}"


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
    ipoib_is_consistent,
    qos_is_well_formed,
    mpi_rails_exist,
    fat_tree_group_exists,
)


def check(spec: ClusterSpec, topo: Topology) -> list[Finding]:
    return [finding for rule in RULES for finding in rule(spec, topo)]


def partition_nodes(spec: ClusterSpec) -> dict[str, set[str]]:
    return _partition_nodes(spec)
