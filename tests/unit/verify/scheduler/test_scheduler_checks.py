"""verify --scheduler judges Slurm's view (real 22.05.8 and 24.11.5 output in tests/fixtures/slurm) against the
plan: each planned node known and under its planned leaf (or in its planned block), the planned switches or
blocks, the plugin, nodes the spec does not plan, and nodes out of service."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ibprov.probes.slurm import SlurmBlock, SlurmNode, SlurmSwitch, SlurmView, parse_blocks, parse_sinfo, parse_topology
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


# ------------------------------------------------------------------ whole findings, as the report prints them
def whole(plan: SchedulerPlan, view: SlurmView) -> list[tuple[str, str, str, str]]:
    report = check_scheduler(plan, view)
    return sorted((f.check, f.object, f.expected, f.observed) for f in _all(report.checks))


def test_every_tree_finding_says_what_was_planned_and_what_slurm_has_word_for_word() -> None:
    nodes = {
        "cn01": SlurmNode("cn01", "idle"),
        "cn02": SlurmNode("cn02", "drained"),  # no reason, no user: said as it is
        "cn03": SlurmNode("cn03", "down*", "not responding", "slurm", "2026-12-07T10:00:00"),
        "cn05": SlurmNode("cn05", "idle"),
        "gpu7": SlurmNode("gpu7", "idle"),
        "extra9": SlurmNode("extra9", "idle"),
        "extra8": SlurmNode("extra8", "mixed"),
    }
    switches = {
        "leaf01": SlurmSwitch("leaf01", 0, ("cn01", "cn02", "cn05")),  # cn05 under two leaves
        "leaf02": SlurmSwitch("leaf02", 0, ("cn05",)),  # cn03 under no switch
        "spine01": SlurmSwitch("spine01", 1, ("cn01", "cn02", "cn05"), ("leaf01", "leaf02")),
        "rogue": SlurmSwitch("rogue", 0, ("extra9",)),
        # top and leaf03 missing: gpu7 under no switch
    }
    view = SlurmView(version="slurm 22.05.8", plugin="topology/tree", switches=switches, nodes=nodes)
    assert whole(PLAN, view) == [
        ("scheduler.node_known", "cn04", "known to Slurm", "not in sinfo: Slurm does not know this node"),
        ("scheduler.node_leaf", "cn03", "under leaf01", "under no switch of Slurm's topology"),
        ("scheduler.node_leaf", "cn05", "under leaf02", "under leaf01, leaf02"),
        ("scheduler.node_leaf", "gpu7", "under leaf03", "under no switch of Slurm's topology"),
        ("scheduler.node_state", "cn02", "in service", "drained"),
        ("scheduler.node_state", "cn03", "in service", "down* by slurm (not responding)"),
        ("scheduler.switches", "leaf01", "Nodes=cn[01-03]", "Nodes=cn[01-02,05]"),
        ("scheduler.switches", "leaf02", "Nodes=cn[04-05]", "Nodes=cn05"),
        ("scheduler.switches", "leaf03", "Nodes=gpu7", "not in Slurm's topology"),
        ("scheduler.switches", "rogue", "no such switch", "in Slurm's topology, not in the plan"),
        ("scheduler.switches", "top", "Switches=leaf03,spine01", "not in Slurm's topology"),
        (
            "scheduler.unplanned",
            "extra8",
            "not a Slurm node (not in the spec's scheduler nodes)",
            "known to Slurm, mixed",
        ),
        (
            "scheduler.unplanned",
            "extra9",
            "not a Slurm node (not in the spec's scheduler nodes)",
            "known to Slurm, idle",
        ),
    ]


def test_every_block_finding_says_what_was_planned_and_what_slurm_has_word_for_word() -> None:
    blocks = {
        "b1": SlurmBlock("b1", 0, ("node01", "node02"), 2),
        "b2": SlurmBlock("b2", 1, ("node03",), 2),  # node04 in no block
        "b3": SlurmBlock("b3", 2, ("node05", "node06"), 4),  # the wrong base size
        "b9": SlurmBlock("b9", 3, (), 2),
        "b[1-2]": SlurmBlock("b[1-2]", 4, ("node01", "node02", "node03"), 4, aggregated=True),
    }
    nodes = {n: SlurmNode(n, "idle") for n in BLOCK_PLAN.nodes}
    plan = replace(BLOCK_PLAN, blocks={**BLOCK_PLAN.blocks, "b4": ("node07",)})
    view = SlurmView(version="slurm-wlm 24.11.5", plugin="topology/block", blocks=blocks, nodes=nodes)
    assert whole(plan, view) == [
        ("scheduler.blocks", "b2", "Nodes=node[03-04]", "Nodes=node03"),
        ("scheduler.blocks", "b3", "BlockSize=2", "BlockSize=4"),
        ("scheduler.blocks", "b4", "Nodes=node07", "not in Slurm's topology"),
        ("scheduler.blocks", "b9", "no such block", "in Slurm's topology, not in the plan"),
        ("scheduler.node_leaf", "node04", "in b2", "in no block of Slurm's topology"),
    ]


def test_a_controller_that_cannot_be_asked_is_one_finding_with_what_it_said_and_nothing_else_is_judged() -> None:
    for plugin in ("topology/tree", "topology/block"):
        plan = replace(PLAN, plugin=plugin)
        view = SlurmView(error="sinfo failed: Unable to contact slurm controller")
        assert whole(plan, view) == [
            (
                "scheduler.controller",
                "ctl",
                "sinfo and scontrol answer",
                "sinfo failed: Unable to contact slurm controller",
            )
        ]
        checks = {c.id: c for c in check_scheduler(plan, view).checks}
        assert checks["scheduler.controller"].objects == ("ctl",)
        assert all(c.objects == () for name, c in checks.items() if name != "scheduler.controller"), plugin


def test_the_plugin_finding_names_both_plugins_and_an_unread_plugin_is_none() -> None:
    view = replace(seen(), plugin="topology/block")
    assert findings(PLAN, view, "scheduler.plugin") == [("scheduler.plugin", "ctl", "TopologyPlugin=topology/block")]
    (f,) = [f for c in check_scheduler(PLAN, view).checks for f in c.findings if f.check == "scheduler.plugin"]
    assert f.expected == "TopologyPlugin=topology/tree"
    assert findings(PLAN, replace(seen(), plugin=""), "scheduler.plugin") == []
