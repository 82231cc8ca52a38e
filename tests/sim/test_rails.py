"""A rail-optimized fat tree on the twin: a scaled-down design (2 scalable units of 4 nodes with 4 HCAs each,
the second unit one node short) comes up under the real OpenSM exactly as planned and verifies clean; two
rails swapped at the leaves are found and each crossed rail is named -- also when mpi.rails names the rails
(in another order than the HCAs, with a storage HCA on no rail): the fabric check's rails are the generator's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.report.model import Report
from ibprov.twin.prove import prove

pytestmark = pytest.mark.sim


def rail_spec() -> LoadedSpec:
    nodes = "\n".join(
        f"  - {{name: gpu{i:02d}, groups: [gpu], hcas: [{', '.join(f'{{device: mlx5_{j}}}' for j in range(4))}]}}"
        for i in range(1, 8)
    )
    text = f"""\
version: 1
cluster: {{name: rails}}
nodes:
{nodes}
fabric:
  speed: HDR
  fat_tree:
    radix: 8
    leaves: 8
    spines: 4
    hosts_per_leaf: 4
    uplinks_per_leaf: 4
    rails: rail-optimized
    unit_nodes: 4
subnet_manager:
  routing_engine: ftree
  instances:
    - {{node: gpu01, priority: 15}}
    - {{node: gpu07, priority: 14}}
partitions:
  - {{name: train, pkey: 0x0010, defmember: full, members: [{{node: gpu02}}, {{node: gpu05}}]}}
"""
    return load_spec_text(text, "rails.yaml")


def findings(report: Report | None) -> dict[tuple[str, str], str]:
    assert report is not None
    return {(f.check, f.object): f.text for s in report.sections for f in s.findings}


def test_a_rail_optimized_design_comes_up_as_planned_and_verifies_clean(tmp_path: Path) -> None:
    loaded = rail_spec()
    result = prove(loaded, tmp_path, verify=True)
    assert result.problems == []
    text = "\n".join(result.lines)
    assert "SUBNET UP" in text
    # 28 HCA ports; a partition with a node member holds all 4 of its HCA ports
    assert re.search(r"PKey tables: 28 of 28 ports exactly as planned", text), text
    assert findings(result.report) == {}
    assert result.report is not None
    (fabric,) = result.report.sections
    (rail,) = [c for c in fabric.checks if c.id == "cabling.rail"]
    assert len(rail.objects) == 28
    assert rail.status == "pass"


def test_two_rails_swapped_at_the_leaves_are_found_and_named(tmp_path: Path) -> None:
    # gpu02 (node 1 of unit 1) is planned with mlx5_2 on leaf03:2 (rail 2) and mlx5_3 on leaf04:2 (rail 3)
    def swap(opensm_dir: Path) -> None:
        net = opensm_dir.parent / "twin.net"
        text = net.read_text()
        for old, new in (
            ('"H-gpu02-mlx5_2"[1]', '"H-gpu02-mlx5_X"[1]'),
            ('"H-gpu02-mlx5_3"[1]', '"H-gpu02-mlx5_2"[1]'),
            ('"H-gpu02-mlx5_X"[1]', '"H-gpu02-mlx5_3"[1]'),  # the leaves' ends
            ('"S-leaf03"[2]', '"S-leaf0X"[2]'),
            ('"S-leaf04"[2]', '"S-leaf03"[2]'),
            ('"S-leaf0X"[2]', '"S-leaf04"[2]'),  # the HCAs' ends
        ):
            text = text.replace(old, new)
        net.write_text(text)

    result = prove(rail_spec(), tmp_path, before_start=swap, verify=True)
    found = findings(result.report)
    assert set(found) == {
        ("cabling.swapped", "gpu02 mlx5_2 port 1 and gpu02 mlx5_3 port 1"),
        ("cabling.rail", "gpu02 mlx5_2 port 1"),
        ("cabling.rail", "gpu02 mlx5_3 port 1"),
    }
    assert found[("cabling.rail", "gpu02 mlx5_2 port 1")] == (
        "gpu02 mlx5_2 port 1: planned rail 2 (mlx5_2:1) on leaf03, found on leaf04 port 2, a leaf of rail 3 (mlx5_3:1)"
    )
    assert found[("cabling.rail", "gpu02 mlx5_3 port 1")] == (
        "gpu02 mlx5_3 port 1: planned rail 3 (mlx5_3:1) on leaf04, found on leaf03 port 2, a leaf of rail 2 (mlx5_2:1)"
    )


def mpi_rail_spec() -> LoadedSpec:
    """Rails named by mpi.rails in the opposite order to the HCAs (rail0 = mlx5_2, rail1 = mlx5_1), and a
    storage HCA (mlx5_0) on no rail, cabled by hand to a storage leaf."""
    nodes = "\n".join(
        f"  - {{name: gpu{i:02d}, hcas: [{{device: mlx5_0}}, {{device: mlx5_1}}, {{device: mlx5_2}}]}}"
        for i in range(1, 5)
    )
    storage = "\n".join(f"    - stor01:{i} <-> gpu{i:02d}/mlx5_0:1" for i in range(1, 5))
    text = f"""\
