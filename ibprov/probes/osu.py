"""OSU micro-benchmarks ``osu_latency`` and ``osu_bw`` output (pure parser).

::

    # OSU MPI Latency Test v5.8
    # Size          Latency (us)
    0                       1.61
    ...
    # OSU MPI Bandwidth Test v5.8
    # Size      Bandwidth (MB/s)
    1                       3.88

The layouts in the field: 3.x to 6.x print the title, then ``# Size`` and one ``SIZE VALUE`` row per message
size; 7.x adds ``# Datatype: MPI_CHAR.`` (before or after ``# Size``), calls the latency column
``Avg Latency(us)`` and, with ``--validation``, adds a ``Validation`` column (``Pass``); a GPU build says
``# OSU MPI-CUDA Latency Test`` and ``# Send Buffer on DEVICE (D) ...``. Every ``#`` line after the title is
a header, read past; of a row the first value is taken (the average).

A line that is neither (a launcher's or the driver's message before the title, an Open MPI banner, a UCX log
line such as ``[1700000000.123456] [node01:1234 :0] ucp_context.c:1234 UCX  WARN  ...``, a loader warning:
the run merges stderr into stdout) is kept as a note on the result (``line N: TEXT``), never the end of the
output. Output without the title is not osu_latency's or osu_bw's; a title of another OSU test, a second
title, a row cut short (a size without its value) and a title without any row are a ParseError that says
what was expected and quotes the line.

Proven on (tests/fixtures/osu, one real capture each): OSU 5.0 (osu_latency, Cray libfabric), 5.8 (osu_latency
and osu_bw, Open MPI + UCX on Azure, a kernel message before the title), 6.2 (osu_bw, MPICH), 7.2 (osu_bw -d
cuda, the 7.x ``# Datatype`` header) and 7.5 (osu_latency --validation, loader warnings before the title).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ibprov.probes._text import ParseError, lines, note

__all__ = ["OsuResult", "parse"]

TOOL = "osu"
_TITLE = re.compile(r"^# OSU MPI(?:-\S+)? (Latency|Bandwidth) Test v(\S+)\s*$")
_OTHER_TITLE = re.compile(r"^# OSU ")
_ROW = re.compile(r"^\s*(\d+)\s+(\d+(?:\.\d+)?)(?:\s+.*)?$")
_SIZE_ONLY = re.compile(r"^\s*\d+\s*$")
_EXPECTED = "a '# OSU MPI Latency Test vX' or '# OSU MPI Bandwidth Test vX' title"


@dataclass(frozen=True)
class OsuResult:
    kind: Literal["latency", "bandwidth"]
    version: str
    unit: str  # "us" or "MB/s"
    rows: tuple[tuple[int, float], ...]  # (message size in bytes, value)
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not the benchmark's (warnings, banners)

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
    title: tuple[int, str] = (0, "")
    first: tuple[int, str] | None = None
    rows: list[tuple[int, float]] = []
    notes: list[str] = []
    for line_no, line in lines(TOOL, text, notes):
        first = first or (line_no, line)
        if m := _TITLE.match(line):
            if kind is not None:
                raise ParseError(TOOL, line_no, line, f"a second title after line {title[0]} (two outputs merged?)")
            kind = "latency" if m.group(1) == "Latency" else "bandwidth"
            version, title = m.group(2), (line_no, line)
        elif _OTHER_TITLE.match(line):
            raise ParseError(TOOL, line_no, line, f"not osu_latency or osu_bw output: expected {_EXPECTED}, got")
        elif kind is not None and line.startswith("#"):
            continue  # "# Size ...", "# Datatype: MPI_CHAR.", "# Send Buffer on DEVICE (D) ..."
        elif kind is not None and (m := _ROW.match(line)):
            rows.append((int(m.group(1)), float(m.group(2))))
        elif kind is not None and _SIZE_ONLY.match(line):
            raise ParseError(TOOL, line_no, line, "cut short: a message size without its value")
        else:
            notes.append(note(line_no, line))
    if kind is None:
        if first is None:
            raise ParseError(TOOL, 0, "", f"no output: expected {_EXPECTED}")
        raise ParseError(TOOL, first[0], first[1], f"not osu_latency or osu_bw output: expected {_EXPECTED}, got")
    if not rows:
        raise ParseError(TOOL, title[0], title[1], f"cut short: no result row after the osu {kind} title")
    return OsuResult(kind, version, "us" if kind == "latency" else "MB/s", tuple(rows), tuple(notes))
