"""Routes between host ports over the inter-switch links, and a lower bound on route-aware test rounds.

A :class:`Routing` knows the switches, the inter-switch link *directions* (each cable twice), the host
ports (HCA ports cabled to a switch; ``Endpoint``\\ s of the spec) and, for a source switch and a
destination host port, the directions a packet crosses. Routing in InfiniBand is by destination: every
switch forwards a packet by its destination LID alone, so a route depends on the source's switch and
the destination, never on which host port of that switch sends it. Two sources of routes:

:func:`planned_routing` (offline, from the plan)
    A model of the up*/down* routing OpenSM's ``ftree`` engine programs into a fat tree. Switch tiers
    come from the roles (leaf 0, spine 1, core 2); a cable between two tiers goes *up* towards the
    higher one. Every destination ``d`` gets one **down path** (its *chain*): from ``d``'s switch, up one
    cable at a time to the top. At each switch of the chain the up cable is chosen round-robin over the
    destinations that reach it, in cabling order (leaves in plan order, then leaf port), so destination
    number *i* of a leaf leaves by its uplink *i* mod *U* and the spines spread the destinations they
    carry over their own uplinks the same way — ftree's "least loaded port", made deterministic.
    A packet from switch ``S`` climbs to the lowest switch of ``d``'s chain that is above ``S`` and then
    follows the chain down. Climbing, it takes at each step an up cable that leads to that switch; among
    parallel cables (and among equivalent switches) it takes the one with the same index the chain uses
    at that step, which is what ftree does when it routes the other leaves "up" towards ``d``'s down
    path. Cables between two switches of the same tier carry nothing in this model.
    **Assumption:** the SM runs a destination-based up*/down* engine that gives every destination one
    down path and spreads destinations over ports in order (ftree; minhop and updn on a fat tree are
    close but may send different sources of one destination through different spines). The real
    routes are in the LFTs: use :func:`lft_routing` when the fabric is up.

:func:`lft_routing` (the routes the SM programmed)
    The routing model every reader of routes shares (:class:`ibprov.routing.model.RoutingModel`, built
    by :func:`ibprov.routing.model.from_discovery` from an ``ibnetdiscover`` topology file and the tables
    of ``dump_lfts``): a route is the walk from the source's switch, following each switch's entry for
    the destination's LID, until the destination's own port. Tiers are hop distances from the switches
    that have host ports. A walk that loops, meets a switch without a table or an entry, or leaves by a
    port without a cable, is no route.

A direction is *routable* if some pair of host ports on different switches sends traffic over it. Under
destination routing not every direction is: with ftree each destination has one down path, so a leaf
with 4 hosts and 10 uplinks receives host traffic over 4 of its 10 downward cables at most, and no
perftest pair can load the other 6 (``examples/fat-tree.yaml``'s leaf04). Coverage is reported against
all directions and against the routable ones.

How close the model is, measured against the twin (ibsim + OpenSM 3.3.23 ftree, ``dump_lfts -n``;
``bench/perf_schedule.py --twin``): every host-to-host route identical for ``examples/fat-tree.yaml`` and
a 100-node three-level design; on other designs OpenSM takes the leaves of some pods in another order,
which swaps the spine-to-core cables of those pods' destinations (89 % of the routes identical for 64
nodes, 97 % for 512, 88 % for 2,048 with radix 40); the routable directions, and so the coverage and the
bound, were the same in every case but one, where ``dump_lfts`` itself lost a LID (see
:class:`Routing` ``notes``: the diags skip a table's top LID when it is a multiple of 64).

Lower bound (:func:`lower_bound`). Let ``S`` be a set of switches *closed downwards*: with a switch, it
holds every switch cabled below it (lower tier). Let ``H`` be the host ports cabled to switches of ``S``.
Routes are up*/down* (*valley-free*: they climb, then descend). A climbing route that is outside ``S``
never enters it — the switch it comes from is below a switch of ``S``, hence in ``S`` — and a descending
route inside ``S`` never leaves it — it would go to a switch below one of ``S``. So a route crosses the
boundary of ``S`` at most once outwards, and only if its client is in ``H``, and at most once inwards,
and only if its server is in ``H``: each crossing can be charged to a distinct host port of ``H`` taking
part in that pair. A host port takes part in at most one pair per round, so one round carries at most
``|H|`` of the directions crossing ``S``'s boundary, and every routable one must be carried in some round:

    rounds >= ceil(routable directions across the boundary of S / |H|).

:func:`lower_bound` takes the maximum over: the down-closure of every switch with host ports (a leaf
alone), and every connected group of switches below each tier (the leaves of a two-level tree, the pods
of a three-level one). The argument uses only that a host port is in one pair per round (not that
pairs in a round share no direction), so it bounds every schedule that covers the routable directions.
For the LFT routes the bound is given only when every route is valley-free for the hop-distance tiers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.types import Endpoint
from ibprov.probes.ibnetdiscover import Fabric
from ibprov.routing.model import NO_ENTRY, RoutingModel

__all__ = [
    "LinkDirection",
    "LowerBound",
    "Routing",
    "ca_endpoints",
    "lft_routing",
    "lower_bound",
    "model_endpoints",
    "planned_routing",
]

_TIER = {"leaf": 0, "spine": 1, "core": 2}


@dataclass(frozen=True)
class LinkDirection:
    """One direction of an inter-switch cable: traffic leaves switch port ``src`` and enters ``dst``."""

    src: Endpoint
    dst: Endpoint

    def __str__(self) -> str:
        return f"{self.src} -> {self.dst}"


@dataclass(frozen=True)
class LowerBound:
    """At least ``rounds`` rounds, because of ``witness`` (a readable reason)."""

    rounds: int
    witness: str


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class _Graph:
    """Switches (indices), inter-switch directions (indices) and host ports, in a fixed order."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.level: list[int] = []
        self.src: list[int] = []  # direction -> switch it leaves
        self.sport: list[int] = []
        self.dst: list[int] = []  # direction -> switch it enters
        self.dport: list[int] = []
        self.rev: list[int] = []  # direction -> the other direction of the cable
        self.out: dict[tuple[int, int], int] = {}  # (switch, port) -> direction leaving by it
        self.endpoints: list[Endpoint] = []
        self.ep_switch: list[int] = []
        self.ep_port: list[int] = []
        self.hosts_on: list[list[int]] = []  # switch -> its host ports
        self.host_switches: list[int] = []  # switches with host ports
        self.dirs_of: list[list[int]] = []  # switch -> directions leaving it, by port

    def add_switch(self, name: str, level: int) -> int:
        self.names.append(name)
        self.level.append(level)
        return len(self.names) - 1

    def add_cable(self, a: int, aport: int, b: int, bport: int) -> None:
        if (a, aport) in self.out or (b, bport) in self.out or (a, aport) == (b, bport):
            return  # a port holds one cable; a duplicate listing adds nothing
        first = len(self.src)
        for s, sp, d, dp in ((a, aport, b, bport), (b, bport, a, aport)):
            self.out[(s, sp)] = len(self.src)
            self.src.append(s)
            self.sport.append(sp)
            self.dst.append(d)
            self.dport.append(dp)
        self.rev += [first + 1, first]

    def finish(self, hosts: Iterable[tuple[Endpoint, int, int]]) -> None:
        """Host ports as (endpoint, switch, port), put in cabling order: switch order, then port."""
        for end, switch, port in sorted(hosts, key=lambda h: (h[1], h[2])):
            self.endpoints.append(end)
            self.ep_switch.append(switch)
            self.ep_port.append(port)
        self.hosts_on = [[] for _ in self.names]
        for i, switch in enumerate(self.ep_switch):
            self.hosts_on[switch].append(i)
        self.host_switches = [x for x in range(len(self.names)) if self.hosts_on[x]]
        self.dirs_of = [[] for _ in self.names]
        for e in sorted(range(len(self.src)), key=lambda e: (self.src[e], self.sport[e])):
            self.dirs_of[self.src[e]].append(e)

    def direction(self, e: int) -> LinkDirection:
        return LinkDirection(
            Endpoint(self.names[self.src[e]], None, self.sport[e]),
            Endpoint(self.names[self.dst[e]], None, self.dport[e]),
        )


