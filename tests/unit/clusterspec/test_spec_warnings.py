"""Warnings of a valid spec: a routing engine that cannot keep the planned switches free of credit loops, or
that lacks its roots; ``subnet_manager.roots`` checked like every name. Warnings are located like problems,
printed by ``ibprov validate`` on stderr, and reject nothing (exit 0).

Expected strings are ``LINE:COL: path: message`` (the file name left out), each kept whole so that it can be
grepped for: hence no line-length limit in this file.
"""

# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from gridkit import grid_spec

from ibprov.cli import cli
from ibprov.clusterspec import load_spec_text
from ibprov.clusterspec.advice import find_loop
from ibprov.errors import SpecError

REPO = Path(__file__).resolve().parents[3]
FAT_TREE = (REPO / "examples" / "fat-tree.yaml").read_text()
FAT_TREE_ENGINE = "routing_engine: ftree   # fat-tree aware up/down routing; needs lmc 0"


def ring(engine: str | None = None, roots: str | None = None, qos: bool = False) -> str:
    """Five leaf switches in a ring (sw_i:3 <-> sw_{i+1}:4), one node on port 1 of each."""
    lines = ["version: 1", "cluster:", "  name: ring5", "nodes:"]
    lines += [f"  - {{name: node{i}, hcas: [{{device: mlx5_0}}]}}" for i in range(1, 6)]
    lines += ["switches:"] + [f"  - {{name: sw{i}, role: leaf, ports: 8}}" for i in range(1, 6)]
    lines += ["fabric:", "  speed: HDR", "  links:"]
    lines += [f"    - sw{i}:3 <-> sw{i % 5 + 1}:4" for i in range(1, 6)]
    lines += [f"    - sw{i}:1 <-> node{i}/mlx5_0:1" for i in range(1, 6)]
    lines += ["subnet_manager:"]
    lines += [f"  routing_engine: {engine}"] if engine else []
    lines += [f"  roots: {roots}"] if roots else []
    lines += ["  instances:", "    - node: node1"]
    lines += ["qos:", "  enabled: true"] if qos else []
    return "\n".join(lines) + "\n"


def fat_tree(engine: str, *, leaf_cable: bool = False) -> str:
    """examples/fat-tree.yaml (4 leaves, 2 spines) routed by ``engine``, with a leaf01-leaf02 cable if asked."""
    assert FAT_TREE.count(FAT_TREE_ENGINE) == 1
    text = FAT_TREE.replace(FAT_TREE_ENGINE, f"routing_engine: {engine}")
    if leaf_cable:
        text = text.replace("  fat_tree:\n", '  links: ["leaf01:21 <-> leaf02:21"]\n  fat_tree:\n', 1)
    return text


def warnings_of(text: str, name: str = "s.yaml") -> list[str]:
    return [str(w).removeprefix(f"{name}:") for w in load_spec_text(text, name).warnings]


def problems_of(text: str, name: str = "s.yaml") -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec_text(text, name)
    return [str(p).removeprefix(f"{name}:") for p in info.value.problems]


RING = "sw1 - sw2 - sw3 - sw4 - sw5 - sw1"


def test_minhop_on_a_ring_of_leaves_warns_at_the_routing_engine() -> None:
    assert warnings_of(ring("minhop")) == [
        f"30:19: subnet_manager.routing_engine: minhop is not deadlock-free on this fabric: its switches form a cycle ({RING}), and routes around it may close a credit loop; use updn with subnet_manager.roots (e.g. roots: [sw1]), or lash or dfsssp with qos.enabled: true"
    ]


def test_the_default_engine_minhop_warns_too_at_the_subnet_manager() -> None:
    (warning,) = warnings_of(ring())
    assert warning.startswith("30:3: subnet_manager.routing_engine: minhop is not deadlock-free on this fabric")


def test_sssp_on_a_ring_warns_and_the_fix_leaves_out_qos_when_it_is_on() -> None:
    assert warnings_of(ring("sssp", qos=True)) == [
        f"30:19: subnet_manager.routing_engine: sssp (dfsssp without its layers) is not deadlock-free on this fabric: its switches form a cycle ({RING}), and routes around it may close a credit loop; use updn with subnet_manager.roots (e.g. roots: [sw1]), or lash or dfsssp"
    ]


def test_dor_on_a_ring_warns_it_is_not_deadlock_free_on_tori() -> None:
    assert warnings_of(ring("dor")) == [
        f"30:19: subnet_manager.routing_engine: dor is deadlock-free on meshes and hypercubes, not on tori: one dimension closes into a ring of 5 switches ({RING}), and routes of two hops or more round it close a credit loop; use updn with subnet_manager.roots (e.g. roots: [sw1])"
    ]


