"""The scheduler section (Slurm): a controller ibprov can reach, a group some node has, every Slurm node under
a switch, the Slurm release that reads the planned plugin and file, block sizes as Slurm takes them, and a
top switch whose name no Slurm leaf has.

Slurm's 64-character limit on switch and block names needs no rule: node, switch and top names are at most 63
characters, and leaf names are cut to fit (:func:`ibprov.clusterspec.scheduler.leaf_names`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec, Scheduler
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.findings import Finding, hint
from ibprov.clusterspec.scheduler import MIN_RELEASE, host_switches, leaf_names, slurm_release
from ibprov.clusterspec.topology import Topology

SCHEDULER: Path = ("scheduler",)
TOPOLOGY: Path = ("scheduler", "topology")


def scheduler_is_sound(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    scheduler = spec.scheduler
    if scheduler is None:
        return
    yield from _controller_problems(spec, topo, scheduler)
    groups = {g for node in spec.nodes for g in node.groups}
    if scheduler.group is not None and scheduler.group not in groups:
        yield (*SCHEDULER, "group"), f"no node is in group {scheduler.group!r}{hint(scheduler.group, groups)}"
        return
    yield from _release_problems(scheduler)
    switches = host_switches(spec, topo)
    index = {node.name: i for i, node in enumerate(spec.nodes)}
    for node, under in switches.items():
        if not under:
            yield ("nodes", index[node], "name"), _uncabled(node, scheduler.group)
    sizes = Counter(under for under in switches.values() if under)
    yield from _block_problems(scheduler, min(sizes.values(), default=0))
    topology = scheduler.topology
    if topology.plugin == "tree" and topology.top == "single" and len(sizes) > 1:  # a top line is written
        names = leaf_names(sizes, taken=topo.switches)
        if topology.top_name in names.values():
            yield (
                (*TOPOLOGY, "top_name"),
                f"top_name {topology.top_name!r} is the name of a Slurm leaf (of the nodes cabled to "
                f"{', '.join(sorted(next(s for s, n in names.items() if n == topology.top_name)))}), and Slurm's "
                "switch names are unique: give the top switch another name",
            )


def _uncabled(node: str, group: str | None) -> str:
    why = "Slurm's topology needs every node under a switch; cable one of its HCA ports to a switch"
    if group is not None:
        return f"{node} is in scheduler.group {group} but is cabled to no switch: {why}, or leave it out of {group}"
    return (
        f"{node} is a host, so a Slurm node (scheduler has no group), but is cabled to no switch: {why}, or give "
        "scheduler a group that leaves it out"
    )


def _controller_problems(spec: ClusterSpec, topo: Topology, scheduler: Scheduler) -> Iterator[Finding]:
    """A controller that is a node takes the node's address and user; one that is not must not be a switch."""
    name = scheduler.controller
    node = next((n for n in spec.nodes if n.name == name), None)
    if node is not None:
        for field in ("controller_address", "controller_user"):
            if getattr(scheduler, field) is not None:
                yield (
                    (*SCHEDULER, field),
                    f"{field} is for a controller that is not in nodes, and {name} is a node: give its address "
                    "and user in nodes",
                )
    elif name in topo.switches:
        yield (
            (*SCHEDULER, "controller"),
            f"controller {name!r} is the name of a switch: name the host that runs slurmctld (a node, or a host "
            "of its own with controller_address)",
        )


def _release_problems(scheduler: Scheduler) -> Iterator[Finding]:
    """The Slurm release reads the planned plugin (block: 23.11) and file (yaml: 25.05)."""
    release = slurm_release(scheduler.version)
    if release is None:
        yield (
            (*SCHEDULER, "version"),
            f"version {scheduler.version!r} is no Slurm release: give MAJOR.MINOR[.PATCH] as sinfo --version prints "
            "it, e.g. 23.11.4",
        )
        return
    topology = scheduler.topology
    for field, value in (("plugin", topology.plugin), ("file", topology.file)):
        need = MIN_RELEASE.get(value)
        if need is not None and release < need:
            what = "topology/block" if field == "plugin" else "topology.yaml"
            yield (
                (*TOPOLOGY, field),
                f"{what} needs Slurm {need[0]}.{need[1]:02d} or later, and scheduler.version is {scheduler.version}",
            )


def _block_problems(scheduler: Scheduler, smallest: int) -> Iterator[Finding]:
    """block_sizes only for topology/block, each a power-of-two multiple of the one before (topology.conf(5)),
    the first no larger than the smallest block (every block must hold at least that many nodes)."""
    topology = scheduler.topology
    sizes = topology.block_sizes
    if not sizes:
        return
    path: Path = (*TOPOLOGY, "block_sizes")
    if topology.plugin != "block":
        yield path, f"block_sizes are read by plugin block, and plugin is {topology.plugin}"
        return
    for i in range(1, len(sizes)):
        ratio, rest = divmod(sizes[i], sizes[i - 1])
        if rest or ratio < 2 or ratio & (ratio - 1):
            yield (
                (*path, i),
                f"block size {sizes[i]} is no power-of-two multiple of {sizes[i - 1]}, the size before it "
                f"(Slurm takes {sizes[i - 1] * 2}, {sizes[i - 1] * 4}, ...)",
            )
    if smallest and sizes[0] > smallest:
        yield (
            (*path, 0),
            f"the base block size {sizes[0]} is larger than the smallest block ({smallest} nodes under one leaf "
            f"group): every block must hold at least the base size; give {smallest} or less",
        )
