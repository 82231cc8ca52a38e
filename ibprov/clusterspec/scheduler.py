"""What the ``scheduler:`` section means where more than one step needs it: which nodes are Slurm's, the
switches each is cabled to in the plan, what a Slurm leaf is called, and which Slurm release reads what.

A Slurm leaf is the set of IB switches a host is cabled to; hosts with the same set share one. A host on one
leaf switch is under that switch's name; a host cabled to several switches (rail-optimized: one per rail) is
under a leaf named for the set, ``leaf01-leaf08`` (the first and last of the set in natural order), with a
short hash of the whole set when that name is taken, is too long for Slurm (64 characters) or two sets would
share it. The rules (:mod:`ibprov.clusterspec.rules.scheduler`) and the Slurm tree
(:mod:`ibprov.render.slurm.tree`) name leaves by this one function.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.topology import Topology
from ibprov.clusterspec.types import NON_HOST_GROUPS
from ibprov.hostlist import natural_key

__all__ = [
    "MAX_SLURM_NAME",
    "MIN_RELEASE",
    "host_switches",
    "leaf_names",
    "scheduler_nodes",
    "slurm_release",
]

MAX_SLURM_NAME = 64  # topology.conf(5): switch and block names
# the oldest Slurm release that reads a plugin or a file format (topology.conf(5), topology.yaml(5))
MIN_RELEASE: dict[str, tuple[int, int]] = {"block": (23, 11), "yaml": (25, 5)}
_RELEASE = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)*(?:[-.+~][A-Za-z0-9.+~-]*)?$")
_HASH = 6  # hex digits of the set's hash in a disambiguated name


def scheduler_nodes(spec: ClusterSpec) -> list[str]:
    """The scheduler's nodes, in spec order: those of ``scheduler.group``, else every node that is a host
    (not a SHARP, UFM or gateway CA)."""
    group = spec.scheduler.group if spec.scheduler is not None else None
    if group is not None:
        return [n.name for n in spec.nodes if group in n.groups]
    return [n.name for n in spec.nodes if not set(n.groups) & set(NON_HOST_GROUPS)]


def host_switches(spec: ClusterSpec, topo: Topology) -> dict[str, frozenset[str]]:
    """Scheduler node -> the planned switches its HCA ports are cabled to (declared and fat-tree cables), in
    spec order; an empty set for a node cabled to no switch."""
    wanted = scheduler_nodes(spec)
    found: dict[str, set[str]] = {name: set() for name in wanted}
    for link in topo.links:
        a, b = link.a, link.b
        if a.hca is None and b.hca is not None:
            a, b = b, a
        if a.hca is not None and b.hca is None:
            switches = found.get(a.device)
            if switches is not None:
                switches.add(b.device)
    return {name: frozenset(switches) for name, switches in found.items()}


def leaf_names(sets: Iterable[frozenset[str]], taken: Collection[str] = ()) -> dict[frozenset[str], str]:
    """Each set of IB switches -> the name of its Slurm leaf: the switch for a set of one, else
    ``FIRST-LAST`` (natural order), or ``FIRST-LAST`` cut to fit with ``-<hash of the set>`` when that is in
    ``taken`` (switch names), shared by another set or longer than Slurm's 64 characters. Deterministic:
    a set's name depends on the other sets only when they would share it."""
    unique = {s for s in sets if s}
    base: dict[frozenset[str], str] = {}
    for switches in unique:
        ordered = sorted(switches, key=natural_key)
        base[switches] = ordered[0] if len(ordered) == 1 else f"{ordered[0]}-{ordered[-1]}"
    shared: dict[str, int] = {}
    for switches, name in base.items():
        if len(switches) > 1:
            shared[name] = shared.get(name, 0) + 1
    blocked = set(taken)
    out: dict[frozenset[str], str] = {}
    for switches, name in base.items():
        if len(switches) > 1 and (shared[name] > 1 or name in blocked or len(name) > MAX_SLURM_NAME):
            digest = hashlib.sha1(",".join(sorted(switches, key=natural_key)).encode()).hexdigest()[:_HASH]
            name = f"{name[: MAX_SLURM_NAME - _HASH - 1]}-{digest}"
        out[switches] = name
    return out


def slurm_release(version: str) -> tuple[int, int] | None:
    """``"23.11.4"`` -> (23, 11); None when ``version`` is no Slurm release number."""
    match = _RELEASE.match(version)
    return (int(match.group(1)), int(match.group(2))) if match else None
