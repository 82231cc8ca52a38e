"""Trace every route of a :class:`~ibprov.routing.model.RoutingModel` at once, by destination.

InfiniBand forwards by destination LID alone, so for one destination the switches' entries form a graph in
which every switch has one way out: its route to that LID. The audit walks that graph once per destination,
in a compiled kernel (:mod:`ibprov.routing.kernel`), and gathers:

* **reachability** — a route ends at its destination's port (``delivered``), at a switch with no entry or
  an entry for a port without a cable (``dead end``, named by the switch and port), or never (a forwarding
  ``loop``: ibdm's 256-hop guard, exact here because the graph per destination has one way out per switch);
  judged from every switch with CA ports (every CA -> CA pair) to every CA LID and every switch LID;
* **hops** — the switches each CA -> CA route runs through, against the shortest path on the cabled topology
  (breadth-first from every destination switch): non-minimal routes are counted and sampled;
* **paths and destinations per channel** — how many CA -> CA routes, and how many destination LIDs, leave
  by each switch-to-switch port (ibdm's balance histograms, OpenSM's ``switchbalance``);
* **channel dependencies** — each route that enters a switch by channel ``a`` and leaves by ``b`` makes
  ``b`` a dependency of ``a``: the edges of the channel dependency graph on one VL
  (:mod:`ibprov.routing.cdg` looks for cycles; :mod:`ibprov.routing.layers` adds SLs and VLs);
* **up*/down*** — with switch tiers (the spec's: leaf 0, spine 1, core 2), every route is followed through
  three states (still climbing, descending, turned up after descending) and the routes that turned up
  after going down are counted at their destination and sampled where they turn.

Memory is the LFT itself, the channel tables and a few arrays per switch and thread (see docs/benchmarks.md
for the time and memory this takes on a 100,000-endpoint fat tree).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numba
import numpy as np
import numpy.typing as npt

from ibprov.routing.kernel import SAMPLES, trace
from ibprov.routing.model import RoutingModel

__all__ = ["Break", "RouteAudit", "TurnSample", "audit", "shortest_hops"]

_FAR = np.int16(32000)


@dataclass(frozen=True)
class Break:
    """A route that does not arrive: from ``source`` (a switch index) to ``lid``; ``kind`` is ``dead end`` or
    ``loop``; ``switch``/``port`` where it breaks (dead end) or a switch on the loop; ``pairs``: CA ports
    behind ``source`` (0: the source is a switch without CA ports)."""

    source: int
    lid: int
    kind: str
    switch: int
    port: int
    pairs: int


@dataclass(frozen=True)
class TurnSample:
    """A route for ``lid`` that turned up at ``switch`` after it had gone down."""

    lid: int
    switch: int


@dataclass
class RouteAudit:
    """What :func:`audit` found (switch and channel indices of the model)."""

    pairs: int = 0  # CA port -> CA LID pairs traced
    delivered: int = 0
    switches_per_route: dict[int, int] = field(default_factory=dict)  # switches on the route -> CA pairs
    breaks: list[Break] = field(default_factory=list)  # samples, CA destinations
    broken_pairs: int = 0
    broken_lids: set[int] = field(default_factory=set)
    switch_breaks: list[Break] = field(default_factory=list)  # samples, switch LIDs from CA switches
    broken_switch_lids: set[int] = field(default_factory=set)
    nonminimal_pairs: int = 0
    nonminimal: list[tuple[int, int, int, int]] = field(default_factory=list)  # (source, lid, hops, shortest)
    chan_routes: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    chan_dlids: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    edges: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.bool_))  # [chan, out port]
    edge_lid: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int32))  # an example
    updown_checked: bool = False
    updown_pairs: int = 0  # CA pairs whose route turned up after going down
    updown_samples: list[TurnSample] = field(default_factory=list)

    def edge_list(self, model: RoutingModel) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """The channel dependency edges as (from channel, to channel) arrays."""
        c1, port = np.nonzero(self.edges)
        nxt = model.chan_dst[c1]
        return c1.astype(np.int32), model.chan[nxt, port].astype(np.int32)


def shortest_hops(model: RoutingModel, targets: Sequence[int]) -> npt.NDArray[np.int16]:
    """[switch, j] -> the fewest switch-to-switch cables from the switch to ``targets[j]`` (breadth-first
    over the cables; 32000 where there is no path).

    Every target's search runs at once, on bit sets of targets (one bit per target, packed): each level ORs
    the neighbours' frontier along each port column, so a level costs the ports x switches x targets / 8
    bytes, not a search per target."""
    n, t = model.switch_count, len(targets)
    out = np.full((n, t), _FAR, dtype=np.int16)
    if not n or not t:
        return out
    start = np.zeros((n, t), dtype=np.bool_)
    start[np.asarray(targets, dtype=np.int64), np.arange(t)] = True
    out[start] = 0
    reach = np.packbits(start, axis=1)  # [switch, target bits]: found so far
    frontier = reach.copy()
    columns = [(np.flatnonzero(col >= 0), col[col >= 0]) for col in model.peer.T]
    level = 0
    while True:
        level += 1
        ahead = np.zeros_like(reach)
        for rows, nb in columns:
            if rows.size:
                ahead[rows] |= frontier[nb]
        new = ahead & ~reach
        if not new.any():
            return out
        reach |= new
        out[np.unpackbits(new, axis=1, count=t).view(np.bool_)] = level
        frontier = new


@dataclass(frozen=True)
class _Dests:
    lids: npt.NDArray[np.int64]
    switch: npt.NDArray[np.int64]  # the switch the destination hangs on (itself for a switch LID)
    port: npt.NDArray[np.int64]  # its port there (0 for a switch LID)
    is_ca: npt.NDArray[np.bool_]


def _destinations(model: RoutingModel) -> _Dests:
    lids, sw, port, is_ca = [], [], [], []
    for ca in model.cas:
        for lid in ca.lids:
            lids.append(lid)
            sw.append(ca.switch)
            port.append(ca.port)
            is_ca.append(True)
    for s, lid in enumerate(model.lids):
        if lid:
            lids.append(lid)
            sw.append(s)
            port.append(0)
            is_ca.append(False)
    return _Dests(
        np.array(lids, dtype=np.int64),
        np.array(sw, dtype=np.int64),
        np.array(port, dtype=np.int64),
        np.array(is_ca, dtype=np.bool_),
    )


def audit(
    model: RoutingModel,
    tiers: Sequence[int] | None = None,
    *,
    threads: int | None = None,
    switch_routes: bool = False,
) -> RouteAudit:
    """Trace every route of ``model`` (see the module docstring); ``tiers``: one per switch (0 lowest), to
    judge up*/down*; ``threads``: how many the compiled kernel uses (default numba's, one per core);
    ``switch_routes``: the channel dependencies include the routes from CA ports to switch LIDs (management
    traffic: PerfMgr and diag queries on SL 0), which ibdmchk and OpenSM's own checks leave out."""
    dests = _destinations(model)
    n = model.switch_count
    result = RouteAudit(
        chan_routes=np.zeros(model.channel_count, dtype=np.int64),
        chan_dlids=np.zeros(model.channel_count, dtype=np.int64),
        edges=np.zeros((model.channel_count, 256), dtype=np.bool_),
        edge_lid=np.zeros((model.channel_count, 256), dtype=np.int32),
        updown_checked=tiers is not None,
    )
    if not n or not len(dests.lids):
        return result
    targets = sorted({int(s) for s in dests.switch[dests.is_ca]})
    shortest = shortest_hops(model, targets)
    target_col = np.full(n, 0, dtype=np.int64)
    target_col[targets] = np.arange(len(targets))
    kind = np.zeros(model.channel_count, dtype=np.int8)  # per channel: +1 up a tier, -1 down
    if tiers is not None:
        tier_arr = np.asarray(tiers, dtype=np.int16)
        kind = np.sign(tier_arr[model.chan_dst] - tier_arr[model.chan_src]).astype(np.int8)
    workers = max(1, min(threads or numba.get_num_threads(), len(dests.lids)))
    chan = np.ascontiguousarray(model.chan[:, : model.ports])  # ports beyond the cabled ones have no channel
    (routes, dlids, edges, edge_lid, hist, stats, broken, brk, brk_n, sbrk, sbrk_n, nonmin, nonmin_n, turns,
     turns_n) = trace(
        model.lft, chan, model.chan_dst, dests.lids, dests.switch, dests.port, dests.is_ca,
        model.cas_on, kind, tiers is not None, shortest, target_col, workers, switch_routes,
    )  # fmt: skip
    result.chan_routes, result.chan_dlids, result.edge_lid = routes, dlids, edge_lid
    result.edges = np.unpackbits(edges, axis=1, bitorder="little").astype(np.bool_)
    result.switches_per_route = {int(h): int(v) for h, v in enumerate(hist.tolist()) if v}
    result.pairs, result.delivered, result.broken_pairs, result.nonminimal_pairs, result.updown_pairs = (
        int(v) for v in stats.tolist()
    )
    lids = dests.lids
    result.broken_lids = {int(lids[d]) for d in np.flatnonzero(broken & dests.is_ca)}
    result.broken_switch_lids = {int(lids[d]) for d in np.flatnonzero(broken & ~dests.is_ca)}
    result.breaks = _breaks(brk, brk_n, lids)
    result.switch_breaks = _breaks(sbrk, sbrk_n, lids)
    rows = sorted(
        (int(lids[d]), int(s), int(hops), int(short))
        for t in range(workers)
        for s, d, hops, short in nonmin[t, : nonmin_n[t]].tolist()
    )
    result.nonminimal = [(s, lid, hops, short) for lid, s, hops, short in rows][:SAMPLES]
    samples = sorted((int(lids[d]), int(s)) for t in range(workers) for d, s in turns[t, : turns_n[t]].tolist())
    result.updown_samples = [TurnSample(lid, s) for lid, s in samples][:SAMPLES]
    return result


def _breaks(found: npt.NDArray[np.int64], counts: npt.NDArray[np.int64], lids: npt.NDArray[np.int64]) -> list[Break]:
    rows = sorted(
        (int(lids[d]), int(s), int(kind), int(where), int(port), int(pairs))
        for t in range(found.shape[0])
        for s, d, kind, where, port, pairs in found[t, : counts[t]].tolist()
    )
    return [
        Break(s, lid, "dead end" if kind == 0 else "loop", where, port, pairs)
        for lid, s, kind, where, port, pairs in rows
    ][:SAMPLES]
