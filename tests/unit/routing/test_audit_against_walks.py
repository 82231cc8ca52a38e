"""The compiled audit against the plainest possible oracle: every CA -> LID route walked hop by hop in Python
(``RoutingModel.walk``), on random rings, tori and fat trees whose tables are then corrupted at random (entries
removed, sent to port 0, to another port). Delivery, hop counts, minimality, routes and destinations per
channel, the dependency edges and the up*/down* turns must agree exactly, whatever the number of threads."""

from __future__ import annotations

import random
from collections import Counter, deque
from itertools import pairwise

import numpy as np
import pytest
from routingkit import fat_tree, ring, torus

from ibprov.routing.audit import audit
from ibprov.routing.model import RoutingModel


def _fabric(rnd: random.Random) -> tuple[RoutingModel, list[int] | None]:
    kind = rnd.choice(["ring", "torus", "fat tree", "fat tree, min-hop"])
    if kind == "ring":
        return ring(rnd.randint(3, 9), rnd.randint(1, 3)), None
    if kind == "torus":
        return torus(rnd.randint(3, 5), rnd.randint(3, 5)), None
    hosts = [rnd.randint(1, 4) for _ in range(rnd.randint(2, 6))]
    return fat_tree(len(hosts), rnd.randint(1, 4), hosts, minhop=kind.endswith("min-hop"))


def _hops_between(model: RoutingModel) -> dict[tuple[int, int], int]:
    out = {}
    for start in range(model.switch_count):
        seen, todo = {start: 0}, deque([start])
        while todo:
            x = todo.popleft()
            for peer in model.peer[x].tolist():
                if peer >= 0 and peer not in seen:
                    seen[peer] = seen[x] + 1
                    todo.append(peer)
        out.update({(start, y): h for y, h in seen.items()})
    return out


def _oracle(model: RoutingModel, tiers: list[int] | None) -> dict[str, object]:
    hops_between = _hops_between(model)
    pairs = delivered = nonminimal = turned = 0
    hist: Counter[int] = Counter()
    routes: Counter[int] = Counter()
    dlids: dict[int, set[int]] = {}
    edges: set[tuple[int, int]] = set()
    broken: set[int] = set()
    for source_ca in model.cas:
        s = source_ca.switch
        for dest in model.cas:
            if dest is source_ca:
                continue
            for lid in dest.lids:
                pairs += 1
                path, end = model.walk(s, lid)
                if end != "delivered":
                    broken.add(lid)
                    continue
                delivered += 1
                hist[len(path) + 1] += 1
                nonminimal += len(path) > hops_between[(s, dest.switch)]
                for c in path:
                    routes[c] += 1
                    dlids.setdefault(c, set()).add(lid)
                edges.update((a, int(model.chan_port[b])) for a, b in pairwise(path))
                if tiers is not None:
                    ways = [tiers[model.chan_dst[c]] - tiers[model.chan_src[c]] for c in path]
                    turned += any(w > 0 and any(v < 0 for v in ways[:i]) for i, w in enumerate(ways))
    return {
        "pairs": pairs,
        "delivered": delivered,
        "hist": dict(hist),
        "nonminimal": nonminimal,
        "routes": [routes[c] for c in range(model.channel_count)],
        "dlids": [len(dlids.get(c, ())) for c in range(model.channel_count)],
        "edges": edges,
        "broken": broken,
        "turned": turned,
    }


@pytest.mark.parametrize("seed", range(40))
def test_the_audit_agrees_with_a_walk_of_every_route(seed: int) -> None:
    rnd = random.Random(seed)
    model, tiers = _fabric(rnd)
    for _ in range(rnd.randint(0, 6)):
        switch, lid = rnd.randrange(model.switch_count), rnd.randrange(1, model.lft.shape[1])
        model.lft[switch, lid] = rnd.choice([255, 0, rnd.randint(1, model.ports)])
    want = _oracle(model, tiers)
    for threads in (1, 2, 3):
        got = audit(model, tiers, threads=threads)
        assert (got.pairs, got.delivered, got.switches_per_route) == (want["pairs"], want["delivered"], want["hist"])
        assert got.nonminimal_pairs == want["nonminimal"]
        assert got.chan_routes.tolist() == want["routes"]
        assert got.chan_dlids.tolist() == want["dlids"]
        assert set(map(tuple, np.argwhere(got.edges).tolist())) == want["edges"]
        assert got.broken_lids == want["broken"]
        if tiers is not None:
            assert got.updown_pairs == want["turned"]
