"""Match a discovered fabric to a spec and derive the lock file (GUIDs by spec name).

Order of evidence:

1. GUID: the spec already names the device's GUID.
2. Description: the NodeDescription is the planned one (``'<name> <device>'`` or the node's
   ``description`` for an HCA; the switch's name or ``description``), and exactly one planned and one
   found device carry it. An HCA also matches where its description names its node and device in one
   of the forms real fabrics use (:mod:`.hosts`): ``gpu01 HCA-3`` is ``gpu01/hca3``, and
   ``gpu01 mlx5_0 rail0`` is ``gpu01/mlx5_0``.
3. Position: the device sits at the planned port of a device matched already, on the planned port
   of its own (repeated until nothing changes, so a whole renamed subtree is found from its root).

A device matched by description or position whose GUID differs from one the spec names is reported
and left out of the lock file (the spec's GUID wins everywhere else in ibprov).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ibprov.clusterspec import LoadedSpec
from ibprov.discover.found import Device, Found
from ibprov.discover.hosts import classify, natural_key
from ibprov.identity.guids import LockFile, fmt_guid

__all__ = ["Conflict", "MatchResult", "Matched", "match_fabric"]


@dataclass(frozen=True)
class Matched:
    planned: str  # "leaf01" or "node01/mlx5_0"
    device: Device
    how: str  # "GUID", "description" or "position"
    via: str = ""  # for "position": the planned port it was found at ("leaf01:7")


@dataclass(frozen=True)
class Conflict:
    planned: str
    spec_guids: tuple[int, ...]
    device: Device
    how: str


@dataclass
class MatchResult:
    matched: list[Matched] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)
    extra: list[Device] = field(default_factory=list)
    differs: list[tuple[Matched, str]] = field(default_factory=list)  # (match, planned description)
    conflicts: list[Conflict] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # entries carried over from the previous lock file
    planned: int = 0
    lock: LockFile = field(default_factory=LockFile)

    @property
    def complete(self) -> bool:
        """Every planned device found, nothing unplanned found, nothing that needs a second look."""
        return not (self.not_found or self.extra or self.differs or self.conflicts)

    def lines(self) -> list[str]:
        by: dict[str, int] = defaultdict(int)
        for m in self.matched:
            by[m.how] += 1
        how = ", ".join(f"{by[k]} by {k}" for k in ("GUID", "description", "position") if by[k])
        out = [f"matched {len(self.matched)} of {self.planned} planned devices" + (f" ({how})" if how else "")]
        for m in self.matched:
            where = f" at {m.via}" if m.via else ""
            out.append(f"  {m.planned} = {fmt_guid(m.device.guid)} by {m.how}{where}")
        if self.not_found:
            out.append(f"planned but not found ({len(self.not_found)}): {', '.join(self.not_found)}")
        if self.extra:
            out.append(f"found but not in the plan ({len(self.extra)}):")
            out += [f"  {dev.label()}" for dev in self.extra]
        if self.differs:
            out.append(f"matched by position, description differs ({len(self.differs)}):")
            out += [f'  {m.planned} at {m.via}: found "{m.device.desc}", planned "{want}"' for m, want in self.differs]
        if self.conflicts:
            out.append(f"GUID differs from the spec, left out of the lock file ({len(self.conflicts)}):")
            out += [
                f"  {c.planned}: spec {', '.join(map(fmt_guid, c.spec_guids))}, "
                f"found {fmt_guid(c.device.guid)} by {c.how}"
                for c in self.conflicts
            ]
        if self.kept:
            out.append(f"kept from the previous lock file ({len(self.kept)}): {', '.join(self.kept)}")
        return out


@dataclass
class _Plan:
    kind: dict[str, str] = field(default_factory=dict)  # id -> "SW" / "CA"
    descs: dict[str, set[str]] = field(default_factory=dict)
    shown_desc: dict[str, str] = field(default_factory=dict)
    guids: dict[str, set[int]] = field(default_factory=dict)
    ports: dict[str, list[tuple[int, str, int]]] = field(default_factory=lambda: defaultdict(list))


def _plan(loaded: LoadedSpec) -> _Plan:
    plan = _Plan()
    for name, sw in loaded.topology.switches.items():
        plan.kind[name] = "SW"
        plan.descs[name] = {sw.node_desc, name}
        plan.shown_desc[name] = sw.node_desc
        plan.guids[name] = {sw.node_guid} if sw.node_guid is not None else set()
    for node in loaded.spec.nodes:
        for hca in node.hcas:
            pid = f"{node.name}/{hca.device}"
            desc = node.description or f"{node.name} {hca.device}"
            plan.kind[pid] = "CA"
            plan.descs[pid] = {desc}
            plan.shown_desc[pid] = desc
            plan.guids[pid] = {g for g in (hca.node_guid, *hca.port_guids.values()) if g is not None}
    for link in loaded.topology.links:
        ids = [f"{e.device}/{e.hca}" if e.hca else e.device for e in (link.a, link.b)]
        plan.ports[ids[0]].append((link.a.port, ids[1], link.b.port))
        plan.ports[ids[1]].append((link.b.port, ids[0], link.a.port))
    return plan


class _Matcher:
    def __init__(self, plan: _Plan, found: Found) -> None:
        self.plan, self.found = plan, found
        self.of: dict[str, Matched] = {}
        self.taken: set[int] = set()

    def take(self, pid: str, dev: Device, how: str, via: str = "") -> None:
        self.of[pid] = Matched(pid, dev, how, via)
        self.taken.add(dev.guid)

    def by_guid(self) -> None:
        index: dict[int, Device] = {}
        for dev in self.found.devices.values():
            index[dev.guid] = dev
            for pg in dev.port_guids.values():
                index.setdefault(pg, dev)
        for pid in sorted(self.plan.kind):
            hits = {index[g].guid: index[g] for g in self.plan.guids[pid] if g in index}
            if len(hits) == 1:
                dev = next(iter(hits.values()))
                if dev.guid not in self.taken and dev.kind == self.plan.kind[pid]:
                    self.take(pid, dev, "GUID")

    def by_description(self) -> None:
        planned: dict[tuple[str, str], set[str]] = defaultdict(set)
        for pid, descs in self.plan.descs.items():
            if pid not in self.of:
                for desc in descs:
                    planned[(self.plan.kind[pid], desc)].add(pid)
        found: dict[tuple[str, str], list[Device]] = defaultdict(list)
        for dev in self.found.devices.values():
            if dev.guid not in self.taken:
                found[(dev.kind, dev.desc)].append(dev)
        for key, pids in sorted(planned.items()):
            devs = found.get(key, [])
            if len(pids) == 1 and len(devs) == 1:
                pid, dev = next(iter(pids)), devs[0]
                if pid not in self.of and dev.guid not in self.taken:
                    self.take(pid, dev, "description")

    def by_host_and_device(self) -> None:
        """An HCA whose description names host and device (or HCA index), when exactly one of each is left."""
        planned = {
            tuple(pid.split("/", 1)): pid for pid, kind in self.plan.kind.items() if kind == "CA" and pid not in self.of
        }
        found: dict[tuple[str, str], list[Device]] = defaultdict(list)
        for dev in self.found.devices.values():
            role = classify(dev.description)
            if dev.kind == "CA" and dev.guid not in self.taken and role.host and role.device:
                found[(role.host, role.device)].append(dev)
        for key, devs in sorted(found.items()):
            pid = planned.get(key)
            if pid is not None and len(devs) == 1:
                self.take(pid, devs[0], "description")

    def by_position(self) -> None:
        queue = deque(sorted(self.of))
        while queue:
            pid = queue.popleft()
            guid = self.of[pid].device.guid
            for port, other, other_port in sorted(self.plan.ports.get(pid, [])):
                if other in self.of:
                    continue
                peer = self.found.peer.get((guid, port))
                if peer is None or peer[1] != other_port or peer[0] in self.taken:
                    continue
                dev = self.found.devices[peer[0]]
                if dev.kind != self.plan.kind[other]:
                    continue
                self.take(other, dev, "position", f"{pid}:{port}")
                queue.append(other)


def match_fabric(loaded: LoadedSpec, found: Found, previous: LockFile | None = None) -> MatchResult:
    """Match ``found`` to the spec's devices; the lock file holds what matched (plus, for planned
    devices not found now, what ``previous`` knew of them, unless a matched device has that GUID now)."""
    plan = _plan(loaded)
    m = _Matcher(plan, found)
    m.by_guid()
    m.by_description()
    m.by_host_and_device()
    m.by_position()
    result = MatchResult(planned=len(plan.kind))
    switches: dict[str, int] = {}
    hca_nodes: dict[tuple[str, str], int] = {}
    hca_ports: dict[tuple[str, str, int], int] = {}
    for pid in sorted(m.of, key=_order(plan)):
        match = m.of[pid]
        dev = match.device
        spec_guids = plan.guids[pid]
        if spec_guids and match.how != "GUID":
            result.conflicts.append(Conflict(pid, tuple(sorted(spec_guids)), dev, match.how))
            continue
        result.matched.append(match)
        if match.how == "position" and dev.desc not in plan.descs[pid]:
            result.differs.append((match, plan.shown_desc[pid]))
        if plan.kind[pid] == "SW":
            switches[pid] = dev.guid
        else:
            node, _, device = pid.partition("/")
            hca_nodes[(node, device)] = dev.guid
            hca_ports.update({(node, device, p): g for p, g in dev.port_guids.items()})
    result.not_found = sorted((pid for pid in plan.kind if pid not in m.of), key=_order(plan))
    result.extra = sorted(
        (d for d in found.devices.values() if d.guid not in m.taken), key=lambda d: (d.kind != "SW", d.desc, d.guid)
    )
    if previous is not None:
        used = set(switches.values()) | set(hca_nodes.values()) | set(hca_ports.values())
        for pid in result.not_found:
            if plan.kind[pid] == "SW":
                guid = previous.switches.get(pid)
                if guid is not None and guid not in used:
                    switches[pid] = guid
                    result.kept.append(pid)
                continue
            node, _, device = pid.partition("/")
            old_node = previous.hca_nodes.get((node, device))
            old_ports = {k: g for k, g in previous.hca_ports.items() if k[:2] == (node, device)}
            if (old_node is not None or old_ports) and not ({old_node, *old_ports.values()} & used):
                if old_node is not None:
                    hca_nodes[(node, device)] = old_node
                hca_ports.update(old_ports)
                result.kept.append(pid)
    result.lock = LockFile(switches, hca_nodes, hca_ports)
    return result


def _order(plan: _Plan) -> Callable[[str], tuple[bool, tuple[tuple[int, int | str], ...]]]:
    """Switches first, then HCAs, each in natural name order."""

    def key(pid: str) -> tuple[bool, tuple[tuple[int, int | str], ...]]:
        return (plan.kind[pid] != "SW", natural_key(pid))

    return key
