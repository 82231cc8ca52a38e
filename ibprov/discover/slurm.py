"""Slurm's tree of a live fabric (``ibprov discover --slurm-topology FILE``), through the same core as the
plan's (:func:`ibprov.render.slurm.tree_from_cabling`), and where it differs from the plan.

Names: with a spec, every device the match placed keeps the spec's name (switches, and each HCA's node), so
the discovered file and the planned one name the same things; a device the match did not place, and every
device without a spec, is named from its NodeDescription: a host by the first word (what slurmibtopology does,
read as ibprov's discover reads hosts: :func:`~ibprov.discover.hosts.classify`), a switch by its sanitised
description, made unique with its GUID. Tiers come from hop distance (a discovered fabric has no roles).

A host under another leaf than planned is a cabling finding (:func:`leaf_differences`), never a reason to
change the topology: the file to install is the plan's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ibprov.clusterspec.model import SlurmTopology
from ibprov.discover.found import Found
from ibprov.discover.hosts import classify, natural_key, sanitize
from ibprov.discover.match import MatchResult
from ibprov.render.slurm import SlurmTree, tree_from_cabling

__all__ = ["discovered_names", "discovered_tree", "leaf_differences"]


def discovered_names(found: Found, match: MatchResult | None = None) -> dict[int, str]:
    """Device GUID -> the name it gets: the spec's (switch, or an HCA's node) where the match placed it, else
    from its description."""
    names: dict[int, str] = {}
    if match is not None:
        for m in match.matched:
            names[m.device.guid] = m.planned.split("/")[0]
    seen: dict[str, int] = {}
    for dev in sorted(found.devices.values(), key=lambda d: (natural_key(d.desc), d.guid)):
        if dev.guid in names:
            continue
        if dev.kind == "CA":
            role = classify(dev.description)
            first = dev.desc.split()[0] if dev.desc.split() else ""
            name = role.host or sanitize(first) or f"ca-{dev.guid:016x}"
        else:
            name = sanitize(dev.desc) or f"sw-{dev.guid:016x}"
            if name in seen and seen[name] != dev.guid:
                name = f"{name[:44]}-{dev.guid:016x}"
            seen[name] = dev.guid
        names[dev.guid] = name
    return names


def discovered_tree(
    found: Found, names: Mapping[int, str], options: SlurmTopology | None = None, hosts: Sequence[str] | None = None
) -> SlurmTree:
    """Slurm's tree of ``found``: each host's leaves from its CAs' cables, the switch-to-switch cables, tiers
    by hop distance; ``hosts``: only these (the scheduler's nodes), default every host with a cable."""
    kind = {guid: dev.kind for guid, dev in found.devices.items()}
    host_leaves: dict[str, set[str]] = {}
    links: list[tuple[str, str]] = []
    for cable in found.cables:
        (ga, _), (gb, _) = cable.a, cable.b
        ka, kb = kind.get(ga), kind.get(gb)
        if ka == "SW" and kb == "SW":
            links.append((names[ga], names[gb]))
        elif {ka, kb} == {"SW", "CA"}:
            ca, sw = (ga, gb) if ka == "CA" else (gb, ga)
            if classify(found.devices[ca].description).is_host:
                host_leaves.setdefault(names[ca], set()).add(names[sw])
    wanted = set(hosts) if hosts is not None else set(host_leaves)
    leaves = {h: frozenset(host_leaves.get(h, ())) for h in wanted}
    return tree_from_cabling(leaves, links, None, options)


def leaf_differences(planned: SlurmTree, discovered: SlurmTree) -> list[str]:
    """One line per planned node that sits under another leaf on the fabric than in the plan (or under none)."""
    out = []
    found_ib = {leaf.name: leaf.ib_switches for leaf in discovered.leaves}
    planned_ib = {leaf.name: leaf.ib_switches for leaf in planned.leaves}
    for node in sorted(planned.node_leaf, key=natural_key):
        want = planned_ib.get(planned.node_leaf[node], ())
        got_leaf = discovered.node_leaf.get(node)
        got = found_ib.get(got_leaf, ()) if got_leaf else ()
        if set(got) != set(want):
            where = "+".join(got) if got else "no switch (not found, or no active cable)"
            out.append(f"cabling: {node} is cabled to {where} on the fabric; the plan has it on {'+'.join(want)}")
    return out
