"""The channel dependency graph over (egress port, VL), for fabrics whose routes use SLs: every CA -> CA route
is walked with the SL the SA gives its path (``saquery -p``), and at each switch the VL is the switch's
SL2VL entry for (ingress port, egress port, SL) — what lash, dfsssp, nue and torus-2QoS rely on to be free of
credit loops (routing-audit notes, section 3). A vertex is ``channel * 16 + VL``.

Walked pair by pair, so it is for fabrics of up to :data:`PAIR_HOP_BUDGET` route hops (a few thousand CA
ports); above that, or where a path SL or an SL2VL table could not be read, the audit says it is SL-unaware
rather than report a loop that the VLs may break (:class:`LayeredGraph` ``missing``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ibprov.routing.model import RoutingModel

__all__ = ["PAIR_HOP_BUDGET", "LayeredGraph", "layered_edges"]

PAIR_HOP_BUDGET = 5_000_000
VLS = 16

PathSl = Callable[[int, int], int | None]  # (source LID, destination LID) -> SL
SlToVl = Callable[[int, int, int, int], int | None]  # (switch, in port, out port, SL) -> VL


@dataclass
class LayeredGraph:
    src: npt.NDArray[np.int64]
    dst: npt.NDArray[np.int64]
    sls: set[int] = field(default_factory=set)  # the SLs the routes use
    vls: set[int] = field(default_factory=set)  # the VLs they use between switches
    missing: list[str] = field(default_factory=list)  # what could not be read (then the graph is incomplete)
    dropped: int = 0  # hops whose SL2VL entry is 15 (the packet is dropped)


def layered_edges(model: RoutingModel, path_sl: PathSl, sl2vl: SlToVl) -> LayeredGraph:
    """Edges over (channel, VL) of every delivered CA -> CA route (see the module docstring)."""
    edges: set[tuple[int, int]] = set()
    graph = LayeredGraph(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    no_sl = no_vl = 0
    lft, chan, chan_dst, chan_dport = model.lft, model.chan, model.chan_dst, model.chan_dport
    targets = {lid: (ca.switch, ca.port) for ca in model.cas for lid in ca.lids}
    for source in model.cas:
        for lid, (tsw, tport) in targets.items():
            if lid in source.lids:
                continue
            sl = path_sl(source.lid, lid)
            if sl is None:
                no_sl += 1
                continue
            graph.sls.add(sl)
            x, in_port, prev = source.switch, source.port, -1
            for _ in range(256):
                out = int(lft[x, lid]) if lid < lft.shape[1] else 255
                if (x, out) == (tsw, tport):
                    break
                c = int(chan[x, out]) if out < 255 else -1
                if c < 0:
                    break  # a dead end: the reachability check reports it
                vl = sl2vl(x, in_port, out, sl)
                if vl is None:
                    no_vl += 1
                    break
                if vl == 15:
                    graph.dropped += 1
                    break
                graph.vls.add(vl)
                vertex = c * VLS + vl
                if prev >= 0:
                    edges.add((prev, vertex))
                prev, in_port, x = vertex, int(chan_dport[c]), int(chan_dst[c])
    if no_sl:
        graph.missing.append(f"{no_sl} CA pairs without a path SL from the SA")
    if no_vl:
        graph.missing.append(f"{no_vl} routes crossing a switch port whose SL2VL table was not read")
    if edges:
        pairs = np.array(sorted(edges), dtype=np.int64)
        graph.src, graph.dst = pairs[:, 0], pairs[:, 1]
    return graph


def route_hops(model: RoutingModel) -> int:
    """An upper estimate of the hops a pair-by-pair walk takes (CA pairs x the longest route)."""
    lids = sum(1 << ca.lmc for ca in model.cas)
    return len(model.cas) * lids * max(1, min(model.switch_count, 8))
