"""The reader of ``nvidia-smi topo -m``: how far each GPU is from each NIC (X, PIX, PXB, PHB, NODE, SYS, NV#).

Layouts (docs/physical.md; proven on captures in tests/fixtures/nvidia-smi/): a matrix whose header names
the devices, then ``CPU Affinity`` (and on newer drivers ``NUMA Affinity`` and ``GPU NUMA ID``), one row per
device, then a legend. Newer drivers name the NICs ``NIC0``.. and map them in a ``NIC Legend:`` block
(``  NIC0: mlx5_0``, also ``mlx5_bond_0`` on ConnectX-8 hosts); older ones put the RDMA names (``mlx5_0``)
in the header. Columns are separated by tabs; a capture whose tabs became spaces reads the same (each cell
is one word). A server may have no NIC at PIX or PXB to any GPU (NODE, SYS, PHB only): that reads fine and
is judged, not refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ibprov.probes._text import ParseError, note

__all__ = ["DISTANCE", "GpuTopology", "parse_topo"]

TOOL = "nvidia-smi topo -m"
# Path kinds from nearest to farthest (NCCL's PATH_PIX .. PATH_SYS); NV# (NVLink) is between GPUs only.
DISTANCE = {"X": 0, "PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5, "SOC": 5}  # SOC: old drivers' SYS
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_DEVICE = re.compile(r"^(GPU\d+|NIC\d+|mlx\d+_[A-Za-z0-9_]+|[a-z]+\d*_?\d*)$")
_GPU = re.compile(r"^GPU(\d+)$")
_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
_CELL = re.compile(r"^(X|PIX|PXB|PHB|NODE|SYS|SOC|NV\d+)$")
_CELLS = frozenset(["X", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC", *(f"NV{i}" for i in range(1, 100))])  # at C speed


@dataclass(frozen=True)
class GpuTopology:
    gpus: tuple[int, ...]  # GPU indices in the matrix
    nics: tuple[str, ...]  # the NICs by RDMA name (the legend applied)
    relation: dict[tuple[int, str], str] = field(default_factory=dict)  # (gpu, nic) -> PIX, PXB, NODE ...
    notes: tuple[str, ...] = ()

    def nearest(self, gpu: int) -> list[tuple[str, str]]:
        """The NICs nearest to ``gpu`` first: (nic, relation)."""
        pairs = [(nic, rel) for (g, nic), rel in self.relation.items() if g == gpu]
        return sorted(pairs, key=lambda p: (DISTANCE.get(p[1], 9), p[0]))


def parse_topo(text: str) -> GpuTopology:
    """Read the matrix; raises :class:`ParseError` when there is no header naming a GPU."""
    lines = _ANSI.sub("", text).split("\n")
    notes: list[str] = []
    header: list[str] | None = None
    rows: dict[str, list[str]] = {}
    legend: dict[str, str] = {}
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        words = line.split()
        legend_match = _LEGEND.match(line)
        if legend_match:
            legend[legend_match.group(1)] = legend_match.group(2)
            continue
        if header is None:
            devices = _leading_devices(words)
            if devices and any(_GPU.match(d) for d in devices) and line[:1].isspace():
                header = devices
                continue
            notes.append(note(line_no, line))
            continue
        name = words[0]
        cells = words[1 : len(header) + 1]
        if name in header and len(words) > len(header) and (_CELLS.issuperset(cells) or all(map(_CELL.match, cells))):
            rows[name] = cells
        elif not _is_legend_prose(line):
            notes.append(note(line_no, line))
    if header is None:
        raise ParseError(TOOL, 0, "", "no matrix header naming GPU0 (is this nvidia-smi topo -m output?)")
    relation: dict[tuple[int, str], str] = {}
    nic_columns = [(i, d) for i, d in enumerate(header) if not _GPU.match(d)]
    for name, cells in rows.items():
        m = _GPU.match(name)
        if not m:
            continue
        for i, dev in nic_columns:
            relation[(int(m.group(1)), legend.get(dev, dev))] = cells[i]
    gpus = tuple(int(m.group(1)) for d in header if (m := _GPU.match(d)))
    nics = tuple(legend.get(d, d) for _, d in nic_columns)
    return GpuTopology(gpus, nics, relation, tuple(notes))


def _leading_devices(words: list[str]) -> list[str]:
    out = []
    for w in words:
        if not _DEVICE.match(w) or w in ("CPU", "NUMA"):
            break
        out.append(w)
    return out


_PROSE = ("Legend:", "X    =", "SYS  =", "NODE =", "PHB  =", "PXB  =", "PIX  =", "NV#  =", "NIC Legend:", "SOC  =")


def _is_legend_prose(line: str) -> bool:
    text = line.strip()
    return text.startswith(_PROSE) or bool(re.match(r"^(X|SYS|NODE|PHB|PXB|PIX|NV#|SOC)\s+=", text))
