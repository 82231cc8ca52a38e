"""What every check shares: its id, title, default severity and fix hint, and the objects it examines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ibprov.report.model import FABRIC, Finding, Severity
from ibprov.verify.observation import Observation
from ibprov.verify.plan import Plan, endpoint_name, port_name

__all__ = ["Check", "CheckFn", "fabric_only", "planned_ca_ports", "planned_cables", "seen_ports"]

CheckFn = Callable[[Plan, Observation], list[Finding]]
Objects = Callable[[Plan, Observation], Sequence[str]]


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    severity: Severity
    fix: str
    objects: Objects  # what the check examines (each passes unless it has a finding)

    def finding(
        self, obj: str, expected: str, observed: str, *, severity: Severity | None = None, fix: str | None = None
    ) -> Finding:
        return Finding(self.id, severity or self.severity, obj, expected, observed, fix or self.fix)


def fabric_only(_plan: Plan, _obs: Observation) -> Sequence[str]:
    return [FABRIC]


def planned_cables(plan: Plan, _obs: Observation) -> Sequence[str]:
    """Every planned cable, named by its anchor end (the CA end, else the lower switch tier)."""
    return [endpoint_name(plan.anchor(link)) for link in plan.links]


def planned_ca_ports(plan: Plan, _obs: Observation) -> Sequence[str]:
    return [endpoint_name(end) for end in plan.port_guids]


def seen_ports(plan: Plan, obs: Observation) -> Sequence[str]:
    """Every port with a link on the fabric (each end of each observed link)."""
    refs = sorted({ref for link in obs.links for ref in (link.a, link.b)})
    return [port_name(plan, obs.nodes, ref) for ref in refs]
