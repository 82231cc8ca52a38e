"""A spec skeleton from a discovered fabric: every switch, HCA and cable, with the fabric's GUIDs.

Names come from the node descriptions (``"node01 mlx5_0"`` -> node ``node01``, HCA ``mlx5_0``), sanitised
to the spec's name pattern; the HCAs of one host are grouped under it (NodeDescription conventions and
SystemImageGUID, see :mod:`.hosts`), and CAs that are no hosts (SHARP aggregation nodes, UFM appliances,
gateways) are kept apart, after the hosts, in a group of their kind. Where a name had to change, the
original description is kept in ``description`` (or, on a node of several HCAs, in a comment on the HCA's
line) so that ``ibprov discover`` recognises the device later; a device name that is not the kernel's
(``hca<n>``) is marked REVIEW.
Switch roles are guessed from the cabling. The result always validates (it is checked before it is
returned).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

from ibprov.clusterspec import load_spec_text
from ibprov.clusterspec.units import Speed, Width
from ibprov.discover.found import Cable, Device, Found, Port
from ibprov.discover.hosts import CaRole, group_hosts, natural_key, sanitize
from ibprov.discover.sms import FoundSm, SmSurvey
from ibprov.errors import CollectError

__all__ = ["Skeleton", "build_skeleton", "natural_key", "sanitize"]

_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_WRITABLE = re.compile(r"[!$-\[\]-z|~]([ !$-\[\]-z|~]{0,62}[!$-\[\]-z|~])?")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"}
_NON_HOST = {
    "sharp": "SHARP aggregation node",
    "ufm": "UFM appliance",
    "gateway": "gateway",
}


def _scalar(text: str) -> str:
    """A YAML scalar that reads back as this exact string."""
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text)


def _guid(guid: int) -> str:
    return f"0x{guid:016x}"


@dataclass
class _Node:
    name: str
    description: str | None = None  # set when '<name> <device>' is not the fabric's description
    hcas: dict[str, Device] = field(default_factory=dict)
    kind: str = "host"  # or a CA that is no host: "sharp", "ufm", "gateway"
    comments: dict[str, str] = field(default_factory=dict)  # device -> the comment on its line


@dataclass
class Skeleton:
    text: str
    switches: int
    nodes: int
    hcas: int
    links: int
    notes: list[str] = field(default_factory=list)
    sms: list[str] = field(default_factory=list)  # the SMs written into subnet_manager.instances
    sm_status: str = ""  # one line on them: "subnet managers found: ..." or why it is a placeholder
    hosts: int = 0  # the nodes that are hosts (the others: SHARP aggregation nodes, UFM appliances, ...)
    placeholders: list[str] = field(default_factory=list)  # "gpu01/hca1": no kernel name was discoverable
    non_hosts: list[str] = field(default_factory=list)  # "sharp-leaf01 (SHARP aggregation node)"


class _Names:
    def __init__(self) -> None:
        self.taken: set[str] = set()

    def claim(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self.taken:
            n += 1
            suffix = f"-{n}"
            name = wanted[: 63 - len(suffix)] + suffix
        self.taken.add(name)
        return name


def writable_description(text: str) -> bool:
    """Whether a spec's ``description`` can hold this NodeDescription (printable ASCII, at most 64
    characters, none of ``"#{}\\``, which the node-name-map, topology files or Ansible would misread)."""
    return bool(_WRITABLE.fullmatch(text))


def _is_aggregation_node(dev: Device) -> bool:
    """The SHARP aggregation node: a CA inside a switch, not a host."""
    return "Aggregation Node" in dev.description


def _roles(found: Found) -> dict[int, str]:
    """leaf: cabled to hosts; spine: one switch hop above the leaves (or cabled to switches only); core: above."""
    switches = {d.guid for d in found.of_kind("SW")}
    neighbours: dict[int, set[int]] = {g: set() for g in switches}
    level: dict[int, int] = {}
    for (g, _p), (h, _q) in found.peer.items():
        if g not in switches:
            continue
        other = found.devices[h]
        if other.kind == "SW":
            neighbours[g].add(h)
        elif other.kind == "CA" and not _is_aggregation_node(other):
            level[g] = 1
    frontier = set(level)
    depth = 1
    while frontier:
        depth += 1
        frontier = {h for g in frontier for h in neighbours[g] if h not in level}
        level.update(dict.fromkeys(frontier, depth))
    return {g: "leaf" if level.get(g) == 1 else ("core" if level.get(g, 2) >= 3 else "spine") for g in switches}


