"""The routing checks: plan x (observation, analysis) -> findings. Pure: the analysis is computed once by the
section (:func:`~ibprov.verify.routing.analysis.analyse`) and handed in with the observation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ibprov.report.model import FABRIC, Finding, Severity
from ibprov.routing.audit import Break
from ibprov.routing.model import NO_ENTRY, RoutingModel
from ibprov.verify.judge import Check, CheckFamily
from ibprov.verify.routing.analysis import DOWN, UP, Analysis
from ibprov.verify.routing.observation import RoutingObservation
from ibprov.verify.routing.plan import TIER_NAMES, RoutingPlan

__all__ = ["FAMILIES", "Audited"]

SHOWN = 8  # routes, ports or cycle hops named in one finding


@dataclass(frozen=True)
class Audited:
    """The observation and its analysis: what every routing check reads."""

    obs: RoutingObservation
    analysis: Analysis

    @property
    def model(self) -> RoutingModel:
        return self.obs.model


Family = CheckFamily[RoutingPlan, Audited]


def _fabric(_plan: RoutingPlan, _a: Audited) -> Sequence[str]:
    return [FABRIC]


def _destinations(_plan: RoutingPlan, a: Audited) -> Sequence[str]:
    owner = a.model.lid_owner()
    return [f"LID {lid} ({owner[lid]})" for lid in sorted(owner)]


# ------------------------------------------------------------------------------------------------ engine
ENGINE = Check[RoutingPlan, Audited](
    "routing.engine",
    "The SM routed with the planned engine, with no fall-back",
    Severity.ERROR,
    "Read the SM's log where the engine failed (the line is quoted), fix what it needs (a fat tree for ftree, "
    "roots for updn, QoS and VLs for lash/dfsssp), or plan the engine the fabric can take; restart OpenSM "
    "(routing_engine is not re-read on SIGHUP)",
    lambda plan, _a: [f"routing engine (planned {','.join(plan.engines)})"],
    object_kind="the planned routing engine",
    skips=lambda plan, a: (
        {}
        if a.obs.engine.log is not None
        else {f"routing engine (planned {','.join(plan.engines)})": f"skipped: {a.obs.engine.where}"}
    ),
)


def _engine(plan: RoutingPlan, a: Audited) -> list[Finding]:
    log = a.obs.engine.log
    if log is None:
        return []
    obj = f"routing engine (planned {','.join(plan.engines)})"
    where = a.obs.engine.where
    last = log.last
    if last is not None and last.no_engine_line is not None:
        return [
            ENGINE.finding(
                obj, plan.engine, f"no engine configured the tables — {where}: {_quote(last.no_engine_line.text)}"
            )
        ]
    used, line = log.engine, log.engine_line
    if used is None or line is None:
        return [ENGINE.finding(obj, plan.engine, f"the log ({where}) names no engine that configured the tables")]
    failed = "; ".join(
        f"{_quote(f.line.text)}" + "".join(f" after {_quote(c.text)}" for c in f.causes[:1]) for f in log.failures[:3]
    )
    if used != plan.engine:
        how = "fell back to" if log.fell_back else "routed with"
        return [
            ENGINE.finding(
                obj,
                plan.engine,
                f"{how} {used} — {where} line {line.line_no}: {_quote(line.text)}"
                + (f"; failed: {failed}" if failed else ""),
            )
        ]
    return []


def _quote(text: str) -> str:
    """A log line without its timestamp and thread: ``'osm_ucast_mgr_process: minhop tables configured ...'``."""
    _, arrow, rest = text.partition("-> ")
    return repr((rest if arrow else text).strip())


# ------------------------------------------------------------------------------------------ reachability
REACHABLE = Check[RoutingPlan, Audited](
    "routing.reachable",
    "Every CA reaches every CA LID and every switch's LID: no dead end",
    Severity.ERROR,
    "The switch named has no entry (or an entry to an uncabled port) for the LID: check the cable the route "
    "needs and that the SM swept after it came up (sminfo, the SM's log); a static LFT file (-R file) needs "
    "the entry",
    _destinations,
    object_kind="each destination LID (a CA port or a switch)",
)
NO_LOOP = Check[RoutingPlan, Audited](
    "routing.lft_loop",
    "No route loops in the forwarding tables",
    Severity.ERROR,
    "Two or more switches send the LID to each other: the tables were loaded by hand (file engine) or an SM "
    "wrote part of them; re-route (a heavy sweep: OpenSM -e, or restart it) and check which SM is master",
    _destinations,
    object_kind="each destination LID",
)


def _route_breaks(plan: RoutingPlan, a: Audited) -> list[Finding]:
    model, result = a.model, a.analysis.audit
    owner = model.lid_owner()
    grouped: dict[tuple[int, str], list[Break]] = defaultdict(list)
    for brk in [*result.breaks, *result.switch_breaks]:
        grouped[(brk.lid, brk.kind)].append(brk)
    out = []
    for (lid, kind), breaks in sorted(grouped.items()):
        obj = f"LID {lid} ({owner.get(lid, 'unknown')})"
        sources = ", ".join(sorted({model.names[b.source] for b in breaks})[:SHOWN])
        ports = sum(b.pairs for b in breaks)
        first = breaks[0]
        if kind == "dead end":
            entry = _entry(model, first.switch, first.port)
            where = f"dead end at {model.names[first.switch]} ({entry})"
            out.append(
                REACHABLE.finding(
                    obj, "delivered from every switch with CA ports", f"{where}, from {sources} ({ports} CA ports)"
                )
            )
        else:
            path, _ = model.walk(first.source, lid, limit=2 * model.switch_count + 2)
            ring = _loop_of(model, path)
            out.append(NO_LOOP.finding(obj, "delivered", f"forwarding loop {ring}, from {sources} ({ports} CA ports)"))
    return out


def _entry(model: RoutingModel, switch: int, port: int) -> str:
    """What a dead end's entry points at."""
    if port == NO_ENTRY:
        return "no entry"
    if port == 0:
        return "port 0, the switch itself"
    ca = model.ca_at.get((switch, port))
    if ca is not None:
        return f"port {port}, to {model.cas[ca].name}"
    return f"port {port}, which has no cable to a switch"


