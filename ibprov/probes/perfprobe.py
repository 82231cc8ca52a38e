"""What ``verify --perf`` looks at on a node before it runs anything there: its RDMA devices, the tools it has,
and its HCA ports' active rate, state and PCIe link. One shell command (:func:`script`), one pure reader
(:func:`parse`).

The RDMA devices are found by looking, twice: ``ibv_devices`` (rdma-core's ibverbs-utils) lists the devices
libibverbs can open, and ``/sys/class/infiniband`` the ones the kernel registered. A node where both are
empty has no RDMA device: nothing there can run perftest (the twin's containers, a node whose driver did not
load). The port's ``rate`` in sysfs is what the port trained to (``200 Gb/sec (4X HDR)``), its ``state``
``4: ACTIVE``; ``device/current_link_speed`` / ``current_link_width`` is the HCA's PCIe link
(``16.0 GT/s PCIe`` and ``16``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ibprov.clusterspec.units import Speed, Width, data_rate_gbps
from ibprov.probes._text import ParseError

__all__ = ["NodeProbe", "PortProbe", "parse", "pcie_gbps", "rate_gbps", "script"]

TOOL = "perf probe"
_MARK = "@@ibprov "
_RATE = re.compile(r"^(?P<gbps>\d+(?:\.\d+)?) Gb/sec \((?P<width>\d+)X(?: (?P<speed>[A-Z0-9]+))?\)$")
_PCIE = re.compile(r"^(?P<gts>\d+(?:\.\d+)?) GT/s(?: PCIe)?$")
# the usable share of a PCIe lane's transfer rate after line encoding: 8b/10b up to 5 GT/s, 128b/130b from
# 8 GT/s (PCIe 3.0 to 5.0); PCIe 6.0 (64 GT/s) uses FLIT mode (242 of 256 bytes carry data)
_PCIE_ENCODING = ((5.0, 0.8), (32.0, 128 / 130), (float("inf"), 242 / 256))


@dataclass(frozen=True)
class PortProbe:
    device: str
    port: int
    rate: str | None = None  # as sysfs prints it: "200 Gb/sec (4X HDR)"
    state: str | None = None  # "4: ACTIVE"
    pcie: str | None = None  # "16.0 GT/s PCIe x16"

    @property
    def rate_gbps(self) -> float | None:
        """The data rate the port trained to (after line encoding), or None when sysfs did not say."""
        return rate_gbps(self.rate) if self.rate else None

    @property
    def pcie_gbps(self) -> float | None:
        if not self.pcie:
            return None
        speed, _, width = self.pcie.rpartition(" x")
        return pcie_gbps(speed, width)


@dataclass(frozen=True)
class NodeProbe:
    ibv_devices: tuple[str, ...] = ()  # what `ibv_devices` listed
    ibv_devices_error: str | None = None  # "not installed", or its exit status and output
    sysfs_devices: tuple[str, ...] = ()  # /sys/class/infiniband
    tools: Mapping[str, str | None] = field(default_factory=dict)  # name -> its path, None: not on PATH
    ports: Mapping[tuple[str, int], PortProbe] = field(default_factory=dict)

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.ibv_devices, *self.sysfs_devices)))

    def missing_tools(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if not self.tools.get(n)]


def script(tools: Iterable[str], ports: Iterable[tuple[str, int]]) -> str:
    """The one POSIX shell command that prints everything :func:`parse` reads."""
    q = shlex.quote
    lines = [
        f"echo {q(_MARK + 'ibv_devices')}",
        "if command -v ibv_devices >/dev/null 2>&1; then ibv_devices 2>&1; "
        f'echo {q(_MARK)}"rc $?"; else echo {q(_MARK + "rc missing")}; fi',
        f"echo {q(_MARK + 'sysfs')}",
        "ls -1 /sys/class/infiniband 2>/dev/null",
    ]
    for tool in dict.fromkeys(tools):
        lines.append(f'echo {q(_MARK + "tool " + tool)}" $(command -v {q(tool)} 2>/dev/null)"')
    for device, port in dict.fromkeys(ports):
        base = f"/sys/class/infiniband/{device}"
        for key, path in (
            ("rate", f"{base}/ports/{port}/rate"),
            ("state", f"{base}/ports/{port}/state"),
            ("pcie_speed", f"{base}/device/current_link_speed"),
            ("pcie_width", f"{base}/device/current_link_width"),
        ):
            lines.append(f'echo {q(f"{_MARK}{key} {device} {port}")}" $(cat {q(path)} 2>/dev/null)"')
    return "\n".join(lines) + "\n"


def parse(text: str) -> NodeProbe:
    """The probe's output (:func:`script`) as a :class:`NodeProbe`. Raises ParseError when it is not."""
    section = ""
    ibv: list[str] = []
    ibv_error: str | None = None
    ibv_text: list[str] = []
    sysfs: list[str] = []
    tools: dict[str, str | None] = {}
    values: dict[tuple[str, int], dict[str, str]] = {}
    seen = False
    for line_no, line in enumerate(text.splitlines(), start=1):
        if line.startswith(_MARK):
            seen = True
            word, _, rest = line[len(_MARK) :].partition(" ")
            if word in ("ibv_devices", "sysfs"):
                section = word
            elif word == "rc":
                if rest.strip() == "missing":
                    ibv_error = "ibv_devices is not installed (ibverbs-utils)"
                elif rest.strip() != "0":
                    output = " ".join(t.strip() for t in ibv_text if t.strip())
                    ibv_error = f"ibv_devices exited {rest.strip()}" + (f": {output}" if output else "")
                section = ""
            elif word == "tool":
                name, _, where = rest.strip().partition(" ")
                tools[name] = where.strip() or None
            elif word in ("rate", "state", "pcie_speed", "pcie_width"):
                parts = rest.split(" ", 2)
                if len(parts) < 2 or not parts[1].isdigit():
                    raise ParseError(TOOL, line_no, line, "expected DEVICE PORT VALUE")
                values.setdefault((parts[0], int(parts[1])), {})[word] = parts[2].strip() if len(parts) > 2 else ""
            else:
                raise ParseError(TOOL, line_no, line, f"unknown probe line {word!r}")
            continue
        if section == "ibv_devices":
            ibv_text.append(line)
            device = _ibv_devices_row(line)
            if device is not None:
                ibv.append(device)
        elif section == "sysfs" and line.strip():
            sysfs.append(line.strip())
    if not seen:
        raise ParseError(TOOL, 1, text.splitlines()[0] if text else "", "not the output of the perf probe")
    ports = {
        key: PortProbe(
            key[0],
            key[1],
            rate=v.get("rate") or None,
            state=v.get("state") or None,
            pcie=f"{v['pcie_speed']} x{v['pcie_width']}" if v.get("pcie_speed") and v.get("pcie_width") else None,
        )
        for key, v in values.items()
    }
    return NodeProbe(tuple(ibv), ibv_error, tuple(sysfs), tools, ports)