def _group_hcas(found: Found, names: _Names, switch_name: dict[int, str]) -> tuple[list[_Node], list[str]]:
    """One node per host (see :mod:`.hosts`), then one per CA that is no host; and the notes on them."""
    nodes: list[_Node] = []
    notes: list[str] = []
    split: dict[str, list[str]] = {}
    for group in group_hosts(found.of_kind("CA")):
        first = min(group.hcas.values(), key=lambda d: (natural_key(d.desc), d.guid))
        if group.kind != "host":
            where = switch_name.get(found.peer.get((first.guid, min(_hca_ports(found, first))), (0, 0))[0])
            wanted = sanitize(f"{group.kind}-{where}") if group.kind == "sharp" and where else sanitize(first.desc)
            node = _Node(names.claim(wanted or f"ca-{first.guid:016x}"), kind=group.kind, hcas=dict(group.hcas))
        else:
            wanted = group.host or sanitize(first.desc) or f"ca-{first.guid:016x}"
            node = _Node(names.claim(wanted), hcas=dict(group.hcas))
            if group.split and group.host is not None:
                split.setdefault(group.host, []).append(node.name)
            if len(group.hosts_named) > 1:
                image = f"0x{first.sysimgguid or 0:016x}"
                notes.append(
                    f"the CAs described as hosts {', '.join(group.hosts_named)} share SystemImageGUID {image}: "
                    f"they are one system, written as node {node.name}; REVIEW its name"
                )
        if len(node.hcas) == 1:
            ((device, dev),) = node.hcas.items()
            if dev.desc != f"{node.name} {device}" and writable_description(dev.desc):
                node.description = dev.desc
        for device, dev in node.hcas.items():
            comment = _comment(node, device, dev, group.roles[device])
            if comment:
                node.comments[device] = comment
        nodes.append(node)
    for host, renamed in split.items():
        notes.append(
            f"more than one host describes itself as {host!r}: the others are {', '.join(renamed)} "
            "(their HCAs kept apart); REVIEW their names"
        )
    placeholders = [f"{n.name}/{d}" for n in nodes if n.kind == "host" for d in n.hcas if d in _placeholders(n)]
    if placeholders:
        notes.append(
            f"{len(placeholders)} HCA(s) have no kernel device name in their NodeDescription (MLNX_OFED's "
            "'<host> HCA-<n>', or none at all): written as placeholders hca<n>, marked REVIEW; rename each to "
            "the host's device of that node_guid (ibstat on the host shows it)"
        )
    others = [n for n in nodes if n.kind != "host"]
    if others:
        kinds = Counter(_NON_HOST[n.kind] for n in others)
        what = ", ".join(f"{count} {kind}(s)" for kind, count in sorted(kinds.items()))
        notes.append(
            f"kept apart from the compute nodes (group {', '.join(sorted({n.kind for n in others}))}): {what}; "
            "they are no hosts to provision, but stay in the spec so that verify knows the devices"
        )
    hosts = sorted((n for n in nodes if n.kind == "host"), key=lambda n: natural_key(n.name))
    return hosts + sorted(others, key=lambda n: natural_key(n.name)), notes


def _comment(node: _Node, device: str, dev: Device, role: CaRole) -> str:
    """The comment on an HCA's line: what it is where that is not plain, and a REVIEW on a made-up name."""
    shown = json.dumps(dev.desc)
    if node.kind != "host":
        return f"{_NON_HOST[node.kind]}: not a host, {shown}"
    if role.form == "index":
        return f"REVIEW: {shown} gives HCA-{role.index}, not the kernel name; {device} is a placeholder"
    if not role.kernel_name_known:
        return f"REVIEW: {shown} gives no device name; {device} is a placeholder"
    if node.description is None and dev.desc != f"{node.name} {device}":
        return f"NodeDescription {shown}"
    return ""


def _placeholders(node: _Node) -> set[str]:
    return {d for d, c in node.comments.items() if c.startswith("REVIEW:")}


