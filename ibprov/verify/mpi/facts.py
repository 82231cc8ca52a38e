"""What ``verify --mpi`` reports besides its checks: how many hosts answered and list verbs transports, the
benchmark, and each MPI run's measured values side by side (as configured, and forced onto TCP)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ibprov.verify.mpi.checks import TRANSPORT_LABEL
from ibprov.verify.mpi.observation import MpiRun

__all__ = ["SCHEMA", "MpiFacts"]

_COUNT = {"type": "integer", "minimum": 0}
_NUM_OR_NULL = {"type": ["number", "null"]}
_INT_OR_NULL = {"type": ["integer", "null"]}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["hosts", "hosts_reached", "hosts_with_verbs", "pair", "benchmark", "runs"],
    "additionalProperties": False,
    "properties": {
        "hosts": _COUNT,
        "hosts_reached": _COUNT,
        "hosts_with_verbs": _COUNT,
        "pair": {"type": ["array", "null"], "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
        "benchmark": {"type": ["string", "null"]},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["transport", "status", "reason", "latency_us", "latency_size", "bandwidth_mbs",
                             "bandwidth_size", "bandwidth_kind"],
                "additionalProperties": False,
                "properties": {
                    "transport": {"enum": ["configured", "tcp"]},
                    "status": {"enum": ["ok", "failed", "skipped"]},
                    "reason": {"type": "string"},
                    "latency_us": _NUM_OR_NULL,
                    "latency_size": _INT_OR_NULL,
                    "bandwidth_mbs": _NUM_OR_NULL,
                    "bandwidth_size": _INT_OR_NULL,
                    "bandwidth_kind": {"type": "string"},
                },
            },
        },
    },
}  # fmt: skip


def _measured(run: MpiRun) -> str:
    if run.status != "ok":
        return f"{run.status}: {run.reason}"
    parts = []
    if run.latency_us is not None:
        parts.append(f"{run.latency_us:.2f} us ({run.latency_size} B)")
    if run.bandwidth_mbs is not None:
        parts.append(f"{run.bandwidth_mbs:.0f} MB/s ({run.bandwidth_size} B, {run.bandwidth_kind})")
    return ", ".join(parts) or "no value measured"


@dataclass(frozen=True)
class MpiFacts:
    hosts: int
    hosts_reached: int
    hosts_with_verbs: int
    pair: tuple[str, str] | None
    benchmark: str | None
    runs: tuple[MpiRun, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "hosts": self.hosts,
            "hosts_reached": self.hosts_reached,
            "hosts_with_verbs": self.hosts_with_verbs,
            "pair": list(self.pair) if self.pair else None,
            "benchmark": self.benchmark,
            "runs": [
                {
                    "transport": r.transport,
                    "status": r.status,
                    "reason": r.reason,
                    "latency_us": r.latency_us,
                    "latency_size": r.latency_size,
                    "bandwidth_mbs": r.bandwidth_mbs,
                    "bandwidth_size": r.bandwidth_size,
                    "bandwidth_kind": r.bandwidth_kind,
                }
                for r in self.runs
            ],
        }

    def lines(self) -> list[str]:
        out = [
            f"{self.hosts_reached} of {self.hosts} hosts answered; "
            f"{self.hosts_with_verbs} list InfiniBand verbs transports in ucx_info -d"
        ]
        if self.pair is None:
            out.append("no MPI run: fewer than two nodes")
            return out
        pair = f"{self.pair[0]} <-> {self.pair[1]}"
        if self.benchmark:
            out.append(f"MPI point-to-point {pair} with {self.benchmark}")
        out += [f"{TRANSPORT_LABEL[r.transport]}: {_measured(r)}" for r in self.runs]
        return out
