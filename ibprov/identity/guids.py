"""GUID resolution: the spec first, then the lock file `ibprov discover` writes, then (twin only) synthetic.

Partitions name nodes but OpenSM needs port GUIDs; the node-name map needs node GUIDs; ftree/updn root
files need switch node GUIDs. Synthetic GUIDs are stable (derived from the names, not from positions) and
carry the locally administered prefix 0x02 so they can never be mistaken for real hardware.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from ibprov.clusterspec import LoadedSpec, collector_paused
from ibprov.errors import Problem, SpecError

SYNTHETIC_PREFIX = 0x02 << 56
# a device name `ibprov discover` writes where the kernel name is unknown (from a "<host> HCA-3" description)
PLACEHOLDER_DEVICE = re.compile(r"^hca\d+$")


@lru_cache(maxsize=1 << 18)  # a render asks twice per device (its own book and the twin's)
def synthetic_guid(*parts: str) -> int:
    """A stable GUID for a named object: 0x02 + 40 bits of SHA-256 + a zero low byte (room for ports)."""
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return SYNTHETIC_PREFIX | (int.from_bytes(digest[:5], "big") << 8)


def fmt_guid(guid: int) -> str:
    return f"0x{guid:016x}"


@dataclass(frozen=True)
class LockFile:
    """GUIDs found on a live fabric, matched to spec names (written by `ibprov discover`)."""

    switches: dict[str, int] = field(default_factory=dict)
    hca_nodes: dict[tuple[str, str], int] = field(default_factory=dict)
    hca_ports: dict[tuple[str, str, int], int] = field(default_factory=dict)

    @staticmethod
    def path_for(spec_path: Path) -> Path:
        return spec_path.with_name(spec_path.stem + ".lock.yaml")

    @classmethod
    def read(cls, path: Path) -> LockFile:
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise SpecError([Problem(str(path), 1, 1, "", f"cannot read lock file: {exc}")]) from None
        try:
            lock = cls._from_data(data)
        except (TypeError, ValueError, AttributeError) as exc:
            raise SpecError([Problem(str(path), 1, 1, "", f"malformed lock file: {exc}")]) from None
        problems = lock.collisions(str(path), path.read_text())
        if problems:
            raise SpecError(problems)
        return lock

    def owners(self) -> list[tuple[int, tuple[str, ...], str]]:
        """(GUID, the device it belongs to, what it is) for every GUID of the lock file, in the file's order."""
        out: list[tuple[int, tuple[str, ...], str]] = []
        out += [(g, ("switch", name), f"switch {name}") for name, g in self.switches.items()]
        out += [(g, ("hca", node, dev), f"{node}/{dev} (node GUID)") for (node, dev), g in self.hca_nodes.items()]
        out += [(g, ("hca", node, dev), f"{node}/{dev}:{port}") for (node, dev, port), g in self.hca_ports.items()]
        return out

    def collisions(self, name: str, text: str) -> list[Problem]:
        """A GUID that names two devices (two HCAs' ports, a port and a switch, two switches), or two ports of
        one HCA: each is a problem located at its second use in ``text``. An HCA's node GUID may equal one of
        its own port GUIDs."""
        lines = text.lower().splitlines()
        seen: dict[int, tuple[tuple[str, ...], str]] = {}
        problems = []
        for guid, device, what in self.owners():
            first_device, first = seen.setdefault(guid, (device, what))
            if first == what or (first_device == device and "(node GUID)" in first + what):
                continue
            digits = f"{guid:x}"
            uses = [i for i, line in enumerate(lines, start=1) if digits in line]
            line_no = uses[1] if len(uses) > 1 else (uses[0] if uses else 1)
            column = max(lines[line_no - 1].find(digits) - 1, 1) if lines else 1
            problems.append(
                Problem(
                    name, line_no, column, "",
                    f"GUID {fmt_guid(guid)} is given to {first} and to {what}: a GUID names one thing (run `ibprov "
                    "discover` again, or correct the lock file)",
                )
            )  # fmt: skip
        return problems

    @classmethod
    def _from_data(cls, data: dict[str, Any]) -> LockFile:
        switches = {str(k): _int(v["node_guid"]) for k, v in (data.get("switches") or {}).items()}
        nodes: dict[tuple[str, str], int] = {}
        ports: dict[tuple[str, str, int], int] = {}
        for node, hcas in (data.get("nodes") or {}).items():
            for dev, info in (hcas or {}).items():
                if info.get("node_guid") is not None:
                    nodes[(str(node), str(dev))] = _int(info["node_guid"])
                for port, guid in (info.get("port_guids") or {}).items():
                    ports[(str(node), str(dev), int(port))] = _int(guid)
        return cls(switches, nodes, ports)

    def to_yaml(self) -> str:
        nodes: dict[str, dict[str, dict[str, Any]]] = {}
        for (node, dev), guid in sorted(self.hca_nodes.items()):
            nodes.setdefault(node, {}).setdefault(dev, {})["node_guid"] = fmt_guid(guid)
        for (node, dev, port), guid in sorted(self.hca_ports.items()):
            nodes.setdefault(node, {}).setdefault(dev, {}).setdefault("port_guids", {})[port] = fmt_guid(guid)
        data = {
            "switches": {name: {"node_guid": fmt_guid(g)} for name, g in sorted(self.switches.items())},
            "nodes": nodes,
        }
        header = "# GUIDs discovered on the fabric and matched to cluster.yaml names. Written by `ibprov discover`.\n"
        return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else int(str(value), 16)


