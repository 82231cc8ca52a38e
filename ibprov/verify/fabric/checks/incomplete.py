"""Collection: every per-port query answered (a port that does not answer cannot be judged)."""

from __future__ import annotations

from ibprov.report.model import Finding, Severity
from ibprov.verify.fabric.checks.objects import fabric_only
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.plan import Plan, port_name
from ibprov.verify.judge import Check

__all__ = ["CHECKS", "check"]

INCOMPLETE = Check(
    "collect.incomplete",
    "Every port answered the queries verify sends",
    Severity.ERROR,
    "check the port's state and the M_Key setup, then run verify again",
    fabric_only,
    object_kind="the port",
)
CHECKS = (INCOMPLETE,)


def check(plan: Plan, obs: Observation) -> list[Finding]:
    out = []
    by_port: dict[str, list[str]] = {}
    for failure in obs.failures:
        name = port_name(plan, obs.nodes, failure.port) if failure.port is not None else "fabric"
        by_port.setdefault(name, []).append(f"{failure.tool}: {failure.reason}")
    for name, reasons in by_port.items():
        out.append(INCOMPLETE.finding(name, "an answer", "; ".join(reasons)))
    return out
