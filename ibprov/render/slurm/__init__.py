"""Slurm's topology from the plan (issue 25): the Slurm tree of the cabling (:mod:`.tree`: the neutral core
``tree_from_cabling`` that discover uses too, and ``plan_tree`` from the spec) and the ib_slurm_topology
role's variables and file (:mod:`.files`). Pure: nothing here reaches a host."""

from __future__ import annotations

from ibprov.clusterspec.scheduler import scheduler_nodes
from ibprov.render.slurm.files import block_sizes, slurm_vars, topology_text, tree_vars, variables_text
from ibprov.render.slurm.tree import (
    SlurmLeaf,
    SlurmTree,
    SlurmUpper,
    hop_tiers,
    plan_tree,
    tree_from_cabling,
)

__all__ = [
    "SlurmLeaf",
    "SlurmTree",
    "SlurmUpper",
    "block_sizes",
    "hop_tiers",
    "plan_tree",
    "scheduler_nodes",
    "slurm_vars",
    "topology_text",
    "tree_from_cabling",
    "tree_vars",
    "variables_text",
]