class Routing(ABC):
    """Routes over one fabric: see the module docstring. Switches, directions and host ports are indices."""

    #: where the routes come from, for reports
    source: str

    def __init__(self, graph: _Graph) -> None:
        self.g = graph
        self._routable: frozenset[int] | None = None
        self._valley_free = True
        self.notes: tuple[str, ...] = ()  # what the routes could not show, for reports

    @property
    def endpoints(self) -> list[Endpoint]:
        """Host ports in cabling order (index = host port number in the other methods)."""
        return self.g.endpoints

    @property
    def direction_count(self) -> int:
        return len(self.g.src)

    def direction(self, e: int) -> LinkDirection:
        return self.g.direction(e)

    def switch_of(self, host: int) -> int:
        return self.g.ep_switch[host]

    @abstractmethod
    def route(self, switch: int, host: int) -> tuple[int, ...] | None:
        """Directions from ``switch`` to host port ``host``; () on the same switch; None: no route."""

    @abstractmethod
    def _usage(self) -> frozenset[int]:
        """Compute the routable directions (and whatever :meth:`candidates` needs)."""

    @abstractmethod
    def candidates(self, e: int, skip: Container[int] = ()) -> Iterator[tuple[int, int]]:
        """(source switch, destination host port) whose route crosses routable direction ``e``; destinations
        in ``skip`` are passed over."""

    @property
    def routable(self) -> frozenset[int]:
        """Directions some host-to-host route crosses."""
        if self._routable is None:
            self._routable = self._usage()
        return self._routable

    @property
    def valley_free(self) -> bool:
        """Whether every route climbs and then descends (the lower bound needs it)."""
        _ = self.routable
        return self._valley_free