def _ibv_devices_row(line: str) -> str | None:
    """``    mlx5_0              248a0703009e5b72`` -> mlx5_0; the header and its rule -> None."""
    words = line.split()
    if len(words) != 2 or words[0] in ("device", "------"):
        return None
    return words[0] if re.fullmatch(r"[0-9a-f]{16}", words[1]) else None


def rate_gbps(text: str) -> float | None:
    """sysfs's ``200 Gb/sec (4X HDR)`` as a data rate in Gb/s (HDR 4x -> 200.0); the speed name wins over the
    printed number (``40 Gb/sec (4X QDR)`` is 32 Gb/s of data after 8b/10b). The kernel prints
    ``"%d%s Gb/sec (%dX%s)"`` (drivers/infiniband/core/sysfs.c, rate_show). None when it cannot be read."""
    match = _RATE.match(text.strip())
    if match is None:
        return None
    speed_name = match["speed"] or "SDR"  # the kernel names no speed for SDR: "10 Gb/sec (4X)"
    width = {1: Width.X1, 2: Width.X2, 4: Width.X4, 8: Width.X8, 12: Width.X12}.get(int(match["width"]))
    if width is not None and speed_name in Speed.__members__:
        return data_rate_gbps(Speed[speed_name], width)
    return float(match["gbps"])


def pcie_gbps(speed: str, width: str) -> float | None:
    """The data rate of a PCIe link (``16.0 GT/s PCIe``, ``16`` -> 252.1 Gb/s), or None when unreadable."""
    match = _PCIE.match(speed.strip())
    if match is None or not width.strip().isdigit():
        return None
    gts = float(match["gts"])
    share = next(s for limit, s in _PCIE_ENCODING if gts <= limit)
    return round(gts * int(width) * share, 1)