def test_updn_on_a_ring_without_roots_warns_it_falls_back_to_minhop() -> None:
    assert warnings_of(ring("updn")) == [
        f"30:19: subnet_manager.routing_engine: updn has no roots: the plan has no spine or core switch, so OpenSM guesses them from hop counts, and on a cycle of like switches ({RING}) it can find none and route with minhop instead, which is not deadlock-free here; name them in subnet_manager.roots (e.g. roots: [sw1])"
    ]


def test_dnup_without_roots_names_the_next_engine_as_its_fallback() -> None:
    (warning,) = warnings_of(ring("dnup, lash", qos=True))
    assert "dnup has no roots" in warning
    assert "route with lash instead; name them in subnet_manager.roots" in warning


def test_updn_on_a_ring_with_roots_does_not_warn() -> None:
    assert warnings_of(ring("updn", roots="[sw3]")) == []
    assert warnings_of(ring("dnup", roots="[sw1, sw4]")) == []


def test_engines_deadlock_free_through_their_layers_do_not_warn_on_a_ring() -> None:
    assert warnings_of(ring("lash", qos=True)) == []
    assert warnings_of(ring("dfsssp", qos=True)) == []


def test_roots_no_listed_engine_reads_warn_at_the_roots() -> None:
    assert warnings_of(ring("lash", roots="[sw1]", qos=True)) == [
        "31:10: subnet_manager.roots: roots are read by updn, dnup and ftree, and routing_engine lists none of them (lash): OpenSM ignores them"
    ]


def test_a_chain_of_leaves_without_a_cycle_does_not_warn() -> None:
    chain = ring("minhop").replace("    - sw5:3 <-> sw1:4\n", "")
    assert warnings_of(chain) == []
    assert warnings_of(ring("updn").replace("    - sw5:3 <-> sw1:4\n", "")) == []


@pytest.mark.parametrize("engine", ["minhop", "ftree", "updn", "dnup", "sssp"])
def test_a_two_level_fat_tree_does_not_warn(engine: str) -> None:
    assert warnings_of(fat_tree(engine)) == []


def test_ftree_on_a_fat_tree_with_a_leaf_to_leaf_cable_warns() -> None:
    assert warnings_of(fat_tree("ftree", leaf_cable=True)) == [
        "61:19: subnet_manager.routing_engine: ftree is deadlock-free on a fat tree whose cables join adjacent tiers, but leaf01:21 <-> leaf02:21 joins two leaf switches into a cycle (leaf01 - leaf02 - spine01 - leaf01): ftree routes it as a horizontal link, which OpenSM does not promise to keep free of credit loops; remove the cable, or use updn (from the spine switches)"
    ]


def test_minhop_on_a_fat_tree_with_a_leaf_to_leaf_cable_warns_and_updn_does_not() -> None:
    (warning,) = warnings_of(fat_tree("minhop", leaf_cable=True))
    assert warning.startswith(
        "61:19: subnet_manager.routing_engine: minhop is not deadlock-free on this fabric: leaf01:21 <-> leaf02:21 joins two leaf switches into a cycle"
    )
    assert "use updn (from the spine switches)" in warning
    assert warnings_of(fat_tree("updn", leaf_cable=True)) == []


def test_a_cable_within_a_tier_that_closes_no_cycle_is_no_loop() -> None:
    # leaf05 hangs off leaf04 alone: a leaf-leaf cable, but a bridge (no cycle runs through it)
    text = fat_tree("minhop").replace("  fat_tree:\n", '  links: ["leaf04:21 <-> leaf05:1"]\n  fat_tree:\n', 1)
    text = text.replace("\nfabric:\n", "\nswitches: [{name: leaf05, role: leaf, ports: 8}]\nfabric:\n", 1)
    loaded = load_spec_text(text)
    assert find_loop(loaded.topology) is None
    assert loaded.warnings == ()


def test_roots_naming_an_unknown_switch_is_a_located_error_with_a_hint() -> None:
    assert problems_of(ring("updn", roots="[sw3, sw6]")) == [
        "31:16: subnet_manager.roots[1]: unknown switch 'sw6' (did you mean 'sw5'?)"
    ]


def test_roots_naming_a_switch_twice_is_a_located_error() -> None:
    assert problems_of(ring("updn", roots="[sw3, sw3]")) == [
        "31:16: subnet_manager.roots[1]: duplicate root sw3 (also at subnet_manager.roots[0])"
    ]


def test_roots_may_name_generated_switches() -> None:
    text = fat_tree("updn").replace("  lmc: 0\n", "  lmc: 0\n  roots: [spine02]\n", 1)
    assert load_spec_text(text).spec.subnet_manager.roots == ("spine02",)


