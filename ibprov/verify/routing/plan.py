"""What the routing audit expects: the planned engine, switch tiers, names, LMC, whether routes use SLs, and
the balance limit (``acceptance.route_balance``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ibprov.clusterspec import LoadedSpec
from ibprov.identity.guids import GuidBook, planned_names

__all__ = ["SL_ENGINES", "TIER", "RoutingPlan", "build_plan"]

TIER = {"leaf": 0, "spine": 1, "core": 2}
TIER_NAMES = {0: "leaf", 1: "spine", 2: "core"}
SL_ENGINES = frozenset({"lash", "dfsssp", "nue", "torus-2QoS"})  # engines that route over SLs/VLs


@dataclass(frozen=True)
class RoutingPlan:
    cluster: str
    engines: tuple[str, ...]  # as listed: the first is the one OpenSM tries first
    qos: bool
    lmc: int
    tiers: Mapping[str, int]  # switch name -> tier (leaf 0, spine 1, core 2)
    switch_names: Mapping[int, str]  # node GUID -> planned name
    ca_names: Mapping[int, str]  # port GUID -> 'node/device:port'
    sm_nodes: tuple[str, ...]  # the nodes that run an SM, the planned master first
    balance_limit: float
    notes: tuple[str, ...] = ()
    switch_routes: bool = False  # the loop graph includes routes from CA ports to switch LIDs (SL 0)

    @property
    def engine(self) -> str:
        return self.engines[0]

    @property
    def uses_sls(self) -> bool:
        """Whether routes may use SLs other than 0: an SL-based engine, or QoS on (the policy gives SLs)."""
        return self.qos or bool(SL_ENGINES & set(self.engines))

    @property
    def tiered(self) -> bool:
        """A fat tree (two tiers at least): up*/down* applies."""
        return len(set(self.tiers.values())) > 1


def build_plan(loaded: LoadedSpec, book: GuidBook) -> RoutingPlan:
    spec = loaded.spec
    sm = spec.subnet_manager
    switch_names, ca_names = planned_names(loaded, book)
    missing = len(loaded.topology.switches) - len(switch_names)
    notes = (
        (f"{missing} planned switches have no known GUID: they are named by their NodeDescription",) if missing else ()
    )
    return RoutingPlan(
        cluster=spec.cluster.name,
        engines=tuple(sm.routing_engine),
        qos=spec.qos.enabled,
        lmc=sm.lmc,
        tiers={name: TIER.get(sw.role, 0) for name, sw in loaded.topology.switches.items()},
        switch_names=switch_names,
        ca_names=ca_names,
        sm_nodes=tuple(i.node for i in sorted(sm.instances, key=lambda i: -i.priority)),
        balance_limit=spec.acceptance.route_balance,
        notes=notes,
        switch_routes=spec.acceptance.credit_loops_with_switch_routes,
    )