@dataclass
class _Layout:
    """Where each discovered device went in the skeleton."""

    switch_name: dict[int, str] = field(default_factory=dict)
    hca_of: dict[int, tuple[str, str]] = field(default_factory=dict)  # guid -> (node, device)

    def endpoint(self, end: Port) -> str | None:
        guid, port = end
        if guid in self.switch_name:
            return f"{self.switch_name[guid]}:{port}"
        if guid in self.hca_of:
            node, device = self.hca_of[guid]
            return f"{node}/{device}:{port}"
        return None


def build_skeleton(
    found: Found, *, cluster: str = "discovered", source: str = "ibnetdiscover", sms: SmSurvey | None = None
) -> Skeleton:
    """The skeleton spec text, checked with the spec loader. ``sms``: the subnet managers found running
    (None: nothing live was asked, e.g. a saved ibnetdiscover output)."""
    names = _Names()
    roles = _roles(found)
    order = {"leaf": 0, "spine": 1, "core": 2}
    layout = _Layout()
    switches = sorted(found.of_kind("SW"), key=lambda d: (natural_key(d.desc), d.guid))
    for dev in switches:
        layout.switch_name[dev.guid] = names.claim(sanitize(dev.desc) or f"switch-{dev.guid:016x}")
    switches.sort(key=lambda d: (order[roles[d.guid]], natural_key(layout.switch_name[d.guid])))
    nodes, host_notes = _group_hcas(found, names, layout.switch_name)
    if not nodes:
        raise CollectError("ibnetdiscover found no HCA: a spec needs at least one node")
    for node in nodes:
        for device, dev in node.hcas.items():
            layout.hca_of[dev.guid] = (node.name, device)
    notes = [f"skipped router {d.label()} (the spec has no routers)" for d in found.of_kind("RT")]
    notes += host_notes
    speed, width = found.common_rate()
    if speed is None:
        notes.append("no cable reports a known speed: fabric.speed is a placeholder (HDR)")
    speed, width = speed or Speed.HDR, width or Width.X4
    links = _links(found, layout, roles, speed, width)
    empty = [
        f"{node.name}/{device}:{port}"
        for node in nodes
        for device, dev in sorted(node.hcas.items(), key=lambda kv: natural_key(kv[0]))
        for port in _hca_ports(found, dev)
        if (dev.guid, port) not in found.peer
    ]
    sm = _sm_section(nodes, layout, found, sms or SmSurvey.not_asked())
    notes += sm.notes
    hosts = sum(1 for n in nodes if n.kind == "host")
    also = f" ({hosts} hosts, {len(nodes) - hosts} other CAs)" if hosts != len(nodes) else ""
    header = [
        f"# Discovered by `ibprov discover` from {source}: {len(switches)} switches, "
        f"{sum(len(n.hcas) for n in nodes)} HCAs on {len(nodes)} nodes{also}, {len(links)} cables.",
        "# GUIDs and cabling are the fabric's; names come from the node descriptions.",
        "# Fill in / REVIEW before use:",
        "#   - node names, groups, address and user (names were taken from the node descriptions)",
        "#   - switch roles: guessed (leaf = cabled to hosts, spine = only to switches, core = a third level)",
        f"#   - subnet_manager: {sm.summary}",
        "#   - partitions, ipoib, qos, acceptance: not discoverable, add them as needed",
        *(f"# note: {note}" for note in notes),
    ]
    body = [
        "version: 1",
        "",
        "cluster:",
        f"  name: {_scalar(cluster)}",
        "",
        "nodes:",
        *_node_lines(found, nodes),
        "",
        "switches:" if switches else "switches: []",
        *(_switch_line(dev, layout.switch_name[dev.guid], roles[dev.guid], found) for dev in switches),
        "",
        "fabric:",
        f"  speed: {speed.value}   # the most common link speed found",
        f"  width: {width.value}    # the most common link width found",
        "  links:" if links else "  links: []",
        *links,
    ]
    if empty:
        body += ["  empty_ports:   # HCA ports that exist but have no cable", *(f"    - {p}" for p in empty)]
    body += ["", *sm.lines]
    text = "\n".join(header) + "\n\n" + "\n".join(body) + "\n"
    load_spec_text(text, f"{cluster}.yaml")  # never hand out a skeleton that does not validate
    hcas = sum(len(n.hcas) for n in nodes)
    return Skeleton(
        text,
        len(switches),
        len(nodes),
        hcas,
        len(links),
        notes,
        sm.found,
        sm.status,
        hosts,
        [f"{n.name}/{d}" for n in nodes if n.kind == "host" for d in sorted(_placeholders(n), key=natural_key)],
        [f"{n.name} ({_NON_HOST[n.kind]})" for n in nodes if n.kind != "host"],
    )


