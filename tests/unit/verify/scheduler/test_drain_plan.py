"""verify --drain / --resume decide per node the way NHC does: drain with the ibprov prefix, keep anyone else's
reason, resume only ibprov's drains whose check passes in this run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from ibprov.probes.slurm import SlurmNode, SlurmView
from ibprov.report.model import CheckResult, Finding, NodeAction, Report, SectionReport, Severity
from ibprov.verify.nodes.facts import NodesFacts
from ibprov.verify.scheduler.collect import CommandResult
from ibprov.verify.scheduler.drain import REASON_MAX, carry_out, nodes_named, plan_actions, reason_for

NODES = ("cn01", "cn02", "cn03", "cn-04")


def finding(check: str, obj: str, severity: Severity = Severity.ERROR) -> Finding:
    return Finding(check, severity, obj, "planned", "seen", "fix it")


def report(findings: Sequence[Finding], checks: Sequence[str] = ("link.state", "node.rate", "link.width")) -> Report:
    results = tuple(CheckResult(c, c, tuple(NODES), tuple(f for f in findings if f.check == c)) for c in checks)
    section = SectionReport("fabric", "Fabric", "this host", "", 0.0, results, NodesFacts(4, 4))
    return Report.from_sections(cluster="c", spec="c.yaml", sections=[section])


def view(**states: tuple[str, str] | str) -> SlurmView:
    nodes = {}
    for name in NODES:
        got = states.get(name.replace("-", "_"), "idle")
        state, reason = got if isinstance(got, tuple) else (got, "")
        nodes[name] = SlurmNode(name, state, reason, "root" if reason else "")
    return SlurmView(version="22.05.8", plugin="topology/tree", nodes=nodes)


def by_node(actions: Sequence[NodeAction]) -> dict[str, tuple[str, str]]:
    return {a.node: (a.action, a.reason) for a in actions}


def test_a_word_of_the_object_names_the_node_and_nothing_else_does() -> None:
    assert nodes_named("leaf01:1 <-> cn01/mlx5_0:1", NODES) == ["cn01"]
    assert nodes_named("cn02 mlx5_0 port 1", NODES) == ["cn02"]
    assert nodes_named("cn03/mlx5_0:1 -> cn01/mlx5_0:1", NODES) == ["cn03", "cn01"]
    assert nodes_named("cn-04->cn01", NODES) == ["cn-04", "cn01"]
    assert nodes_named("leaf01:33 <-> spine01:1", NODES) == []
    assert nodes_named("cn011 mlx5_0 port 1", NODES) == []  # a longer name is another node


def test_the_reason_starts_with_the_prefix_names_the_check_and_fits_sinfo_r() -> None:
    one = reason_for([finding("link.state", "leaf01:1 <-> cn01/mlx5_0:1")])
    assert one == "ibprov: link.state leaf01:1 <-> cn01/mlx5_0:1"
    long = reason_for([finding("link.width", "leaf01:1 <-> cn01/mlx5_0:1 " + "x" * 80), finding("node.rate", "cn01")])
    assert long.startswith("ibprov: link.width leaf01:1")
    assert long.endswith("... (+1)")
    assert len(long) == REASON_MAX


def test_drain_drains_the_failing_idle_node_and_leaves_the_passing_ones() -> None:
    r = report([finding("link.state", "leaf01:1 <-> cn01/mlx5_0:1")])
    actions, notes = plan_actions(r, NODES, view(), drain=True, resume=False)
    assert by_node(actions) == {"cn01": ("drain", "ibprov: link.state leaf01:1 <-> cn01/mlx5_0:1")}
    assert notes == []


def test_a_warning_drains_nobody_and_critical_only_ignores_errors() -> None:
    r = report([finding("link.state", "cn01", Severity.WARNING), finding("node.rate", "cn02")])
    assert by_node(plan_actions(r, NODES, view(), drain=True, resume=False)[0]) == {
        "cn02": ("drain", "ibprov: node.rate cn02")
    }
    assert plan_actions(r, NODES, view(), drain=True, resume=False, severity=Severity.CRITICAL)[0] == []


def test_a_node_drained_by_an_admin_keeps_its_reason_on_drain_and_on_resume() -> None:
    admin = ("drained", "bad DIMM ticket 42")
    r = report([finding("node.rate", "cn01")])
    actions, _ = plan_actions(r, NODES, view(cn01=admin, cn02=admin), drain=True, resume=True)
    assert by_node(actions) == {
        "cn01": ("keep", "bad DIMM ticket 42"),
        "cn02": ("keep", "bad DIMM ticket 42"),
    }
    assert all(a.action != "resume" for a in actions)


def test_resume_resumes_only_ibprov_drains_whose_check_ran_and_passes() -> None:
    mine = ("drained", "ibprov: link.state leaf01:1 <-> cn01/mlx5_0:1")
    not_judged = ("drained", "ibprov: mpi.transport cn02")
    still = ("draining", "ibprov: node.rate cn03")
    r = report([finding("node.rate", "cn03")])
    actions, _ = plan_actions(r, NODES, view(cn01=mine, cn02=not_judged, cn03=still), drain=False, resume=True)
    got = by_node(actions)
    assert got["cn01"] == ("resume", mine[1])
    assert got["cn02"][0] == "keep"  # drained for a check this run did not judge
    assert "cn03" not in got  # still failing: --resume alone leaves it drained, says nothing new


def test_down_nodes_are_left_to_slurm_and_unknown_nodes_are_noted() -> None:
    r = report([finding("node.rate", "cn01"), finding("node.rate", "cn02"), finding("link.state", "spine01:1")])
    v = view(cn01="down*")
    v = SlurmView(version=v.version, plugin=v.plugin, nodes={k: n for k, n in v.nodes.items() if k != "cn02"})
    actions, notes = plan_actions(r, NODES, v, drain=True, resume=False)
    assert by_node(actions) == {"cn01": ("keep", "")}
    assert any("unknown to Slurm: cn02" in n for n in notes)
    assert any("1 finding(s)" in n and "name no Slurm node" in n for n in notes)


def test_an_allocated_node_is_drained_so_its_jobs_finish() -> None:
    r = report([finding("link.width", "leaf02:1 <-> cn-04/mlx5_0:1")])
    assert by_node(plan_actions(r, NODES, view(cn_04="allocated"), drain=True, resume=False)[0])["cn-04"][0] == "drain"


class Recorder:
    where = "ctl (test)"

    def __init__(self, fail: frozenset[str] = frozenset()) -> None:
        self.fail = fail
        self.ran: list[list[str]] = []

    def view(self) -> SlurmView:
        raise AssertionError("not read here")

    def run(self, commands: Sequence[Sequence[str]]) -> list[CommandResult]:
        self.ran.extend(list(c) for c in commands)
        return [
            CommandResult(tuple(c), not any(n in c[2] for n in self.fail), "slurm_update error: Invalid node name")
            for c in commands
        ]


def test_carry_out_runs_scontrol_on_the_controller_and_records_each_outcome() -> None:
    actions = [
        NodeAction("cn01", "drain", "ibprov: node.rate cn01", "error node.rate cn01"),
        NodeAction("cn02", "resume", "ibprov: link.state x", "link.state passes now"),
        NodeAction("cn03", "keep", "admin", "drained by root"),
    ]
    slurm = Recorder(fail=frozenset({"cn02"}))
    done = carry_out(actions, slurm, dry_run=False)
    assert slurm.ran == [
        ["scontrol", "update", "NodeName=cn01", "State=DRAIN", "Reason=ibprov: node.rate cn01"],
        ["scontrol", "update", "NodeName=cn02", "State=RESUME"],
    ]
    assert [a.result for a in done] == ["done", "failed: slurm_update error: Invalid node name", ""]
    assert int(replace(report([]), actions=tuple(done)).exit_code) == 3  # the scheduler was not told: cannot act


def test_dry_run_runs_nothing_and_says_the_exact_command() -> None:
    slurm = Recorder()
    done = carry_out([NodeAction("cn01", "drain", "ibprov: node.rate cn01", "x")], slurm, dry_run=True)
    assert slurm.ran == []
    assert done[0].result == "dry run: scontrol update NodeName=cn01 State=DRAIN 'Reason=ibprov: node.rate cn01'"


def test_drain_without_resume_never_resumes_a_node_ibprov_drained_whose_check_passes_now() -> None:
    mine = ("drained", "ibprov: link.state leaf01:1 <-> cn01/mlx5_0:1")
    actions, _ = plan_actions(report([]), NODES, view(cn01=mine), drain=True, resume=False)
    assert all(a.action != "resume" for a in actions), by_node(actions)
    assert "cn01" not in by_node(actions)  # left drained: only --resume gives it back


def test_an_admin_reason_that_starts_with_a_check_id_is_the_admin_s_and_never_resumed() -> None:
    admin = ("drained", "link.state flapping, RMA 4711")  # a check's id, but not ibprov's prefix
    actions, _ = plan_actions(report([]), NODES, view(cn01=admin), drain=True, resume=True)
    assert by_node(actions)["cn01"] == ("keep", admin[1])


def test_every_branch_of_the_plan_says_exactly_what_it_does_and_why() -> None:
    """The whole plan, field by field, for a node in each situation: what is done, the reason set or kept, and the
    words an admin reads in the report ('why')."""
    states = {
        "a": SlurmNode("a", "idle"),
        "b": SlurmNode("b", "down*", "Not responding", "slurm"),
        "c": SlurmNode("c", "drained", "bad DIMM", "root"),
        "c2": SlurmNode("c2", "drained", "bad DIMM"),
        "d": SlurmNode("d", "drained", "ibprov: node.rate d", "root"),
        "e": SlurmNode("e", "drained", "ibprov: link.state leaf01:1", "root"),
        "f": SlurmNode("f", "drained", "ibprov: mpi.transport f", "root"),
        "g": SlurmNode("g", "drained", "ibprov:", "root"),
        "h": SlurmNode("h", "draining", "maintenance", "alice"),
        "i": SlurmNode("i", "drained", "maintenance"),
    }
    names = ["a", "b", "ghost", "c", "c2", "d", "e", "f", "g", "h", "i"]
    failing = [
        finding("node.rate", "a"),
        finding("link.state", "leaf01:3 <-> a/mlx5_0:1"),
        *(finding("node.rate", n) for n in ("b", "ghost", "c", "c2", "d")),
        finding("link.state", "leaf01:1 <-> spine01:1"),
    ]
    actions, notes = plan_actions(
        report(failing), names, SlurmView("23.11.4", "topology/tree", nodes=states), drain=True, resume=True
    )
    assert notes == [
        "1 finding(s) of error or worse name no Slurm node (e.g. a switch-to-switch cable): "
        "no node is drained for them",
        "not drained, unknown to Slurm: ghost",
    ]
    assert [(a.node, a.action, a.reason, a.why) for a in actions] == [
        (
            "a",
            "drain",
            reason_for([failing[1], failing[0]]),
            "error link.state leaf01:3 <-> a/mlx5_0:1; error node.rate a",
        ),
        ("b", "keep", "Not responding", "down*: left to Slurm; error node.rate b"),
        ("c", "keep", "bad DIMM", "drained by root: their reason kept; error node.rate c"),
        ("c2", "keep", "bad DIMM", "drained: their reason kept; error node.rate c2"),
        ("d", "keep", "ibprov: node.rate d", "already drained by ibprov; error node.rate d"),
        ("e", "resume", "ibprov: link.state leaf01:1", "link.state passes now"),
        ("f", "keep", "ibprov: mpi.transport f", "drained for mpi.transport, which this run did not judge"),
        ("g", "keep", "ibprov:", "drained for an unnamed check, which this run did not judge"),
        ("h", "keep", "maintenance", "drained by alice, not by ibprov: never resumed"),
        ("i", "keep", "maintenance", "drained, not by ibprov: never resumed"),
    ]
    done = carry_out(actions, Recorder(), dry_run=False)
    assert [(a.node, a.action, a.reason, a.why) for a in done] == [(a.node, a.action, a.reason, a.why) for a in actions]
    assert [a.result for a in done] == ["done", "", "", "", "", "done", "", "", "", ""]


class ShortRunner(Recorder):
    """A controller that answers fewer commands than it was given, or fails without saying why."""

    def run(self, commands: Sequence[Sequence[str]]) -> list[CommandResult]:
        return [CommandResult(tuple(c), False, "") for c in commands][: self.keep]

    keep = 1


def test_a_failed_scontrol_without_output_still_says_it_failed_and_a_missing_answer_is_an_error() -> None:
    actions = [NodeAction("cn01", "drain", "ibprov: node.rate cn01", "x")]
    assert carry_out(actions, ShortRunner(), dry_run=False)[0].result == "failed: scontrol failed"
    two = [*actions, NodeAction("cn02", "resume", "ibprov: node.rate cn02", "y")]
    with pytest.raises(ValueError, match="zip"):
        carry_out(two, ShortRunner(), dry_run=False)  # never an outcome made up for the command not answered