def _loop_of(model: RoutingModel, path: list[int]) -> str:
    """The channels of a forwarding loop, each as its cable (``leaf02:3 → spine01:2``), then "round again"."""
    seen: dict[int, int] = {}
    for i, c in enumerate(path):
        if c in seen:
            loop = path[seen[c] : i]
            return ", ".join(model.channel_name(x) for x in loop) + " (and round again)"
        seen[c] = i
    return ", ".join(model.channel_name(c) for c in path[:SHOWN])


# ------------------------------------------------------------------------------------------ credit loops
CREDIT_LOOPS = Check[RoutingPlan, Audited](
    "routing.credit_loops",
    "No credit loop: the channel dependency graph over (port, VL) has no cycle",
    Severity.ERROR,
    "Route with an engine that is deadlock-free on this topology: updn with roots, or ftree on a fat tree; "
    "dfsssp, lash or nue with QoS on a topology with cycles (rings, tori); minhop, sssp and dor are not",
    _fabric,
    object_kind="the fabric's channel dependency graph",
    caveats=lambda plan, a: (
        {
            FABRIC: f"SL-unaware: {a.analysis.sl_caveat}; a cycle on one VL may be broken by "
            "the VLs the SLs map to, so it is not reported as a loop"
        }
        if a.analysis.sl_caveat and a.analysis.cycles.found
        else {}
    ),
)


