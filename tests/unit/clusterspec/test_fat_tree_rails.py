"""The fat-tree generator with multi-HCA nodes: node-grouped and rail-optimized cabling, and the
located problems when units, rails, leaves, radix and uplinks do not add up."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.errors import SpecError


def spec_text(
    nodes: int,
    hcas: int,
    fat_tree: str,
    *,
    ports: int = 1,
    odd: dict[int, int] | None = None,
    extra: str = "",
) -> str:
    """``nodes`` nodes with ``hcas`` HCAs of ``ports`` ports each (``odd``: node index -> another HCA count)."""
    port_list = ", ".join(str(p) for p in range(1, ports + 1))
    lines = ["version: 1", "cluster: {name: rails}", "nodes:"]
    for i in range(nodes):
        count = (odd or {}).get(i, hcas)
        devices = ", ".join(f"{{device: mlx5_{j}, ports: [{port_list}]}}" for j in range(count))
        lines.append(f"  - {{name: n{i:03d}, groups: [gpu], hcas: [{devices}]}}")
    lines += ["fabric:", "  speed: HDR", f"  fat_tree: {fat_tree}", extra, "subnet_manager:"]
    lines += ["  routing_engine: updn", "  instances: [{node: n000}]", ""]
    return "\n".join(lines)


def leaf_of(loaded: LoadedSpec) -> dict[Endpoint, Endpoint]:
    """HCA port -> the leaf port it is cabled to."""
    out: dict[Endpoint, Endpoint] = {}
    for link in loaded.topology.links:
        for a, b in ((link.a, link.b), (link.b, link.a)):
            if a.hca is not None:
                out[a] = b
    return out


def problems(text: str) -> list[str]:
    with pytest.raises(SpecError) as err:
        load_spec_text(text, "s.yaml")
    return [str(p) for p in err.value.problems]


def line_col(text: str, needle: str) -> str:
    """'LINE:COL' of the value after ``needle`` (a key of the fat_tree flow mapping)."""
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return f"{n}:{line.index(needle) + len(needle) + 2}"
    raise AssertionError(needle)


# ------------------------------------------------------------------------------------- rail-optimized
@pytest.mark.parametrize("hcas", [1, 2, 4, 8])
def test_rail_optimized_puts_hca_i_of_every_node_of_a_unit_on_the_units_leaf_for_rail_i(hcas: int) -> None:
    # 3 units of 4 nodes, the last one short: 11 nodes (an odd count)
    ft = (
        f"{{radix: 32, leaves: {3 * hcas}, spines: 4, hosts_per_leaf: 4, uplinks_per_leaf: 4, "
        "rails: rail-optimized, unit_nodes: 4}"
    )
    loaded = load_spec_text(spec_text(11, hcas, ft))
    cables = leaf_of(loaded)
    assert len(cables) == 11 * hcas
    for k in range(11):
        unit, slot = divmod(k, 4)
        for rail in range(hcas):
            leaf = cables[Endpoint(f"n{k:03d}", f"mlx5_{rail}", 1)]
            assert leaf == Endpoint(f"leaf{unit * hcas + rail + 1:02d}", None, slot + 1)
    # the last unit has 3 nodes: port 4 of each of its leaves stays free for growth
    used = Counter(end.device for end in cables.values())
    assert [used[f"leaf{unit * hcas + r + 1:02d}"] for unit in range(3) for r in range(hcas)] == [4] * (2 * hcas) + [
        3
    ] * hcas


def test_a_rail_spans_a_leaf_group_when_a_unit_has_more_leaves_than_rails() -> None:
    # 2 rails, 4 leaves per unit: rail 0 on leaf01-02, rail 1 on leaf03-04; 6 nodes per unit, 3 per leaf
    ft = (
        "{radix: 8, leaves: 8, spines: 2, hosts_per_leaf: 3, uplinks_per_leaf: 2, rails: rail-optimized, "
        "unit_nodes: 6, unit_leaves: 4}"
    )
    loaded = load_spec_text(spec_text(9, 2, ft))
    cables = leaf_of(loaded)
    by_leaf: dict[str, list[str]] = defaultdict(list)
    for host, leaf in sorted(cables.items(), key=lambda kv: (kv[1].device, kv[1].port)):
        by_leaf[leaf.device].append(f"{host.device}/{host.hca}")
    assert by_leaf["leaf01"] == ["n000/mlx5_0", "n001/mlx5_0", "n002/mlx5_0"]
    assert by_leaf["leaf02"] == ["n003/mlx5_0", "n004/mlx5_0", "n005/mlx5_0"]
    assert by_leaf["leaf03"] == ["n000/mlx5_1", "n001/mlx5_1", "n002/mlx5_1"]
    assert by_leaf["leaf04"] == ["n003/mlx5_1", "n004/mlx5_1", "n005/mlx5_1"]
    assert by_leaf["leaf05"] == ["n006/mlx5_0", "n007/mlx5_0", "n008/mlx5_0"]
    assert by_leaf["leaf07"] == ["n006/mlx5_1", "n007/mlx5_1", "n008/mlx5_1"]
    assert "leaf06" not in by_leaf
    assert "leaf08" not in by_leaf


def test_dual_port_hcas_make_two_rails_each_in_port_order() -> None:
    ft = "{radix: 8, leaves: 4, spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized}"
    loaded = load_spec_text(spec_text(3, 2, ft, ports=2))
    cables = leaf_of(loaded)
    rails = [("mlx5_0", 1), ("mlx5_0", 2), ("mlx5_1", 1), ("mlx5_1", 2)]
    for k in range(3):
        for r, (dev, port) in enumerate(rails):
            assert cables[Endpoint(f"n{k:03d}", dev, port)] == Endpoint(f"leaf{r + 1:02d}", None, k + 1)


def test_every_leaf_of_every_rail_reaches_every_spine() -> None:
    ft = "{radix: 8, leaves: 8, spines: 4, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized}"
    loaded = load_spec_text(spec_text(8, 4, ft))
    up: dict[str, set[str]] = defaultdict(set)
    for link in loaded.topology.links:
        if link.a.hca is None and link.b.hca is None:
            up[link.a.device].add(link.b.device)
    assert up == {f"leaf{i:02d}": {"spine01", "spine02", "spine03", "spine04"} for i in range(1, 9)}


def test_an_empty_port_leaves_its_rail_slot_free_and_the_other_rails_in_place() -> None:
    ft = "{radix: 8, leaves: 2, spines: 1, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized}"
    loaded = load_spec_text(spec_text(3, 2, ft, extra="  empty_ports: [n001/mlx5_0:1]"))
    cables = leaf_of(loaded)
    assert Endpoint("n001", "mlx5_0", 1) not in cables
    assert cables[Endpoint("n001", "mlx5_1", 1)] == Endpoint("leaf02", None, 2)
    assert cables[Endpoint("n002", "mlx5_0", 1)] == Endpoint("leaf01", None, 3)


def test_three_levels_keep_each_unit_inside_one_pod() -> None:
    ft = (
        "{radix: 8, leaves: 8, spines: 4, hosts_per_leaf: 4, uplinks_per_leaf: 2, pods: 2, cores: 2, "
        "uplinks_per_spine: 2, rails: rail-optimized, unit_leaves: 4}"
    )
    loaded = load_spec_text(spec_text(8, 4, ft))
    cables = leaf_of(loaded)
    assert {cables[Endpoint(f"n{k:03d}", "mlx5_3", 1)].device for k in range(4)} == {"leaf04"}
    assert {cables[Endpoint(f"n{k:03d}", "mlx5_3", 1)].device for k in range(4, 8)} == {"leaf08"}


# ---------------------------------------------------------------------------------------- node-grouped
def test_node_grouped_with_one_hca_cables_hosts_in_node_order() -> None:
    ft = "{radix: 8, leaves: 3, spines: 1, hosts_per_leaf: 4, uplinks_per_leaf: 2}"
    loaded = load_spec_text(spec_text(9, 1, ft))
    cables = leaf_of(loaded)
    for k in range(9):
        assert cables[Endpoint(f"n{k:03d}", "mlx5_0", 1)] == Endpoint(f"leaf{k // 4 + 1:02d}", None, k % 4 + 1)


@pytest.mark.parametrize(("hcas", "ports"), [(2, 1), (4, 1), (8, 1), (2, 2)])
def test_node_grouped_keeps_all_of_a_nodes_ports_on_one_leaf_one_after_the_other(hcas: int, ports: int) -> None:
    width = hcas * ports
    hpl = width + width // 2 if width > 1 else 3  # not a multiple of the node's ports: some are left free
    leaves = 7
    ft = f"{{radix: {max(hpl + 2, 8)}, leaves: {leaves}, spines: 2, hosts_per_leaf: {hpl}, uplinks_per_leaf: 2}}"
    loaded = load_spec_text(spec_text(7, hcas, ft, ports=ports))
    cables = leaf_of(loaded)
    for k in range(7):
        ends = [cables[Endpoint(f"n{k:03d}", f"mlx5_{j}", p)] for j in range(hcas) for p in range(1, ports + 1)]
        assert {e.device for e in ends} == {f"leaf{k + 1:02d}"}
        assert [e.port for e in ends] == list(range(1, width + 1))


def test_node_grouped_names_a_node_wider_than_a_leaf() -> None:
    text = spec_text(2, 8, "{radix: 8, leaves: 4, spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 4}")
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'hosts_per_leaf:')}: fabric.fat_tree.hosts_per_leaf: a node has 8 HCA ports to "
        "cable, more than the 4 host ports of a leaf, and rails: node-grouped keeps a node's ports on one leaf: "
        "hosts_per_leaf 8 or more, or rails: rail-optimized"
    ]


def test_node_grouped_counts_the_leaves_packing_needs() -> None:
    # 3 nodes x 3 ports = 9 <= 2 leaves x 5, but a node's 3 ports stay on one leaf: 3 leaves needed
    text = spec_text(3, 3, "{radix: 8, leaves: 2, spines: 1, hosts_per_leaf: 5, uplinks_per_leaf: 2}")
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'hosts_per_leaf:')}: fabric.fat_tree.hosts_per_leaf: 9 HCA ports to cable, but "
        "with each node's ports kept on one leaf they need 3 leaves of 5 host ports, and leaves is 2: more "
        "leaves, hosts_per_leaf a multiple of 3, or rails: rail-optimized"
    ]


# -------------------------------------------------------------------------------------------- problems
def test_rail_optimized_needs_the_same_rails_on_every_node_and_names_each_odd_one() -> None:
    ft = "{radix: 8, leaves: 4, spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized}"
    text = spec_text(5, 4, ft, odd={1: 2, 3: 8})
    found = problems(text)
    assert found == [
        "s.yaml:5:39: nodes[1].hcas: n001 has 2 HCA ports, but 3 of the nodes fabric.fat_tree cables have 4: "
        "rails: rail-optimized needs the same number of rails (HCA ports) on every node it cables (list 4, or "
        "cable this node by fabric.links and leave it out of fat_tree.hosts_group)",
        "s.yaml:7:39: nodes[3].hcas: n003 has 8 HCA ports, but 3 of the nodes fabric.fat_tree cables have 4: "
        "rails: rail-optimized needs the same number of rails (HCA ports) on every node it cables (list 4, or "
        "cable this node by fabric.links and leave it out of fat_tree.hosts_group)",
    ]


def test_unit_leaves_must_be_a_multiple_of_the_rails() -> None:
    ft = (
        "{radix: 16, leaves: 6, spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized, "
        "unit_leaves: 6}"
    )
    text = spec_text(4, 4, ft)
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'unit_leaves:')}: fabric.fat_tree.unit_leaves: unit_leaves (6) must be a multiple "
        "of the 4 rails (HCA ports per node), so that every rail has as many leaves in a unit: e.g. unit_leaves: 8"
    ]


def test_a_unit_larger_than_its_rail_leaves_says_what_fits() -> None:
    ft = (
        "{radix: 8, leaves: 4, spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized, unit_nodes: 6}"
    )
    text = spec_text(6, 4, ft)
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'unit_nodes:')}: fabric.fat_tree.unit_nodes: a unit of 6 nodes needs 6 host ports "
        "on each rail, but a rail has 1 leaf x 4 host ports = 4 in a unit: unit_nodes at most 4, or unit_leaves 8"
    ]


def test_leaves_must_be_whole_units_and_enough_for_the_nodes() -> None:
    ft = "{radix: 16, leaves: 6, spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized}"
    text = spec_text(4, 4, ft)
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'leaves:')}: fabric.fat_tree.leaves: leaves (6) must be whole scalable units of "
        "4 leaves (4 rails x 1): e.g. leaves: 4 or 8"
    ]
    ft = "{radix: 16, leaves: 8, spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized}"
    text = spec_text(9, 4, ft)
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'leaves:')}: fabric.fat_tree.leaves: 9 nodes make 3 scalable units of 4 "
        "(unit_nodes), which need 12 leaves (4 per unit), but leaves is 8"
    ]


def test_a_unit_must_not_straddle_two_pods() -> None:
    ft = (
        "{radix: 8, leaves: 8, spines: 4, hosts_per_leaf: 4, uplinks_per_leaf: 2, pods: 2, cores: 2, "
        "uplinks_per_spine: 2, rails: rail-optimized, unit_leaves: 8}"
    )
    text = spec_text(4, 4, ft)
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'pods:')}: fabric.fat_tree.pods: each of the 2 pods has 4 leaves, not whole units "
        "of 8: a scalable unit must not straddle two pods"
    ]


def test_radix_and_uplinks_are_checked_with_rails_too() -> None:
    ft = "{radix: 8, leaves: 4, spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 6, rails: rail-optimized}"
    text = spec_text(4, 4, ft)
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'hosts_per_leaf:')}: fabric.fat_tree.hosts_per_leaf: hosts_per_leaf + "
        "uplinks_per_leaf = 10 ports, more than the radix 8"
    ]


def test_unit_parameters_need_rail_optimized() -> None:
    text = spec_text(4, 1, "{radix: 8, leaves: 1, spines: 0, hosts_per_leaf: 4, uplinks_per_leaf: 0, unit_nodes: 4}")
    assert problems(text) == [
        f"s.yaml:{line_col(text, 'unit_nodes:')}: fabric.fat_tree.unit_nodes: unit_nodes is a parameter of the "
        "scalable units of rails: rail-optimized (rails is node-grouped)"
    ]


def test_an_unknown_rail_layout_is_named_with_the_choices() -> None:
    text = spec_text(2, 1, "{radix: 8, leaves: 1, spines: 0, hosts_per_leaf: 4, uplinks_per_leaf: 0, rails: rail}")
    found = problems(text)
    assert len(found) == 1
    assert "fabric.fat_tree.rails: 'rail' is not allowed" in found[0]
    assert "'node-grouped' or 'rail-optimized'" in found[0]


def test_a_piece_cabled_by_hand_apart_from_the_fat_tree_cannot_reach_the_sm() -> None:
    ft = (
        "{radix: 8, leaves: 2, spines: 1, hosts_per_leaf: 4, uplinks_per_leaf: 4, rails: rail-optimized, "
        "hosts_group: gpu}"
    )
    extra = '  links: ["island:1 <-> lone/mlx5_0:1"]\nswitches: [{name: island, role: leaf, ports: 8}]'
    text = spec_text(3, 2, ft, extra=extra).replace("fabric:", "  - {name: lone, hcas: [{device: mlx5_0}]}\nfabric:", 1)
    found = problems(text)
    assert len(found) == 1
    assert found[0].endswith(
        "fabric.links[0].link: lone/mlx5_0:1 cannot reach the subnet manager on n000/mlx5_0:1: no cable joins this "
        "part of the fabric to the rest, and OpenSM manages only the part its port reaches"
    )
    # cabled to a free port of the fat tree's leaf instead (3 nodes use ports 1-3), it is part of the fabric
    joined_text = text.replace("island:1 <-> lone/mlx5_0:1", "leaf01:4 <-> lone/mlx5_0:1")
    joined = load_spec_text(joined_text.replace("switches: [{name: island, role: leaf, ports: 8}]", ""))
    assert ("lone", "mlx5_0") not in joined.topology.fat_tree_devices
    assert ("n002", "mlx5_1") in joined.topology.fat_tree_devices
