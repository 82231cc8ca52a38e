"""What Slurm should show, from the spec: the scheduler's nodes, the Slurm leaf each sits under (the same tree
``ibprov render`` writes into topology.conf, :func:`ibprov.render.slurm.plan_tree`), the switches above
them (topology/tree) or the block of each leaf and the base block size (topology/block), and the plugin."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ibprov.clusterspec import LoadedSpec
from ibprov.render.slurm import block_sizes, plan_tree, scheduler_nodes

__all__ = ["SchedulerPlan", "build_scheduler_plan"]


@dataclass(frozen=True)
class SchedulerPlan:
    controller: str
    nodes: tuple[str, ...]  # the scheduler's nodes, in spec order
    plugin: str  # "topology/tree" or "topology/block"
    node_leaf: Mapping[str, str] = field(default_factory=dict)  # node -> the Slurm leaf it belongs under
    switches: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)  # (nodes, sw)
    managed: bool = True  # ibprov writes the topology file (else the site does: compared all the same)
    # topology/block: block name (a Slurm leaf's) -> its nodes, and BlockSizes' first size (every base block's)
    blocks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    block_size: int | None = None


def build_scheduler_plan(loaded: LoadedSpec) -> SchedulerPlan:
    scheduler = loaded.spec.scheduler
    if scheduler is None:
        raise ValueError("the spec has no scheduler section")
    tree = plan_tree(loaded)
    switches: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
        leaf.name: (tuple(leaf.nodes), ()) for leaf in tree.leaves
    }
    for upper in tree.uppers:
        switches[upper.name] = ((), tuple(upper.switches))
    block = scheduler.topology.plugin == "block"
    sizes = block_sizes(tree, tuple(scheduler.topology.block_sizes)) if block else []
    return SchedulerPlan(
        controller=scheduler.controller,
        nodes=tuple(scheduler_nodes(loaded.spec)),
        plugin=f"topology/{scheduler.topology.plugin}",
        node_leaf=dict(tree.node_leaf),
        switches=switches,
        managed=scheduler.manage_topology,
        blocks={leaf.name: tuple(leaf.nodes) for leaf in tree.leaves} if block else {},
        block_size=sizes[0] if sizes else None,
    )