def _credit_loops(plan: RoutingPlan, a: Audited) -> list[Finding]:
    an, model = a.analysis, a.model
    if not an.cycles.found or an.sl_caveat:
        return []
    out = []
    for k, (size, cycle) in enumerate(zip(an.cycles.component_sizes, an.cycles.cycles, strict=False), 1):
        # each channel as the cable it crosses, port to the peer's port, as routing.balance writes channels;
        # the last channel ends where the first starts
        hops = [an.vertex_name(model, v) for v in cycle]
        shown = ", ".join(hops[:SHOWN]) + (", …" if len(hops) > SHOWN else "")
        vl = "" if an.layered else " (VL 0)"
        out.append(
            CREDIT_LOOPS.finding(
                FABRIC,
                "no cycle",
                f"cycle {k} of {len(an.cycles.component_sizes)}: {shown}{vl}; {len(cycle)} channels on the cycle, "
                f"{size} in its strongly connected component",
            )
        )
    return out


# ------------------------------------------------------------------------------------------ up*/down*
UPDOWN = Check[RoutingPlan, Audited](
    "routing.updown",
    "On a fat tree, no route turns up after going down (up*/down*)",
    Severity.ERROR,
    "Route the fat tree with ftree or updn (with roots at the top tier) and check that the SM did not fall "
    "back to minhop; a cable between two switches of one tier breaks the tree",
    _fabric,
    object_kind="the fabric's CA-to-CA routes",
    skips=lambda plan, _a: {} if plan.tiered else {FABRIC: "skipped: the plan has one switch tier (not a fat tree)"},
)
TIERS = Check[RoutingPlan, Audited](
    "routing.tiers",
    "Every switch-to-switch cable joins adjacent tiers of the spec",
    Severity.ERROR,
    "Cable the switch to a switch of the next tier, or give the switches the roles they have (leaf, spine, core)",
    lambda plan, a: (
        [a.model.channel_name(c) for c in range(a.model.channel_count) if _forward(a.model, c)] if plan.tiered else []
    ),
    object_kind="each switch-to-switch cable",
)


def _forward(model: RoutingModel, c: int) -> bool:
    """One direction of each cable (its lower port name first)."""
    return (model.names[model.chan_src[c]], int(model.chan_port[c])) < (
        model.names[model.chan_dst[c]],
        int(model.chan_dport[c]),
    )


def _updown(plan: RoutingPlan, a: Audited) -> list[Finding]:
    if not plan.tiered:
        return []
    model, an = a.model, a.analysis
    out = []
    for c in range(model.channel_count):
        s, d = int(model.chan_src[c]), int(model.chan_dst[c])
        if not _forward(model, c) or not (an.planned_tier[s] and an.planned_tier[d]):
            continue
        if abs(an.tier[s] - an.tier[d]) != 1:
            names = f"{TIER_NAMES.get(an.tier[s], an.tier[s])} and {TIER_NAMES.get(an.tier[d], an.tier[d])}"
            out.append(TIERS.finding(model.channel_name(c), "a cable between adjacent tiers", f"joins a {names}"))
    result = an.audit
    if result.updown_pairs:
        shown = "; ".join(_turn_route(a, t.lid, t.switch) for t in result.updown_samples[:3])
        out.append(
            UPDOWN.finding(
                FABRIC,
                "every route climbs, then descends",
                f"{result.updown_pairs} CA pairs turn up after going down, e.g. {shown}",
            )
        )
    return out


def _turn_route(a: Audited, lid: int, switch: int) -> str:
    """One route for ``lid`` through ``switch`` that descended before it, drawn with ↑ and ↓."""
    model, an = a.model, a.analysis
    owner = model.lid_owner()
    for source in range(model.switch_count):
        if not model.cas_on[source]:
            continue
        path, end = model.walk(source, lid)
        if end != "delivered":
            continue
        ways = [an.direction(model, c) for c in path]
        at = [int(model.chan_src[c]) for c in path]
        for i in range(len(path)):
            if at[i] == switch and ways[i] == UP and DOWN in ways[:i]:
                steps = model.names[source]
                for c2, way in zip(path, ways, strict=True):
                    arrow = "↑" if way == UP else "↓" if way == DOWN else "→"
                    steps += f" {arrow} {model.names[model.chan_dst[c2]]}"
                return f"to LID {lid} ({owner.get(lid, '?')}): {steps}"
    return f"to LID {lid} at {model.names[switch]}"


