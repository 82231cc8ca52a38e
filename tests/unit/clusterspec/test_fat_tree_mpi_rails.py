"""The fat-tree generator when ``mpi.rails`` names the rails: it cables exactly the ports the rails name (rail i =
mpi.rails[i], whatever the HCA order), a node may lack a rail, a storage HCA on no rail is left to
fabric.links, and a node with two ports of one rail (or a port in two rails) is a located spec error."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.rails import Rails
from ibprov.clusterspec.topology import rail_plan
from ibprov.clusterspec.types import Endpoint
from ibprov.errors import SpecError

RAIL_OPT = "{radix: 8, leaves: 2, spines: 1, hosts_per_leaf: 4, uplinks_per_leaf: 2, rails: rail-optimized}"


def spec_text(
    hcas: Sequence[Sequence[str]],
    rails: Sequence[Sequence[str]],
    fat_tree: str = RAIL_OPT,
    *,
    links: Sequence[str] = (),
    ports: str = "",
) -> str:
    """Nodes n000.. with the HCAs ``hcas[i]`` (``ports``: a ports list for each), and mpi.rails r0.. naming
    ``rails[r]``."""
    lines = ["version: 1", "cluster: {name: mr}", "nodes:"]
    for i, devices in enumerate(hcas):
        listed = ", ".join(f"{{device: {d}{', ports: ' + ports if ports else ''}}}" for d in devices)
        lines.append(f"  - {{name: n{i:03d}, groups: [gpu], hcas: [{listed}]}}")
    lines += ["fabric:", "  speed: HDR", f"  fat_tree: {fat_tree}"]
    if links:
        lines += ["  links:", *(f"    - {link}" for link in links)]
    lines += ["subnet_manager:", "  routing_engine: updn", "  instances: [{node: n000}]", "mpi:", "  rails:"]
    for r, devices in enumerate(rails):
        lines.append(f"    - {{name: r{r}, devices: [{', '.join(repr(d) for d in devices)}]}}")
    return "\n".join(lines) + "\n"


def cables(loaded: LoadedSpec) -> dict[Endpoint, Endpoint]:
    """HCA port -> the switch port it is cabled to."""
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


def at(text: str, line_with: str, value: str) -> str:
    """'LINE:COL' of ``value`` on the first line containing ``line_with``."""
    for n, line in enumerate(text.splitlines(), 1):
        if line_with in line:
            return f"{n}:{line.index(value, line.index(line_with)) + 1}"
    raise AssertionError(line_with)


def test_rail_i_is_mpi_rails_i_whatever_the_hca_order() -> None:
    # the rails list mlx5_1 first: rail 0 is mlx5_1 on every node (positions would have made it mlx5_0)
    loaded = load_spec_text(spec_text([["mlx5_0", "mlx5_1"]] * 3, [["mlx5_1:1"], ["mlx5_0:1"]]))
    found = cables(loaded)
    for k in range(3):
        assert found[Endpoint(f"n{k:03d}", "mlx5_1", 1)] == Endpoint("leaf01", None, k + 1)
        assert found[Endpoint(f"n{k:03d}", "mlx5_0", 1)] == Endpoint("leaf02", None, k + 1)
    plan = rail_plan(loaded.spec, loaded.topology)
    assert plan is not None
    assert plan.leaf_rail == {"leaf01": 0, "leaf02": 1}
    assert plan.rail_name(0) == "rail r0 (mlx5_1:1)"


def test_a_rail_may_name_a_different_device_on_different_nodes() -> None:
    # n001's rail-0 HCA is called mlx5_4: the rail lists both names, and it still lands on rail 0's leaf
    hcas = [["mlx5_0", "mlx5_1"], ["mlx5_4", "mlx5_1"], ["mlx5_0", "mlx5_1"]]
    loaded = load_spec_text(spec_text(hcas, [["mlx5_0:1", "mlx5_4:1"], ["mlx5_1:1"]]))
    found = cables(loaded)
    assert found[Endpoint("n001", "mlx5_4", 1)] == Endpoint("leaf01", None, 2)
    assert found[Endpoint("n001", "mlx5_1", 1)] == Endpoint("leaf02", None, 2)


def test_a_storage_hca_on_no_rail_is_not_cabled_by_the_generator() -> None:
    hcas = [["mlx5_0", "mlx5_1", "mlx5_2"]] * 2
    text = spec_text(hcas, [["mlx5_1:1"], ["mlx5_2:1"]])
    found = problems(text)
    # the generator leaves mlx5_0 alone: the usual "not cabled" problem, at each node's HCA ports
    assert found == [
        f"s.yaml:{at(text, f'name: n00{k}', '{device: mlx5_0}')}: nodes[{k}].hcas[0].ports: n00{k}/mlx5_0:1 is not "
        "cabled: add a link or list it in fabric.empty_ports"
        for k in range(2)
    ]
    # cabled by hand (to free ports of the rail leaves, here), the spec is valid; the rails stay as planned
    links = ["leaf01:4 <-> n000/mlx5_0:1", "leaf02:4 <-> n001/mlx5_0:1"]
    loaded = load_spec_text(spec_text(hcas, [["mlx5_1:1"], ["mlx5_2:1"]], links=links))
    cabled = cables(loaded)
    for k in range(2):
        assert cabled[Endpoint(f"n{k:03d}", "mlx5_1", 1)] == Endpoint("leaf01", None, k + 1)
        assert cabled[Endpoint(f"n{k:03d}", "mlx5_2", 1)] == Endpoint("leaf02", None, k + 1)
    plan = rail_plan(loaded.spec, loaded.topology)
    assert plan is not None
    assert Endpoint("n000", "mlx5_0", 1) not in plan.port_rail
    assert Endpoint("n000", "mlx5_0", 1) not in plan.leaf_of
    assert len(plan.port_rail) == 4


def test_a_node_missing_a_rail_leaves_its_slot_free_and_keeps_its_other_rails_in_place() -> None:
    hcas = [["mlx5_0", "mlx5_1"], ["mlx5_0"], ["mlx5_0", "mlx5_1"]]
    loaded = load_spec_text(spec_text(hcas, [["mlx5_0:1"], ["mlx5_1:1"]]))
    found = cables(loaded)
    assert found[Endpoint("n001", "mlx5_0", 1)] == Endpoint("leaf01", None, 2)
    assert found[Endpoint("n002", "mlx5_1", 1)] == Endpoint("leaf02", None, 3)
    assert Endpoint("leaf02", None, 2) not in found.values()  # n001's rail-1 slot stays free
    assert Rails.of(loaded.spec).ports(loaded.spec.nodes[1]) == [Endpoint("n001", "mlx5_0", 1), None]


def test_a_node_on_no_rail_takes_no_slot() -> None:
    hcas = [["mlx5_0", "mlx5_1"], ["mlx5_7"], ["mlx5_0", "mlx5_1"]]
    loaded = load_spec_text(
        spec_text(hcas, [["mlx5_0:1"], ["mlx5_1:1"]], links=["leaf01:4 <-> n001/mlx5_7:1"]),
    )
    found = cables(loaded)
    assert found[Endpoint("n002", "mlx5_0", 1)] == Endpoint("leaf01", None, 2)
    assert found[Endpoint("n001", "mlx5_7", 1)] == Endpoint("leaf01", None, 4)


def test_dual_port_rails() -> None:
    loaded = load_spec_text(spec_text([["mlx5_0"]] * 2, [["mlx5_0:2"], ["mlx5_0:1"]], ports="[1, 2]"))
    found = cables(loaded)
    assert found[Endpoint("n000", "mlx5_0", 2)] == Endpoint("leaf01", None, 1)
    assert found[Endpoint("n001", "mlx5_0", 1)] == Endpoint("leaf02", None, 2)


def test_node_grouped_cables_only_the_rails_ports_in_rail_order() -> None:
    ft = "{radix: 8, leaves: 2, spines: 1, hosts_per_leaf: 4, uplinks_per_leaf: 2}"
    hcas = [["mlx5_0", "mlx5_1", "mlx5_2"]] * 3
    links = [f"leaf02:{3 + k} <-> n00{k}/mlx5_0:1" for k in range(2)] + ["spine01:8 <-> n002/mlx5_0:1"]
    loaded = load_spec_text(spec_text(hcas, [["mlx5_2:1"], ["mlx5_1:1"]], ft, links=links))
    found = cables(loaded)
    assert [found[Endpoint("n000", d, 1)] for d in ("mlx5_2", "mlx5_1")] == [
        Endpoint("leaf01", None, 1),
        Endpoint("leaf01", None, 2),
    ]
    assert [found[Endpoint("n001", d, 1)] for d in ("mlx5_2", "mlx5_1")] == [
        Endpoint("leaf01", None, 3),
        Endpoint("leaf01", None, 4),
    ]
    assert found[Endpoint("n002", "mlx5_2", 1)] == Endpoint("leaf02", None, 1)
    assert rail_plan(loaded.spec, loaded.topology) is None  # node-grouped: no rail plan


def test_the_unit_arithmetic_counts_the_rails_not_the_hca_ports() -> None:
    # 3 HCAs per node but 2 rails: unit_leaves 2 fits (it is not a multiple of 3), 3 does not
    hcas = [["mlx5_0", "mlx5_1", "mlx5_2"]] * 2
    links = ["leaf01:4 <-> n000/mlx5_2:1", "leaf01:3 <-> n001/mlx5_2:1"]
    load_spec_text(spec_text(hcas, [["mlx5_0:1"], ["mlx5_1:1"]], links=links))
    ft = (
        "{radix: 8, leaves: 3, spines: 1, hosts_per_leaf: 4, uplinks_per_leaf: 2, rails: rail-optimized, "
        "unit_leaves: 3}"
    )
    text = spec_text(hcas, [["mlx5_0:1"], ["mlx5_1:1"]], ft, links=links)
    assert problems(text) == [
        f"s.yaml:{at(text, 'unit_leaves:', '3}')}: fabric.fat_tree.unit_leaves: unit_leaves (3) must be a multiple "
        "of the 2 rails (HCA ports per node), so that every rail has as many leaves in a unit: e.g. unit_leaves: 4"
    ]


def test_a_node_with_two_ports_of_one_rail_is_located() -> None:
    hcas = [["mlx5_0", "mlx5_1"], ["mlx5_0", "mlx5_4", "mlx5_1"]]
    text = spec_text(hcas, [["mlx5_0:1", "mlx5_4:1"], ["mlx5_1:1"]])
    assert problems(text) == [
        f"s.yaml:{at(text, 'name: n001', 'mlx5_4')}: nodes[1].hcas[1].device: n001 has two ports of rail r0 "
        "(mpi.rails[0]): mlx5_0:1 and mlx5_4:1; a node carries each rail on one port (keep one of them in the "
        "rail's devices, or make the other a rail of its own)"
    ]


def test_a_port_in_two_rails_is_located() -> None:
    text = spec_text([["mlx5_0", "mlx5_1"]] * 2, [["mlx5_0:1"], ["mlx5_1:1", "mlx5_0:1"]])
    where = at(text, "name: r1", "'mlx5_0:1'")
    assert problems(text) == [
        f"s.yaml:{where}: mpi.rails[1].devices[1]: mlx5_0:1 is also in rail r0 (mpi.rails[0]): a port carries one rail"
    ]


def test_the_rail_problems_are_reported_without_a_fat_tree_too() -> None:
    text = spec_text([["mlx5_0", "mlx5_1"]] * 2, [["mlx5_0:1", "mlx5_1:1"]], links=[])
    text = text.replace(f"  fat_tree: {RAIL_OPT}\n", "  links: [leaf01:1 <-> n000/mlx5_0:1]\n")
    found = problems(text)
    assert any("nodes[0].hcas[1].device: n000 has two ports of rail r0" in p for p in found), found
