"""What ``verify --perf`` reports besides its checks: the schedule it used, every result (measured values only),
and the matrices and per-node details the HTML report draws."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ibprov.report.model import Cell, Matrix
from ibprov.verify.perf.checks import line_rate, run_object, run_verdict, tcp_object
from ibprov.verify.perf.observation import PerfObservation
from ibprov.verify.perf.plan import PerfPlan

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
                "required": ["client", "server", "test", "round", "status", "value", "unit", "limit", "reason"],
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
                },
            },
        },
        "tcp_results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["client", "server", "status", "gbps", "over", "reason"],
                "additionalProperties": False,
                "properties": {
                    "client": _STR,
                    "server": _STR,
                    "status": {"enum": ["ok", "failed", "skipped"]},
                    "gbps": _NUM_OR_NULL,
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

    def _limit(self, test_name: str, pair: Any) -> float | None:
        test = next(t for t in self.plan.tests if t.name == test_name)
        if test.kind == "lat":
            return test.limit_us
        rate, _ = line_rate(self.plan, self.obs, pair)
        return round(self.plan.bandwidth_fraction * rate, 3) if rate is not None else None

    def as_dict(self) -> dict[str, Any]:
        s = self.plan.schedule
        kinds = {t.name: t.kind for t in self.plan.tests}
        runs = Counter(r.status for r in self.obs.runs)
        tcp = Counter(t.status for t in self.obs.tcp)
        reached = [n for n, st in self.obs.nodes.items() if st.reached]
        return {
            "schedule": {
                "kind": s.kind,
                "rounds": len(s.rounds),
                "pairs": len(s.pairs),
                "routes": self.obs.routes or s.routes or "",
                "coverage_percent": round(s.coverage.percent, 1) if s.coverage is not None else None,
                "lower_bound": s.lower_bound,
            },
            "nodes": len(self.plan.nodes),
            "nodes_reached": len(reached),
            "nodes_with_rdma": sum(1 for n in reached if (p := self.obs.nodes[n].probe) is not None and p.devices),
            "runs": {k: runs.get(k, 0) for k in ("ok", "failed", "skipped")},
            "tcp": {k: tcp.get(k, 0) for k in ("ok", "failed", "skipped")},
            "results": [
                {
                    "client": str(r.pair.client),
                    "server": str(r.pair.server),
                    "test": r.test,
                    "round": r.round,
                    "status": r.status,
                    "value": r.value,
                    "unit": "us" if kinds.get(r.test) == "lat" else "Gb/s",
                    "limit": self._limit(r.test, r.pair),
                    "reason": r.reason,
                }
                for r in self.obs.runs
            ],
            "tcp_results": [
                {
                    "client": t.pair.client.device,
                    "server": t.pair.server.device,
                    "status": t.status,
                    "gbps": t.gbps,
                    "over": t.over,
                    "reason": t.reason,
                }
                for t in self.obs.tcp
            ],
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        s = d["schedule"]
        head = f"{s['kind']} schedule: {s['rounds']} round(s), {s['pairs']} pairs"
        if s["coverage_percent"] is not None:
            head += f", link coverage {s['coverage_percent']:.1f} %"
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
        """One node x node matrix per test (clients are rows), and one for the TCP probe."""
        out = []
        for test in self.plan.tests:
            cells: dict[tuple[str, str], Cell] = {}
            for run in self.obs.runs:
                if run.test != test.name:
                    continue
                verdict = run_verdict(self.plan, self.obs, run, test)
                status = "skipped" if verdict is None else "pass" if verdict else "fail"
                limit = self._limit(test.name, run.pair)
                unit = "us" if test.kind == "lat" else "Gb/s"
                text = f"{run_object(run.pair, test)}: " + (
                    f"{run.value:g} {unit}" if run.value is not None else (run.reason or run.status)
                )
                if limit is not None and run.value is not None:
                    text += f" (limit {'<=' if test.kind == 'lat' else '>='} {limit:g} {unit})"
                key = (run.pair.client.device, run.pair.server.device)
                if key not in cells or status == "fail":
                    cells[key] = Cell(run.value, status, text)
            out.append(self._matrix(test.name, "us" if test.kind == "lat" else "Gb/s", cells, test.kind == "bw"))
        if self.plan.tcp.enabled and self.obs.tcp:
            cells = {}
            for t in self.obs.tcp:
                status = {"ok": "pass", "failed": "fail"}.get(t.status, "skipped")
                if t.status == "ok" and self.plan.tcp.min_gbps is not None and (t.gbps or 0) < self.plan.tcp.min_gbps:
                    status = "fail"
                value = f"{t.gbps:g} Gb/s" if t.gbps is not None else t.reason
                cells[(t.pair.client.device, t.pair.server.device)] = Cell(
                    t.gbps, status, f"{tcp_object(t.pair)}: {value} over {t.over}"
                )
            out.append(self._matrix("TCP probe (iperf3)", "Gb/s", cells, True, self.plan.tcp.min_gbps))
        return out

    def _matrix(
        self, title: str, unit: str, cells: dict[tuple[str, str], Cell], higher: bool, limit: float | None = None
    ) -> Matrix:
        nodes = self.plan.nodes
        rows = tuple(n for n in nodes if any(k[0] == n for k in cells))
        cols = tuple(n for n in nodes if any(k[1] == n for k in cells))
        if limit is None:
            test = next((t for t in self.plan.tests if t.name == title), None)
            limit = test.limit_us if test is not None and test.kind == "lat" else None
            if test is not None and test.kind == "bw":
                limits = [self._limit(title, r.pair) for r in self.obs.runs if r.test == title]
                known = [x for x in limits if x is not None]
                limit = min(known) if known else None
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
