"""``python3 -m mpi4py.bench ringtest`` (mpi4py 3.1, Debian's python3-mpi4py): one line (pure parser).

::

    time for 1000 loops = 0.00109904 seconds (2 processes, 8 bytes)

With two processes on two nodes the ring is a ping-pong: rank 0 sends, rank 1 receives and sends back, so
each loop is two one-way messages. :attr:`RingResult.latency_us` is half a round trip (as osu_latency
reports); :attr:`RingResult.pingpong_mbs` the bytes moved one way per second of ping-pong (lower than
osu_bw's streamed bandwidth, which keeps a window of messages in flight).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.probes._text import ParseError, lines

__all__ = ["RingResult", "parse"]

TOOL = "mpi4py.bench ringtest"
_LINE = re.compile(r"^time for (\d+) loops = ([0-9.eE+-]+) seconds \((\d+) processes, (\d+) bytes\)\s*$")


@dataclass(frozen=True)
class RingResult:
    loops: int
    seconds: float
    processes: int
    size: int  # bytes per message

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
    for line_no, line in lines(TOOL, text):
        m = _LINE.match(line.strip())
        if m is None:
            if line.lstrip().startswith("#"):
                continue
            raise ParseError(TOOL, line_no, line, "expected 'time for N loops = S seconds (P processes, B bytes)'")
        try:
            seconds = float(m.group(2))
        except ValueError:
            raise ParseError(TOOL, line_no, line, "the time is not a number") from None
        loops, procs = int(m.group(1)), int(m.group(3))
        if loops <= 0 or procs <= 0 or not seconds > 0:
            raise ParseError(TOOL, line_no, line, "no loop was timed")
        found = RingResult(loops, seconds, procs, int(m.group(4)))
    if found is None:
        raise ParseError(TOOL, 0, "", "no 'time for N loops' line")
    return found