# ------------------------------------------------------------------------------------ the plan's model
_UPDOWN_ENGINES = ("ftree", "updn")  # engines whose fat-tree routes the up*/down* model follows


class _PlannedRouting(Routing):
    source = "plan (up*/down* model of ftree)"

    def __init__(self, graph: _Graph) -> None:
        super().__init__(graph)
        g = graph
        n = len(g.names)
        self.up: list[list[int]] = [[e for e in g.dirs_of[x] if g.level[g.dst[e]] > g.level[x]] for x in range(n)]
        by_level = sorted(range(n), key=lambda x: g.level[x])
        self.anc = [0] * n  # switches above, as a bit mask
        for x in reversed(by_level):
            for e in self.up[x]:
                self.anc[x] |= (1 << g.dst[e]) | self.anc[g.dst[e]]
        self.under = [0] * n  # switches with host ports at or below, as a bit mask
        for x in by_level:
            if g.hosts_on[x]:
                self.under[x] |= 1 << x
            for e in g.dirs_of[x]:
                if g.level[g.dst[e]] < g.level[x]:
                    self.under[x] |= self.under[g.dst[e]]
        self.chain: list[tuple[int, ...]] = []  # host -> switches of its down path, its own switch first
        self.chain_p: list[tuple[int, ...]] = []  # host -> index of the chain's cable among parallel ones
        self.chain_down: list[tuple[int, ...]] = []  # host -> downward direction from chain[i + 1] to chain[i]
        load = [0] * n
        for host in range(len(g.endpoints)):
            x = g.ep_switch[host]
            chain, par, down = [x], [], []
            while self.up[x]:
                options = self.up[x]
                e = options[load[x] % len(options)]
                load[x] += 1
                y = g.dst[e]
                par.append([o for o in options if g.dst[o] == y].index(e))
                down.append(g.rev[e])
                chain.append(y)
                x = y
            self.chain.append(tuple(chain))
            self.chain_p.append(tuple(par))
            self.chain_down.append(tuple(down))
        self._options: dict[tuple[int, int], list[int]] = {}
        self._climbs: dict[tuple[int, int, tuple[int, ...]], tuple[int, ...]] = {}
        self._down_users: dict[int, list[tuple[int, int]]] = {}
        # up direction -> (source switch, (target, chain indices)) of the climbs crossing it
        self._up_users: dict[int, list[tuple[int, tuple[int, tuple[int, ...]]]]] = {}
        self._kappa_hosts: dict[tuple[int, tuple[int, ...]], list[int]] = {}

    def _climb(self, x: int, target: int, par: tuple[int, ...]) -> tuple[int, ...]:
        """Up directions from ``x`` to ``target`` (above it), choosing by the chain's indices ``par``."""
        key = (x, target, par)
        found = self._climbs.get(key)
        if found is not None:
            return found
        g = self.g
        options = self._options.get((x, target))
        if options is None:
            options = [e for e in self.up[x] if g.dst[e] == target or self.anc[g.dst[e]] >> target & 1]
            self._options[(x, target)] = options
        e = options[par[0] % len(options)] if par else options[0]
        y = g.dst[e]
        path = (e,) if y == target else (e, *self._climb(y, target, par[1:]))
        self._climbs[key] = path
        return path

    def _join(self, switch: int, host: int) -> int:
        """The step of ``host``'s chain where a packet from ``switch`` joins it (0: no route)."""
        anc, chain = self.anc[switch], self.chain[host]
        for t in range(1, len(chain)):
            if anc >> chain[t] & 1:
                return t
        return 0

    def route(self, switch: int, host: int) -> tuple[int, ...] | None:
        chain = self.chain[host]
        if switch == chain[0]:
            return ()
        t = self._join(switch, host)
        if not t:
            return None
        down = self.chain_down[host]
        return self._climb(switch, chain[t], self.chain_p[host][:t]) + tuple(down[i] for i in range(t - 1, -1, -1))

    def _usage(self) -> frozenset[int]:
        routable: set[int] = set()
        kappa: dict[tuple[int, tuple[int, ...]], int] = {}
        for host, chain in enumerate(self.chain):
            top = self.under[chain[-1]]
            for step in range(len(chain) - 1):
                if top & ~self.under[chain[step]]:  # sources joining above this step
                    e = self.chain_down[host][step]
                    routable.add(e)
                    self._down_users.setdefault(e, []).append((host, step))
                joining = self.under[chain[step + 1]] & ~self.under[chain[step]]
                if joining:
                    key = (chain[step + 1], self.chain_p[host][: step + 1])
                    kappa[key] = kappa.get(key, 0) | joining
                    self._kappa_hosts.setdefault(key, []).append(host)
        for key, mask in kappa.items():
            target, par = key
            for switch in _bits(mask):
                for e in self._climb(switch, target, par):
                    routable.add(e)
                    self._up_users.setdefault(e, []).append((switch, key))
        return frozenset(routable)

    def candidates(self, e: int, skip: Container[int] = ()) -> Iterator[tuple[int, int]]:
        _ = self.routable
        for host, step in self._down_users.get(e, ()):
            if host not in skip:
                chain = self.chain[host]
                for switch in _bits(self.under[chain[-1]] & ~self.under[chain[step]]):
                    yield switch, host
        for switch, key in self._up_users.get(e, ()):
            t = len(key[1])
            for host in self._kappa_hosts[key]:
                chain = self.chain[host]
                if (
                    host not in skip
                    and self.under[chain[t]] >> switch & 1
                    and not self.under[chain[t - 1]] >> switch & 1
                ):
                    yield switch, host


