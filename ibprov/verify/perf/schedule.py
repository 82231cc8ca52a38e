"""Pair schedules for the RDMA perftest runs of ``ibprov verify --perf``: who tests against whom, in rounds.

A :class:`Pair` is client -> server: the client's ``ib_write_bw`` writes into the server, so the data
follows the route from client to server (the other way carries only acknowledgements, which do not count
as testing a link). A round is a set of pairs that run at the same time: no host port is in two pairs of a
round (the node schedules also keep each node to one pair per round). Host ports are the HCA ports of the
spec's nodes that are cabled. **Rails** mean what they mean to the fat-tree generator
(:class:`ibprov.clusterspec.rails.Rails`): with ``mpi.rails``, rail *i* is ``mpi.rails[i]`` (on each node the port
one of its ``DEVICE:PORT`` entries names; a node may lack a rail), and a port on no rail (a storage HCA
cabled by ``fabric.links``) is grouped with the ports of the same ``DEVICE:PORT`` name on the other nodes,
after the rails; without ``mpi.rails``, rail *i* is the *i*-th port among a node's HCA ports (HCAs in the
spec's order, then their ports: each port of a dual-port HCA is a rail of its own).

quick (:func:`quick`)
    Every host port at least once, in as few rounds as possible. Within each rail, the first half of the
    ports (in spec order, which is cabling order) is paired with the second half, so pairs cross leaves.
    An odd rail leaves one port over; the ports left over on different rails are paired together, and a
    port still alone is paired with a port of another node (same rail if it can) in the first round where
    that port is free. For nodes with the same HCAs that is as few rounds as possible: one when every rail
    has an even number of ports, else two (a port is in one pair per round). Nodes with more HCAs than the
    rest may take one round more than the least (ceil(their ports / all other ports)).
all-pairs (:func:`all_pairs`)
    Every pair of nodes exactly once, by the circle method (round robin): node 0 stays, the others
    rotate one place per round; n - 1 rounds of n/2 pairs for even n, n rounds with one node sitting out
    (a bye) for odd n. A node is tested on its first cabled port (its lowest rail).
rail-aware (:func:`rail_aware`)
    The same pairing (all-pairs by default, or quick) run per rail: rail *i* of node A only ever meets
    rail *i* of node B (a port on no rail only the same-named port of another node), and round *r* runs
    round *r* of every rail at once. A port alone on its rail is not tested (listed as such).
route-aware (:func:`route_aware`, :func:`route_aware_from_lfts`, :func:`route_schedule`)
    Pairs chosen from the routes (the plan's up*/down* model, or the SM's LFTs; see
    :mod:`ibprov.verify.perf.routes`) so that every inter-switch link direction that host-to-host traffic
    can use carries test traffic, and no two pairs of a round cross the same link direction (nor share a
    host port). First a structured candidate: each host port sends to the port at the same position in
    the next block (the next leaf of a two-level tree, the next pod of a three-level one; an odd number
    of blocks wraps onto the next position so that the pairs form even cycles). On a full non-blocking
    tree every leaf uplink, spine uplink and their reverse directions then carry exactly one pair, and
    packing the cycles alternately gives two rounds, the lower bound. Pairs that add no new direction are
    dropped; each pair goes to the first round it fits. Then every direction still uncovered gets the
    pair that crosses it and fits the earliest round (most new directions first). When that takes more
    rounds than the lower bound (partly filled or blocking trees), round-by-round greedy schedules are
    built too (each direction, highest tier or most pressed leaf first, gets the pair that fits the round
    being built and covers the most new directions) and the one with the fewest rounds is kept. The
    schedule reports coverage, the rounds and the lower bound of
    :func:`ibprov.verify.perf.routes.lower_bound` (with its proof). Every routable direction is covered
    (a pair that crosses it fits a new round at worst), unless its only pairs join two ports of one node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Literal

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.rails import Rails
from ibprov.clusterspec.types import Endpoint
from ibprov.routing.model import RoutingModel
from ibprov.verify.perf.routes import LinkDirection, LowerBound, Routing, lft_routing, lower_bound, planned_routing

__all__ = [
    "Coverage",
    "Pair",
    "Schedule",
    "ScheduleKind",
    "all_pairs",
    "quick",
    "rail_aware",
    "round_robin",
    "route_aware",
    "route_aware_from_lfts",
    "route_schedule",
]

ScheduleKind = Literal["quick", "all-pairs", "rail-aware", "route-aware"]
# (rail index, "") for a port on a rail; (number of rails, "DEVICE:PORT") for a port on none (mpi.rails only)
Rail = tuple[int, str]

_SHOWN = 8  # directions listed by describe() before "and N more"


@dataclass(frozen=True)
class Pair:
    client: Endpoint
    server: Endpoint

    def __str__(self) -> str:
        return f"{self.client} -> {self.server}"


@dataclass(frozen=True)
class Coverage:
    """Inter-switch link directions carrying test traffic: ``covered`` of ``routable`` (those some host-to-host
    route uses: the most any schedule can cover) of ``total``."""

    covered: int
    routable: int
    total: int
    uncovered: tuple[LinkDirection, ...] = ()  # routable, not covered
    unroutable: tuple[LinkDirection, ...] = ()  # no host-to-host route crosses them

    @property
    def percent(self) -> float:
        """Covered directions as a percentage of all inter-switch directions (100 when there are none)."""
        return 100.0 * self.covered / self.total if self.total else 100.0

    @property
    def routable_percent(self) -> float:
        return 100.0 * self.covered / self.routable if self.routable else 100.0

    @property
    def complete(self) -> bool:
        """Every routable direction is covered."""
        return self.covered == self.routable


@dataclass(frozen=True)
class Schedule:
    kind: ScheduleKind
    rounds: tuple[tuple[Pair, ...], ...]
    coverage: Coverage | None = None  # route-aware only
    lower_bound: int | None = None  # route-aware only: no schedule covering the routable directions needs fewer
    lower_bound_reason: str | None = None
    routes: str | None = None  # where the routes came from (route-aware)
    untested: tuple[Endpoint, ...] = ()  # host ports the schedule cannot pair (alone on their rail)
    notes: tuple[str, ...] = ()  # what the routes could not show (route-aware)

    @property
    def pairs(self) -> tuple[Pair, ...]:
        return tuple(p for r in self.rounds for p in r)

    @property
    def ratio(self) -> float | None:
        """Rounds / lower bound (route-aware)."""
        if not self.lower_bound:
            return None
        return len(self.rounds) / self.lower_bound

    def describe(self) -> list[str]:
        """The schedule as ``--dry-run`` prints it: a summary, then every round and its pairs."""
        n = len(self.rounds)
        head = f"{self.kind} schedule: {n} round{'s' if n != 1 else ''}, {len(self.pairs)} pairs"
        if self.routes:
            head += f" (routes: {self.routes})"
        out = [head]
        if self.coverage is not None:
            c = self.coverage
            line = f"link coverage: {c.percent:.1f} % ({c.covered} of {c.total} inter-switch link directions)"
            if c.routable != c.total:
                line += f"; {c.routable_percent:.1f} % of the {c.routable} that host-to-host routes use"
            out.append(line)
            if c.unroutable:
                out.append(
                    f"  {len(c.unroutable)} direction(s) carry no host-to-host route, so no perftest pair can "
                    f"load them: {_listed(c.unroutable)}"
                )
            if c.uncovered:
                out.append(f"  not covered: {_listed(c.uncovered)}")
        if self.lower_bound is not None:
            ratio = f" (ratio {self.ratio:.2f})" if self.ratio is not None else ""
            out.append(f"lower bound: {self.lower_bound} round(s){ratio}: {self.lower_bound_reason}")
        elif self.lower_bound_reason:
            out.append(f"lower bound: none ({self.lower_bound_reason})")
        for i, pairs in enumerate(self.rounds, start=1):
            out.append(f"round {i}/{n}: {len(pairs)} pair{'s' if len(pairs) != 1 else ''}")
            out.extend(f"  {p}" for p in pairs)
        if self.untested:
            out.append(f"not tested (no partner on their rail): {', '.join(map(str, self.untested))}")
        out.extend(f"note: {note}" for note in self.notes)
        return out


def _listed(dirs: Sequence[LinkDirection]) -> str:
    shown = ", ".join(map(str, dirs[:_SHOWN]))
    return shown + (f" and {len(dirs) - _SHOWN} more" if len(dirs) > _SHOWN else "")


# ---------------------------------------------------------------------------------- node schedules
def round_robin(n: int) -> list[list[tuple[int, int]]]:
    """Circle-method rounds over items 0..n-1: every unordered pair once; n - 1 rounds of n/2 pairs for even
    n, n rounds of (n - 1)/2 pairs (one item sits out) for odd n. Each item is client about half the time."""
    if n < 2:
        return []
    m = n + n % 2  # with a dummy item (the bye) when n is odd
    others = list(range(1, m))
    rounds = []
    for r in range(m - 1):
        circle = [0, *others[r:], *others[:r]]
        pairs = []
        for i in range(m // 2):
            a, b = circle[i], circle[m - 1 - i]
            if a >= n or b >= n:
                continue  # the bye
            # the top row sends to the bottom row; the fixed item alternates: each item is client about
            # as often as server
            pairs.append((b, a) if i == 0 and r % 2 else (a, b))
        rounds.append(pairs)
    return rounds


def _half_split(n: int) -> list[tuple[int, int]]:
    """One round pairing the first half of 0..n-1 (odd n: without the last) with the second half."""
    half = n // 2
    return [(i, i + half) for i in range(half)]


def _rails(loaded: LoadedSpec) -> list[tuple[str, list[tuple[Rail, Endpoint]]]]:
    """Each node with cabled ports: its name and (rail, port) in rail order, then its ports on no rail."""
    cabled = {end for link in loaded.topology.links for end in (link.a, link.b) if end.hca is not None}
    rails = Rails.of(loaded.spec)
    off = len(rails.names)
    out = []
    for node in loaded.spec.nodes:
        ports: list[tuple[Rail, Endpoint]] = [
            ((r, ""), end) for r, end in enumerate(rails.ports(node)) if end is not None and end in cabled
        ]
        ports += [((off, f"{end.hca}:{end.port}"), end) for end in rails.off_rail(node) if end in cabled]
        if ports:
            out.append((node.name, ports))
    return out


def _rail_groups(loaded: LoadedSpec) -> dict[Rail, list[Endpoint]]:
    groups: dict[Rail, list[Endpoint]] = {}
    for _, ports in _rails(loaded):
        for rail, end in ports:
            groups.setdefault(rail, []).append(end)
    return dict(sorted(groups.items()))


class _Packer:
    """Rounds filled first-fit: a pair goes to the first round where neither of its ports is busy."""

    def __init__(self) -> None:
        self.rounds: list[list[Pair]] = []
        self.busy: list[set[Endpoint]] = []

    def slot(self, pair: Pair) -> int:
        """The first round where the pair fits (the number of rounds: a new one)."""
        i = 0
        while i < len(self.rounds) and (pair.client in self.busy[i] or pair.server in self.busy[i]):
            i += 1
        return i

    def put(self, pair: Pair) -> None:
        i = self.slot(pair)
        if i == len(self.rounds):
            self.rounds.append([])
            self.busy.append(set())
        self.rounds[i].append(pair)
        self.busy[i].update((pair.client, pair.server))

    def frozen(self) -> tuple[tuple[Pair, ...], ...]:
        return tuple(tuple(r) for r in self.rounds if r)


def quick(loaded: LoadedSpec) -> Schedule:
    """Every host port (every node, every rail) in at least one pair, in one round or two (module docstring)."""
    packer = _Packer()
    left: list[tuple[Rail, Endpoint]] = []
    groups = _rail_groups(loaded)
    for rail, members in groups.items():
        if len(members) % 2:  # one port over: a different node's on each rail, so they can pair up
            over = len(members) - 1 - len(left) % len(members)
            left.append((rail, members[over]))
            members = members[:over] + members[over + 1 :]
        for a, b in _half_split(len(members)):
            packer.put(Pair(members[a], members[b]))
    alone: list[tuple[Rail, Endpoint]] = []
    while left:
        rail, end = left.pop(0)
        partner = next((x for x in left if x[1].device != end.device), None)
        if partner is None:
            alone.append((rail, end))
        else:
            left.remove(partner)
            packer.put(Pair(end, partner[1]))
    untested = []
    for rail, end in alone:
        others = [e for e in groups[rail] if e.device != end.device]
        others += [e for r, members in groups.items() if r != rail for e in members if e.device != end.device]
        if others:
            packer.put(min((Pair(end, other) for other in others), key=packer.slot))
        else:
            untested.append(end)
    return Schedule("quick", packer.frozen(), untested=tuple(untested))


def all_pairs(loaded: LoadedSpec) -> Schedule:
    """Every two nodes once, round robin (module docstring), each on its first cabled port."""
    ports = [ports[0][1] for _, ports in _rails(loaded)]
    rounds = tuple(tuple(Pair(ports[a], ports[b]) for a, b in r) for r in round_robin(len(ports)))
    return Schedule("all-pairs", rounds, untested=tuple(ports) if len(ports) == 1 else ())


def rail_aware(loaded: LoadedSpec, pairing: Literal["all-pairs", "quick"] = "all-pairs") -> Schedule:
    """Rail *i* against rail *i* only, every rail in parallel; ``pairing`` picks the pairs within a rail."""
    merged: list[list[Pair]] = []
    untested: list[Endpoint] = []
    for members in _rail_groups(loaded).values():
        if len(members) < 2:
            untested.extend(members)
            continue
        if pairing == "all-pairs":
            rounds = round_robin(len(members))
        else:
            rounds = [_half_split(len(members))] + ([[(len(members) - 1, 0)]] if len(members) % 2 else [])
        for i, pairs in enumerate(rounds):
            if i == len(merged):
                merged.append([])
            merged[i].extend(Pair(members[a], members[b]) for a, b in pairs)
    return Schedule("rail-aware", tuple(tuple(r) for r in merged), untested=tuple(untested))


# ---------------------------------------------------------------------------------- route-aware
class _RouteRounds:
    """Rounds of (client, server) host-port indices in which no port and no link direction is used twice."""

    def __init__(self, routing: Routing) -> None:
        self.r = routing
        self.uncovered = set(routing.routable)
        self.pairs: list[list[tuple[int, int]]] = []
        self.busy: list[set[int]] = []
        self.used: list[set[int]] = []
        self.node = [end.device for end in routing.endpoints]

    def _add(self, i: int, s: int, d: int, path: tuple[int, ...]) -> None:
        if i == len(self.pairs):
            self.pairs.append([])
            self.busy.append(set())
            self.used.append(set())
        self.pairs[i].append((s, d))
        self.busy[i].update((s, d))
        self.used[i].update(path)
        self.uncovered.difference_update(path)

    def offer(self, s: int, d: int) -> None:
        """Add pair s -> d in the first round it fits, if it covers a new direction."""
        if self.node[s] == self.node[d]:
            return
        path = self.r.route(self.r.switch_of(s), d)
        if not path or self.uncovered.isdisjoint(path):
            return
        i = 0
        while i < len(self.pairs) and (s in self.busy[i] or d in self.busy[i] or not self.used[i].isdisjoint(path)):
            i += 1
        self._add(i, s, d, path)

    def cover_ports(self) -> None:
        """Every host port in a pair: a port no pair uses gets a partner of another node in the earliest
        round where both ports are free and the route shares no direction with that round's pairs (a new
        round when none has room); among those, a partner on another switch first, then an idle one. A
        node's HCA and cable are tested even when the links above its leaf are loaded by other pairs."""
        n = len(self.r.endpoints)
        switch_of = self.r.switch_of
        taken = {port for pairs in self.pairs for pair in pairs for port in pair}
        idle = dict.fromkeys(h for h in range(n) if h not in taken)  # ordered, O(1) removal
        on_switch: dict[int, list[int]] = {}
        for h in range(n):
            on_switch.setdefault(switch_of(h), []).append(h)
        while idle:
            s = next(iter(idle))
            del idle[s]
            here, node = switch_of(s), self.node[s]
            away = list(islice((d for d in idle if switch_of(d) != here and self.node[d] != node), 48))
            if len(away) < 48:
                rest = (d for d in range(n) if d not in idle and switch_of(d) != here and self.node[d] != node)
                away += islice(rest, 48 - len(away))
            near = [d for d in on_switch[here] if d != s and self.node[d] != node][:16]  # no link to share
            best: tuple[tuple[int, bool, bool, int], int, tuple[int, ...]] | None = None
            for d in away + near:
                path = self.r.route(here, d) if switch_of(d) != here else ()
                if path is None:
                    continue
                i = 0
                while i < len(self.pairs) and (
                    s in self.busy[i] or d in self.busy[i] or not self.used[i].isdisjoint(path)
                ):
                    i += 1
                key = (i, switch_of(d) == here, d not in idle, d)
                if best is None or key < best[0]:
                    best = (key, d, path)
                if i == 0 and switch_of(d) != here:
                    break  # the earliest round, across a link: nothing is better
            if best is not None:
                (i, *_), d, path = best
                self._add(i, s, d, path)
                idle.pop(d, None)

    def _free_host(self, switch: int, d: int, i: int) -> int | None:
        busy = self.busy[i] if i < len(self.busy) else ()
        node = self.node[d]
        return next((h for h in self.r.g.hosts_on[switch] if h not in busy and self.node[h] != node), None)

    def copy(self) -> _RouteRounds:
        other = _RouteRounds.__new__(_RouteRounds)
        other.r, other.node, other.uncovered = self.r, self.node, set(self.uncovered)
        other.pairs = [list(p) for p in self.pairs]
        other.busy = [set(b) for b in self.busy]
        other.used = [set(u) for u in self.used]
        return other

    def shrink(self, bound: int | None) -> _RouteRounds:
        """Without the last round, as long as what only it covers fits the earlier rounds (and there are more
        rounds than the lower bound)."""
        best = self
        while len(best.pairs) > max(1, bound or 0):
            trial = best.copy()
            trial.pairs.pop()
            trial.busy.pop()
            last = trial.used.pop()
            trial.uncovered |= last.difference(*trial.used)
            trial.repair(new_rounds=False)
            if len(trial.uncovered) > len(best.uncovered):
                break
            best = trial
        return best

    def repair(self, *, new_rounds: bool = True) -> None:
        """Give every uncovered direction the pair crossing it that fits the earliest round (then covers the
        most new directions); directions at the leaves with the fewest host ports per direction go first.
        Without ``new_rounds``, only pairs that fit the rounds there are."""
        for e in sorted(self.uncovered, key=self._pressure):
            if e not in self.uncovered:
                continue
            best: tuple[int, int, int, int, tuple[int, ...]] | None = None
            looked = 0
            for switch, d in self.r.candidates(e):
                path = self.r.route(switch, d)
                if not path:
                    continue
                gain = len(self.uncovered.intersection(path))
                for i in range(len(self.pairs) + new_rounds):
                    if best is not None and (i, -gain) >= best[:2]:
                        break
                    if i < len(self.pairs) and (d in self.busy[i] or not self.used[i].isdisjoint(path)):
                        continue
                    s = self._free_host(switch, d, i)
                    if s is not None:
                        best = (i, -gain, s, d, path)
                        break
                looked += 1
                if best is not None and ((best[0] == 0 and looked >= 16) or looked >= 512):
                    break
            if best is not None:
                self._add(best[0], best[2], best[3], best[4])

    def fill(self, *, top_down: bool, balance: bool) -> None:
        """Round by round: each uncovered direction gets the pair crossing it that fits the round being built
        and covers the most new directions; a new round starts when no uncovered direction fits. Directions
        are taken most pressed first (``top_down``: the highest tier first); ``balance`` breaks ties towards
        switches with the fewest pairs in the round (and looks at fewer candidates, but at all of them)."""
        g = self.r.g
        limit = 48 if balance else 256
        while self.uncovered:
            i = len(self.pairs)
            load: dict[int, int] = {}
            order = sorted(self.uncovered, key=self._top_down if top_down else self._pressure)
            for e in order:
                if e not in self.uncovered or (i < len(self.used) and e in self.used[i]):
                    continue
                best: tuple[tuple[int, int], int, int, tuple[int, ...]] | None = None
                busy = self.busy[i] if i < len(self.busy) else set()
                for looked, (switch, d) in enumerate(self.r.candidates(e, busy)):
                    if looked >= limit:
                        break
                    path = self.r.route(switch, d)
                    if not path or (i < len(self.used) and not self.used[i].isdisjoint(path)):
                        continue
                    s = self._free_host(switch, d, i)
                    if s is None:
                        continue
                    gain = len(self.uncovered.intersection(path))
                    score = (gain, -(load.get(switch, 0) + load.get(g.ep_switch[d], 0)) if balance else 0)
                    if best is None or score > best[0]:
                        best = (score, s, d, path)
                        if not balance and gain == len(path):
                            break
                if best is not None:
                    _, s, d, path = best
                    self._add(i, s, d, path)
                    for x in (g.ep_switch[s], g.ep_switch[d]):
                        load[x] = load.get(x, 0) + 1
            if i == len(self.pairs):
                break  # nothing fits even an empty round: the rest cannot be covered

    def _top_down(self, e: int) -> tuple[int, float, int]:
        g = self.r.g
        return (-max(g.level[g.src[e]], g.level[g.dst[e]]), *self._pressure(e))

    def _pressure(self, e: int) -> tuple[float, int]:
        g = self.r.g
        ratio = 0.0
        for x in (g.src[e], g.dst[e]):
            if g.hosts_on[x]:
                ratio = max(ratio, len(g.dirs_of[x]) / len(g.hosts_on[x]))
        return (-ratio, e)


