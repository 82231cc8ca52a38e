"""Readers of an HCA's PCIe link: sysfs (one hop a line, as the physical probe prints the path from the HCA up
to its root port) and ``lspci -vv`` (``LnkCap:`` / ``LnkSta:``).

sysfs speed strings (Linux ``pci_speed_string``, NCCL's kvDictPciGen): kernels up to 5.6 print ``8 GT/s``,
newer ones ``8.0 GT/s PCIe``; ``Unknown`` where the link has no speed; the width is a bare number. The files
can be missing (mlx4 hosts): such a hop has no link values, never a guessed one.

``lspci -vv`` (pciutils ls-caps.c): ``LnkCap:\\tPort #0, Speed 16GT/s, Width x16, ...`` and ``LnkSta:\\tSpeed
8GT/s (downgraded), Width x8 (downgraded)``. The marker after a value depends on the pciutils version (none
before 3.6; ``(ok)``/``(downgraded)``/``(strange)`` on every device in 3.6-3.7; from 3.8 only ``(downgraded)``
on endpoints and upstream ports, ``(overdriven)``): the numbers are compared, never the marker.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ibprov.clusterspec.physical import PcieLink, pcie_generation
from ibprov.probes._text import ParseError, note

__all__ = ["LspciDevice", "PcieHop", "parse_link_line", "parse_lspci", "parse_sysfs_hop", "parse_sysfs_speed"]

_GT = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*GT/s")
_BDF = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


@functools.lru_cache(maxsize=1024)  # a pure function of a few strings that every host of a fabric repeats
def parse_sysfs_speed(text: str | None) -> int | None:
    """A sysfs ``*_link_speed`` value -> its PCIe generation (``16.0 GT/s PCIe`` and ``16 GT/s`` -> 4);
    None for ``Unknown``, an empty or a missing file."""
    m = _GT.search(text or "")
    return pcie_generation(float(m.group(1))) if m else None


def _width(text: str | None) -> int | None:
    value = (text or "").strip().lstrip("x")
    return int(value) if value.isdigit() and int(value) > 0 else None


@dataclass(frozen=True)
class PcieHop:
    """One PCI function on the path from the HCA to its root port (the HCA first)."""

    bdf: str
    current: PcieLink | None  # what the link trained at; None: sysfs gave no speed or width
    capable: PcieLink | None  # what the device can do (max_link_*)
    numa_node: int | None  # None: not given, or -1 (no locality from firmware)


def parse_sysfs_hop(line: str, line_no: int = 0) -> PcieHop:
    """``pci=BDF|current_speed|current_width|max_speed|max_width|numa_node`` (the probe's line) -> a hop."""
    body = line.partition("=")[2]
    parts = body.split("|")
    if len(parts) != 6 or not _BDF.match(parts[0].strip()):
        raise ParseError("sysfs pci", line_no, line, "expected 'pci=BDF|speed|width|max speed|max width|numa'")
    bdf, cur_speed, cur_width, max_speed, max_width, numa = (p.strip() for p in parts)
    return PcieHop(
        bdf=bdf,
        current=_link(parse_sysfs_speed(cur_speed), _width(cur_width)),
        capable=_link(parse_sysfs_speed(max_speed), _width(max_width)),
        numa_node=int(numa) if numa.lstrip("-").isdigit() and int(numa) >= 0 else None,
    )


@functools.lru_cache(maxsize=1024)  # one immutable link of each kind, shared
def _link(generation: int | None, width: int | None) -> PcieLink | None:
    return PcieLink(generation, width) if generation is not None and width is not None else None


@dataclass(frozen=True)
class LspciDevice:
    bdf: str
    description: str  # "Infiniband controller: Mellanox Technologies MT28908 Family [ConnectX-6]"
    capable: PcieLink | None
    current: PcieLink | None
    downgraded: bool  # the marker pciutils printed (shown, never judged)


_HEAD = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.*)$")
_LNK = re.compile(r"^\s*(LnkCap|LnkSta):\s*(.*)$")
_LNK_ANYWHERE = re.compile(r"\b(LnkCap|LnkSta):\s*(.*)$")
_SPEED = re.compile(r"Speed\s+([0-9.]+)GT/s")
_WIDTH = re.compile(r"Width\s+x(\d+)")


def parse_lspci(text: str, notes: list[str] | None = None) -> list[LspciDevice]:
    """Every device of ``lspci -vv`` output with its link capability and status (None where it has no PCIe
    capability, or a value reads ``unknown``). A line before the first device is a note."""
    out: list[LspciDevice] = []
    head: tuple[str, str] | None = None
    cap: PcieLink | None = None
    sta: PcieLink | None = None
    marker = False

    def flush() -> None:
        if head is not None:
            out.append(LspciDevice(head[0], head[1], cap, sta, marker))

    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _HEAD.match(line.strip())  # a device line; a capture may indent it (a quoted block)
        if m:
            flush()
            head, cap, sta, marker = (m.group(1), m.group(2)), None, None, False
            continue
        lnk = _LNK.match(line)
        if lnk and head is not None:
            speed, width = _SPEED.search(lnk.group(2)), _WIDTH.search(lnk.group(2))
            gen = pcie_generation(float(speed.group(1))) if speed else None
            link = _link(gen, int(width.group(1)) if width else None)
            if lnk.group(1) == "LnkCap":
                cap = link
            else:
                sta, marker = link, "downgraded" in lnk.group(2)
            continue
        if head is None and notes is not None:
            notes.append(note(line_no, line))
    flush()
    return out


def parse_link_line(line: str) -> tuple[str, PcieLink | None, bool] | None:
    """One ``LnkCap:``/``LnkSta:`` line wherever it stands (a script's grep of lspci prints it after its own
    label): (LnkCap or LnkSta, the link, whether it carries a downgraded marker); None for any other line."""
    m = _LNK_ANYWHERE.search(line)
    if not m:
        return None
    speed, width = _SPEED.search(m.group(2)), _WIDTH.search(m.group(2))
    gen = pcie_generation(float(speed.group(1))) if speed else None
    return m.group(1), _link(gen, int(width.group(1)) if width else None), "downgraded" in m.group(2)
