"""The fabric ``ibnetdiscover`` found, keyed by node GUID: devices, cables and who sits at each port."""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ibprov.clusterspec.units import Speed, Width
from ibprov.errors import CollectError
from ibprov.probes import collector, ibnetdiscover

__all__ = ["Cable", "Device", "Found", "found_from_text", "read_saved", "run_ibnetdiscover"]

Port = tuple[int, int]  # (node GUID, port number)
TIMEOUT = 600.0


@dataclass
class Device:
    guid: int
    kind: str  # "SW", "CA" or "RT"
    description: str
    port_count: int | None = None  # None when the device has no block of its own in the output
    port_guids: dict[int, int] = field(default_factory=dict)  # CA ports
    sysimgguid: int | None = None  # SystemImageGUID (``sysimgguid=``): shared by the CAs of one system

    @property
    def desc(self) -> str:
        """The description as compared with the plan (surrounding blanks dropped)."""
        return self.description.strip()

    def label(self) -> str:
        kind = {"SW": "switch", "CA": "HCA", "RT": "router"}[self.kind]
        return f'{kind} "{self.desc}" 0x{self.guid:016x}'


@dataclass(frozen=True)
class Cable:
    a: Port
    b: Port
    width: Width | None
    speed: Speed | None


@dataclass
class Found:
    devices: dict[int, Device] = field(default_factory=dict)
    cables: list[Cable] = field(default_factory=list)
    peer: dict[Port, Port] = field(default_factory=dict)
    lids: dict[int, Port] = field(default_factory=dict)  # LID -> port (a switch's port 0) where the output says
    _used: dict[int, set[int]] | None = field(default=None, repr=False, compare=False)

    def of_kind(self, kind: str) -> list[Device]:
        return [d for d in self.devices.values() if d.kind == kind]

    def ports_used(self, guid: int) -> set[int]:
        """Port numbers of this device that have a cable."""
        if self._used is None:
            self._used = {}
            for g, port in self.peer:
                self._used.setdefault(g, set()).add(port)
        return self._used.get(guid, set())

    def common_rate(self) -> tuple[Speed | None, Width | None]:
        """The most common known speed and width of the cables (None when no cable says)."""
        speeds = Counter(c.speed for c in self.cables if c.speed is not None)
        widths = Counter(c.width for c in self.cables if c.width is not None)
        speed = max(speeds, key=lambda s: (speeds[s], list(Speed).index(s))) if speeds else None
        width = max(widths, key=lambda w: (widths[w], list(Width).index(w))) if widths else None
        return speed, width


def _speed(value: str | None) -> Speed | None:
    # None also for a name this version does not know, e.g. "undefined (32)" from tools older than the hardware
    return next((s for s in Speed if s.value == value), None)


def _width(value: str | None) -> Width | None:
    return next((w for w in Width if w.value == value), None)


def found_from_text(text: str) -> Found:
    """Parse ibnetdiscover's default (or ``-f``) output. Raises CollectError on anything else."""
    fabric = ibnetdiscover.parse(text)
    if any(n.guid is None for n in fabric.nodes):
        raise CollectError(
            "ibnetdiscover: this is `ibnetdiscover -p` output, which has no node GUIDs; "
            "discover needs the default output (run ibnetdiscover without options)"
        )
    if not fabric.links and len(fabric.nodes) > 1:
        raise CollectError(
            "ibnetdiscover: the output lists devices but no cables (is it `ibnetdiscover -l`?); "
            "discover needs the default output"
        )
    if not fabric.nodes:
        raise CollectError("ibnetdiscover: the output names no device")
    found = Found()
    for node in fabric.nodes:
        assert node.guid is not None
        found.devices[node.guid] = Device(
            node.guid,
            node.type,
            node.description,
            node.port_count,
            {p.number: p.guid for p in node.ports if p.guid is not None},
            node.sysimgguid or None,
        )
        if node.type == "SW" and node.lid:
            found.lids[node.lid] = (node.guid, 0)
        found.lids.update({p.lid: (node.guid, p.number) for p in node.ports if p.lid})
    for link in fabric.links:
        ends: list[Port] = []
        for end in (link.a, link.b):
            assert end.node_guid is not None
            dev = found.devices.setdefault(end.node_guid, Device(end.node_guid, end.type, end.description))
            if end.type != "SW" and end.port_guid is not None:
                dev.port_guids.setdefault(end.port, end.port_guid)
            ends.append((end.node_guid, end.port))
        a, b = ends
        found.cables.append(Cable(a, b, _width(link.width), _speed(link.speed)))
        found.peer[a] = b
        found.peer[b] = a
    return found


def read_saved(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CollectError(f"cannot read {path}: {exc.strerror or exc}") from None


def run_ibnetdiscover(timeout: float = TIMEOUT, *, cache: Path | None = None) -> str:
    """Run ``ibnetdiscover`` on this host (with this process's environment) and return its output;
    with ``cache``, it also writes the fabric cache there (``--cache``: every port's PortInfo)."""
    tool = collector("ibnetdiscover")
    argv = [*tool.argv(), *(["--cache", str(cache)] if cache is not None else [])]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise CollectError("ibnetdiscover is not installed (apt install infiniband-diags)") from None
    except subprocess.TimeoutExpired:
        raise CollectError(f"ibnetdiscover did not finish within {timeout:g}s") from None
    except OSError as exc:
        raise CollectError(f"cannot run ibnetdiscover: {exc.strerror or exc}") from None
    if not tool.succeeded(proc.returncode):
        tail = " / ".join(proc.stderr.strip().splitlines()[-3:]) or "no output"
        raise CollectError(f"ibnetdiscover failed (exit {proc.returncode}): {tail}")
    return proc.stdout
