"""Slurm's tree from the cabling (ibprov/render/slurm): a Slurm leaf per set of IB switches a host is cabled
to, the switches above it as ``scheduler.topology.top`` says, the role's variables and the topology file the
role's own template writes from them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.model import SlurmTopology
from ibprov.clusterspec.scheduler import MAX_SLURM_NAME, leaf_names, slurm_release
from ibprov.hostlist import expand
from ibprov.render import render_files
from ibprov.render.slurm import (
    SlurmLeaf,
    SlurmUpper,
    hop_tiers,
    plan_tree,
    scheduler_nodes,
    slurm_vars,
    topology_text,
    tree_from_cabling,
)
from ibprov.resources import roles_dir

REPO = Path(__file__).resolve().parents[3]
FAT_TREE = (REPO / "examples" / "fat-tree.yaml").read_text()
SCHEDULER = "\nscheduler:\n  controller: slurmctl01\n  controller_address: 10.0.0.5\n"


def fat_tree(scheduler: str = SCHEDULER) -> LoadedSpec:
    """examples/fat-tree.yaml without its own scheduler section, with ``scheduler``: 34 nodes on 4 leaves
    (10, 10, 10 and 4), 2 spines."""
    base = FAT_TREE.split("\nscheduler:")[0]
    return load_spec_text(base + scheduler, "ft.yaml")


def rails_spec(nodes: int, rails: int, *, top: str = "single", extra_nodes: str = "") -> LoadedSpec:
    """``nodes`` nodes with ``rails`` single-port HCAs, rail-optimized in units of 4 nodes (one leaf per
    rail and unit), 4 spines."""
    leaves = -(-nodes // 4) * rails
    lines = ["version: 1", "cluster: {name: rails}", "nodes:"]
    for i in range(nodes):
        hcas = ", ".join(f"{{device: mlx5_{r}}}" for r in range(rails))
        lines.append(f"  - {{name: gpu{i + 1:03d}, groups: [gpu], hcas: [{hcas}]}}")
    lines.append(extra_nodes)
    lines += [
        "fabric:",
        "  speed: HDR",
        f"  fat_tree: {{radix: 32, leaves: {leaves}, spines: 4, hosts_per_leaf: 4, uplinks_per_leaf: 4, "
        "rails: rail-optimized, unit_nodes: 4, hosts_group: gpu}",
        "subnet_manager:",
        "  routing_engine: updn",
        "  instances: [{node: gpu001}]",
        "scheduler:",
        "  controller: gpu001",
        "  group: gpu",
        f"  topology: {{top: {top}}}",
        "",
    ]
    return load_spec_text("\n".join(lines))


# ------------------------------------------------------------------------------------------ leaves
def test_hosts_on_one_leaf_switch_are_under_that_switch_even_with_an_odd_count() -> None:
    tree = plan_tree(fat_tree())
    assert [(leaf.name, leaf.ib_switches, len(leaf.nodes)) for leaf in tree.leaves] == [
        ("leaf01", ("leaf01",), 10),
        ("leaf02", ("leaf02",), 10),
        ("leaf03", ("leaf03",), 10),
        ("leaf04", ("leaf04",), 4),
    ]
    assert tree.leaves[3].nodes == ("node30", "node31", "node32", "sm02")
    assert tree.node_leaf["sm01"] == "leaf01"
    assert tree.node_leaf["sm02"] == "leaf04"
    assert len(tree.node_leaf) == 34
    assert tree.unplaced == ()


def test_a_rail_optimized_unit_is_one_slurm_leaf_named_for_its_rail_leaves() -> None:
    # 10 nodes in units of 4 (the last unit has 2), 8 rails: units on leaf01-08, leaf09-16, leaf17-24
    tree = plan_tree(rails_spec(10, 8))
    assert [(leaf.name, leaf.nodes) for leaf in tree.leaves] == [
        ("leaf01-leaf08", ("gpu001", "gpu002", "gpu003", "gpu004")),
        ("leaf09-leaf16", ("gpu005", "gpu006", "gpu007", "gpu008")),
        ("leaf17-leaf24", ("gpu009", "gpu010")),
    ]
    assert tree.leaves[0].ib_switches == tuple(f"leaf{i:02d}" for i in range(1, 9))
    assert tree.uppers == (SlurmUpper("top", ("leaf01-leaf08", "leaf09-leaf16", "leaf17-leaf24")),)
    assert tree.node_leaf["gpu010"] == "leaf17-leaf24"


def test_a_host_cabled_to_a_different_set_of_switches_gets_its_own_slurm_leaf() -> None:
    tree = tree_from_cabling(
        {
            "a1": frozenset({"l1", "l2"}),
            "a2": frozenset({"l2", "l1"}),
            "b1": frozenset({"l1"}),
            "c1": frozenset({"l2", "l3"}),
        },
        [],
        {"l1": "leaf", "l2": "leaf", "l3": "leaf"},
    )
    assert [(leaf.name, leaf.nodes) for leaf in tree.leaves] == [
        ("l1", ("b1",)),
        ("l1-l2", ("a1", "a2")),
        ("l2-l3", ("c1",)),
    ]


def test_two_switch_sets_with_the_same_first_and_last_switch_get_distinct_stable_names() -> None:
    one, two = frozenset({"leaf01", "leaf08"}), frozenset({"leaf01", "leaf04", "leaf08"})
    names = leaf_names([one, two])
    assert names[one] != names[two]
    assert names[one].startswith("leaf01-leaf08-")
    assert names[two].startswith("leaf01-leaf08-")
    assert leaf_names([two, one]) == names  # the order the sets come in does not matter
    assert leaf_names([one]) == {one: "leaf01-leaf08"}  # alone, the plain name


def test_a_leaf_name_is_at_most_64_characters_and_never_a_switch_name() -> None:
    long = frozenset({"a" * 60 + "01", "a" * 60 + "02"})
    name = leaf_names([long])[long]
    assert len(name) <= MAX_SLURM_NAME
    assert expand(name) == [name]  # no character a hostlist reads
    clash = frozenset({"x1", "x2"})
    assert leaf_names([clash], taken={"x1-x2"})[clash] != "x1-x2"


def test_a_node_cabled_to_no_switch_is_under_no_leaf() -> None:
    tree = tree_from_cabling({"n1": frozenset({"s1"}), "n2": frozenset()}, [], {"s1": "leaf"})
    assert tree.unplaced == ("n2",)
    assert tree.node_leaf == {"n1": "s1"}
    assert tree.uppers == ()  # one leaf: no top switch


# --------------------------------------------------------------------------------------- uppers
def test_top_single_puts_one_switch_over_every_leaf_and_none_puts_nothing() -> None:
    hosts = {"n1": frozenset({"s1"}), "n2": frozenset({"s2"})}
    single = tree_from_cabling(hosts, [("s1", "s2")], options=SlurmTopology(top_name="ib"))
    assert single.uppers == (SlurmUpper("ib", ("s1", "s2")),)
    assert tree_from_cabling(hosts, [], options=SlurmTopology(top="none")).uppers == ()


def test_top_cabled_lists_pods_spines_over_their_leaves_and_cores_over_the_spines() -> None:
    spec = """\
