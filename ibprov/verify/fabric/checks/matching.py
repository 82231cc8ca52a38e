"""Planned cables against observed links, by GUID: which match, and how the others differ.

Each observed link end becomes a planned :class:`Endpoint` (a device the plan has, found by its GUID) or
a :class:`Foreign` end (a GUID the plan does not have). Then, in this order:

1. matched: the planned cable is there.
2. swapped: planned A-P and B-Q, found A-Q and B-P -- one finding for the pair, not two miswires.
3. for every other observed link with a planned end X (X's planned peer is not the found one):
   a wrong device when the other end is Foreign, else a miswire of X. X is the CA end if there is one,
   else the lower switch tier. X's planned cable is explained by it.
4. an observed link with no planned end at all: unplanned.
5. a planned cable left over is down when one of its ports shows a link that is not up (Disabled,
   training, ...), else missing (its ports see nothing: no cable, or a dead peer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ibprov.clusterspec.topology import PlannedLink
from ibprov.clusterspec.types import Endpoint
from ibprov.identity.guids import fmt_guid
from ibprov.verify.fabric.observation import LinkState, Observation, ObservedLink, PortRef
from ibprov.verify.fabric.plan import Plan, endpoint_name

__all__ = ["Cabling", "End", "Foreign", "classify", "end_name", "planned_ref"]


@dataclass(frozen=True)
class Foreign:
    """A port of a device the plan does not have."""

    ref: PortRef
    description: str
    type: str

    def __str__(self) -> str:
        return f'{fmt_guid(self.ref.node_guid)} "{self.description}" port {self.ref.port}'


End = Endpoint | Foreign


def end_name(end: End) -> str:
    return endpoint_name(end) if isinstance(end, Endpoint) else str(end)


@dataclass
class Cabling:
    matched: list[tuple[PlannedLink, ObservedLink]] = field(default_factory=list)
    swapped: list[tuple[PlannedLink, PlannedLink]] = field(default_factory=list)
    miswired: list[tuple[Endpoint, Endpoint, End]] = field(default_factory=list)  # (end, planned, found)
    wrong_device: list[tuple[Endpoint, Endpoint, Foreign]] = field(default_factory=list)
    unplanned: list[tuple[End, End]] = field(default_factory=list)
    missing: list[tuple[PlannedLink, list[tuple[Endpoint, LinkState | None]]]] = field(default_factory=list)
    down: list[tuple[PlannedLink, list[tuple[Endpoint, LinkState | None]]]] = field(default_factory=list)


def planned_ref(plan: Plan, obs: Observation, end: Endpoint, index: dict[int, PortRef] | None = None) -> PortRef | None:
    """The observed port at a planned end, if its device is on the fabric."""
    if end.hca is None:
        guid = plan.switch_guids.get(end.device)
        return PortRef(guid, end.port) if guid is not None and guid in obs.nodes else None
    guid = plan.port_guids.get(end)
    ref = (index if index is not None else obs.guid_index()).get(guid) if guid is not None else None
    return ref


def _resolve(plan: Plan, obs: Observation, ref: PortRef) -> End:
    node = obs.nodes.get(ref.node_guid)
    if node is None:
        return Foreign(ref, "", "??")
    end = plan.endpoint(node, ref.port)
    return end if end is not None else Foreign(ref, node.description, node.type)


def _key(a: End, b: End) -> frozenset[End]:
    return frozenset((a, b))


def _order(plan: Plan, ends: frozenset[End]) -> tuple[End, End]:
    """The two ends of a link, planned ends first (CA end, then lower tier), then foreign ends."""

    def key(end: End) -> tuple[int, tuple[int, str, int], str]:
        if isinstance(end, Endpoint):
            return (0, plan.tier(end), "")
        return (1, (0, "", 0), str(end))

    a, b = sorted(ends, key=key) if len(ends) == 2 else (next(iter(ends)),) * 2
    return a, b


@dataclass
class _Work:
    planned: dict[frozenset[End], PlannedLink]
    peer: dict[Endpoint, Endpoint]
    observed: dict[frozenset[End], ObservedLink]
    extra: list[frozenset[End]]
    done_p: set[frozenset[End]] = field(default_factory=set)
    done_o: set[frozenset[End]] = field(default_factory=set)

    def peer_of(self, end: End) -> Endpoint | None:
        return self.peer.get(end) if isinstance(end, Endpoint) else None


def _swaps(plan: Plan, work: _Work, out: Cabling) -> None:
    for k in work.extra:
        if k in work.done_o:
            continue
        x, y = _order(plan, k)
        px, py = work.peer_of(x), work.peer_of(y)
        if px is None or py is None or px == y:
            continue
        other = _key(px, py)
        kx, ky = _key(x, px), _key(y, py)
        if other in work.observed and other not in work.planned and other not in work.done_o:
            if {kx, ky} & work.done_p:
                continue
            first, second = sorted((work.planned[kx], work.planned[ky]), key=lambda lk: plan.tier(plan.anchor(lk)))
            out.swapped.append((first, second))
            work.done_o.update((k, other))
            work.done_p.update((kx, ky))


def _wrong_ends(plan: Plan, work: _Work, out: Cabling) -> None:
    for k in work.extra:
        if k in work.done_o:
            continue
        x, y = _order(plan, k)
        anchor, found = (x, y) if work.peer_of(x) is not None else (y, x)
        planned_peer = work.peer_of(anchor)
        if planned_peer is None or not isinstance(anchor, Endpoint):
            out.unplanned.append((x, y))
            continue
        if isinstance(found, Foreign):
            out.wrong_device.append((anchor, planned_peer, found))
        else:
            out.miswired.append((anchor, planned_peer, found))
        work.done_p.add(_key(anchor, planned_peer))


def _absent(plan: Plan, obs: Observation, work: _Work, out: Cabling) -> None:
    index = obs.guid_index()
    for k, link in work.planned.items():
        if k in work.done_p:
            continue
        states: list[tuple[Endpoint, LinkState | None]] = []
        for end in (link.a, link.b):
            ref = planned_ref(plan, obs, end, index)
            states.append((end, obs.states.get(ref) if ref is not None else None))
        if any(s is not None and not s.no_signal for _e, s in states):
            out.down.append((link, states))
        else:
            out.missing.append((link, states))


def classify(plan: Plan, obs: Observation) -> Cabling:
    peer: dict[Endpoint, Endpoint] = {}
    for planned_link in plan.links:
        peer[planned_link.a], peer[planned_link.b] = planned_link.b, planned_link.a
    observed = {_key(_resolve(plan, obs, seen.a), _resolve(plan, obs, seen.b)): seen for seen in obs.links}
    planned = {_key(link.a, link.b): link for link in plan.links}
    work = _Work(planned, peer, observed, [k for k in observed if k not in planned])
    out = Cabling()
    for k, link in planned.items():
        if k in observed:
            out.matched.append((link, observed[k]))
            work.done_p.add(k)
    _swaps(plan, work, out)
    _wrong_ends(plan, work, out)
    _absent(plan, obs, work, out)
    return out