def _sm_node(nodes: list[_Node]) -> str:
    """The first node that is a host (a switch's aggregation node cannot run OpenSM)."""
    hosts = [n for n in nodes if n.kind == "host"]
    return (hosts or nodes)[0].name


@dataclass
class _SmSection:
    summary: str  # the header's line on subnet_manager
    lines: list[str]
    notes: list[str]
    found: list[str]  # "node01/mlx5_0:1 MASTER (priority 14)" per instance written
    status: str  # one line for the console


def _sm_section(nodes: list[_Node], layout: _Layout, found: Found, survey: SmSurvey) -> _SmSection:
    """subnet_manager: the SMs found (node, hca, port, priority; the state in a REVIEW comment), or the
    placeholder when none was found or nothing live could be asked."""
    notes = list(survey.notes)
    placed: list[tuple[FoundSm, str, str]] = []  # (SM, node, device)
    for sm in survey.sms:
        where = layout.hca_of.get(sm.node_guid)
        if where is None:
            dev = found.devices.get(sm.node_guid)
            what = dev.label() if dev is not None else f"0x{sm.node_guid:016x}"
            notes.append(
                f"a subnet manager runs on port {sm.port} of {what} ({sm.describe()}): a spec places SMs on "
                "node HCAs only, so verify will report it (sm.rogue) until it is stopped or moved to a node"
            )
            continue
        placed.append((sm, *where))
    routing = "  routing_engine: minhop   # REVIEW: OpenSM's routing engine is not visible on the fabric"
    if not placed:
        if not survey.asked:
            why = "the fabric was read from a saved ibnetdiscover output, so no SM could be asked"
        elif survey.sms:
            why = "the subnet managers found run where a spec cannot place one (see the notes)"
        else:
            why = "no subnet manager was found running on the fabric"
        return _SmSection(
            f"a PLACEHOLDER ({why}): one instance on the first node, minhop routing",
            [
                f"# REVIEW: a placeholder so that the spec validates ({why}).",
                "# Put the SM(s) where they belong and pick the routing engine (ftree for a fat tree).",
                "subnet_manager:",
                "  routing_engine: minhop",
                "  instances:",
                f"    - {{node: {_scalar(_sm_node(nodes))}, priority: 15}}   # REVIEW: a placeholder",
            ],
            notes,
            [],
            f"subnet_manager is a placeholder: {why}",
        )
    priorities, tie_notes = _priorities([sm for sm, _node, _dev in placed])
    notes += tie_notes
    lines = [
        f"# REVIEW: the {len(placed)} subnet manager(s) found running (sminfo), with the priority each runs",
        "# with and its state when discovered; keep the ones that belong, and pick the routing engine.",
        "subnet_manager:",
        routing,
        "  instances:",
    ]
    summary: list[str] = []
    for (sm, node, device), priority in zip(placed, priorities, strict=True):
        comment = f"found {sm.state}"
        if priority != sm.priority:
            comment += f" with priority {sm.priority}, written as {priority} (see the notes at the top)"
        fields = f"node: {_scalar(node)}, hca: {_scalar(device)}, port: {sm.port}, priority: {priority}"
        lines.append(f"    - {{{fields}}}   # REVIEW: {comment}")
        summary.append(f"{node}/{device}:{sm.port} {sm.state} (priority {sm.priority})")
    return _SmSection(
        "the subnet managers found running (port, priority; state in a comment), marked REVIEW; "
        "routing engine minhop is a placeholder",
        lines,
        notes,
        summary,
        f"subnet managers found: {', '.join(summary)}",
    )


