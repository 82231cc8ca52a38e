"""What ``verify --perf`` reports besides its checks: the schedule it used, every result (measured values only),
and the matrices and per-node details the HTML report draws."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ibprov.report.model import Cell, Matrix
from ibprov.verify.perf.checks import line_rate, run_object, run_verdict, tcp_object
from ibprov.verify.perf.observation import PerfObservation
from ibprov.verify.perf.plan import PerfPlan, PerfTest
from ibprov.verify.perf.schedule import Pair

__all__ = ["SCHEMA", "PerfFacts", "perf_facts"]

_COUNT = {"type": "integer", "minimum": 0}
_NUM_OR_NULL = {"type": ["number", "null"]}
_STR = {"type": "string"}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schedule", "nodes", "nodes_reached", "nodes_with_rdma", "runs", "tcp", "results", "tcp_results"],
    "additionalProperties": False,
    "properties": {
        "schedule": {
            "type": "object",
            "required": ["kind", "rounds", "pairs", "routes", "coverage_percent", "lower_bound"],
            "additionalProperties": False,
            "properties": {
                "kind": {"enum": ["quick", "all-pairs", "rail-aware", "route-aware"]},
                "rounds": _COUNT,
                "pairs": _COUNT,
                "routes": _STR,
                "coverage_percent": _NUM_OR_NULL,
                "lower_bound": {"type": ["integer", "null"]},
            },
        },
        "nodes": _COUNT,
        "nodes_reached": _COUNT,
        "nodes_with_rdma": _COUNT,
        "runs": {
            "type": "object",
            "required": ["ok", "failed", "skipped"],
            "additionalProperties": False,
            "properties": {"ok": _COUNT, "failed": _COUNT, "skipped": _COUNT},
        },
        "tcp": {
            "type": "object",
            "required": ["ok", "failed", "skipped"],
            "additionalProperties": False,
            "properties": {"ok": _COUNT, "failed": _COUNT, "skipped": _COUNT},
        },
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "client",
                    "server",
                    "test",
                    "round",
                    "status",
                    "value",
                    "unit",
                    "limit",
                    "reason",
                    "attempts",
                    "seconds",
                ],
                "additionalProperties": False,
                "properties": {
                    "client": _STR,
                    "server": _STR,
                    "test": _STR,
                    "round": _COUNT,
                    "status": {"enum": ["ok", "failed", "skipped"]},
                    "value": _NUM_OR_NULL,
                    "unit": {"enum": ["us", "Gb/s"]},
                    "limit": _NUM_OR_NULL,
                    "reason": _STR,
                    "attempts": _COUNT,
                    "seconds": {"type": "number", "minimum": 0},
                },
            },
        },
        "tcp_results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["client", "server", "status", "gbps", "retransmits", "over", "reason"],
                "additionalProperties": False,
                "properties": {
                    "client": _STR,
                    "server": _STR,
                    "status": {"enum": ["ok", "failed", "skipped"]},
                    "gbps": _NUM_OR_NULL,
                    "retransmits": {"type": ["integer", "null"]},
                    "over": _STR,
                    "reason": _STR,
                },
            },
        },
    },
}


@dataclass(frozen=True)
class PerfFacts:
    plan: PerfPlan
    obs: PerfObservation

    def _limit(self, test: PerfTest, pair: Pair) -> float | None:
        """The pass threshold of ``test`` for ``pair``: its latency limit, or fraction x the pair's line rate."""
        if test.kind == "lat":
            return test.limit_us
        rate, _ = line_rate(self.plan, self.obs, pair)
        return round(self.plan.bandwidth_fraction * rate, 3) if rate is not None else None

    def _counts(self) -> dict[str, Any]:
        runs = Counter(r.status for r in self.obs.runs)
        tcp = Counter(t.status for t in self.obs.tcp)
        reached = [n for n, st in self.obs.nodes.items() if st.reached]
        return {
            "nodes": len(self.plan.nodes),
            "nodes_reached": len(reached),
            "nodes_with_rdma": sum(1 for n in reached if (p := self.obs.nodes[n].probe) is not None and p.devices),
            "runs": {k: runs.get(k, 0) for k in ("ok", "failed", "skipped")},
            "tcp": {k: tcp.get(k, 0) for k in ("ok", "failed", "skipped")},
        }

    def as_dict(self) -> dict[str, Any]:
        s = self.plan.schedule
        tests = {t.name: t for t in self.plan.tests}
        return {
            "schedule": {
                "kind": s.kind,
                "rounds": len(s.rounds),
                "pairs": len(s.pairs),
                "routes": self.obs.routes or s.routes or "",
                "coverage_percent": round(s.coverage.percent, 1) if s.coverage is not None else None,
                "lower_bound": s.lower_bound,
            },
            **self._counts(),
            "results": [
                {
                    "client": str(r.pair.client),
                    "server": str(r.pair.server),
                    "test": r.test,
                    "round": r.round,
                    "status": r.status,
                    "value": r.value,
                    "unit": "us" if tests[r.test].kind == "lat" else "Gb/s",
                    "limit": self._limit(tests[r.test], r.pair),
                    "reason": r.reason,
                    "attempts": r.attempts,
                    "seconds": round(r.seconds, 3),
                }
                for r in self.obs.runs
            ],
            "tcp_results": [
                {
                    "client": t.pair.client.device,
                    "server": t.pair.server.device,
                    "status": t.status,
                    "gbps": t.gbps,
                    "retransmits": t.retransmits,
                    "over": t.over,
                    "reason": t.reason,
                }
                for t in self.obs.tcp
            ],
        }

    def lines(self) -> list[str]:
        s = self.plan.schedule
        head = f"{s.kind} schedule: {len(s.rounds)} round(s), {len(s.pairs)} pairs"
        if s.coverage is not None:
            head += f", link coverage {s.coverage.percent:.1f} %"
        d = self._counts()
        runs, tcp = d["runs"], d["tcp"]
        out = [
            head,
            f"{d['nodes_reached']} of {d['nodes']} nodes reached, {d['nodes_with_rdma']} with an RDMA device",
            f"perftest runs: {runs['ok']} measured, {runs['failed']} failed, {runs['skipped']} skipped",
        ]
        if self.plan.tcp.enabled:
            out.append(f"TCP probe: {tcp['ok']} measured, {tcp['failed']} failed, {tcp['skipped']} skipped")
        return out

    # ------------------------------------------------------------------------------------ HTML report
    def matrices(self) -> list[Matrix]:
        """One node x node matrix per test (clients are rows), and one for the TCP probe. A bandwidth matrix's
        colour scale is its lowest pair threshold."""
        out = []
        for test in self.plan.tests:
            unit = "us" if test.kind == "lat" else "Gb/s"
            cells: dict[tuple[str, str], Cell] = {}
            limits = []
            for run in self.obs.runs:
                if run.test != test.name:
                    continue
                verdict = run_verdict(self.plan, self.obs, run, test)
                status = "skipped" if verdict is None else "pass" if verdict else "fail"
                limit = self._limit(test, run.pair)
                text = f"{run_object(run.pair, test)}: " + (
                    f"{run.value:g} {unit}" if run.value is not None else (run.reason or run.status)
                )
                if limit is not None:
                    limits.append(limit)
                    if run.value is not None:
                        text += f" (limit {'<=' if test.kind == 'lat' else '>='} {limit:g} {unit})"
                key = (run.pair.client.device, run.pair.server.device)
                if key not in cells or status == "fail":
                    cells[key] = Cell(run.value, status, text)
            out.append(self._matrix(test.name, unit, cells, test.kind == "bw", min(limits, default=None)))
        if self.plan.tcp.enabled and self.obs.tcp:
            tcp_cells = {}
            low = self.plan.tcp.min_gbps
            for t in self.obs.tcp:
                status = {"ok": "pass", "failed": "fail"}.get(t.status, "skipped")
                if t.status == "ok" and low is not None and (t.gbps or 0) < low:
                    status = "fail"
                value = f"{t.gbps:g} Gb/s" if t.gbps is not None else t.reason
                tcp_cells[(t.pair.client.device, t.pair.server.device)] = Cell(
                    t.gbps, status, f"{tcp_object(t.pair)}: {value} over {t.over}"
                )
            out.append(self._matrix("TCP probe (iperf3)", "Gb/s", tcp_cells, True, low))
        return out

    def _matrix(
        self, title: str, unit: str, cells: dict[tuple[str, str], Cell], higher: bool, limit: float | None
    ) -> Matrix:
        rows = tuple(n for n in self.plan.nodes if any(k[0] == n for k in cells))
        cols = tuple(n for n in self.plan.nodes if any(k[1] == n for k in cells))
        return Matrix(title, unit, rows, cols, cells, higher, limit)

    def details(self) -> list[tuple[str, list[str]]]:
        """The schedule used, then one block per node: its probe and every run it took part in."""
        out = [("Schedule and coverage", self.plan.schedule.describe())]
        for node in self.plan.nodes:
            state = self.obs.nodes.get(node)
            lines = []
            if state is None:
                lines.append("not tried")
            elif not state.reached:
                lines.append(f"not reached: {state.error}")
            elif state.probe is not None:
                devices = ", ".join(state.probe.devices) or "none"
                lines.append(f"RDMA devices: {devices}")
                for (dev, port), p in sorted(state.probe.ports.items()):
                    lines.append(
                        f"{dev} port {port}: rate {p.rate or '?'}, state {p.state or '?'}, PCIe {p.pcie or '?'}"
                    )
            for run in self.obs.runs:
                if node in (run.pair.client.device, run.pair.server.device):
                    shown = f"{run.value:g}" if run.value is not None else run.reason
                    lines.append(f"round {run.round}: {run_object(run.pair, run.test)}: {run.status}: {shown}")
            for t in self.obs.tcp:
                if node in (t.pair.client.device, t.pair.server.device):
                    shown = f"{t.gbps:g} Gb/s over {t.over}" if t.gbps is not None else t.reason
                    lines.append(f"{tcp_object(t.pair)}: {t.status}: {shown}")
            out.append((node, lines))
        return out


def perf_facts(plan: PerfPlan, obs: PerfObservation) -> PerfFacts:
    return PerfFacts(plan, obs)