def planned_routing(loaded: LoadedSpec) -> Routing:
    """The offline model of the routes over the plan's topology (see the module docstring)."""
    topo = loaded.topology
    g = _Graph()
    index: dict[str, int] = {}
    names = sorted(topo.switches, key=lambda name: _TIER.get(topo.switches[name].role, 0))
    for name in names:
        index[name] = g.add_switch(name, _TIER.get(topo.switches[name].role, 0))
    hosts: list[tuple[Endpoint, int, int]] = []
    for link in topo.links:
        a, b = link.a, link.b
        if a.hca is None and b.hca is None:
            if a.device in index and b.device in index:
                g.add_cable(index[a.device], a.port, index[b.device], b.port)
            continue
        switch_end, host_end = (a, b) if b.hca is not None else (b, a)
        if switch_end.hca is None and switch_end.device in index:
            hosts.append((host_end, index[switch_end.device], switch_end.port))
    g.finish(hosts)
    routing = _PlannedRouting(g)
    engines = loaded.spec.subnet_manager.routing_engine
    if engines and engines[0] not in _UPDOWN_ENGINES:  # the model is not what this SM computes: say so
        routing.source = (
            f"plan (up*/down* model of ftree; the spec's SM routes with {','.join(engines)}, whose routes may "
            "differ: a run reads the LFTs)"
        )
    return routing