def _blocks(routing: Routing) -> list[list[int]]:
    """Host ports grouped by the connected groups of switches below the top tier (leaves of a two-level
    tree, pods of a three-level one), in cabling order."""
    g = routing.g
    cabled = [x for x in range(len(g.names)) if g.dirs_of[x]]
    if not cabled:
        return []
    top = max(g.level[x] for x in cabled)
    group: dict[int, int] = {}
    for start in range(len(g.names)):
        if start in group or (g.level[start] >= top and not g.hosts_on[start]):
            continue
        group[start] = start
        todo = [start]
        while todo:
            x = todo.pop()
            for e in g.dirs_of[x]:
                y = g.dst[e]
                if g.level[y] < top and g.level[x] < top and y not in group:
                    group[y] = start
                    todo.append(y)
    blocks: dict[int, list[int]] = {}
    for host, switch in enumerate(g.ep_switch):
        blocks.setdefault(group[switch], []).append(host)
    return sorted(blocks.values(), key=lambda b: b[0])


def _structured_pairs(routing: Routing) -> list[tuple[int, int]]:
    """Each host port -> the port at its position in the next block, listed along the cycles this forms."""
    blocks = _blocks(routing)
    m = len(blocks)
    if m < 2:
        return []
    shift = m % 2  # an odd number of blocks: wrap onto the next position, for even cycles
    where = {h: (b, x) for b, members in enumerate(blocks) for x, h in enumerate(members)}

    def successor(h: int) -> int:
        b, x = where[h]
        if b + 1 < m:
            return blocks[b + 1][x % len(blocks[b + 1])]
        return blocks[0][(x + shift) % len(blocks[0])]

    out: list[tuple[int, int]] = []
    done: set[int] = set()
    for start in sorted(where):
        h = start
        while h not in done:
            done.add(h)
            nxt = successor(h)
            out.append((h, nxt))
            h = nxt
    return out


