"""Slurm's topology file from the plan: the ib_slurm_topology role's variables (:func:`slurm_vars`) and the
file the role writes with them, rendered here by the role's own template (:func:`topology_text`), so that
the preview ``ibprov render`` writes is byte for byte what Ansible installs on the controller.

topology/tree: a ``SwitchName=… Nodes=…`` line per Slurm leaf, then ``SwitchName=… Switches=…`` per switch
above them (:mod:`.tree`). topology/block: a ``BlockName=… Nodes=…`` line per Slurm leaf (a leaf group is a
block: its nodes are one switch hop apart on every rail) and ``BlockSizes=``, by default the smallest
block's node count (Slurm's rules, checked by the spec: every block holds at least the first size, each next
size is a power-of-two multiple of the one before). Node and switch lists are compressed hostlists.
"""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import SlurmTopology
from ibprov.hostlist import compress
from ibprov.render.slurm.tree import SlurmTree, plan_tree
from ibprov.render.templates import RENDER_HEADER, render_role_template

__all__ = ["ROLE", "TOPOLOGY_NAME", "block_sizes", "slurm_vars", "topology_text", "tree_vars", "variables_text"]

ROLE = "ib_slurm_topology"
TOPOLOGY_NAME = "default"  # the topology's name in topology.yaml (the cluster default)


def block_sizes(tree: SlurmTree, planned: tuple[int, ...] = ()) -> list[int]:
    """BlockSizes: the spec's, else the smallest block's node count (none without blocks)."""
    if planned:
        return list(planned)
    sizes = [len(leaf.nodes) for leaf in tree.leaves]
    return [min(sizes)] if sizes else []


def slurm_vars(loaded: LoadedSpec) -> dict[str, Any]:
    """The ib_slurm_topology role's variables for the spec's ``scheduler:`` section (which must be set)."""
    scheduler = loaded.spec.scheduler
    if scheduler is None:
        raise ValueError("the spec has no scheduler section")
    return tree_vars(plan_tree(loaded), scheduler.topology, scheduler.config_dir)


def tree_vars(tree: SlurmTree, topo: SlurmTopology, config_dir: str = "/etc/slurm") -> dict[str, Any]:
    """The ib_slurm_topology role's variables of one Slurm tree (the plan's, or a discovered fabric's)."""
    switches: list[dict[str, str]] = []
    blocks: list[dict[str, str]] = []
    if topo.plugin == "tree":
        switches = [{"name": leaf.name, "nodes": compress(leaf.nodes)} for leaf in tree.leaves]
        switches += [{"name": up.name, "switches": compress(up.switches)} for up in tree.uppers]
    else:
        blocks = [{"name": leaf.name, "nodes": compress(leaf.nodes)} for leaf in tree.leaves]
    return {
        "ib_slurm_topology_plugin": topo.plugin,
        "ib_slurm_topology_file": topo.file,
        "ib_slurm_topology_config_dir": config_dir,
        "ib_slurm_topology_switches": switches,
        "ib_slurm_topology_blocks": blocks,
        "ib_slurm_topology_block_sizes": block_sizes(tree, topo.block_sizes) if topo.plugin == "block" else [],
        "ib_slurm_topology_name": TOPOLOGY_NAME,
        "ib_slurm_topology_reconfigure": True,
    }


def variables_text(variables: dict[str, Any], source: str) -> tuple[str, str]:
    """(file name, text) the role writes with ``variables``; ``source`` names where they came from (header)."""
    name = f"topology.{variables['ib_slurm_topology_file']}"
    header = RENDER_HEADER.format(spec=source)
    return name, render_role_template(ROLE, f"{name}.j2", {**variables, "ansible_managed": header})


def topology_text(loaded: LoadedSpec, variables: dict[str, Any] | None = None) -> tuple[str, str]:
    """(file name, text) of the topology file the role writes: ``topology.conf`` or ``topology.yaml``.
    ``variables``: :func:`slurm_vars` of ``loaded``, when the caller has them already."""
    variables = variables if variables is not None else slurm_vars(loaded)
    return variables_text(variables, loaded.path.name if loaded.path else "cluster.yaml")
