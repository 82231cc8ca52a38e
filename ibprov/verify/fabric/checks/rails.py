"""Rails: on a rail-optimized fat tree, every HCA port is cabled to a leaf of its own rail.

A rail crossed at the leaves (HCA 3 of a node on rail 4's leaf) is also a miswire (:mod:`.cabling`),
but the rail finding says what it breaks: rail-local traffic (NCCL's, rail-aware pairs) leaves its rail
and crosses the spines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ibprov.clusterspec.topology import RailPlan, rail_plan
from ibprov.clusterspec.types import Endpoint
from ibprov.report.model import Finding, Severity
from ibprov.verify.fabric.observation import Observation, PortRef
from ibprov.verify.fabric.plan import Plan, endpoint_name
from ibprov.verify.judge import Check

__all__ = ["CHECKS", "check"]


def _rails(plan: Plan) -> RailPlan | None:
    return rail_plan(plan.loaded.spec, plan.loaded.topology)


def _rail_ports(plan: Plan, _obs: Observation) -> Sequence[str]:
    rails = _rails(plan)
    return [] if rails is None else [endpoint_name(end) for end in rails.leaf_of]


def _planned(plan: Plan, obs: Observation, ref: PortRef) -> Endpoint | None:
    node = obs.nodes.get(ref.node_guid)
    return None if node is None else plan.endpoint(node, ref.port)


CROSSED = Check(
    "cabling.rail",
    "Each HCA port is on a leaf of its own rail (rail-optimized fat tree)",
    Severity.ERROR,
    "move the cable to the planned leaf port of its rail (rail-local traffic crosses the spines meanwhile)",
    _rail_ports,
    object_kind="the HCA port (none unless the fat tree is rail-optimized)",
)
CHECKS = (CROSSED,)


def check(plan: Plan, obs: Observation) -> list[Finding]:
    rails = _rails(plan)
    if rails is None:
        return []
    out: list[Finding] = []
    for seen in obs.links:
        a, b = _planned(plan, obs, seen.a), _planned(plan, obs, seen.b)
        for host, other in ((a, b), (b, a)):
            if host is None or other is None or host not in rails.leaf_of:
                continue
            mine, theirs = rails.port_rail[host], rails.leaf_rail.get(other.device)
            if other.hca is None and theirs is not None and theirs != mine:
                out.append(
                    CROSSED.finding(
                        endpoint_name(host),
                        f"{rails.rail_name(mine)} on {rails.leaf_of[host]}",
                        f"on {endpoint_name(other)}, a leaf of {rails.rail_name(theirs)}",
                    )
                )
    return out