# ------------------------------------------------------------------------------- the programmed routes
class _LftRouting(Routing):
    source = "LFTs (dump_lfts)"

    def __init__(self, graph: _Graph, tables: list[list[int]], lids: list[int]) -> None:
        """``tables``: graph switch -> its LFT by LID (:data:`NO_ENTRY`: none), covering every host LID."""
        super().__init__(graph)
        self.tables = tables
        self.lids = lids
        self._routes: dict[tuple[int, int], tuple[int, ...] | None] = {}
        self._users: dict[int, list[int]] = {}
        self.notes = self._unreachable()

    def _unreachable(self) -> tuple[str, ...]:
        """A note on host ports whose own switch has no entry for their LID: no route reaches them."""
        g = self.g
        lost = [h for h in range(len(g.endpoints)) if self.tables[g.ep_switch[h]][self.lids[h]] == NO_ENTRY]
        if not lost:
            return ()
        shown = ", ".join(f"{g.endpoints[h]} (LID {self.lids[h]})" for h in lost[:4])
        more = f" and {len(lost) - 4} more" if len(lost) > 4 else ""
        note = (
            f"{len(lost)} host port(s) have no entry in their own switch's table, so no route reaches them and "
            f"the directions only they receive over count as unroutable: {shown}{more}"
        )
        if any(self.lids[h] % 64 == 0 and self.lids[h] == max(self.lids) for h in lost):
            note += (
                "; ibroute/dump_fts of infiniband-diags 44 do not print the top LID of a table when it is a "
                "multiple of 64 (they read the blocks below ALIGN(top, 64) / 64 only)"
            )
        return (note,)

    def _walk(self, switch: int, host: int) -> tuple[int, ...] | None:
        g = self.g
        lid, last, last_port = self.lids[host], g.ep_switch[host], g.ep_port[host]
        path: list[int] = []
        x = switch
        for _ in range(len(g.names)):
            port = self.tables[x][lid]
            if port == NO_ENTRY:
                return None
            if x == last and port == last_port:
                return tuple(path)
            e = g.out.get((x, port))
            if e is None:
                return None
            path.append(e)
            x = g.dst[e]
        return None  # a loop

    def route(self, switch: int, host: int) -> tuple[int, ...] | None:
        key = (switch, host)
        if key not in self._routes:
            self._routes[key] = () if switch == self.g.ep_switch[host] else self._walk(switch, host)
        return self._routes[key]

    def _usage(self) -> frozenset[int]:
        """Walk to each destination from every switch with host ports, sharing the tails of the walks:
        a direction is used if it starts the remaining walk from some switch on the way."""
        g = self.g
        for host in range(len(g.endpoints)):
            # switch -> (does its walk reach the host, does it only descend from there); absent: not walked
            walked: dict[int, tuple[bool, bool]] = {}
            used: set[int] = set()
            for switch in g.host_switches:
                if switch != g.ep_switch[host]:
                    self._walk_into(switch, host, walked, used)
            for e in used:
                self._users.setdefault(e, []).append(host)
        return frozenset(self._users)

    def _walk_into(self, switch: int, host: int, walked: dict[int, tuple[bool, bool]], used: set[int]) -> None:
        g = self.g
        lid, last, last_port = self.lids[host], g.ep_switch[host], g.ep_port[host]
        steps: list[tuple[int, int]] = []
        x = switch
        reached, descending = False, True
        while True:
            if x in walked:
                reached, descending = walked[x]
                break
            port = self.tables[x][lid]
            e = g.out.get((x, port))  # none for NO_ENTRY: no port 255
            if (x == last and port == last_port) or e is None or len(steps) > len(g.names):
                reached = x == last and port == last_port
                walked[x] = (reached, True)
                break
            steps.append((x, e))
            x = g.dst[e]
        for x, e in reversed(steps):
            step = g.level[g.dst[e]] - g.level[x]
            if reached:
                used.add(e)
                if step == 0 or (step < 0 and not descending):
                    self._valley_free = False
            descending = descending and step < 0
            walked[x] = (reached, descending)

    def candidates(self, e: int, skip: Container[int] = ()) -> Iterator[tuple[int, int]]:
        _ = self.routable
        for host in self._users.get(e, ()):
            if host not in skip:
                for switch in self._sources(self.g.src[e], host):
                    yield switch, host

    def _sources(self, x: int, host: int) -> list[int]:
        """Switches with host ports whose walk to ``host`` passes ``x``: ``x`` and, recursively, the
        neighbours whose entry for the host's LID points at it."""
        g, lid = self.g, self.lids[host]
        seen, todo, out = {x}, [x], []
        while todo:
            y = todo.pop()
            if g.hosts_on[y] and y != g.ep_switch[host]:
                out.append(y)
            for e in g.dirs_of[y]:
                w = g.dst[e]
                if w not in seen and self.tables[w][lid] == g.dport[e]:
                    seen.add(w)
                    todo.append(w)
        return sorted(out)


