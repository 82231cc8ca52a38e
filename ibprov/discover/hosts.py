"""Which CAs share a host: the NodeDescription conventions real fabrics use, and the SystemImageGUID.

A CA's NodeDescription is read as one of

* rdma-core's default ``<hostname> <device>`` (``node01 mlx5_0``): host and kernel device name;
* the same with words an admin or a tool added (``node01 mlx5_0 rail3``): the first two words count;
* MLNX_OFED/DOCA's ``<hostname> HCA-<n>`` (any case, words after it allowed): host and an *index*, not a
  kernel name. The device is written as the placeholder ``hca<n>`` (never a made-up ``mlx5_*``), marked
  REVIEW in the skeleton; ``verify --nodes`` can find the kernel name by the HCA's node GUID;
* a CA that is not a host: a SHARP aggregation node (``Mellanox Technologies Aggregation Node``), a UFM
  appliance, a gateway; kept apart from the compute nodes;
* anything else (an unset ``MT4123 ConnectX6 Mellanox Technologies``): a CA of an unknown host.

CAs with the same SystemImageGUID (``sysimgguid=`` in ibnetdiscover's topology output, ``SystemGuid`` in
``smpquery nodeinfo``) are one system: the strongest evidence, it groups them even where the descriptions
name no host. Placeholder device names ``hca<n>`` match :data:`PLACEHOLDER_DEVICE`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ibprov.clusterspec.types import NAME_RE, NON_HOST_GROUPS
from ibprov.clusterspec.unionfind import UnionFind
from ibprov.discover.found import Device
from ibprov.identity.guids import PLACEHOLDER_DEVICE

__all__ = ["PLACEHOLDER_DEVICE", "CaRole", "HostGroup", "classify", "group_hosts", "natural_key", "sanitize"]

NON_HOST_KINDS = NON_HOST_GROUPS
_HOST_DEVICE = re.compile(r"^(\S+)\s+([a-z][a-z0-9_]{0,31})(?:\s+(.*))?$")
_HOST_INDEX = re.compile(r"^(\S+)\s+hca-(\d{1,3})(?:\s+(.*))?$", re.IGNORECASE)
_AGGREGATION = re.compile(r"aggregation node", re.IGNORECASE)
_UFM = re.compile(r"(?:^|[^a-z])ufm(?:[^a-z]|$)", re.IGNORECASE)
_GATEWAY = re.compile(r"(?:^|[^a-z])(?:gateway|skyway)(?:[^a-z]|$)", re.IGNORECASE)
NAME_PATTERN = re.compile(NAME_RE)


def sanitize(text: str) -> str:
    """``"MF0;sw-a:MQM8700/U1"`` -> ``"MF0-sw-a-MQM8700-U1"``: the spec's name pattern, at most 63 characters."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", text.strip())
    name = re.sub(r"-{2,}", "-", name).lstrip("-_.")[:63].rstrip("-")
    return name if NAME_PATTERN.fullmatch(name) else ""


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts node2 before node10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part)


@dataclass(frozen=True)
class CaRole:
    """What a CA's NodeDescription says it is."""

    form: str  # "rdma-core", "extra-words", "index" (HCA-<n>), "sharp", "ufm", "gateway", "unknown"
    host: str | None = None  # the host name, sanitised (None: the description names none)
    device: str | None = None  # the kernel device name, or the placeholder hca<n> for "index"
    index: int | None = None  # the <n> of HCA-<n>

    @property
    def is_host(self) -> bool:
        return self.form not in NON_HOST_KINDS

    @property
    def kernel_name_known(self) -> bool:
        return self.form in ("rdma-core", "extra-words")


def classify(description: str) -> CaRole:
    """How a CA's NodeDescription is read (see the module docstring)."""
    desc = description.strip()
    if _AGGREGATION.search(desc):
        return CaRole("sharp")
    if _UFM.search(desc):
        return CaRole("ufm")
    if _GATEWAY.search(desc):
        return CaRole("gateway")
    if (m := _HOST_INDEX.match(desc)) and sanitize(m[1]) == m[1]:
        return CaRole("index", m[1], f"hca{int(m[2])}", int(m[2]))
    if (m := _HOST_DEVICE.match(desc)) and sanitize(m[1]) == m[1]:
        return CaRole("extra-words" if m[3] else "rdma-core", m[1], m[2])
    return CaRole("unknown")


