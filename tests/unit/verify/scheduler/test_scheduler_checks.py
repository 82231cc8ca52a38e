"""verify --scheduler judges Slurm's view (real 22.05.8 and 24.11.5 output in tests/fixtures/slurm) against the
plan: each planned node known and under its planned leaf (or in its planned block), the planned switches or
blocks, the plugin, nodes the spec does not plan, and nodes out of service."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ibprov.probes.slurm import SlurmSwitch, SlurmView, parse_blocks, parse_sinfo, parse_topology
from ibprov.report.model import Finding
from ibprov.verify.scheduler.plan import SchedulerPlan
from ibprov.verify.scheduler.section import check_scheduler

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "slurm"

PLAN = SchedulerPlan(
    controller="ctl",
    nodes=("cn01", "cn02", "cn03", "cn04", "cn05", "gpu7"),
    plugin="topology/tree",
    node_leaf={
        "cn01": "leaf01",
        "cn02": "leaf01",
        "cn03": "leaf01",
        "cn04": "leaf02",
        "cn05": "leaf02",
        "gpu7": "leaf03",
    },
    switches={
        "leaf01": (("cn01", "cn02", "cn03"), ()),
        "leaf02": (("cn04", "cn05"), ()),
        "leaf03": (("gpu7",), ()),
        "spine01": ((), ("leaf01", "leaf02")),
        "top": ((), ("leaf03", "spine01")),
    },
)


def seen() -> SlurmView:
    switches, _ = parse_topology((FIXTURES / "scontrol-show-topology-22.05.txt").read_text())
    nodes, _ = parse_sinfo((FIXTURES / "sinfo-nodes-22.05.txt").read_text())
    return SlurmView(version="22.05.8", plugin="topology/tree", switches=switches, nodes=nodes)


def findings(plan: SchedulerPlan, view: SlurmView, prefix: str = "scheduler.") -> list[tuple[str, str, str]]:
    report = check_scheduler(plan, view)
    return [(f.check, f.object, f.observed) for f in _all(report.checks) if f.check.startswith(prefix)]


def _all(checks: tuple) -> list[Finding]:  # type: ignore[type-arg]
    return [f for c in checks for f in c.findings]


def test_the_planned_topology_read_back_passes_except_for_nodes_out_of_service() -> None:
    got = findings(PLAN, seen())
    assert {c for c, _, _ in got} == {"scheduler.node_state"}  # cn02..cn05 are drained or down in the capture
    assert ("scheduler.node_state", "cn04", "drained by root (bad DIMM, ticket 42|x)") in got


def test_a_node_under_another_leaf_and_a_switch_with_other_nodes_are_both_found() -> None:
    view = seen()
    switches = dict(view.switches)
    switches["leaf01"] = SlurmSwitch("leaf01", 0, ("cn01", "cn02"))
    switches["leaf02"] = SlurmSwitch("leaf02", 0, ("cn03", "cn04", "cn05"))
    got = findings(PLAN, replace(view, switches=switches), "scheduler.node_leaf")
    assert got == [("scheduler.node_leaf", "cn03", "under leaf02")]
    sw = findings(PLAN, replace(view, switches=switches), "scheduler.switches")
    assert sw == [
        ("scheduler.switches", "leaf01", "Nodes=cn[01-02]"),
        ("scheduler.switches", "leaf02", "Nodes=cn[03-05]"),
    ]


def test_upper_switches_are_judged_by_their_switches_not_by_the_nodes_slurm_adds_below() -> None:
    view = seen()
    switches = dict(view.switches)
    switches["top"] = SlurmSwitch("top", 1, ("cn01",), ("spine01",))
    assert findings(PLAN, replace(view, switches=switches), "scheduler.switches") == [
        ("scheduler.switches", "top", "Switches=spine01")
    ]


def test_an_unknown_planned_node_an_unplanned_slurm_node_and_a_missing_switch() -> None:
    plan = replace(PLAN, nodes=(*PLAN.nodes, "cn06"), node_leaf={**PLAN.node_leaf, "cn06": "leaf02"})
    plan = replace(plan, switches={k: v for k, v in plan.switches.items() if k != "leaf03"})
    plan = replace(plan, nodes=tuple(n for n in plan.nodes if n != "gpu7"))
    got = findings(plan, seen())
    assert ("scheduler.node_known", "cn06", "not in sinfo: Slurm does not know this node") in got
    assert ("scheduler.unplanned", "gpu7", "known to Slurm, unknown") in got
    assert ("scheduler.switches", "leaf03", "in Slurm's topology, not in the plan") in got


def test_the_wrong_plugin_and_a_controller_that_did_not_answer() -> None:
    assert findings(PLAN, replace(seen(), plugin="topology/none"), "scheduler.plugin") == [
        ("scheduler.plugin", "ctl", "TopologyPlugin=topology/none")
    ]
    report = check_scheduler(PLAN, SlurmView(error="unreachable: ssh: connect refused"))
    assert [(f.check, f.object) for f in _all(report.checks)] == [("scheduler.controller", "ctl")]
    assert all(not c.objects for c in report.checks if c.id != "scheduler.controller")  # nothing else judged


BLOCK_PLAN = SchedulerPlan(
    controller="ctl",
    nodes=("node01", "node02", "node03", "node04", "node05", "node06"),
    plugin="topology/block",
    node_leaf={f"node0{i}": f"b{(i + 1) // 2}" for i in range(1, 7)},
    blocks={"b1": ("node01", "node02"), "b2": ("node03", "node04"), "b3": ("node05", "node06")},
    block_size=2,
)


def seen_blocks() -> SlurmView:
    """Debian 13's Slurm 24.11.5 under topology/block (three blocks of two, BlockSizes=2,4), as parse_view reads
    it: its nodes from the same controller's sinfo."""
    text = (FIXTURES / "scontrol-show-topology-block-24.11.txt").read_text()
    nodes, _ = parse_sinfo((FIXTURES / "sinfo-nodes-24.11.txt").read_text())
    return SlurmView(version="slurm-wlm 24.11.5", plugin="topology/block", blocks=parse_blocks(text), nodes=nodes)