def ca_endpoints(fabric: Fabric, ca_names: Mapping[int, str] | None = None) -> dict[int, Endpoint]:
    """LID -> host port for every CA port ``fabric`` shows cabled: named by ``ca_names`` (port GUID ->
    ``node/device:port``, the plan's names) where it knows the port, else from its NodeDescription:
    rdma-core sets ``'<host> <device>'`` (``node03 mlx5_0`` -> ``node03/mlx5_0:1``); any other description
    becomes the host name and the node GUID the device."""
    planned = ca_names or {}
    out: dict[int, Endpoint] = {}
    for link in fabric.links:
        for end in (link.a, link.b):
            if end.type != "CA" or end.lid is None:
                continue
            name = planned.get(end.port_guid) if end.port_guid is not None else None
            words = end.description.split()
            if name is not None:
                out[end.lid] = _read_name(name)
            elif len(words) == 2:
                out[end.lid] = Endpoint(words[0], words[1], end.port)
            else:
                guid = f"0x{end.node_guid:016x}" if end.node_guid is not None else "ca"
                out[end.lid] = Endpoint(end.description or guid, guid, end.port)
    return out


def _read_name(name: str) -> Endpoint:
    """A CA port's name in the routing model as a host port: ``node/device:port``, or ``NAME:port`` (a
    NodeDescription that is not ``'<host> <device>'``: no device)."""
    head, _, port = name.rpartition(":")
    host, slash, device = head.partition("/")
    return Endpoint(host, device, int(port)) if slash and device else Endpoint(head, None, int(port))


def model_endpoints(model: RoutingModel) -> dict[int, Endpoint]:
    """LID -> host port for every CA port of ``model``, read from its name there (``node03/mlx5_0:1``: the
    plan's name, or rdma-core's NodeDescription ``'node03 mlx5_0'``; any other name is the host, without a
    device; :func:`ca_endpoints` names those by their node GUID)."""
    return {ca.lid: _read_name(ca.name) for ca in model.cas}


def lft_routing(model: RoutingModel, endpoints: Mapping[int, Endpoint] | None = None) -> Routing:
    """The routes the SM programmed, from the routing model of the fabric
    (:func:`ibprov.routing.model.from_discovery` of ``ibnetdiscover`` and ``dump_lfts``): its switches,
    cables, CA ports and tables. ``endpoints`` maps CA port (base) LIDs to host ports (default
    :func:`model_endpoints`); a CA port it does not map is left out."""
    endpoints = model_endpoints(model) if endpoints is None else endpoints
    n = model.switch_count
    src, sport = np.nonzero(model.peer >= 0)  # both ends of every cable
    ends = list(
        zip(
            src.tolist(),
            sport.tolist(),
            model.peer[src, sport].tolist(),
            model.peer_port[src, sport].tolist(),
            strict=True,
        )
    )
    hosts = [ca for ca in model.cas if ca.lid in endpoints]
    level = _hop_levels(n, ends, {ca.switch for ca in hosts})
    order = sorted(range(n), key=lambda s: (level[s], model.names[s], model.guids[s]))
    g = _Graph()
    index = [0] * n
    for s in order:
        index[s] = g.add_switch(model.names[s], level[s])
    cables = sorted((index[a], ap, index[b], bp) for a, ap, b, bp in ends)
    for a, aport, b, bport in cables:
        if (a, aport) < (b, bport):  # each cable once, from its end in the lower switch (then port)
            g.add_cable(a, aport, b, bport)
    lid_of = {endpoints[ca.lid]: ca.lid for ca in hosts}
    g.finish((endpoints[ca.lid], index[ca.switch], ca.port) for ca in hosts)
    lft = model.lft
    top = max((ca.lid for ca in hosts), default=0)
    if lft.shape[1] <= top:  # a table given whole that stops below some host's LID: no entry there
        lft = np.pad(lft, ((0, 0), (0, top + 1 - lft.shape[1])), constant_values=NO_ENTRY)
    rows: list[list[int]] = lft[order].tolist()  # graph switch -> its table by LID (lists: fast to index)
    routing = _LftRouting(g, rows, [lid_of[end] for end in g.endpoints])
    routing.source = model.source or _LftRouting.source
    return routing