# ------------------------------------------------------------------------------------------ minimal
MINIMAL = Check[RoutingPlan, Audited](
    "routing.minimal",
    "Routes take the fewest hops the cabling allows",
    Severity.WARNING,
    "Non-minimal routes are expected with updn on topologies with cycles (the price of deadlock freedom) and "
    "around a lost cable; elsewhere check the engine and that the SM re-routed after the last cabling change",
    _fabric,
    object_kind="the fabric's CA-to-CA routes",
)


def _minimal(plan: RoutingPlan, a: Audited) -> list[Finding]:
    result, model = a.analysis.audit, a.model
    if not result.nonminimal_pairs:
        return []
    owner = model.lid_owner()
    shown = "; ".join(
        f"{model.names[s]} to LID {lid} ({owner.get(lid, '?')}): {hops} switches, {short} at least"
        for s, lid, hops, short in result.nonminimal[:3]
    )
    return [
        MINIMAL.finding(
            FABRIC,
            "every route minimal",
            f"{result.nonminimal_pairs} of {result.pairs} CA pairs take longer routes, e.g. {shown}",
        )
    ]


# ------------------------------------------------------------------------------------------ balance
BALANCE = Check[RoutingPlan, Audited](
    "routing.balance",
    "Destinations spread evenly over switch-facing ports (a fat tree), routes over parallel cables (a direct "
    "network: ring, mesh, torus, hypercube) (acceptance.route_balance)",
    Severity.ERROR,
    "A port carrying many more destinations than its peers is a hot spot: look for a lost or miscabled "
    "uplink (verify --fabric), a switch the engine ranked wrongly, or an engine that does not balance (minhop "
    "on a fat tree); the limit is acceptance.route_balance",
    lambda plan, a: [g.label for g in a.analysis.groups if g.judged],
    object_kind="each group of ports that should carry alike (a tier's uplinks, parallel cables, a switch's "
    "same-tier ports; on a direct network: parallel cables only)",
)


DIRECT_FIX = (
    "Parallel cables between two switches should carry alike: check each cable's width and speed and its "
    "error counters (verify --fabric), and that the engine spreads routes over parallel links; the limit is "
    "acceptance.route_balance"
)


def _balance(plan: RoutingPlan, a: Audited) -> list[Finding]:
    model, out = a.model, []
    for g in a.analysis.groups:
        if not g.judged or not g.load:
            continue
        mean, top, low = g.mean, max(g.load), min(g.load)
        what, per = ("routes", "cable") if g.by_routes else ("destination LIDs", "port")
        if top > plan.balance_limit * mean and top - mean > 1:
            hi = g.channels[g.load.index(top)]
            lo = g.channels[g.load.index(low)]
            out.append(
                BALANCE.finding(
                    g.label,
                    f"at most {plan.balance_limit:g} x the mean ({mean:.1f} {what} per {per})",
                    f"{model.channel_name(hi)} carries {top} {what} ({top / mean:.2f} x the mean); "
                    f"least loaded {model.channel_name(lo)}: {low}",
                    fix=DIRECT_FIX if g.by_routes else None,
                )
            )
    return out


FAMILIES: tuple[Family, ...] = (
    CheckFamily(_engine, (ENGINE,)),
    CheckFamily(_route_breaks, (REACHABLE, NO_LOOP)),
    CheckFamily(_credit_loops, (CREDIT_LOOPS,)),
    CheckFamily(_updown, (UPDOWN, TIERS)),
    CheckFamily(_minimal, (MINIMAL,)),
    CheckFamily(_balance, (BALANCE,)),
)
