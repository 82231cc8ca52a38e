"""What the fabric checks examine: the object lists each :class:`~ibprov.verify.judge.Check` declares."""

from __future__ import annotations

from collections.abc import Sequence

from ibprov.report.model import FABRIC
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.plan import Plan, endpoint_name, port_name

__all__ = ["fabric_only", "planned_ca_ports", "planned_cables", "planned_switches", "seen_ports"]


def fabric_only(_plan: Plan, _obs: Observation) -> Sequence[str]:
    return [FABRIC]


def planned_cables(plan: Plan, _obs: Observation) -> Sequence[str]:
    """Every planned cable, named by its anchor end (the CA end, else the lower switch tier)."""
    return [endpoint_name(plan.anchor(link)) for link in plan.links]


def planned_switches(plan: Plan, _obs: Observation) -> Sequence[str]:
    """Every planned switch with a planned cable, by name."""
    return sorted({end.device for link in plan.links for end in (link.a, link.b) if end.hca is None})


def planned_ca_ports(plan: Plan, _obs: Observation) -> Sequence[str]:
    return [endpoint_name(end) for end in plan.port_guids]


def seen_ports(plan: Plan, obs: Observation) -> Sequence[str]:
    """Every port with a link on the fabric (each end of each observed link)."""
    refs = sorted({ref for link in obs.links for ref in (link.a, link.b)})
    return [port_name(plan, obs.nodes, ref) for ref in refs]
