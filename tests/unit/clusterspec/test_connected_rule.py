"""The fabric is one piece: every cabled HCA port reaches the master SM's port. On a generated fat tree the
rule first tries its shortcut (the tree is one piece by construction, so only hand-given cables are walked);
the shortcut must say "connected" exactly when the fabric is, and the full walk must name each cut-off part."""

from __future__ import annotations

from typing import NamedTuple

import yaml

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.rules.connected import _connected_with_the_fat_tree, _master_device, fabric_is_connected
from ibprov.clusterspec.topology import Topology, build_topology


class Planned(NamedTuple):
    spec: ClusterSpec
    topology: Topology


TREE = """version: 1
cluster: {name: ft}
nodes:
  - {name: sm01, hcas: [{device: mlx5_0}, {device: mlx5_1}]}
  - {name: n1, hcas: [{device: mlx5_0}]}
  - {name: n2, hcas: [{device: mlx5_0}]}
  - {name: n3, hcas: [{device: mlx5_0}]}
EXTRA_NODES
switches:
  - {name: far1, ports: 8, role: leaf}
fabric:
  speed: HDR
  fat_tree: {radix: 8, leaves: 2, spines: 2, hosts_per_leaf: 3, uplinks_per_leaf: 2}
  links:
LINKS
subnet_manager:
  instances: [{node: sm01, hca: mlx5_0, priority: 15}]
"""


def tree(
    links: list[str],
    extra: tuple[str, ...] = (),
    *,
    master: str = "sm01",
    hca: str = "mlx5_0",
    extra_switches: tuple[str, ...] = (),
    switch_sm: str | None = None,
) -> Planned:
    """The spec and its topology, without the loader's rules (which would refuse the islands tested here)."""
    text = TREE.replace("LINKS", "\n".join(f"    - {link}" for link in links) or "    []")
    text = text.replace("EXTRA_NODES", "\n".join(f"  - {{name: {n}, hcas: [{{device: mlx5_0}}]}}" for n in extra))
    text = text.replace("{node: sm01, hca: mlx5_0", f"{{node: {master}, hca: {hca}")
    text = text.replace(
        "  - {name: far1, ports: 8, role: leaf}\n",
        "".join(f"  - {{name: {n}, ports: 8, role: leaf}}\n" for n in ("far1", *extra_switches)),
    )
    if switch_sm is not None:  # the SM in a switch: its section instead of host instances
        text = text.replace(
            "  instances: [{node: sm01, hca: mlx5_0, priority: 15}]\n",
            f"  backend: switch\n  switch: {{name: {switch_sm}, url: https://sw, username: env:U, password: env:P}}\n",
        )
    spec = ClusterSpec.model_validate(yaml.safe_load(text))
    return Planned(spec, build_topology(spec))


def problems(loaded: Planned) -> list[str]:
    return [message for _path, message in fabric_is_connected(loaded.spec, loaded.topology)]


def shortcut(loaded: Planned) -> bool:
    key, _name = _master_device(loaded.spec, loaded.topology)
    assert key is not None
    return _connected_with_the_fat_tree(loaded.spec, loaded.topology, key)


def test_a_switch_cabled_to_the_tree_is_proven_connected_by_the_shortcut() -> None:
    loaded = tree(["far1:1 <-> leaf01:8", "far1:2 <-> x1/mlx5_0:1"], ("x1",))
    assert shortcut(loaded)
    assert problems(loaded) == []


def test_an_island_is_no_proof_and_the_walk_names_its_ports() -> None:
    two = tree(["far1:1 <-> x1/mlx5_0:1", "far1:2 <-> x2/mlx5_0:1"], ("x1", "x2"))
    assert not shortcut(two)
    assert problems(two) == [
        "x1/mlx5_0:1 and 1 more HCA port cannot reach the subnet manager on sm01/mlx5_0:1: no cable joins this "
        "part of the fabric to the rest, and OpenSM manages only the part its port reaches"
    ]
    three = tree(["far1:1 <-> x1/mlx5_0:1", "far1:2 <-> x2/mlx5_0:1", "far1:3 <-> x3/mlx5_0:1"], ("x1", "x2", "x3"))
    assert problems(three)[0].startswith("x1/mlx5_0:1 and 2 more HCA ports cannot reach")
    one = tree(["far1:1 <-> x1/mlx5_0:1"], ("x1",))
    assert problems(one)[0].startswith("x1/mlx5_0:1 cannot reach the subnet manager on sm01/mlx5_0:1: ")


def test_a_master_outside_the_tree_starts_the_walk_from_its_own_hca() -> None:
    # sm01's second HCA is cabled by hand to far1, far1 to the tree: the master is reached through it
    joined = tree(["far1:1 <-> leaf01:8", "far1:2 <-> sm01/mlx5_1:1"], master="sm01", hca="mlx5_1")
    assert _master_device(joined.spec, joined.topology) == (("sm01", "mlx5_1"), "sm01/mlx5_1:1")
    assert shortcut(joined)
    assert problems(joined) == []
    alone = tree(["far1:2 <-> sm01/mlx5_1:1"], master="sm01", hca="mlx5_1")
    assert not shortcut(alone)
    (cut,) = problems(alone)
    assert "cannot reach the subnet manager on sm01/mlx5_1:1" in cut


def test_the_master_is_the_highest_priority_instance_s_named_hca() -> None:
    loaded = tree([], master="sm01", hca="mlx5_0")
    assert _master_device(loaded.spec, loaded.topology) == (("sm01", "mlx5_0"), "sm01/mlx5_0:1")


def test_two_islands_are_two_findings_each_naming_its_own_ports() -> None:
    text_links = ["far1:1 <-> x1/mlx5_0:1", "far2:1 <-> x2/mlx5_0:1"]
    loaded = tree(text_links, ("x1", "x2"), extra_switches=("far2",))
    assert [p.split(" cannot")[0] for p in problems(loaded)] == ["x1/mlx5_0:1", "x2/mlx5_0:1"]


def test_under_a_switch_sm_the_master_is_the_switch_and_an_island_cannot_reach_it() -> None:
    loaded = tree(["far1:1 <-> x1/mlx5_0:1"], ("x1",), switch_sm="leaf01")
    assert _master_device(loaded.spec, loaded.topology) == (("leaf01", None), "switch leaf01 (port 0)")
    assert problems(loaded) == [
        "x1/mlx5_0:1 cannot reach the subnet manager on switch leaf01 (port 0): no cable joins this part of the "
        "fabric to the rest, and OpenSM manages only the part its port reaches"
    ]
    unknown = tree([], switch_sm="nosuch")
    assert _master_device(unknown.spec, unknown.topology) == (None, "")
