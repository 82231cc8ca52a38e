"""Credit loops: cycles in the channel dependency graph (Dally and Seitz, 1987; ibdm's ``CrdLoopAnalyze``).

A vertex is a virtual channel, (switch egress port, VL); an edge a -> b says some route leaves by ``a`` and,
at the next switch, by ``b``. A cycle is a set of buffers each waiting for the next: a potential credit
deadlock. :func:`find_cycles` first peels off, with array operations, every vertex no cycle can run through
(no edge in, or no edge out, repeatedly: on a deadlock-free fabric nothing is left), then finds the strongly
connected components of what is left (Tarjan, iterative) and, in each, one shortest cycle — listed in order,
as opa-ff's ``validatecreditloops`` does, so that an admin can see which links and VL to act on.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Cycles", "find_cycles"]

MAX_CYCLES = 20  # components whose cycle is listed


@dataclass(frozen=True)
class Cycles:
    """The strongly connected components with a cycle (their sizes, largest first) and one ordered cycle
    through each of the first :data:`MAX_CYCLES` (vertex ids, the first repeated at the end implied)."""

    component_sizes: tuple[int, ...]
    cycles: tuple[tuple[int, ...], ...]
    vertices_left: int  # vertices that survived the peeling (on a cycle, or between cycles)

    @property
    def found(self) -> bool:
        return bool(self.component_sizes)


def _peel(src: npt.NDArray[np.int64], dst: npt.NDArray[np.int64], n: int) -> npt.NDArray[np.bool_]:
    """The vertices left once every vertex without an edge in or without an edge out is removed, repeatedly."""
    alive = np.zeros(n, dtype=np.bool_)
    alive[src] = True
    alive[dst] = True
    keep = np.ones(src.size, dtype=np.bool_)
    while True:
        s, d = src[keep], dst[keep]
        has_out = np.zeros(n, dtype=np.bool_)
        has_in = np.zeros(n, dtype=np.bool_)
        has_out[s] = True
        has_in[d] = True
        now = alive & has_out & has_in
        if now.sum() == alive.sum():
            return alive
        alive = now
        keep &= alive[src] & alive[dst]


def _components(adj: dict[int, list[int]]) -> list[list[int]]:
    """Strongly connected components with more than one vertex, or a self-loop (Tarjan, iterative)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in sorted(adj):
        if root in index:
            continue
        work = [(root, iter(adj[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(adj.get(w, ()))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in adj.get(v, ()):
                    out.append(sorted(comp))
    return out


def _shortest_cycle(adj: dict[int, list[int]], members: set[int]) -> tuple[int, ...]:
    """A shortest cycle through the component's first vertex (breadth-first back to it)."""
    start = min(members)
    parent: dict[int, int] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        v = queue.popleft()
        for w in adj.get(v, ()):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return tuple(reversed(path))
            if w not in seen:
                seen.add(w)
                parent[w] = v
                queue.append(w)
    return (start,)


def find_cycles(src: npt.NDArray[np.integer[Any]], dst: npt.NDArray[np.integer[Any]], vertices: int) -> Cycles:
    """Cycles of the graph with edges ``src[i] -> dst[i]`` over ``vertices`` vertex ids."""
    src64 = np.asarray(src, dtype=np.int64)
    dst64 = np.asarray(dst, dtype=np.int64)
    if not src64.size:
        return Cycles((), (), 0)
    src, dst = src64, dst64
    alive = _peel(src64, dst64, vertices)
    left = int(alive.sum())
    if not left:
        return Cycles((), (), 0)
    keep = alive[src] & alive[dst]
    adj: dict[int, list[int]] = {}
    for a, b in zip(src[keep].tolist(), dst[keep].tolist(), strict=True):
        adj.setdefault(a, []).append(b)
    comps = sorted(_components(adj), key=lambda c: (-len(c), c[0]))
    cycles = tuple(_shortest_cycle(adj, set(c)) for c in comps[:MAX_CYCLES])
    return Cycles(tuple(len(c) for c in comps), cycles, left)