@dataclass
class GuidBook:
    """Every GUID render needs, with where it came from ('spec', 'lock' or 'synthetic')."""

    loaded: LoadedSpec
    lock: LockFile
    allow_synthetic: bool = False
    twin: bool = False  # ibsim's convention wins: port GUID = node GUID + port
    synthetic: set[str] = field(default_factory=set)
    _hcas: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)
    _lock_ports: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict, repr=False)
    _hca_cache: dict[tuple[str, str], int | None] = field(default_factory=dict, repr=False)
    _switch_cache: dict[str, int | None] = field(default_factory=dict, repr=False)
    _port_cache: dict[tuple[str, str | None, int], int | None] = field(default_factory=dict, repr=False)
    _resolved: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self._hcas = _hca_index(self.loaded.spec)
        for (node, dev, port), guid in self.lock.hca_ports.items():
            self._lock_ports.setdefault((node, dev), {})[port] = guid

    @classmethod
    def for_spec(cls, loaded: LoadedSpec, *, allow_synthetic: bool = False, twin: bool = False) -> GuidBook:
        lock = LockFile()
        if loaded.path is not None:
            lock_path = LockFile.path_for(loaded.path)
            if lock_path.exists():
                lock = LockFile.read(lock_path)
                problems = _against_the_spec(loaded, lock, lock_path)
                if problems:
                    raise SpecError(problems)
        return cls(loaded, lock, allow_synthetic, twin)

    @property
    def cluster(self) -> str:
        return self.loaded.spec.cluster.name

    def resolve_devices(self) -> None:
        """Resolve every switch's, HCA's and HCA port's GUID now, in one pass (what the SM data and the fabric
        files ask for one at a time, several times each), so that ``synthetic`` is complete."""
        if self._resolved:
            return
        for name in self.loaded.topology.switches:
            self.switch_guid(name)
        hca_guid, ports, hcas_cache = self.hca_guid, self._port_cache, self._hca_cache
        lock, synthetic = self.lock.hca_ports, self.allow_synthetic
        # an HCA the spec and the lock file say nothing about gets a synthetic GUID (if allowed): inlined here
        # for the 100,000s of a large fabric (what _resolve_hca and synthetic_guid do)
        unnamed = synthetic and not self._lock_ports and not self.lock.hca_nodes
        prefix, added = f"{self.cluster}/hca/", self.synthetic.add
        for (node, device), hca in self._hcas.items():
            given = hca.port_guids
            if unnamed and not given and hca.node_guid is None and (node, device) not in hcas_cache:
                digest = hashlib.sha256(f"{prefix}{node}/{device}".encode()).digest()
                node_guid = SYNTHETIC_PREFIX | (int.from_bytes(digest[:5], "big") << 8)
                hcas_cache[(node, device)] = node_guid
                added(f"{node}/{device}")
                for port in hca.ports:  # no port GUID given anywhere: ibsim's convention, node GUID + port
                    ports[(node, device, port)] = node_guid + port
                continue
            base = hca_guid(node, device)
            for port in hca.ports:
                guid = (given.get(port) if given else None) or (lock.get((node, device, port)) if lock else None)
                if guid is None and synthetic and base is not None:
                    guid = base + port
                ports[(node, device, port)] = guid
        self._resolved = True

    def port_guids(self) -> Mapping[tuple[str, str | None, int], int | None]:
        """(node, HCA, port) -> port GUID for every HCA port of the spec (what :meth:`port_guid` gives)."""
        self.resolve_devices()
        return self._port_cache

    def for_twin(self) -> GuidBook:
        """The twin's book (synthetic GUIDs allowed, ibsim's convention for port GUIDs), taking over every
        GUID this book resolved that the twin's rules resolve the same way: a switch's, and an HCA's that no
        port GUID (spec or lock file) decides."""
        twin = GuidBook(self.loaded, self.lock, allow_synthetic=True, twin=True)
        for name, guid in self._switch_cache.items():
            if guid is not None:
                twin._switch_cache[name] = guid
                if f"switch {name}" in self.synthetic:
                    twin.synthetic.add(f"switch {name}")
        hcas, locked, synthetic = self._hcas, self._lock_ports, self.synthetic
        for key, guid in self._hca_cache.items():
            if guid is not None and not hcas[key].port_guids and not (locked and locked.get(key)):
                twin._hca_cache[key] = guid
                if synthetic and f"{key[0]}/{key[1]}" in synthetic:
                    twin.synthetic.add(f"{key[0]}/{key[1]}")
        return twin

    def switch_guid(self, name: str) -> int | None:
        if name not in self._switch_cache:
            self._switch_cache[name] = self._resolve_switch(name)
        return self._switch_cache[name]

    def _resolve_switch(self, name: str) -> int | None:
        sw = self.loaded.topology.switches[name]
        guid = sw.node_guid or self.lock.switches.get(name)
        if guid is None and self.allow_synthetic:
            self.synthetic.add(f"switch {name}")
            guid = synthetic_guid(self.cluster, "switch", name)
        return guid

    def hca_guid(self, node: str, device: str) -> int | None:
        key = (node, device)
        try:
            return self._hca_cache[key]
        except KeyError:
            guid = self._hca_cache[key] = self._resolve_hca(node, device)
            return guid

    def _resolve_hca(self, node: str, device: str) -> int | None:
        hca = self._hcas[(node, device)]
        locked = self._lock_ports.get((node, device)) if self._lock_ports else None
        ports = {**locked, **hca.port_guids} if locked else hca.port_guids
        lock_nodes = self.lock.hca_nodes
        guid = (
            None if self.twin and ports else hca.node_guid or (lock_nodes.get((node, device)) if lock_nodes else None)
        )
        if guid is None and ports:
            port = min(ports)
            guid = ports[port] - port  # ibsim's convention: port GUID = node GUID + port
        if guid is None and self.allow_synthetic:
            self.synthetic.add(f"{node}/{device}")
            guid = synthetic_guid(self.cluster, "hca", node, device)
        return guid

    def port_guid(self, node: str, device: str, port: int) -> int | None:
        try:
            return self._port_cache[(node, device, port)]
        except KeyError:
            return self._resolve_port(node, device, port)

    def _resolve_port(self, node: str, device: str, port: int) -> int | None:
        hca = self._hcas[(node, device)]
        lock = self.lock.hca_ports
        guid = hca.port_guids.get(port) or (lock.get((node, device, port)) if lock else None)
        if guid is None and self.allow_synthetic:
            key = (node, device)
            base = self._hca_cache[key] if key in self._hca_cache else self.hca_guid(node, device)
            guid = None if base is None else base + port
        return guid


