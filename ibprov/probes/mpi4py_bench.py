"""``python3 -m mpi4py.bench ringtest`` (mpi4py 3.1, Debian's python3-mpi4py): one line (pure parser).

::

    time for 1000 loops = 0.00109904 seconds (2 processes, 8 bytes)

With two processes on two nodes the ring is a ping-pong: rank 0 sends, rank 1 receives and sends back, so
each loop is two one-way messages. :attr:`RingResult.latency_us` is half a round trip (as osu_latency
reports); :attr:`RingResult.pingpong_mbs` the bytes moved one way per second of ping-pong (lower than
osu_bw's streamed bandwidth, which keeps a window of messages in flight).

The run merges mpirun's stderr into the output: every other line (a UCX log line such as
``[1700000000.123456] [node01:1234 :0] ucp_context.c:1014 UCX  WARN  ...``, an Open MPI banner or help text, a
loader warning) is kept as a note on the result (``line N: TEXT``), never the end of the output. Output without
the line is not the ringtest's (an mpirun failure), a ``time for`` line without its numbers was cut short: both
are a ParseError that says what was expected and quotes the line. When the line comes more than once, the last
one counts.

Proven on (tests/fixtures/mpi4py, each produced here by the real tools): mpi4py 3.1.4 under Debian 12's Open MPI
4.1.4 and UCX 1.13.1, over TCP (pml ob1) and over UCX with UCX's warnings merged in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ibprov.probes._text import ParseError, lines, note

__all__ = ["RingResult", "parse"]

TOOL = "mpi4py.bench ringtest"
_LINE = re.compile(r"^time for (\d+) loops = ([0-9.eE+-]+) seconds \((\d+) processes, (\d+) bytes\)\s*$")
_EXPECTED = "'time for N loops = S seconds (P processes, B bytes)'"


@dataclass(frozen=True)
class RingResult:
    loops: int
    seconds: float
    processes: int
    size: int  # bytes per message
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not the ringtest's (warnings, banners)

    @property
    def latency_us(self) -> float:
        """One-way time per message, in microseconds."""
        return self.seconds / (self.loops * self.processes) * 1e6

    @property
    def pingpong_mbs(self) -> float:
        """Bytes sent one way per second (MB/s, 10^6 bytes)."""
        return self.size * self.loops * self.processes / self.seconds / 1e6


def parse(text: str) -> RingResult:
    found: RingResult | None = None
    first: tuple[int, str] | None = None
    notes: list[str] = []
    for line_no, line in lines(TOOL, text, notes):
        first = first or (line_no, line)
        m = _LINE.match(line.strip())
        if m is None:
            if line.strip().startswith("time for "):
                raise ParseError(TOOL, line_no, line, f"cut short: expected {_EXPECTED}, got")
            notes.append(note(line_no, line))
            continue
        try:
            seconds = float(m.group(2))
        except ValueError:
            raise ParseError(TOOL, line_no, line, "the time is not a number") from None
        loops, procs = int(m.group(1)), int(m.group(3))
        if loops <= 0 or procs <= 0 or not seconds > 0:
            raise ParseError(TOOL, line_no, line, "no loop was timed")
        found = RingResult(loops, seconds, procs, int(m.group(4)))
    if found is None:
        if first is None:
            raise ParseError(TOOL, 0, "", f"no output: expected {_EXPECTED}")
        raise ParseError(TOOL, first[0], first[1], f"not mpi4py.bench ringtest output: expected {_EXPECTED}, got")
    return replace(found, notes=tuple(notes))