def _priorities(sms: list[FoundSm]) -> tuple[list[int], list[str]]:
    """The priority to write for each SM: its own, except where several share the highest one (a spec
    needs exactly one highest priority, so that the master is deterministic). Then the one that is MASTER
    (else, as OpenSM elects, the lowest port GUID) keeps it and the others get one less; at priority 0
    it gets 1 instead. The fabric runs otherwise: verify reports sm.priority until it is fixed."""
    top = max(sm.priority for sm in sms)
    tied = [sm for sm in sms if sm.priority == top]
    if len(tied) < 2:
        return [sm.priority for sm in sms], []
    keeper = min(tied, key=lambda sm: (sm.state != "MASTER", sm.port_guid))
    if top == 0:
        out = [1 if sm is keeper else sm.priority for sm in sms]
        change = f"the {keeper.state} one is written with priority 1"
    else:
        out = [top - 1 if sm.priority == top and sm is not keeper else sm.priority for sm in sms]
        change = f"the {keeper.state} one keeps it and the others are written with {top - 1}"
    note = (
        f"{len(tied)} subnet managers run with the same highest priority {top}; a spec needs exactly one "
        f"highest priority, so {change}: set sm_priority on the fabric to match (or fix the spec)"
    )
    return out, [note]


def _hca_ports(found: Found, dev: Device) -> list[int]:
    used = found.ports_used(dev.guid) | set(dev.port_guids)
    count = max([dev.port_count or 0, *used])
    return list(range(1, count + 1)) if count else [1]


def _node_lines(found: Found, nodes: list[_Node]) -> list[str]:
    out: list[str] = []
    for node in nodes:
        if node.kind != "host" and node is next(n for n in nodes if n.kind != "host"):
            out.append("  # not compute nodes: CAs that are no hosts (SHARP aggregation nodes, UFM appliances, ...)")
        out.append(f"  - name: {_scalar(node.name)}")
        if node.kind != "host":
            out.append(f"    groups: [{node.kind}]")
        if node.description is not None:
            out.append(f"    description: {json.dumps(node.description)}")
        out.append("    hcas:")
        for device, dev in sorted(node.hcas.items(), key=lambda kv: natural_key(kv[0])):
            fields = [f"device: {device}"]
            ports = _hca_ports(found, dev)
            if ports != [1]:
                fields.append(f"ports: [{', '.join(map(str, ports))}]")
            fields.append(f"node_guid: {_guid(dev.guid)}")
            if dev.port_guids:
                pg = ", ".join(f"{p}: {_guid(g)}" for p, g in sorted(dev.port_guids.items()))
                fields.append(f"port_guids: {{{pg}}}")
            comment = f"   # {node.comments[device]}" if device in node.comments else ""
            out.append(f"      - {{{', '.join(fields)}}}{comment}")
    return out


def _switch_line(dev: Device, name: str, role: str, found: Found) -> str:
    ports = max([dev.port_count or 0, *found.ports_used(dev.guid)])
    fields = [f"name: {_scalar(name)}", f"role: {role}", f"ports: {ports}", f"node_guid: {_guid(dev.guid)}"]
    comment = ""
    if name != dev.desc and dev.desc:
        if writable_description(dev.desc):
            fields.append(f"description: {json.dumps(dev.desc)}")
        else:
            comment = f"   # NodeDescription {json.dumps(dev.desc)} (a spec description cannot hold it)"
    return f"  - {{{', '.join(fields)}}}{comment}"


def _links(found: Found, layout: _Layout, roles: dict[int, str], speed: Speed, width: Width) -> list[str]:
    rank = {"leaf": 0, "spine": 1, "core": 2}

    def end_order(end: Port) -> tuple[int, tuple[tuple[int, int | str], ...], int]:
        guid, port = end
        if guid in layout.switch_name:
            return (rank[roles[guid]], natural_key(layout.switch_name[guid]), port)
        node, device = layout.hca_of[guid]
        return (3, natural_key(f"{node}/{device}"), port)

    rows: list[tuple[tuple[int, tuple[tuple[int, int | str], ...], int], str]] = []
    for cable in found.cables:
        if layout.endpoint(cable.a) is None or layout.endpoint(cable.b) is None:
            continue  # a router end
        first, second = sorted((cable.a, cable.b), key=end_order)
        text = f"{layout.endpoint(first)} <-> {layout.endpoint(second)}"
        rows.append((end_order(first), _link_line(text, cable, speed, width)))
    return [line for _key, line in sorted(rows)]


def _link_line(text: str, cable: Cable, speed: Speed, width: Width) -> str:
    extra = []
    if cable.speed is not None and cable.speed != speed:
        extra.append(f"speed: {cable.speed.value}")
    if cable.width is not None and cable.width != width:
        extra.append(f"width: {cable.width.value}")
    if not extra:
        return f"    - {text}"
    return f"    - {{link: {json.dumps(text)}, {', '.join(extra)}}}"