_INDEX: list[tuple[object, dict[tuple[str, str], Any]]] = []  # the last spec's (node, device) -> Hca


@collector_paused()
def _against_the_spec(loaded: LoadedSpec, lock: LockFile, path: Path) -> list[Problem]:
    """The lock file's GUIDs that the spec gives to another device (a switch's node GUID, an HCA's node or port
    GUIDs): located at their use in the lock file."""
    given: dict[int, tuple[tuple[str, ...], str]] = {}
    for name, sw in loaded.topology.switches.items():
        if sw.node_guid is not None:
            given[sw.node_guid] = (("switch", name), f"switch {name} in the spec")
    for node in loaded.spec.nodes:
        for hca in node.hcas:
            device: tuple[str, ...] = ("hca", node.name, hca.device)
            if hca.node_guid is not None:
                given[hca.node_guid] = (device, f"{node.name}/{hca.device} in the spec")
            for port, guid in hca.port_guids.items():
                given[guid] = (device, f"{node.name}/{hca.device}:{port} in the spec")
    if not given:
        return []
    lines = path.read_text().lower().splitlines()
    problems = []
    for guid, device, what in lock.owners():
        owner = given.get(guid)
        if owner is None or owner[0] == device:
            continue
        digits = f"{guid:x}"
        line_no = next((i for i, line in enumerate(lines, start=1) if digits in line), 1)
        problems.append(
            Problem(
                str(path), line_no, max(lines[line_no - 1].find(digits) - 1, 1) if lines else 1, "",
                f"GUID {fmt_guid(guid)} is given to {what} here and to {owner[1]}: a GUID names one thing (run "
                "`ibprov discover` again, or correct the spec)",
            )
        )  # fmt: skip
    return problems


def _hca_index(spec: Any) -> dict[tuple[str, str], Any]:
    """(node, device) -> Hca, built once per spec (render makes two books of the same spec)."""
    if _INDEX and _INDEX[0][0] is spec:
        return _INDEX[0][1]
    index = {(n.name, h.device): h for n in spec.nodes for h in n.hcas}
    _INDEX[:] = [(spec, index)]
    return index


def planned_names(loaded: LoadedSpec, book: GuidBook) -> tuple[dict[int, str], dict[int, str]]:
    """The plan's names by GUID, for the devices whose GUIDs ``book`` knows: switch node GUID -> switch,
    CA port GUID -> ``node/device:port`` (how the routing audit and the perf schedule name what they find)."""
    switches = {}
    for name in loaded.topology.switches:
        guid = book.switch_guid(name)
        if guid is not None:
            switches[guid] = name
    ports = {}
    for node in loaded.spec.nodes:
        for hca in node.hcas:
            for port in hca.ports:
                guid = book.port_guid(node.name, hca.device, port)
                if guid is not None:
                    ports[guid] = f"{node.name}/{hca.device}:{port}"
    return switches, ports