def test_validate_prints_a_warning_located_on_stderr_and_exits_0(tmp_path: Path) -> None:
    spec = tmp_path / "ring.yaml"
    spec.write_text(ring("minhop"))
    result = CliRunner().invoke(cli, ["validate", str(spec)], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout == (
        f"{spec}: valid — cluster ring5: 5 nodes, 5 switches (0 generated), 10 links, 0 partitions, "
        "1 subnet manager, QoS off; 1 warning\n"
    )
    assert result.stderr.splitlines() == [
        f"{spec}:30:19: subnet_manager.routing_engine: warning: minhop is not deadlock-free on this fabric: its switches form a cycle ({RING}), and routes around it may close a credit loop; use updn with subnet_manager.roots (e.g. roots: [sw1]), or lash or dfsssp with qos.enabled: true"
    ]


def test_validate_quiet_still_prints_the_warnings(tmp_path: Path) -> None:
    spec = tmp_path / "ring.yaml"
    spec.write_text(ring("dor"))
    result = CliRunner().invoke(cli, ["validate", "-q", str(spec)], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (0, "")
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"{spec}:30:19: subnet_manager.routing_engine: warning: dor is deadlock-free on meshes")


# ------------------------------------------------------------------------------------- Slurm's tree
def with_scheduler(text: str, topology: str) -> str:
    """``text`` (a valid spec, its own scheduler section dropped) with a scheduler section whose topology is
    ``topology`` (a flow mapping)."""
    base = text.split("\nscheduler:\n")[0].rstrip("\n")
    return base + f"\nscheduler:\n  controller: slurmctl01\n  topology: {topology}\n"


def test_top_cabled_on_a_ring_warns_that_slurms_tree_leaves_its_cables_out() -> None:
    text = with_scheduler(ring("updn", roots="[sw1]"), "{top: cabled}")
    assert warnings_of(text) == [
        "36:19: scheduler.topology.top: top: cabled lists each switch under the switches of the tier above it, and sw1:3 <-> sw2:4 joins two leaf switches: Slurm's tree has no place for a cable within a tier (a ring, a torus), so it is left out, and with no spine or core there is no switch above the leaves, and no job spans two of them; top: single puts one switch over every leaf"
    ]


def test_top_cabled_on_a_fat_tree_with_a_cable_within_a_tier_warns_once() -> None:
    text = with_scheduler(fat_tree("updn", leaf_cable=True), "{top: cabled}")
    (warning,) = warnings_of(text)
    assert "leaf01:21 <-> leaf02:21 joins two leaf switches: Slurm's tree has no place" in warning
    assert "Slurm places jobs as if it were not there" in warning


def test_top_none_with_several_slurm_leaves_warns_that_jobs_never_span_them() -> None:
    (warning,) = warnings_of(with_scheduler(fat_tree("ftree"), "{top: none}"))
    assert warning.endswith(
        "scheduler.topology.top: top: none puts no switch above the 4 Slurm leaves: Slurm never runs a job "
        "across two of them (right for separate fabric islands only); top: single lets jobs span leaves"
    )


def test_the_default_top_and_a_single_leaf_draw_no_slurm_warning() -> None:
    assert warnings_of(with_scheduler(fat_tree("ftree"), "{top: single}")) == []
    assert warnings_of(with_scheduler(fat_tree("ftree"), "{top: cabled}")) == []
    one_leaf = (REPO / "examples" / "rack.yaml").read_text()
    assert warnings_of(with_scheduler(one_leaf, "{top: none}")) == []


@pytest.mark.parametrize(
    ("dims", "wrap"),
    [((4, 4), False), ((2, 2, 2), False), ((3, 3), True), ((2, 3), True)],
    ids=["mesh-4x4", "hypercube-3d", "torus-3x3", "torus-2x3"],
)
def test_dor_on_a_grid_in_dimension_order_whose_rings_are_at_most_three_switches_warns_nothing(
    dims: tuple[int, ...], wrap: bool
) -> None:
    assert warnings_of(grid_spec(dims, wrap=wrap)) == []


def test_dor_on_a_5x3_torus_names_a_ring_of_five_of_its_larger_dimension() -> None:
    (warning,) = warnings_of(grid_spec((5, 3), wrap=True))
    assert "one dimension closes into a ring of 5 switches (g00 - g10 - g20 - g30 - g40 - g00)" in warning


def test_dor_on_a_mesh_cabled_out_of_dimension_order_still_warns_and_says_why() -> None:
    (warning,) = warnings_of(grid_spec((3, 3), wrap=False, swap_first=True))
    assert "its cables are not in dimension order (each dimension one pair of port numbers" in warning