def _best_rounds(routing: Routing, bound: int | None) -> _RouteRounds:
    """The structured schedule; when it needs more rounds than the lower bound, also the round-by-round
    greedy ones, and the one with the fewest rounds (the first of equals)."""
    rounds = _RouteRounds(routing)
    for s, d in _structured_pairs(routing):
        rounds.offer(s, d)
    rounds.repair()
    rounds = rounds.shrink(bound)
    if bound is not None and len(rounds.pairs) <= bound:
        return rounds
    for top_down, balance in ((True, False), (False, False), (True, True)):
        other = _RouteRounds(routing)
        other.fill(top_down=top_down, balance=balance)
        other = other.shrink(bound)
        if len(other.uncovered) <= len(rounds.uncovered) and len(other.pairs) < len(rounds.pairs):
            rounds = other
            if bound is not None and len(rounds.pairs) <= bound:
                break
    return rounds


def route_schedule(routing: Routing) -> Schedule:
    """The route-aware schedule over ``routing`` (module docstring)."""
    bound = lower_bound(routing)
    rounds = _best_rounds(routing, bound.rounds if bound is not None else None)
    rounds.cover_ports()
    ends = routing.endpoints
    routable = routing.routable
    total = routing.direction_count
    coverage = Coverage(
        covered=len(routable) - len(rounds.uncovered),
        routable=len(routable),
        total=total,
        uncovered=tuple(routing.direction(e) for e in sorted(rounds.uncovered)),
        unroutable=tuple(routing.direction(e) for e in range(total) if e not in routable),
    )
    if bound is not None and bound.rounds == 0 and len({end.device for end in ends}) > 1:
        # no link to load, but every host port is tested: one round at least
        bound = LowerBound(1, "no routable link direction; every host port is tested, so one round at least")
    return Schedule(
        "route-aware",
        tuple(tuple(Pair(ends[s], ends[d]) for s, d in sorted(r)) for r in rounds.pairs),
        coverage=coverage,
        lower_bound=bound.rounds if bound is not None else None,
        lower_bound_reason=bound.witness if bound is not None else "some route is not up*/down* (valley-free)",
        routes=routing.source,
        notes=routing.notes,
    )


def route_aware(loaded: LoadedSpec) -> Schedule:
    """Route-aware pairs from the plan's topology and the offline up*/down* model of its routes."""
    return route_schedule(planned_routing(loaded))


def route_aware_from_lfts(model: RoutingModel, endpoints: Mapping[int, Endpoint] | None = None) -> Schedule:
    """Route-aware pairs from the routes the SM programmed, as the routing model holds them
    (:func:`ibprov.routing.model.from_discovery` of ``ibnetdiscover`` + ``dump_lfts``); ``endpoints`` maps
    CA port LIDs to host ports (default: the model's CA port names, :func:`~.routes.model_endpoints`)."""
    return route_schedule(lft_routing(model, endpoints))
