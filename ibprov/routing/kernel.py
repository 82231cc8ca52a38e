"""The audit's inner loop, compiled (numba): every destination column walked once over every switch.

For one destination LID every switch has one way out, so the routes into it form a forest (plus, where the
tables are wrong, dead ends and loops). Per destination the kernel (1) gives every switch its distance to the
destination — the number of switch-to-switch channels its route crosses — walking each switch's route until it
meets a switch already known, so each switch is walked once (a walk that meets itself is a forwarding loop,
one that meets no channel a dead end); (2) orders the switches by distance with a counting sort and, farthest
first, pushes the routes of the CA ports behind each switch one channel on: routes and destination LIDs per
channel, the channel dependencies, and the up*/down* states (still climbing, gone down, turned up after
going down); (3) judges every switch with CA ports as a source: delivered, hop count against the shortest path,
or where its route breaks.

The LFT is stored by switch, so one destination's column is spread over the whole table: each thread copies
the columns of :data:`TILE` destinations at a time, reading the table row by row (in memory order), and walks
the copy. Destinations are split into contiguous ranges, one per thread, each with its own counters (summed after), so
the result does not depend on the number of threads. Compiled once per machine (numba caches it beside this
file, or in its user cache where that is not writable); a few seconds the first time.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["SAMPLES", "UNKNOWN", "trace"]

SAMPLES = 100  # samples kept of each kind of problem, per thread
UNKNOWN, DEAD, LOOP, ON_STACK = -1, -2, -3, -4
HOPS = 258  # histogram bins: switches on a route (1..257)
TILE = 64  # destinations whose LFT columns a thread copies at once (the LFT is [switch, LID]: a column is scattered)


def _trace(  # noqa: C901 - one compiled loop; split, numba would not inline it as well
    lft: npt.NDArray[np.uint8],
    chan: npt.NDArray[np.int32],  # [switch, port] -> channel, -1 none; ports beyond its columns have none
    chan_dst: npt.NDArray[np.int32],
    dlids: npt.NDArray[np.int64],
    dsw: npt.NDArray[np.int64],
    dport: npt.NDArray[np.int64],
    is_ca: npt.NDArray[np.bool_],
    cas_on: npt.NDArray[np.int32],
    kind: npt.NDArray[np.int8],  # per channel: +1 up a tier, -1 down, 0 same tier (all 0: no tiers)
    has_tiers: bool,
    shortest: npt.NDArray[np.int16],
    target_col: npt.NDArray[np.int64],
    threads: int,
    switch_edges: bool,  # also the dependencies of the routes from CA ports to switch LIDs (management traffic)
) -> tuple[Any, ...]:
    n = lft.shape[0]
    top = lft.shape[1] - 1
    width = chan.shape[1]
    c_count = chan_dst.shape[0]
    d_count = dlids.shape[0]
    routes = np.zeros((threads, c_count), dtype=np.int64)
    dlid_count = np.zeros((threads, c_count), dtype=np.int64)
    # a bit per (channel, next out port): 32 bytes a channel, per thread (two threads setting bits of one byte
    # would lose one of them)
    edges = np.zeros((threads, c_count, 32), dtype=np.uint8)
    edge_lid = np.zeros((c_count, 256), dtype=np.int32)  # written once per edge, when its bit is first set
    hist = np.zeros((threads, HOPS), dtype=np.int64)
    # pairs, delivered, broken pairs, nonminimal pairs, updown pairs
    stats = np.zeros((threads, 5), dtype=np.int64)
    broken = np.zeros(d_count, dtype=np.bool_)
    # breaks: source, destination index, kind (0 dead end, 1 loop), switch, port, pairs
    brk = np.zeros((threads, SAMPLES, 6), dtype=np.int64)
    brk_n = np.zeros(threads, dtype=np.int64)
    sbrk = np.zeros((threads, SAMPLES, 6), dtype=np.int64)  # the same for switch LIDs
    sbrk_n = np.zeros(threads, dtype=np.int64)
    nonmin = np.zeros((threads, SAMPLES, 4), dtype=np.int64)  # source, destination index, hops, shortest
    nonmin_n = np.zeros(threads, dtype=np.int64)
    turns = np.zeros((threads, SAMPLES, 2), dtype=np.int64)  # destination index, switch
    turns_n = np.zeros(threads, dtype=np.int64)
    sources = np.flatnonzero(cas_on > 0)
    chunk = (d_count + threads - 1) // threads
    for t in numba.prange(threads):
        # per switch, int32 (a cell carries at most the CA ports of the fabric) to keep them in cache
        dist = np.empty(n, dtype=np.int32)
        end = np.empty(n, dtype=np.int32)  # dead end: the switch where it breaks; loop: a switch on it
        stack = np.empty(n + 1, dtype=np.int32)
        order = np.empty(n, dtype=np.int32)
        count = np.zeros(n + 2, dtype=np.int32)
        paths = np.empty(n, dtype=np.int32)
        climb = np.empty(n, dtype=np.int32)
        down = np.empty(n, dtype=np.int32)
        bad = np.empty(n, dtype=np.int32)
        tile = np.empty((TILE, n), dtype=np.uint8)
        first, last = t * chunk, min(d_count, (t + 1) * chunk)
        for d in range(first, last):
            j = (d - first) % TILE
            if j == 0:  # the next tile of destinations' columns, copied row by row: the LFT is read in order
                k = min(TILE, last - d)
                for s in range(n):
                    for i in range(k):
                        lid_i = dlids[d + i]
                        tile[i, s] = lft[s, lid_i] if lid_i <= top else 255
            row = tile[j]
            lid, tsw, tport, ca_dest = dlids[d], dsw[d], dport[d], is_ca[d]
            for s in range(n):
                dist[s] = UNKNOWN
            # (1) distances, each switch walked once
            for s0 in range(n):
                if dist[s0] != UNKNOWN:
                    continue
                depth = 0
                x = s0
                base = UNKNOWN
                where = -1
                while True:
                    if dist[x] >= 0 or dist[x] == DEAD or dist[x] == LOOP:
                        base = dist[x]
                        where = end[x]
                        break
                    if dist[x] == ON_STACK:
                        base = LOOP
                        where = x
                        break
                    port = row[x]
                    if x == tsw and port == tport:
                        dist[x] = 0
                        end[x] = -1
                        base = 0
                        where = -1
                        break
                    c = chan[x, port] if port < width else -1
                    if c < 0:
                        dist[x] = DEAD
                        end[x] = x
                        base = DEAD
                        where = x
                        break
                    dist[x] = ON_STACK
                    stack[depth] = x
                    depth += 1
                    x = chan_dst[c]
                for i in range(depth - 1, -1, -1):
                    y = stack[i]
                    if base >= 0:
                        base += 1
                        dist[y] = base
                        end[y] = -1
                    else:
                        dist[y] = base
                        end[y] = where
            # (2) farthest first: routes, destinations, dependencies and turns per channel
            far = 0
            for s in range(n):
                if dist[s] > far:
                    far = dist[s]
            for i in range(far + 2):
                count[i] = 0
            for s in range(n):
                if dist[s] > 0:
                    count[dist[s]] += 1
            acc = 0
            for level in range(far, 0, -1):
                k = count[level]
                count[level] = acc
                acc += k
            for s in range(n):
                if dist[s] > 0:
                    order[count[dist[s]]] = s
                    count[dist[s]] += 1
            if ca_dest or switch_edges:
                for s in range(n):
                    w = 0
                    if cas_on[s] > 0 and dist[s] >= 0:
                        w = cas_on[s] - (1 if (ca_dest and s == tsw) else 0)
                    paths[s] = w
                    climb[s] = w
                    down[s] = 0
                    bad[s] = 0
            if ca_dest or switch_edges:
                for i in range(acc):
                    s = order[i]
                    if paths[s] == 0:
                        continue
                    c = chan[s, row[s]]  # (a delivered route's ports all have channels)
                    x = chan_dst[c]
                    paths[x] += paths[s]
                    if ca_dest:  # routes and destinations count CA pairs only (balance)
                        routes[t, c] += paths[s]
                        dlid_count[t, c] += 1
                    if dist[s] >= 2:
                        p2 = row[x]
                        bit = np.uint8(1 << (p2 & 7))
                        if not edges[t, c, p2 >> 3] & bit:
                            edges[t, c, p2 >> 3] |= bit
                            edge_lid[c, p2] = lid
                    if has_tiers and ca_dest:
                        if kind[c] > 0:
                            if down[s] > 0 and turns_n[t] < SAMPLES:
                                turns[t, turns_n[t], 0] = d
                                turns[t, turns_n[t], 1] = s
                                turns_n[t] += 1
                            bad[x] += bad[s] + down[s]
                            climb[x] += climb[s]
                        elif kind[c] < 0:
                            bad[x] += bad[s]
                            down[x] += down[s] + climb[s]
                        else:
                            bad[x] += bad[s]
                            down[x] += down[s]
                            climb[x] += climb[s]
                if has_tiers and ca_dest:
                    stats[t, 4] += bad[tsw]
            # (3) every switch with CA ports, as a source
            for si in range(sources.shape[0]):
                s = sources[si]
                w = cas_on[s] - (1 if (ca_dest and s == tsw) else 0)
                if ca_dest:
                    stats[t, 0] += w
                if dist[s] >= 0:
                    if ca_dest and w > 0:
                        stats[t, 1] += w
                        hops = dist[s] + 1
                        hist[t, min(hops, HOPS - 1)] += w
                        best = shortest[s, target_col[tsw]]
                        if dist[s] > best:
                            stats[t, 3] += w
                            if nonmin_n[t] < SAMPLES:
                                j = nonmin_n[t]
                                nonmin[t, j, 0] = s
                                nonmin[t, j, 1] = d
                                nonmin[t, j, 2] = hops
                                nonmin[t, j, 3] = best + 1
                                nonmin_n[t] += 1
                    continue
                broken[d] = True
                e = end[s]
                kind_of = 0 if dist[s] == DEAD else 1
                port = row[e] if kind_of == 0 else 0
                if ca_dest:
                    stats[t, 2] += w
                    if brk_n[t] < SAMPLES:
                        j = brk_n[t]
                        brk[t, j, 0], brk[t, j, 1], brk[t, j, 2] = s, d, kind_of
                        brk[t, j, 3], brk[t, j, 4], brk[t, j, 5] = e, port, w
                        brk_n[t] += 1
                elif sbrk_n[t] < SAMPLES:
                    j = sbrk_n[t]
                    sbrk[t, j, 0], sbrk[t, j, 1], sbrk[t, j, 2] = s, d, kind_of
                    sbrk[t, j, 3], sbrk[t, j, 4], sbrk[t, j, 5] = e, port, w
                    sbrk_n[t] += 1
    merged = edges[0]
    for t in range(1, threads):
        merged |= edges[t]
    return (
        routes.sum(axis=0),
        dlid_count.sum(axis=0),
        merged,
        edge_lid,
        hist.sum(axis=0),
        stats.sum(axis=0),
        broken,
        brk,
        brk_n,
        sbrk,
        sbrk_n,
        nonmin,
        nonmin_n,
        turns,
        turns_n,
    )


trace: Any = numba.njit(cache=True, parallel=True, nogil=True)(_trace)