version: 1
cluster: {name: pods}
nodes:
"""
    spec += "".join(f"  - {{name: n{i:02d}, hcas: [{{device: mlx5_0}}]}}\n" for i in range(1, 10))
    spec += """\
fabric:
  speed: HDR
  fat_tree: {radix: 8, leaves: 4, spines: 4, hosts_per_leaf: 4, uplinks_per_leaf: 2, pods: 2, cores: 2,
             uplinks_per_spine: 2}
subnet_manager:
  routing_engine: updn
  instances: [{node: n01}]
scheduler:
  controller: n01
  topology: {top: cabled}
"""
    tree = plan_tree(load_spec_text(spec))
    assert [leaf.name for leaf in tree.leaves] == ["leaf01", "leaf02", "leaf03"]  # 9 nodes: leaf04 has none
    assert tree.uppers == (
        SlurmUpper("core01", ("spine01", "spine03")),
        SlurmUpper("core02", ("spine02", "spine04")),
        SlurmUpper("spine01", ("leaf01", "leaf02")),
        SlurmUpper("spine02", ("leaf01", "leaf02")),
        SlurmUpper("spine03", ("leaf03",)),  # leaf04 has no Slurm node
        SlurmUpper("spine04", ("leaf03",)),
    )


def test_top_cabled_maps_rail_leaves_to_their_units_slurm_leaf() -> None:
    tree = plan_tree(rails_spec(8, 2, top="cabled"))
    assert [leaf.name for leaf in tree.leaves] == ["leaf01-leaf02", "leaf03-leaf04"]
    assert {up.name: up.switches for up in tree.uppers} == {
        f"spine0{i}": ("leaf01-leaf02", "leaf03-leaf04") for i in range(1, 5)
    }


def test_a_ring_of_leaf_switches_has_no_upper_switch_when_cabled() -> None:
    hosts = {f"n{i}": frozenset({f"sw{i}"}) for i in range(1, 6)}
    ring = [(f"sw{i}", f"sw{i % 5 + 1}") for i in range(1, 6)]
    tiers = {f"sw{i}": "leaf" for i in range(1, 6)}
    tree = tree_from_cabling(hosts, ring, tiers, SlurmTopology(top="cabled"))
    assert [leaf.name for leaf in tree.leaves] == ["sw1", "sw2", "sw3", "sw4", "sw5"]
    assert tree.uppers == ()
    single = tree_from_cabling(hosts, ring, tiers)
    assert single.uppers == (SlurmUpper("top", ("sw1", "sw2", "sw3", "sw4", "sw5")),)


def test_a_discovered_fabric_takes_its_tiers_from_the_hops_to_the_host_switches() -> None:
    hosts = {"n1": frozenset({"l1"}), "n2": frozenset({"l2"})}
    links = [("l1", "s1"), ("l2", "s1"), ("s1", "c1"), ("l1", "s2"), ("l2", "s2"), ("s2", "c1"), ("x", "y")]
    assert hop_tiers(hosts, links) == {
        "l1": "leaf",
        "l2": "leaf",
        "s1": "spine",
        "s2": "spine",
        "c1": "core",
        "x": "core",
        "y": "core",
    }
    tree = tree_from_cabling(hosts, links, options=SlurmTopology(top="cabled"))
    assert tree.uppers == (
        SlurmUpper("c1", ("s1", "s2")),
        SlurmUpper("s1", ("l1", "l2")),
        SlurmUpper("s2", ("l1", "l2")),
    )


def test_a_switch_with_hosts_is_a_slurm_leaf_whatever_its_role() -> None:
    hosts = {"n1": frozenset({"l1"}), "n2": frozenset({"sp1"})}
    tree = tree_from_cabling(hosts, [("l1", "sp1")], {"l1": "leaf", "sp1": "spine"}, SlurmTopology(top="cabled"))
    assert tree.leaves == (SlurmLeaf("l1", ("l1",), ("n1",)), SlurmLeaf("sp1", ("sp1",), ("n2",)))
    assert tree.uppers == ()


# ------------------------------------------------------------------------------------- the nodes
def test_scheduler_nodes_are_the_group_else_every_host() -> None:
    loaded = rails_spec(4, 1, extra_nodes="  - {name: sharp01, groups: [sharp]}")
    assert scheduler_nodes(loaded.spec) == ["gpu001", "gpu002", "gpu003", "gpu004"]
    no_group = loaded.spec.model_copy(
        update={"scheduler": loaded.spec.scheduler.model_copy(update={"group": None})}  # type: ignore[union-attr]
    )
    assert scheduler_nodes(no_group) == ["gpu001", "gpu002", "gpu003", "gpu004"]  # sharp01 is no host


def test_slurm_release_reads_major_and_minor() -> None:
    assert slurm_release("22.05") == (22, 5)
    assert slurm_release("23.11.4") == (23, 11)
    assert slurm_release("24.05.1-1ubuntu2") == (24, 5)
    assert slurm_release("latest") is None


# ---------------------------------------------------------------------------- variables and file
def test_tree_variables_list_leaves_with_nodes_then_the_top_with_switches() -> None:
    variables = slurm_vars(fat_tree())
    assert variables == {
        "ib_slurm_topology_plugin": "tree",
        "ib_slurm_topology_file": "conf",
        "ib_slurm_topology_config_dir": "/etc/slurm",
        "ib_slurm_topology_switches": [
            {"name": "leaf01", "nodes": "node[01-09],sm01"},
            {"name": "leaf02", "nodes": "node[10-19]"},
            {"name": "leaf03", "nodes": "node[20-29]"},
            {"name": "leaf04", "nodes": "node[30-32],sm02"},
            {"name": "top", "switches": "leaf[01-04]"},
        ],
        "ib_slurm_topology_blocks": [],
        "ib_slurm_topology_block_sizes": [],
        "ib_slurm_topology_name": "default",
        "ib_slurm_topology_reconfigure": True,
    }


def test_block_variables_make_a_block_per_leaf_and_the_smallest_block_the_base_size() -> None:
    variables = slurm_vars(fat_tree(SCHEDULER + "  version: '23.11'\n  topology: {plugin: block}\n"))
    assert variables["ib_slurm_topology_blocks"] == [
        {"name": "leaf01", "nodes": "node[01-09],sm01"},
        {"name": "leaf02", "nodes": "node[10-19]"},
        {"name": "leaf03", "nodes": "node[20-29]"},
        {"name": "leaf04", "nodes": "node[30-32],sm02"},
    ]
    assert variables["ib_slurm_topology_block_sizes"] == [4]
    assert variables["ib_slurm_topology_switches"] == []
    sized = slurm_vars(fat_tree(SCHEDULER + "  version: '24.05'\n  topology: {plugin: block, block_sizes: [2, 8]}\n"))
    assert sized["ib_slurm_topology_block_sizes"] == [2, 8]


def test_topology_conf_is_rendered_by_the_roles_template() -> None:
    name, text = topology_text(fat_tree())
    assert name == "topology.conf"
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines == [
        "SwitchName=leaf01 Nodes=node[01-09],sm01",
        "SwitchName=leaf02 Nodes=node[10-19]",
        "SwitchName=leaf03 Nodes=node[20-29]",
        "SwitchName=leaf04 Nodes=node[30-32],sm02",
        "SwitchName=top Switches=leaf[01-04]",
    ]


def test_block_topology_conf_ends_with_the_block_sizes() -> None:
    _name, text = topology_text(fat_tree(SCHEDULER + "  version: '23.11'\n  topology: {plugin: block}\n"))
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines[0] == "BlockName=leaf01 Nodes=node[01-09],sm01"
    assert lines[-1] == "BlockSizes=4"


def test_topology_yaml_is_one_default_topology_slurm_can_read() -> None:
    name, text = topology_text(fat_tree(SCHEDULER + "  version: '25.05'\n  topology: {file: yaml}\n"))
    assert name == "topology.yaml"
    doc = yaml.safe_load(text)
    assert doc[0]["topology"] == "default"
    assert doc[0]["cluster_default"] is True
    switches = doc[0]["tree"]["switches"]
    assert switches[0] == {"switch": "leaf01", "nodes": "node[01-09],sm01"}
    assert switches[-1] == {"switch": "top", "children": "leaf[01-04]"}


# ---------------------------------------------------------------------------------------- render
def _hosts(files: dict[str, str]) -> dict[str, Any]:
    return yaml.safe_load(files["inventory/hosts.yml"])["all"]["children"]  # type: ignore[no-any-return]


def test_render_puts_a_controller_outside_the_nodes_in_its_own_group_only() -> None:
    loaded = fat_tree(SCHEDULER + "  controller_user: slurmadm\n")
    files = render_files(loaded, synthetic_guids=True).files
    groups = _hosts(files)
    assert groups["slurm_controller"] == {
        "hosts": {"slurmctl01": {"ansible_host": "10.0.0.5", "ansible_user": "slurmadm"}}
    }
    assert "slurmctl01" not in groups["ib_nodes"]["hosts"]
    assert yaml.safe_load(files["inventory/group_vars/slurm_controller.yml"]) == slurm_vars(loaded)
    assert files["slurm/topology.conf"] == topology_text(loaded)[1]


def test_render_puts_a_controller_that_is_a_node_in_the_group_by_name() -> None:
    files = render_files(fat_tree("\nscheduler:\n  controller: sm01\n"), synthetic_guids=True).files
    assert _hosts(files)["slurm_controller"] == {"hosts": {"sm01": None}}


def test_render_writes_no_slurm_files_when_ibprov_does_not_manage_the_topology() -> None:
    files = render_files(fat_tree(SCHEDULER + "  manage_topology: false\n"), synthetic_guids=True).files
    assert "slurm_controller" not in _hosts(files)
    assert not [rel for rel in files if "slurm" in rel]


def test_render_previews_topology_yaml_under_its_own_name() -> None:
    files = render_files(fat_tree(SCHEDULER + "  version: '25.05'\n  topology: {file: yaml}\n"), synthetic_guids=True)
    assert [rel for rel in files.files if rel.startswith("slurm/")] == ["slurm/topology.yaml"]


@pytest.mark.parametrize(
    "scheduler",
    [
        SCHEDULER,
        SCHEDULER + "  version: '23.11'\n  topology: {plugin: block, block_sizes: [4, 8]}\n",
        SCHEDULER + "  version: '25.05'\n  topology: {file: yaml, top: cabled}\n",
    ],
    ids=["tree", "block", "yaml-cabled"],
)
def test_the_variables_pass_the_roles_argument_spec(scheduler: str) -> None:
    spec = yaml.safe_load((roles_dir() / "ib_slurm_topology" / "meta" / "argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    variables = slurm_vars(fat_tree(scheduler))
    assert set(variables) <= set(options)
    assert ArgumentSpecValidator(options).validate(variables).error_messages == []
