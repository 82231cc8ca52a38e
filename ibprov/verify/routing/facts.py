"""What ``verify --routing`` reports besides its checks: the engine in use, the routes traced, the switches-per-route
histogram, the credit-loop verdict and the balance table per tier (drawn as charts in the HTML report)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ibprov.report.model import BarChart
from ibprov.verify.routing.analysis import Analysis, BalanceGroup, switch_routes_in_graph
from ibprov.verify.routing.checks import Audited
from ibprov.verify.routing.plan import RoutingPlan

__all__ = ["SCHEMA", "RoutingFacts", "routing_facts"]

_COUNT = {"type": "integer", "minimum": 0}
_ROW = {
    "type": "object",
    "required": ["group", "ports", "dlids_min", "dlids_mean", "dlids_max", "routes_min", "routes_max", "busiest"],
    "additionalProperties": False,
    "properties": {
        "group": {"type": "string"},
        "ports": _COUNT,
        "dlids_min": _COUNT,
        "dlids_mean": {"type": "number", "minimum": 0},
        "dlids_max": _COUNT,
        "routes_min": _COUNT,
        "routes_max": _COUNT,
        "busiest": {"type": "string"},
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "engine_planned",
        "engine_used",
        "engine_log",
        "tables",
        "switches",
        "ca_ports",
        "pairs",
        "delivered",
        "switches_per_route",
        "nonminimal_pairs",
        "credit_loops",
        "sl_aware",
        "switch_routes",
        "sls_read",
        "vls",
        "balance",
    ],
    "additionalProperties": False,
    "properties": {
        "engine_planned": {"type": "array", "items": {"type": "string"}},
        "engine_used": {"type": ["string", "null"]},
        "engine_log": {"type": "string"},
        "tables": {"type": "string"},
        "switches": _COUNT,
        "ca_ports": _COUNT,
        "pairs": _COUNT,
        "delivered": _COUNT,
        "switches_per_route": {
            "type": "object",
            "patternProperties": {"^[0-9]+$": _COUNT},
            "additionalProperties": False,
        },
        "nonminimal_pairs": _COUNT,
        "credit_loops": _COUNT,
        "sl_aware": {"type": "boolean"},
        # the loop graph has the routes from CA ports to switch LIDs (management traffic), not only CA-to-CA
        "switch_routes": {"type": "boolean"},
        # the SLs the path records gave (null: not read: routes use SL 0 only, or the SA could not be asked)
        "sls_read": {"oneOf": [{"type": "null"}, {"type": "array", "items": _COUNT}]},
        "vls": {"type": "array", "items": _COUNT},
        "balance": {"type": "array", "items": _ROW},
    },
}


@dataclass(frozen=True)
class BalanceRow:
    group: str
    ports: int
    dlids_min: int
    dlids_mean: float
    dlids_max: int
    routes_min: int
    routes_max: int
    busiest: str

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "dlids_mean": round(self.dlids_mean, 2)}


@dataclass(frozen=True)
class RoutingFacts:
    engine_planned: tuple[str, ...]
    engine_used: str | None
    engine_log: str
    tables: str
    switches: int
    ca_ports: int
    pairs: int
    delivered: int
    switches_per_route: dict[int, int]
    nonminimal_pairs: int
    credit_loops: int
    sl_aware: bool  # the credit-loop verdict holds with the SLs and SL2VL tables as read
    switch_routes: bool  # the loop graph has the routes from CA ports to switch LIDs too
    sls_read: tuple[int, ...] | None  # the SLs the path records gave; None: not read
    vls: tuple[int, ...]  # the VLs of the per-VL graph; () when none was needed (no cycle on one VL)
    balance: tuple[BalanceRow, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "engine_planned": list(self.engine_planned),
            "engine_used": self.engine_used,
            "engine_log": self.engine_log,
            "tables": self.tables,
            "switches": self.switches,
            "ca_ports": self.ca_ports,
            "pairs": self.pairs,
            "delivered": self.delivered,
            "switches_per_route": {str(k): v for k, v in sorted(self.switches_per_route.items())},
            "nonminimal_pairs": self.nonminimal_pairs,
            "credit_loops": self.credit_loops,
            "sl_aware": self.sl_aware,
            "switch_routes": self.switch_routes,
            "sls_read": None if self.sls_read is None else list(self.sls_read),
            "vls": list(self.vls),
            "balance": [row.as_dict() for row in self.balance],
        }

    def _sl_words(self) -> str:
        if not self.sl_aware:
            return "one VL"
        sls = ", ".join(map(str, self.sls_read or ())) or "none"
        over = f"over VLs {', '.join(map(str, self.vls))}" if self.vls else "no cycle on one VL, so none on any"
        return f"SL-aware: SLs {sls} read; {over}"

    def lines(self) -> list[str]:
        used = self.engine_used or "unknown (log not read)"
        hops = ", ".join(f"{k}: {v}" for k, v in sorted(self.switches_per_route.items())) or "none"
        out = [
            f"engine {used} (planned {','.join(self.engine_planned)})",
            f"{self.delivered} of {self.pairs} CA pairs delivered through the tables of {self.switches} "
            f"switch{'es' if self.switches != 1 else ''}",
            f"switches per route: {hops}",
            f"{self.nonminimal_pairs} non-minimal",
            f"{self.credit_loops} credit loops ({self._sl_words()}; "
            f"{'CA-to-CA and CA-to-switch routes' if self.switch_routes else 'CA-to-CA routes only'})",
        ]
        for row in self.balance:
            out.append(
                f"{row.group}: {row.ports} ports, {row.dlids_min}..{row.dlids_max} destination LIDs "
                f"(mean {row.dlids_mean:.1f}), {row.routes_min}..{row.routes_max} routes"
            )
        return out

    def charts(self) -> list[BarChart]:
        charts = [
            BarChart(
                "CA pairs by switches on the route",
                "CA pairs",
                tuple(
                    (f"{k} switch{'es' if k != 1 else ''}", float(v))
                    for k, v in sorted(self.switches_per_route.items())
                ),
            )
        ]
        if self.balance:
            charts.append(
                BarChart(
                    "Destination LIDs per switch-facing port, by tier (most loaded port)",
                    "destination LIDs",
                    tuple((row.group, float(row.dlids_max)) for row in self.balance),
                    low=tuple(float(row.dlids_min) for row in self.balance),
                )
            )
        return charts


def _row(group: BalanceGroup, audited: Audited) -> BalanceRow:
    busiest = group.channels[group.dlids.index(max(group.dlids))]
    return BalanceRow(
        group.label,
        len(group.channels),
        min(group.dlids),
        group.mean,
        max(group.dlids),
        min(group.routes),
        max(group.routes),
        audited.model.channel_name(busiest),
    )


def routing_facts(plan: RoutingPlan, audited: Audited) -> RoutingFacts:
    an: Analysis = audited.analysis
    log = audited.obs.engine.log
    model = audited.model
    sls = audited.obs.sls
    paths = sls.paths if sls is not None else None
    sls_read = tuple(sorted({r.sl for r in paths.records})) if paths is not None else None
    return RoutingFacts(
        engine_planned=plan.engines,
        engine_used=log.engine if log is not None else None,
        engine_log=audited.obs.engine.where,
        tables=model.source,
        switches=model.switch_count,
        ca_ports=len(model.cas),
        pairs=an.audit.pairs,
        delivered=an.audit.delivered,
        switches_per_route=dict(an.audit.switches_per_route),
        nonminimal_pairs=an.audit.nonminimal_pairs,
        credit_loops=0 if an.sl_caveat else len(an.cycles.component_sizes),
        sl_aware=an.layered or (plan.uses_sls and sls_read is not None and not an.sl_caveat),
        sls_read=sls_read,
        switch_routes=switch_routes_in_graph(plan),
        vls=an.vls_used,
        balance=tuple(_row(g, audited) for g in an.groups if not g.judged and g.channels),
    )