version: 1
cluster: {{name: mrails}}
nodes:
{nodes}
switches:
  - {{name: stor01, role: leaf, ports: 8}}
fabric:
  speed: HDR
  fat_tree: {{radix: 8, leaves: 2, spines: 1, hosts_per_leaf: 4, uplinks_per_leaf: 2, rails: rail-optimized}}
  links:
{storage}
    - stor01:8 <-> spine01:5
subnet_manager:
  routing_engine: updn
  instances: [{{node: gpu01, priority: 15}}]
mpi:
  rails:
    - {{name: rail0, devices: ["mlx5_2:1"]}}
    - {{name: rail1, devices: ["mlx5_1:1"]}}
"""
    return load_spec_text(text, "mrails.yaml")


def test_mpi_rails_are_the_rails_the_fabric_check_names(tmp_path: Path) -> None:
    # gpu02 is planned with mlx5_2 (rail0) on leaf01:2 and mlx5_1 (rail1) on leaf02:2: swap them
    def swap(opensm_dir: Path) -> None:
        net = opensm_dir.parent / "twin.net"
        text = net.read_text()
        for old, new in (
            ('"H-gpu02-mlx5_1"[1]', '"H-gpu02-mlx5_X"[1]'),
            ('"H-gpu02-mlx5_2"[1]', '"H-gpu02-mlx5_1"[1]'),
            ('"H-gpu02-mlx5_X"[1]', '"H-gpu02-mlx5_2"[1]'),
            ('"S-leaf01"[2]', '"S-leaf0X"[2]'),
            ('"S-leaf02"[2]', '"S-leaf01"[2]'),
            ('"S-leaf0X"[2]', '"S-leaf02"[2]'),
        ):
            text = text.replace(old, new)
        net.write_text(text)

    result = prove(mpi_rail_spec(), tmp_path, before_start=swap, verify=True)
    found = findings(result.report)
    assert set(found) == {
        ("cabling.swapped", "gpu02 mlx5_1 port 1 and gpu02 mlx5_2 port 1"),
        ("cabling.rail", "gpu02 mlx5_1 port 1"),
        ("cabling.rail", "gpu02 mlx5_2 port 1"),
    }, found
    assert found[("cabling.rail", "gpu02 mlx5_2 port 1")] == (
        "gpu02 mlx5_2 port 1: planned rail0 (mlx5_2:1) on leaf01, found on leaf02 port 2, a leaf of rail1 (mlx5_1:1)"
    )
    assert found[("cabling.rail", "gpu02 mlx5_1 port 1")] == (
        "gpu02 mlx5_1 port 1: planned rail1 (mlx5_1:1) on leaf02, found on leaf01 port 2, a leaf of rail0 (mlx5_2:1)"
    )
    assert result.report is not None
    (fabric,) = result.report.sections
    (rail,) = [c for c in fabric.checks if c.id == "cabling.rail"]
    assert len(rail.objects) == 8  # the rail ports; the storage HCAs are on no rail
