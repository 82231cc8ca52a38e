"""The audit of one observation against the plan (pure): the routes traced (:func:`ibprov.routing.audit.audit`),
the credit loops (SL-aware where the SLs and SL2VL tables were read), the switch tiers, and the balance groups.

Tiers are the spec's (leaf 0, spine 1, core 2) for every planned switch; a switch the plan does not name gets
its distance in cables from the nearest switch with CA ports.

SL-unaware and still exact when clean: every cycle over (channel, VL) projects onto a cycle over channels, so
a channel dependency graph without a cycle on one VL has none with any SL2VL mapping. Only a cycle found
without the SLs is uncertain where routes use SLs: it is then reported as a caveat, never as a loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ibprov.routing.audit import RouteAudit, audit
from ibprov.routing.cdg import Cycles, find_cycles
from ibprov.routing.layers import PAIR_HOP_BUDGET, VLS, layered_edges, route_hops
from ibprov.routing.model import RoutingModel
from ibprov.verify.routing.observation import RoutingObservation
from ibprov.verify.routing.plan import TIER_NAMES, RoutingPlan

__all__ = ["Analysis", "BalanceGroup", "analyse", "switch_routes_in_graph"]

UP, DOWN, LATERAL = "up", "down", "lateral"
_ARROW = {UP: "↑", DOWN: "↓", LATERAL: "→"}


@dataclass(frozen=True)
class BalanceGroup:
    """Switch-facing ports that should carry about the same number of destinations."""

    label: str  # "leaf ↑ (every leaf uplink)", "spine01 ↓ leaf03 (2 cables)"
    tier: int
    direction: str
    judged: bool  # a group the balance check judges (the tier table rows are shown only)
    channels: tuple[int, ...]
    dlids: tuple[int, ...]
    routes: tuple[int, ...]
    # what the check compares: destination LIDs per port (a fat tree: the engine spreads destinations over
    # uplinks), or CA-to-CA routes per channel (parallel cables of a direct network: a ring, mesh, torus,
    # hypercube, where the destinations a port leads to depend on its dimension, not on balance)
    by_routes: bool = False

    @property
    def load(self) -> tuple[int, ...]:
        return self.routes if self.by_routes else self.dlids

    @property
    def mean(self) -> float:
        return sum(self.load) / len(self.load) if self.load else 0.0


@dataclass
class Analysis:
    audit: RouteAudit
    tier: list[int]  # per switch index
    planned_tier: list[bool]  # whether the tier is the spec's
    cycles: Cycles
    layered: bool  # cycles are over (channel, VL): vertex = channel * 16 + VL
    sl_caveat: str  # why the credit-loop check is SL-unaware where routes use SLs ("" when it is not)
    vls_used: tuple[int, ...]
    groups: list[BalanceGroup] = field(default_factory=list)

    def vertex_name(self, model: RoutingModel, vertex: int) -> str:
        if self.layered:
            return f"{model.channel_name(vertex // VLS)} (VL {vertex % VLS})"
        return model.channel_name(vertex)

    def direction(self, model: RoutingModel, c: int) -> str:
        a, b = self.tier[model.chan_src[c]], self.tier[model.chan_dst[c]]
        return UP if b > a else DOWN if b < a else LATERAL


def _tiers(plan: RoutingPlan, model: RoutingModel) -> tuple[list[int], list[bool]]:
    n = model.switch_count
    known = [model.names[s] in plan.tiers for s in range(n)]
    level = [0 if model.cas_on[s] else -1 for s in range(n)]
    frontier = [s for s in range(n) if level[s] == 0]
    while frontier:
        nxt = []
        for s in frontier:
            for peer in model.peer[s].tolist():
                if peer >= 0 and level[peer] < 0:
                    level[peer] = level[s] + 1
                    nxt.append(peer)
        frontier = nxt
    tier = [plan.tiers[model.names[s]] if known[s] else max(level[s], 0) for s in range(n)]
    return tier, known


def _cycles(
    plan: RoutingPlan, obs: RoutingObservation, result: RouteAudit
) -> tuple[Cycles, bool, str, tuple[int, ...]]:
    model = obs.model
    src, dst = result.edge_list(model)
    flat = find_cycles(src, dst, model.channel_count)
    if not plan.uses_sls:
        return flat, False, "", (0,)
    why = ""
    sls = obs.sls
    if sls is None or sls.paths is None or sls.missing:
        why = "; ".join(sls.missing) if sls is not None and sls.missing else "the path SLs were not read"
    elif route_hops(model) > PAIR_HOP_BUDGET:
        why = f"the fabric has more CA pairs than the SL-aware walk takes ({PAIR_HOP_BUDGET:,} route hops)"
    if why or not flat.found or sls is None or sls.paths is None:
        return flat, False, why, ()
    paths, tables = sls.paths, sls.sl2vl

    def path_sl(slid: int, dlid: int) -> int | None:
        return paths.sl(slid, dlid)

    def sl2vl(switch: int, in_port: int, out_port: int, sl: int) -> int | None:
        table = tables.get((switch, out_port))
        return None if table is None else table.get((in_port, sl))

    graph = layered_edges(model, path_sl, sl2vl)  # switch-LID routes: their SLs are not read (see below)
    if graph.missing:
        return flat, False, "; ".join(graph.missing), ()
    return find_cycles(graph.src, graph.dst, model.channel_count * VLS), True, "", tuple(sorted(graph.vls))


def _groups(analysis: Analysis, model: RoutingModel, result: RouteAudit, direct: bool) -> Iterator[BalanceGroup]:
    """The tier table's rows (every port of a tier going one way), then the judged groups. On a fat tree: a
    tier's uplinks together (the engine spreads destinations over them), the parallel cables from a switch
    down to one neighbour, a switch's same-tier ports. On a direct network (``direct``: no tiers, every
    switch a leaf: rings, meshes, tori, hypercubes) only the parallel cables between two switches, by the
    routes each carries: there the destinations behind a port follow from its dimension, and a correct
    dimension-order or up*/down* routing leaves them uneven."""
    by_row: dict[tuple[int, str], list[int]] = {}
    by_judged: dict[tuple[str, int, str], list[int]] = {}
    for c in range(model.channel_count):
        s, d = int(model.chan_src[c]), int(model.chan_dst[c])
        way = analysis.direction(model, c)
        by_row.setdefault((analysis.tier[s], way), []).append(c)
        if direct:
            key = (f"{model.names[s]} → {model.names[d]}", s, LATERAL)
        elif way == UP:
            key = (TIER_NAMES.get(analysis.tier[s], f"tier {analysis.tier[s]}"), -1, UP)
        elif way == DOWN:
            key = (f"{model.names[s]} ↓ {model.names[d]}", s, DOWN)
        else:
            key = (f"{model.names[s]} → same tier", s, LATERAL)
        by_judged.setdefault(key, []).append(c)
    for (tier, way), chans in sorted(by_row.items()):
        name = TIER_NAMES.get(tier, f"tier {tier}")
        yield _group(f"{name} {_ARROW[way]}", tier, way, False, chans, result)
    for (label, s, way), chans in sorted(by_judged.items()):
        if len(chans) < 2:
            continue
        tier = analysis.tier[model.chan_src[chans[0]]] if s < 0 else analysis.tier[s]
        shown = f"every {label} uplink ({len(chans)} ports)" if way == UP else f"{label} ({len(chans)} cables)"
        if way == LATERAL:
            shown = f"{label} ({len(chans)} {'parallel cables' if direct else 'ports'})"
        yield _group(shown, tier, way, True, chans, result, by_routes=direct)


def _group(
    label: str, tier: int, way: str, judged: bool, chans: list[int], result: RouteAudit, by_routes: bool = False
) -> BalanceGroup:
    return BalanceGroup(
        label,
        tier,
        way,
        judged,
        tuple(chans),
        tuple(int(result.chan_dlids[c]) for c in chans),
        tuple(int(result.chan_routes[c]) for c in chans),
        by_routes,
    )


def switch_routes_in_graph(plan: RoutingPlan) -> bool:
    """Whether the loop graph has the routes from CA ports to switch LIDs: when the spec asks for them and the
    fabric's routes use SL 0 only (no SL engine, no QoS), so that management traffic shares VL 0 with the rest.
    With SLs in use, the SA gives those routes SLs of their own (lash and dfsssp route switch LIDs on their
    layers), which are not read: they are left out rather than put on a VL they may not use."""
    return plan.switch_routes and not plan.uses_sls


def analyse(plan: RoutingPlan, obs: RoutingObservation) -> Analysis:
    model = obs.model
    tier, known = _tiers(plan, model)
    result = audit(model, tier if plan.tiered else None, switch_routes=switch_routes_in_graph(plan))
    cycles, layered, caveat, vls = _cycles(plan, obs, result)
    analysis = Analysis(result, tier, known, cycles, layered, caveat, vls)
    analysis.groups = list(_groups(analysis, model, result, direct=not plan.tiered))
    return analysis