def test_slurm_24_11s_blocks_read_back_as_planned_pass_and_the_aggregated_block_is_no_extra_block() -> None:
    got = findings(BLOCK_PLAN, seen_blocks())
    assert {c for c, _, _ in got} == {"scheduler.node_state"}  # node01, node02 drained in the capture
    report = check_scheduler(BLOCK_PLAN, seen_blocks())
    checks = {c.id: c for c in report.checks}
    assert checks["scheduler.blocks"].objects == ("b1", "b2", "b3")
    assert len(checks["scheduler.node_leaf"].objects) == 6, "the nodes are judged in their blocks, not skipped"
    assert checks["scheduler.switches"].objects == ()


def test_a_node_in_another_block_a_missing_block_and_a_wrong_block_size_are_found() -> None:
    plan = replace(
        BLOCK_PLAN,
        node_leaf={**BLOCK_PLAN.node_leaf, "node03": "b1"},
        blocks={"b1": ("node01", "node02", "node03"), "b2": ("node04",), "b3": ("node05", "node06"), "b4": ()},
        block_size=4,
    )
    got = findings(plan, seen_blocks())
    assert ("scheduler.node_leaf", "node03", "in b2") in got
    assert ("scheduler.blocks", "b1", "Nodes=node[01-02]") in got
    assert ("scheduler.blocks", "b2", "Nodes=node[03-04]") in got
    assert ("scheduler.blocks", "b3", "BlockSize=2") in got
    assert ("scheduler.blocks", "b4", "not in Slurm's topology") in got


def test_a_block_slurm_has_and_the_plan_does_not_is_found() -> None:
    plan = replace(BLOCK_PLAN, blocks={k: v for k, v in BLOCK_PLAN.blocks.items() if k != "b3"})
    got = findings(plan, seen_blocks(), "scheduler.blocks")
    assert got == [("scheduler.blocks", "b3", "in Slurm's topology, not in the plan")]
