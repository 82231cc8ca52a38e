"""Routing engines: each listed once, one ibprov can configure, and a fabric it can route (ftree: a fat tree
of two levels at least, every HCA on a leaf, every leaf with an uplink; dor: no tree); LMC and QoS as the
engines allow; the roots (subnet_manager.roots) planned switches, each named once."""

from __future__ import annotations

from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.findings import Finding, dupes, hint
from ibprov.clusterspec.topology import Topology

QOS_ENGINES = {"lash", "dfsssp", "torus-2QoS"}
NO_LMC_ENGINES = {"ftree", "lash"}
# Engines that read a file ibprov does not write: OpenSM runs without it, i.e. falls back or routes as minhop.
UNSUPPORTED_ENGINES = {
    "torus-2QoS": "needs /etc/opensm/torus-2QoS.conf (the torus' dimensions and links), which ibprov does not write",
    "file": "needs an lfts_file (dumped forwarding tables), which ibprov does not write",
}


def routing_problems(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """What the listed engines need from the plan, then the roots, the LMC and QoS they allow."""
    sm = spec.subnet_manager
    yield from _engine_problems(spec, topo)
    yield from _root_problems(spec, topo)
    engines = set(sm.routing_engine)
    if sm.lmc and engines & NO_LMC_ENGINES:
        yield (
            ("subnet_manager", "lmc"),
            (f"lmc {sm.lmc} is not supported by {', '.join(sorted(engines & NO_LMC_ENGINES))} (OpenSM falls back)"),
        )
    if engines & QOS_ENGINES and not spec.qos.enabled:
        yield (
            ("subnet_manager", "routing_engine"),
            (f"{', '.join(sorted(engines & QOS_ENGINES))} needs qos.enabled: true (it routes over SLs/VLs)"),
        )


def _engine_problems(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """What each listed routing engine needs from the plan (else OpenSM finds out at run time and uses minhop)."""
    path: Path = ("subnet_manager", "routing_engine")
    engines = spec.subnet_manager.routing_engine
    for k, engine in enumerate(engines):
        if engine in engines[:k]:
            yield path, f"{engine} is listed twice"
    tiers = {s.role for s in topo.switches.values()}
    for engine in dict.fromkeys(engines):
        if engine in UNSUPPORTED_ENGINES:
            yield path, f"{engine} {UNSUPPORTED_ENGINES[engine]}: use ftree, updn or minhop"
        elif engine == "ftree":
            yield from _ftree_problems(topo, path)
        elif engine == "dor" and tiers & {"spine", "core"}:
            yield (
                path,
                "dor routes meshes and tori by dimension; this fabric is a tree (it has spine or core switches): "
                "use ftree, updn or minhop",
            )


def _ftree_problems(topo: Topology, path: Path) -> Iterator[Finding]:
    """ftree ranks the switches from the leaves (where the CAs are) up; it needs at least two levels."""
    roles = {name: s.role for name, s in topo.switches.items()}
    if not set(roles.values()) & {"spine", "core"}:
        yield (
            path,
            "ftree needs a fat tree of at least two switch levels, and this fabric has no spine or core switch: "
            "add spines (fabric.fat_tree.spines or switches with role: spine) or use updn or minhop",
        )
        return
    leaves = sorted(name for name, role in roles.items() if role == "leaf")
    if len(leaves) < 2:
        yield (
            path,
            f"ftree needs at least two leaf switches, and this fabric has {len(leaves)}: OpenSM finds no fat tree "
            "in it ('Failed to find leaf switches') and routes with minhop; use updn or minhop",
        )
        return
    up: set[str] = set()
    upper = {name for name, role in roles.items() if role in ("spine", "core")}
    not_leaf = {name for name, role in roles.items() if role != "leaf"}
    for link in topo.links:
        (ad, ah, _ap), (bd, bh, _bp) = link.a, link.b
        if ah is None and bh is None:  # switch to switch: the lower end has an uplink
            if bd in upper:
                up.add(ad)
            if ad in upper:
                up.add(bd)
        elif ah is None or bh is None:  # an HCA and a switch: the switch must be a leaf
            hca, switch = (link.b, ad) if ah is None else (link.a, bd)
            if switch in not_leaf:
                yield (
                    link.source,
                    f"ftree needs every HCA on a leaf switch, but {hca} is cabled to {roles[switch]} {switch}",
                )
    for name, role in roles.items():
        if role == "leaf" and name not in up:
            yield path, f"ftree needs every leaf cabled to a spine, and {name} has no uplink"
            return


def _root_problems(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    """subnet_manager.roots: each a planned switch (declared or generated), each named once."""
    roots = spec.subnet_manager.roots
    for i, name in enumerate(roots):
        if name not in topo.switches:
            yield ("subnet_manager", "roots", i), f"unknown switch {name!r}{hint(name, topo.switches)}"
    yield from dupes([(name, ("subnet_manager", "roots", i)) for i, name in enumerate(roots)], "root")
