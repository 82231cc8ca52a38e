"""OSU micro-benchmarks ``osu_latency`` and ``osu_bw`` output (pure parser).

::

    # OSU MPI Latency Test v5.8
    # Size          Latency (us)            (v7: "# Datatype: MPI_CHAR." and "# Size       Avg Latency(us)")
    0                       1.61
    ...
    # OSU MPI Bandwidth Test v5.8
    # Size      Bandwidth (MB/s)
    1                       3.88

Lines before the ``# OSU MPI`` title (warnings of the launcher or the driver) are read past; after it, every
line is a ``#`` header or ``SIZE VALUE`` (OSU 7 adds columns with -f: the first value is taken). A title
of another test, or no row at all: ParseError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ibprov.probes._text import ParseError, lines

__all__ = ["OsuResult", "parse"]

TOOL = "osu"
_TITLE = re.compile(r"^# OSU MPI(?:-\S+)? (Latency|Bandwidth) Test v(\S+)\s*$")
_ROW = re.compile(r"^\s*(\d+)\s+(\d+(?:\.\d+)?)(?:\s+.*)?$")


@dataclass(frozen=True)
class OsuResult:
    kind: Literal["latency", "bandwidth"]
    version: str
    unit: str  # "us" or "MB/s"
    rows: tuple[tuple[int, float], ...]  # (message size in bytes, value)

    def at(self, size: int) -> float | None:
        return next((v for s, v in self.rows if s == size), None)

    @property
    def largest(self) -> tuple[int, float]:
        return max(self.rows)

    @property
    def smallest(self) -> tuple[int, float]:
        return min(self.rows)


def parse(text: str) -> OsuResult:
    kind: Literal["latency", "bandwidth"] | None = None
    version = ""
    rows: list[tuple[int, float]] = []
    for line_no, line in lines(TOOL, text):
        if kind is None:
            if m := _TITLE.match(line):
                kind = "latency" if m.group(1) == "Latency" else "bandwidth"
                version = m.group(2)
            elif line.startswith("# OSU"):
                raise ParseError(TOOL, line_no, line, "not osu_latency or osu_bw output")
            continue
        if line.startswith("#"):
            continue
        m = _ROW.match(line)
        if m is None:
            raise ParseError(TOOL, line_no, line, "expected SIZE VALUE")
        rows.append((int(m.group(1)), float(m.group(2))))
    if kind is None:
        raise ParseError(TOOL, 0, "", "no '# OSU MPI Latency/Bandwidth Test' title")
    if not rows:
        raise ParseError(TOOL, 0, "", f"osu {kind} printed no result row")
    return OsuResult(kind, version, "us" if kind == "latency" else "MB/s", tuple(rows))