@dataclass
class HostGroup:
    """The CAs of one host (or one non-host CA), with the device name each gets in the spec."""

    host: str | None  # the host name the descriptions give (None: they give none)
    kind: str = "host"  # "host", or a non-host kind: "sharp", "ufm", "gateway"
    hcas: dict[str, Device] = field(default_factory=dict)  # device name -> CA
    roles: dict[str, CaRole] = field(default_factory=dict)  # device name -> what its description said
    by_sysimgguid: bool = False  # CAs of it were put together by a shared SystemImageGUID
    split: bool = False  # its host name is taken by another group (e.g. two 'localhost' hosts)
    hosts_named: tuple[str, ...] = ()  # every host name its descriptions gave (more than one: see notes)

    def placeholders(self) -> list[str]:
        """Its device names that are not kernel names."""
        return [d for d, role in self.roles.items() if not role.kernel_name_known]


def group_hosts(cas: list[Device]) -> list[HostGroup]:
    """The CAs grouped by host: by shared SystemImageGUID first, then by the host name their descriptions
    give. A kernel device name that two CAs of one would-be host both claim means two hosts of the same
    name: the later one becomes a group of its own (``split``). Non-host CAs are a group each."""
    ordered = sorted(cas, key=lambda d: (natural_key(d.desc), d.guid))
    roles = {d.guid: classify(d.description) for d in ordered}
    hosts = [d for d in ordered if roles[d.guid].is_host]
    groups: list[HostGroup] = [
        HostGroup(None, roles[d.guid].form, {"hca0": d}, {"hca0": roles[d.guid]})
        for d in ordered
        if not roles[d.guid].is_host
    ]
    sets = UnionFind(d.guid for d in hosts)
    by_image: dict[int, int] = {}
    for dev in hosts:
        if dev.sysimgguid:
            if dev.sysimgguid in by_image:
                sets.union(by_image[dev.sysimgguid], dev.guid)
            else:
                by_image[dev.sysimgguid] = dev.guid
    clusters: dict[int, list[Device]] = {}
    for dev in hosts:
        clusters.setdefault(sets.find(dev.guid), []).append(dev)
    named: dict[str, list[HostGroup]] = {}
    host_groups: list[HostGroup] = []
    for members in clusters.values():
        names = Counter(r.host for d in members if (r := roles[d.guid]).host is not None)
        host = min(names, key=lambda h: (-names[h], natural_key(h))) if names else None
        group = HostGroup(host, by_sysimgguid=len(members) > 1, hosts_named=tuple(sorted(names, key=natural_key)))
        explicit = [d for d in members if roles[d.guid].device is not None]
        rest = [d for d in members if roles[d.guid].device is None]
        for dev in explicit:
            device = roles[dev.guid].device
            assert device is not None
            if device in group.hcas:
                rest.append(dev)
            else:
                group.hcas[device], group.roles[device] = dev, roles[dev.guid]
        for dev in rest:
            _add_placeholder(group, dev, roles[dev.guid])
        if host is None:
            host_groups.append(group)
            continue
        same = named.setdefault(host, [])
        target = same[0] if same and not same[0].split else None
        if target is not None and not (set(target.hcas) & set(group.hcas)):
            target.hcas.update(group.hcas)
            target.roles.update(group.roles)
            target.by_sysimgguid = target.by_sysimgguid or group.by_sysimgguid
            continue
        group.split = bool(same)
        same.append(group)
        host_groups.append(group)
    return sorted(host_groups, key=_group_order) + sorted(groups, key=_group_order)


def _add_placeholder(group: HostGroup, dev: Device, role: CaRole) -> None:
    """A CA whose kernel name is unknown: ``hca<n>`` from its HCA-<n>, else the lowest free ``hca<k>``."""
    wanted = role.device if role.form == "index" and role.device not in group.hcas else None
    if wanted is None:
        k = 0
        while f"hca{k}" in group.hcas:
            k += 1
        wanted = f"hca{k}"
        role = CaRole("unknown", role.host, None, role.index) if role.form != "index" else role
    group.hcas[wanted], group.roles[wanted] = dev, role


def _group_order(group: HostGroup) -> tuple[tuple[tuple[int, int | str], ...], int]:
    first = min(group.hcas.values(), key=lambda d: (natural_key(d.desc), d.guid))
    return natural_key(group.host or first.desc), first.guid
