"""Forwarding tables computed offline, without an SM: the benchmark's 100,000-endpoint fat tree and the tests'
reference routes.

:func:`compute_lft` routes every CA LID and switch LID of a model the way OpenSM's destination-based engines
do, with the choices made deterministic:

* with ``tiers`` (0 lowest: leaf, spine, core), **up*/down***: from a switch above the destination's switch
  (one that reaches it going only down) a route goes down, from any other switch it goes up; among the ports
  that lead one hop closer the destination number ``k`` of its switch takes candidate ``k`` mod their count —
  ftree's spreading of a leaf's destinations over its uplinks;
* without, **min-hop**: any port one hop closer on the cabled topology, chosen the same way (OpenSM's minhop
  spreads by load; on a ring it makes the same choices for an odd ring).

A model of what an engine would do, not OpenSM itself: the twin runs the real OpenSM for that.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ibprov.routing.model import NO_ENTRY, ByteArray, RoutingModel

__all__ = ["compute_lft"]

_FAR = 32000


def _distances(
    model: RoutingModel, target: int, tiers: npt.NDArray[np.int64] | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Hops from every switch to ``target`` and whether the switch reaches it going only down."""
    n, peer = model.switch_count, model.peer
    dist = np.full(n, _FAR, dtype=np.int64)
    dist[target] = 0
    frontier = np.array([target], dtype=np.int64)
    level = 0
    while frontier.size:  # breadth-first from the target: upwards only, when tiers are given
        nb = peer[frontier]
        if tiers is not None:
            nb = np.where((nb >= 0) & (tiers[np.maximum(nb, 0)] > tiers[frontier][:, None]), nb, -1)
        nb = np.unique(nb[nb >= 0])
        nb = nb[dist[nb] == _FAR]
        level += 1
        dist[nb] = level
        frontier = nb
    above = dist < _FAR
    if tiers is not None:  # the others climb first: the upper tiers are resolved before the lower
        for tier in sorted(set(tiers.tolist()), reverse=True):
            rows = np.flatnonzero((tiers == tier) & ~above)
            if not rows.size:
                continue
            nb = peer[rows]
            ok = (nb >= 0) & (tiers[np.maximum(nb, 0)] > tier)
            via = np.where(ok, dist[np.maximum(nb, 0)], _FAR).min(axis=1)
            dist[rows] = np.where(via < _FAR, via + 1, _FAR)
    return dist, above


def _candidates(
    model: RoutingModel, dist: npt.NDArray[np.int64], above: npt.NDArray[np.bool_], tiers: npt.NDArray[np.int64] | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Per switch, its ports one hop closer (in port order, padded) and how many there are."""
    peer = model.peer
    ok = peer >= 0
    nb = np.maximum(peer, 0)
    closer = ok & (dist[nb] == dist[:, None] - 1)
    if tiers is not None:
        down = tiers[nb] < tiers[:, None]
        closer &= np.where(above[:, None], down, tiers[nb] > tiers[:, None])
    order = np.argsort(~closer, axis=1, kind="stable")
    return order, closer.sum(axis=1)


def compute_lft(model: RoutingModel, tiers: Sequence[int] | None = None) -> ByteArray:
    """Every switch's table for every LID of ``model`` (see the module docstring)."""
    n = model.switch_count
    tier_arr = np.asarray(tiers, dtype=np.int64) if tiers is not None else None
    top = max([lid for ca in model.cas for lid in ca.lids] + [*model.lids, 0])
    lft = np.full((n, top + 1), NO_ENTRY, dtype=np.uint8)
    by_switch: dict[int, list[tuple[int, int]]] = {}  # switch -> (lid, its port there)
    for ca in model.cas:
        for lid in ca.lids:
            by_switch.setdefault(ca.switch, []).append((lid, ca.port))
    for s, lid in enumerate(model.lids):
        if lid:
            by_switch.setdefault(s, []).append((lid, 0))
    rows = np.arange(n)
    for target, entries in by_switch.items():
        dist, above = _distances(model, target, tier_arr)
        order, count = _candidates(model, dist, above, tier_arr)
        reach = (count > 0) & (rows != target)
        for k, (lid, port) in enumerate(entries):
            pick = order[rows[reach], k % count[reach]]
            lft[rows[reach], lid] = pick.astype(np.uint8)
            lft[target, lid] = port
    return lft
