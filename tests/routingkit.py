"""Small fabrics for the routing tests (imported as ``from routingkit import ...``), built with the model's own builder:
rings, tori, fat trees (any sizes), with LIDs that never collide (CA ports first, then the switches)."""

from __future__ import annotations

from ibprov.routing.model import ModelBuilder, RoutingModel
from ibprov.routing.offline import compute_lft


def ring(n: int = 5, hosts: int = 1, *, tiers: list[int] | None = None) -> RoutingModel:
    """``n`` 8-port switches S0..S{n-1} in a ring (S_i:3 -- S_{i+1}:4), ``hosts`` CA ports on each (ports 1..)."""
    b = ModelBuilder()
    sw = [b.switch(f"S{i}", 0x100 + i) for i in range(n)]
    for i in range(n):
        b.cable(sw[i], 3, sw[(i + 1) % n], 4)
    lid = 1
    for i in range(n):
        for h in range(hosts):
            b.ca(f"H{i}{'abcdefgh'[h]}/mlx5_0:1", lid, sw[i], 1 + h if h < 2 else 5 + h)
            lid += 1
    b.lids = list(range(lid, lid + n))
    model = b.build()
    model.lft = compute_lft(model, tiers)
    return model


def torus(x: int, y: int) -> RoutingModel:
    """An x-by-y 2D torus of switches (ports 1..4 to the neighbours, 5 to one CA each), min-hop routed."""
    b = ModelBuilder()
    sw = {(i, j): b.switch(f"T{i}{j}", 0x400 + i * y + j) for i in range(x) for j in range(y)}
    for i in range(x):
        for j in range(y):
            b.cable(sw[(i, j)], 1, sw[((i + 1) % x, j)], 2)
            b.cable(sw[(i, j)], 3, sw[(i, (j + 1) % y)], 4)
    for k, (i, j) in enumerate(sorted(sw)):
        b.ca(f"h{i}{j}/mlx5_0:1", 1 + k, sw[(i, j)], 5)
    b.lids = list(range(1 + len(sw), 1 + 2 * len(sw)))
    model = b.build()
    model.lft = compute_lft(model)
    return model


def fat_tree(
    leaves: int = 3, spines: int = 2, hosts: int | list[int] = 2, *, minhop: bool = False
) -> tuple[RoutingModel, list[int]]:
    """A two-level fat tree: every leaf cabled once to every spine (leaf port hosts+1+j to spine j, spine port
    i+1 to leaf i); ``hosts`` per leaf (or a list, one per leaf). Routed up*/down* (or min-hop)."""
    per_leaf = hosts if isinstance(hosts, list) else [hosts] * leaves
    top = max(per_leaf)
    b = ModelBuilder()
    leaf = [b.switch(f"leaf{i + 1:02d}", 0x200 + i) for i in range(leaves)]
    spine = [b.switch(f"spine{j + 1:02d}", 0x300 + j) for j in range(spines)]
    for i, sw in enumerate(leaf):
        for j, sp in enumerate(spine):
            b.cable(sw, top + 1 + j, sp, i + 1)
    lid = 1
    for i, sw in enumerate(leaf):
        for h in range(per_leaf[i]):
            b.ca(f"n{i + 1:02d}{h}/mlx5_0:1", lid, sw, h + 1)
            lid += 1
    b.lids = list(range(lid, lid + leaves + spines))
    tiers = [0] * leaves + [1] * spines
    model = b.build()
    model.lft = compute_lft(model, None if minhop else tiers)
    return model, tiers