def _hop_levels(n: int, cables: list[tuple[int, int, int, int]], leaves: set[int]) -> list[int]:
    """Hop distance of each switch from the nearest switch with host ports (those no host port reaches:
    above everything)."""
    neighbours: list[set[int]] = [set() for _ in range(n)]
    for a, _, b, _ in cables:
        neighbours[a].add(b)
        neighbours[b].add(a)
    far = n + 1
    level = [0 if s in leaves else far for s in range(n)]
    frontier = sorted(leaves)
    while frontier:
        nxt = []
        for s in frontier:
            for other in sorted(neighbours[s]):
                if level[other] > level[s] + 1:
                    level[other] = level[s] + 1
                    nxt.append(other)
        frontier = nxt
    return level


# ------------------------------------------------------------------------------------------ the bound
def _bound_sets(routing: Routing) -> Iterator[tuple[frozenset[int], str]]:
    """Down-closed switch sets: the down-closure of each switch with host ports, and the connected groups
    of switches below each tier."""
    g = routing.g
    below = [[g.dst[e] for e in g.dirs_of[x] if g.level[g.dst[e]] < g.level[x]] for x in range(len(g.names))]
    for x in g.host_switches:
        seen, todo = {x}, [x]
        while todo:
            for y in below[todo.pop()]:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        yield frozenset(seen), g.names[x] if len(seen) == 1 else f"{g.names[x]} and the switches below it"
    for tier in sorted({lv for lv in g.level if lv > 0}):
        members = [x for x in range(len(g.names)) if g.level[x] < tier]
        group: dict[int, int] = {}
        for start in members:
            if start in group:
                continue
            group[start] = start
            todo = [start]
            while todo:
                x = todo.pop()
                for e in g.dirs_of[x]:
                    y = g.dst[e]
                    if g.level[y] < tier and y not in group:
                        group[y] = start
                        todo.append(y)
        for start in sorted(set(group.values())):
            part = frozenset(x for x, root in group.items() if root == start)
            if len(part) > 1:
                yield part, f"the group of {len(part)} switches below tier {tier} around {g.names[start]}"


def lower_bound(routing: Routing) -> LowerBound | None:
    """The most rounds any schedule covering the routable directions needs (module docstring: the proof);
    None when some route is not valley-free (the argument does not hold)."""
    if not routing.valley_free:
        return None
    g, routable = routing.g, routing.routable
    if not routable:
        return LowerBound(0, "no inter-switch link direction carries host-to-host traffic")
    best = LowerBound(1, "some link direction must be tested")
    for part, label in _bound_sets(routing):
        hosts = sum(len(g.hosts_on[x]) for x in part)
        crossing = 0
        for x in part:
            for e in g.dirs_of[x]:
                if g.dst[e] not in part:
                    crossing += (e in routable) + (g.rev[e] in routable)
        if hosts and crossing:
            rounds = -(-crossing // hosts)
            if rounds > best.rounds:
                best = LowerBound(
                    rounds,
                    f"{label}: {crossing} routable link directions cross its boundary and only "
                    f"{hosts} host port{'s' if hosts != 1 else ''} below it can load them, one pair each per round",
                )
    return best
