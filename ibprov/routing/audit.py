"""Trace every route of a :class:`~ibprov.routing.model.RoutingModel` at once, by destination.

InfiniBand forwards by destination LID alone, so for one destination the switches' entries form a graph in
which every switch has one way out: its route to that LID. The audit takes the destinations in blocks and,
for a block, works on the [switch x destination] arrays of out port, channel, next switch and distance:

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

Every array is per block, so memory is the LFT itself plus a few [switch x block] arrays (see
docs/benchmarks.md for the time and memory this takes on a 100,000-endpoint fat tree).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ibprov.routing.model import NO_ENTRY, RoutingModel

__all__ = ["Break", "RouteAudit", "TurnSample", "audit", "shortest_hops"]

_FAR = np.int16(32000)
SAMPLES = 100  # samples kept of each kind of problem


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
    hop_histogram: dict[int, int] = field(default_factory=dict)  # switches on the route -> CA pairs
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


def _block_size(switches: int) -> int:
    return int(max(64, min(4096, 4_000_000 // max(1, switches))))


def audit(model: RoutingModel, tiers: Sequence[int] | None = None, *, block: int | None = None) -> RouteAudit:
    """Trace every route of ``model`` (see the module docstring); ``tiers``: one per switch (0 lowest), to
    judge up*/down*."""
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
    target_col = np.full(n, -1, dtype=np.int64)
    target_col[targets] = np.arange(len(targets))
    tier_arr = np.asarray(tiers, dtype=np.int16) if tiers is not None else None
    size = block or _block_size(n)
    for start in range(0, len(dests.lids), size):
        stop = min(start + size, len(dests.lids))
        _Block(model, result, dests, slice(start, stop), shortest, target_col, tier_arr).run()
    return result


class _Block:
    """One block of destinations (columns) against every switch (rows)."""

    def __init__(
        self,
        model: RoutingModel,
        result: RouteAudit,
        dests: _Dests,
        cols: slice,
        shortest: npt.NDArray[np.int16],
        target_col: npt.NDArray[np.int64],
        tiers: npt.NDArray[np.int16] | None,
    ) -> None:
        self.m, self.r = model, result
        self.lids = dests.lids[cols]
        self.tsw, self.tport, self.is_ca = dests.switch[cols], dests.port[cols], dests.is_ca[cols]
        self.shortest, self.target_col, self.tiers = shortest, target_col, tiers

    def run(self) -> None:
        m = self.m
        n, b = m.switch_count, len(self.lids)
        inside = self.lids <= m.top_lid
        ports = np.full((n, b), NO_ENTRY, dtype=np.uint8)
        ports[:, inside] = m.lft[:, self.lids[inside]]
        rows = np.arange(n)[:, None]
        final = (rows == self.tsw[None, :]) & (ports == self.tport[None, :])
        ch = m.chan[rows, ports]
        ch[final] = -1
        nxt = np.append(m.chan_dst, np.int32(-1))[ch]  # -1 (no channel) indexes the appended -1
        dist = np.where(final, np.int16(0), _FAR).astype(np.int16)
        self.ports, self.ch, self.nxt, self.dist = ports, ch, nxt, dist
        self._distances()
        sources = m.cas_on.astype(np.int64)[:, None] - ((rows == self.tsw[None, :]) & self.is_ca[None, :])
        weight = np.where(m.cas_on[:, None] > 0, sources, 0)
        self._reach(weight)
        ca_weight = np.where(self.is_ca[None, :], weight, 0)
        self._hops(ca_weight)
        self._flows(ca_weight)

    def _distances(self) -> None:
        """Switches from each switch to each destination (0 at the destination's switch), _FAR where the
        route never arrives."""
        ch, nxt, dist = self.ch, self.nxt, self.dist
        b = dist.shape[1]
        pending = np.flatnonzero(ch >= 0)
        flat_dist = dist.reshape(-1)
        step = nxt.reshape(-1)[pending] * b + pending % b  # the cell each pending cell's route goes on to
        while pending.size:
            ahead = flat_dist[step]
            done = ahead < _FAR
            if not done.any():
                break
            flat_dist[pending[done]] = ahead[done] + 1
            keep = ~done
            pending, step = pending[keep], step[keep]
        self.unresolved = pending

    def _ends(self) -> npt.NDArray[np.int64]:
        """[switch, col] -> where the route breaks (the flat index of the dead-end switch and column), -1 for
        a loop or a route that arrives."""
        ch, nxt, final, b = self.ch, self.nxt, self.dist == 0, self.dist.shape[1]
        end = np.full(ch.size, -1, dtype=np.int64)
        dead = np.flatnonzero((ch.reshape(-1) < 0) & ~final.reshape(-1))
        end[dead] = dead
        pending = self.unresolved
        flat_nxt = nxt.reshape(-1)
        while pending.size:
            ahead = end[flat_nxt[pending] * b + pending % b]
            done = ahead >= 0
            if not done.any():
                break
            end[pending[done]] = ahead[done]
            pending = pending[~done]
        return end

    def _reach(self, weight: npt.NDArray[np.int64]) -> None:
        r, m = self.r, self.m
        b = self.dist.shape[1]
        is_source = m.cas_on > 0
        lost = (self.dist >= _FAR) & is_source[:, None]
        pairs = int(weight[:, self.is_ca].sum())
        r.pairs += pairs
        if not lost.any():
            r.delivered += pairs
            return
        end = self._ends()
        srcs, cols = np.nonzero(lost)
        for s, c in zip(srcs.tolist(), cols.tolist(), strict=True):
            lid = int(self.lids[c])
            e = int(end[s * b + c])
            if e >= 0:
                where, port, kind = e // b, int(self.ports[e // b, c]), "dead end"
            else:
                where, port, kind = self._on_loop(s, c), 0, "loop"
            sample = Break(s, lid, kind, where, port, int(weight[s, c]))
            if self.is_ca[c]:
                r.broken_pairs += sample.pairs
                r.broken_lids.add(lid)
                if len(r.breaks) < SAMPLES:
                    r.breaks.append(sample)
            else:
                r.broken_switch_lids.add(lid)
                if len(r.switch_breaks) < SAMPLES:
                    r.switch_breaks.append(sample)
        r.delivered += int(np.where(lost, 0, weight)[:, self.is_ca].sum())

    def _on_loop(self, s: int, c: int) -> int:
        seen: set[int] = set()
        x = s
        while x not in seen and x >= 0:
            seen.add(x)
            x = int(self.nxt[x, c])
        return x

    def _hops(self, weight: npt.NDArray[np.int64]) -> None:
        r = self.r
        ok = (self.dist < _FAR) & (weight > 0)
        srcs, cols = np.nonzero(ok)
        if not srcs.size:
            return
        d = self.dist[srcs, cols].astype(np.int64)
        w = weight[srcs, cols]
        counts = np.bincount(d, weights=w)
        for hops, count in enumerate(counts.tolist()):
            if count:
                r.hop_histogram[hops + 1] = r.hop_histogram.get(hops + 1, 0) + int(count)
        best = self.shortest[srcs, self.target_col[self.tsw[cols]]]
        longer = d > best
        if longer.any():
            r.nonminimal_pairs += int(w[longer].sum())
            for s, c, hops, short in zip(
                srcs[longer][:SAMPLES].tolist(),
                cols[longer][:SAMPLES].tolist(),
                d[longer][:SAMPLES].tolist(),
                best[longer][:SAMPLES].tolist(),
                strict=True,
            ):
                if len(r.nonminimal) < SAMPLES:
                    r.nonminimal.append((s, int(self.lids[c]), hops + 1, int(short) + 1))

    def _flows(self, weight: npt.NDArray[np.int64]) -> None:
        """Routes per channel (propagated from the sources along the routes, farthest first), destinations
        per channel, the channel dependencies and the up*/down* states."""
        m, r = self.m, self.r
        dist, ch, nxt = self.dist, self.ch, self.nxt
        n, b = dist.shape
        ok = (dist < _FAR) & (dist > 0)
        if not ok.any():
            return
        paths = np.where(ok, weight, 0).astype(np.int64, copy=False)
        tiers = self.tiers
        if tiers is not None:
            climb = paths.copy()  # routes still climbing
            down = np.zeros(paths.shape, dtype=paths.dtype)  # routes that have gone down (calloc'd: no pass)
            bad = np.zeros(paths.shape, dtype=paths.dtype)  # routes that turned up after going down
            kind = np.zeros(m.channel_count, dtype=np.int8)
            kind[tiers[m.chan_dst] > tiers[m.chan_src]] = 1
            kind[tiers[m.chan_dst] < tiers[m.chan_src]] = -1
        top = int(dist[ok].max())
        flat_paths = paths.reshape(-1)
        for level in range(top, 0, -1):
            idx = np.flatnonzero((dist == level).reshape(-1))
            idx = idx[flat_paths[idx] > 0]
            if not idx.size:
                continue
            col = idx % b
            to = nxt.reshape(-1)[idx] * b + col
            np.add.at(flat_paths, to, flat_paths[idx])
            if tiers is not None:
                self._turns(idx, to, col, kind, climb.reshape(-1), down.reshape(-1), bad.reshape(-1))
        used = ok & (paths > 0)
        c_used = ch[used]
        r.chan_routes += np.bincount(c_used, weights=paths[used], minlength=m.channel_count).astype(np.int64)
        r.chan_dlids += np.bincount(c_used, minlength=m.channel_count)
        onward = used & (dist >= 2)
        srcs, cols = np.nonzero(onward)
        if srcs.size:
            c1 = ch[srcs, cols]
            p2 = self.ports[nxt[srcs, cols], cols]
            r.edges[c1, p2] = True
            r.edge_lid[c1, p2] = self.lids[cols]
        if tiers is not None:
            arrived = (dist == 0) & self.is_ca[None, :]
            r.updown_pairs += int(bad[arrived].sum())
        _ = n

    def _turns(
        self,
        idx: npt.NDArray[np.int64],
        to: npt.NDArray[np.int64],
        col: npt.NDArray[np.int64],
        kind: npt.NDArray[np.int8],
        climb: npt.NDArray[np.int64],
        down: npt.NDArray[np.int64],
        bad: npt.NDArray[np.int64],
    ) -> None:
        r = self.r
        k = kind[self.ch.reshape(-1)[idx]]
        up, dn = k > 0, k < 0
        turning = up & (down[idx] > 0)
        if turning.any() and len(r.updown_samples) < SAMPLES:
            b = self.dist.shape[1]
            for i, c in zip(idx[turning][:SAMPLES].tolist(), col[turning][:SAMPLES].tolist(), strict=True):
                if len(r.updown_samples) < SAMPLES:
                    r.updown_samples.append(TurnSample(int(self.lids[c]), i // b))
        np.add.at(bad, to, bad[idx] + np.where(up, down[idx], 0))
        np.add.at(down, to, np.where(up, 0, down[idx]) + np.where(dn, climb[idx], 0))
        np.add.at(climb, to, np.where(dn, 0, climb[idx]))
        self.r.updown_checked = True
