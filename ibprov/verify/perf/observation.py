"""What ``verify --perf`` saw: each node's probe, each perftest run, each TCP probe. Plain data, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ibprov.probes.perfprobe import NodeProbe
from ibprov.verify.perf.schedule import Pair

__all__ = ["NodeState", "PerfObservation", "PerfRun", "RunStatus", "TcpRun"]

RunStatus = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True)
class NodeState:
    reached: bool
    error: str = ""  # why the node could not be reached or probed
    probe: NodeProbe | None = None


@dataclass(frozen=True)
class PerfRun:
    """One perftest tool at one size between one pair: a measured value, or why there is none."""

    pair: Pair
    test: str  # PerfTest.name: "ib_write_bw 64KiB"
    round: int  # 1-based
    status: RunStatus
    value: float | None = None  # measured: microseconds (latency, average) or Gb/s (bandwidth, average)
    reason: str = ""  # failed or skipped: why
    attempts: int = 0  # perftest runs (a failed run is retried once)
    seconds: float = 0.0  # wall time of the attempts
    notes: tuple[str, ...] = ()  # the client's lines that are not perftest's report ("line N: TEXT"), last attempt


@dataclass(frozen=True)
class TcpRun:
    pair: Pair
    status: RunStatus
    gbps: float | None = None  # received, decimal Gb/s
    reason: str = ""
    over: str = ""  # "IPoIB ib0 (10.30.0.2)", "the twin's container network (10.89.0.5), not IPoIB"
    retransmits: int | None = None
    notes: tuple[str, ...] = ()  # lines of the client's output around iperf3's JSON report ("line N: TEXT")


@dataclass(frozen=True)
class PerfObservation:
    nodes: Mapping[str, NodeState] = field(default_factory=dict)
    runs: tuple[PerfRun, ...] = ()
    tcp: tuple[TcpRun, ...] = ()
    routes: str = ""  # where the schedule's routes came from (route-aware)
    interrupted: bool = False  # stopped by Ctrl-C: the runs not done are skipped
