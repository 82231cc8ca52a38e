"""root_guid_file: the GUIDs of subnet_manager.roots when the spec names them, else of the top-tier switches;
written for every engine that reads it (updn, dnup, ftree)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ibprov.clusterspec import load_spec_text
from ibprov.render import render_files

REPO = Path(__file__).resolve().parents[3]
FAT_TREE = (REPO / "examples" / "fat-tree.yaml").read_text()


def ring(engine: str, roots: str = "") -> str:
    """Five leaf switches in a ring with node GUIDs 0x...01 to 0x...05, one node on each."""
    lines = ["version: 1", "cluster:", "  name: ring5", "nodes:"]
    lines += [f"  - {{name: node{i}, hcas: [{{device: mlx5_0}}]}}" for i in range(1, 6)]
    lines += ["switches:"]
    lines += [f"  - {{name: sw{i}, role: leaf, ports: 8, node_guid: 0x000200000000000{i}}}" for i in range(1, 6)]
    lines += ["fabric:", "  speed: HDR", "  links:"]
    lines += [f"    - sw{i}:3 <-> sw{i % 5 + 1}:4" for i in range(1, 6)]
    lines += [f"    - sw{i}:1 <-> node{i}/mlx5_0:1" for i in range(1, 6)]
    lines += ["subnet_manager:", f"  routing_engine: {engine}"]
    lines += [f"  roots: {roots}"] if roots else []
    lines += ["  instances:", "    - node: node1"]
    return "\n".join(lines) + "\n"


def root_guids(text: str) -> list[str]:
    files = render_files(load_spec_text(text), synthetic_guids=True).files
    common = yaml.safe_load(files["inventory/group_vars/ib_sm.yml"])
    return list(common["ib_sm_root_guids"])


@pytest.mark.parametrize("engine", ["updn", "dnup", "lash, updn"])
def test_the_roots_the_spec_names_are_the_root_guids(engine: str) -> None:
    text = ring(engine, roots="[sw4, sw2]")
    if "lash" in engine:
        text += "qos: {enabled: true}\n"
    assert root_guids(text) == ["0x0002000000000002", "0x0002000000000004"]


def test_an_engine_that_reads_no_roots_gets_no_root_guids() -> None:
    assert root_guids(ring("minhop", roots="[sw1]")) == []


def test_no_roots_and_no_spines_write_no_root_guids() -> None:
    assert root_guids(ring("updn")) == []


def test_named_roots_replace_the_spines_of_a_fat_tree() -> None:
    default = root_guids(FAT_TREE.replace("routing_engine: ftree", "routing_engine: updn"))
    named = root_guids(FAT_TREE.replace("  lmc: 0\n", "  lmc: 0\n  roots: [spine02]\n"))
    assert len(default) == 2
    assert len(named) == 1
    assert named[0] in default
