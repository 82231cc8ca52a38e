"""What ``verify --mpi`` saw: per host its MPI configuration, environment, ``ucx_info -d`` and benchmarks;
and the MPI runs between the pair (plain data, buildable by hand in tests)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ibprov.probes.mpiconf import Tools
from ibprov.probes.ucx_info import UcxInfo

__all__ = ["HostMpi", "MpiObservation", "MpiRun", "RunStatus", "Transport"]

RunStatus = Literal["ok", "failed", "skipped"]
Transport = Literal["configured", "tcp"]  # the spec's configuration, or forced onto TCP (--contrast-tcp)


@dataclass(frozen=True)
class HostMpi:
    host: str
    error: str | None = None  # why the host could not be reached; None when it was
    ucx_conf: Mapping[str, str] | None = None  # None: no file
    mca: Mapping[str, Mapping[str, str] | None] = field(default_factory=dict)  # flavour -> settings (None: no file)
    nccl_conf: Mapping[str, str] | None = None  # None: no file
    env: Mapping[str, str] = field(default_factory=dict)  # UCX_* / OMPI_MCA_* / NCCL_* of a non-interactive login
    ucx: UcxInfo | None = None
    ucx_problem: str | None = None  # why there is no ucx_info -d to judge (not installed, unreadable)
    tools: Tools = field(default_factory=Tools)
    unreadable: Mapping[str, str] = field(default_factory=dict)  # file -> why it could not be read

    @property
    def reachable(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class MpiRun:
    """One MPI point-to-point run between the pair (latency and bandwidth), under mpirun."""

    transport: Transport
    benchmark: str  # "osu_latency + osu_bw" or "mpi4py.bench ringtest"
    status: RunStatus
    reason: str = ""  # why it failed or was skipped
    latency_us: float | None = None
    latency_size: int | None = None  # bytes
    bandwidth_mbs: float | None = None
    bandwidth_size: int | None = None
    bandwidth_kind: str = ""  # "streamed (osu_bw)" or "ping-pong"
    notes: tuple[str, ...] = ()  # "latency run: line N: TEXT": lines of the output that are not the benchmark's


@dataclass(frozen=True)
class MpiObservation:
    hosts: Mapping[str, HostMpi]
    runs: tuple[MpiRun, ...] = ()

    def run(self, transport: Transport) -> MpiRun | None:
        return next((r for r in self.runs if r.transport == transport), None)
