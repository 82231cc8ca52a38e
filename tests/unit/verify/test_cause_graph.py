"""The cause graph: which finding explains which, rule by rule, on the example rack the demo runs (sm01, sm02,
node01-04 on leaf01) and on a small fat tree; findings written as the sections write them (the demo's own are
a fixture). Each rule both ties what it should and leaves alone what it should not."""

from __future__ import annotations

from dataclasses import replace

import jsonschema
import pytest
from causekit import C, S, W, demo_findings, f, fabric, graph, report_of, roots

from ibprov.clusterspec import load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.probes.slurm import SlurmNode, SlurmView
from ibprov.report.json_report import to_dict
from ibprov.report.model import CheckResult
from ibprov.verify.causes import RULES, Rule, explain, explain_report, fabric_of
from ibprov.verify.registry import report_schema
from ibprov.verify.scheduler.drain import REASON_MAX, plan_actions


# --------------------------------------------------------------------------------------------- the demo
def test_the_demo_s_rogue_sm_and_pulled_cable_are_the_only_causes_and_explain_the_other_six() -> None:
    report = explain_report(report_of(demo_findings()), fabric())
    assert [(c.finding.check, c.finding.object) for c in report.causes] == [
        ("sm.rogue", "node04 mlx5_0 port 1"),
        ("cabling.missing", "node03 mlx5_0 port 1"),
    ]
    rogue = report.causes[0]
    assert sorted((s.check, s.object) for s in rogue.symptoms) == [
        ("pkey.missing", f"{n} mlx5_0 port 1") for n in ("node01", "node02", "node04", "sm01", "sm02")
    ] + [("sm.master", "fabric")]
    assert report.summary.startswith("FAIL: 2 causes explain 8 findings (1 critical, 1 security, 6 error)")
    master = report.explained[("sm.master", "fabric")]
    assert (master.cause, master.rule) == (("sm.rogue", "node04 mlx5_0 port 1"), "sm.rogue_master")
    pkey = report.explained[("pkey.missing", "node01 mlx5_0 port 1")]
    assert (pkey.cause, pkey.rule) == (("sm.master", "fabric"), "sm.wrong_master")
    assert pkey.evidence.startswith("2 MASTERs: node04 mlx5_0 port 1 MASTER (priority 0) and sm01")


def test_report_json_carries_each_symptom_s_cause_and_the_causes_and_stays_schema_valid() -> None:
    data = to_dict(explain_report(report_of(demo_findings()), fabric()))
    jsonschema.validate(data, report_schema())
    by = {(d["check"], d["object"]): d for d in data["findings"]}
    assert "caused_by" not in by[("sm.rogue", "node04 mlx5_0 port 1")]
    assert by[("sm.master", "fabric")]["caused_by"] == {
        "check": "sm.rogue",
        "object": "node04 mlx5_0 port 1",
        "rule": "sm.rogue_master",
        "evidence": "the unplanned SM node04 mlx5_0 port 1 is a MASTER (2 MASTERs: node04 mlx5_0 port 1 MASTER "
        "(priority 0) and sm01 mlx5_0 port 1 MASTER (priority 15))",
    }
    assert [(c["check"], len(c["symptoms"])) for c in data["causes"]] == [("sm.rogue", 6), ("cabling.missing", 0)]


def test_a_report_without_findings_has_no_causes_and_reads_as_before() -> None:
    report = explain_report(report_of([]), fabric())
    assert report.causes == []
    assert report.explained == {}
    assert report.summary.startswith("PASS: no findings")
    alone = explain_report(report_of([f("link.width", "node01 mlx5_0 port 1", observed="1X")]), fabric())
    assert alone.summary.startswith("FAIL: 1 finding (1 error)")  # nothing explained: no cause wording


# --------------------------------------------------------------------------------------------- the SMs
def test_no_master_explains_inactive_ports_and_unprogrammed_tables_but_not_a_planned_sm_that_is_not_running() -> None:
    got = graph(
        [
            f("sm.master", "fabric", C, observed="no MASTER (sm02 mlx5_0 port 1 STANDBY (priority 14))"),
            f("node.port_state", "node01 mlx5_0 port 1", observed="INIT"),
            f("pkey.missing", "node02 mlx5_0 port 1"),
            f("routing.reachable", "LID 4 (node03 mlx5_0 port 1)"),
            f("sm.standby_missing", "sm01 mlx5_0 port 1", observed="no SM running on this port"),
        ]
    )
    assert {k: v[2] for k, v in got.items()} == {
        ("node.port_state", "node01 mlx5_0 port 1"): "sm.wrong_master",
        ("pkey.missing", "node02 mlx5_0 port 1"): "sm.wrong_master",
        ("routing.reachable", "LID 4 (node03 mlx5_0 port 1)"): "sm.wrong_master",
    }


def test_a_standby_rogue_explains_nothing_and_a_master_rogue_explains_the_tables_even_without_a_master_finding() -> (
    None
):
    standby = f("sm.rogue", "node04 mlx5_0 port 1", S, observed="STANDBY SM with priority 0 (port GUID 0x1, lid 9)")
    pkey = f("pkey.extra", "node01 mlx5_0 port 1", S, observed="0x8010 (compute, full) in the table")
    assert graph([standby, pkey]) == {}
    master = f("sm.rogue", "node04 mlx5_0 port 1", S, observed="MASTER SM with priority 0 (port GUID 0x1, lid 9)")
    assert graph([master, pkey]) == {
        ("pkey.extra", "node01 mlx5_0 port 1"): ("sm.rogue", "node04 mlx5_0 port 1", "sm.rogue_programs")
    }


def test_a_planned_standby_elected_over_the_planned_master_explains_no_tables() -> None:
    wrong = f(
        "sm.master", "fabric", C, observed="sm02 mlx5_0 port 1 MASTER (priority 14) while the planned master is STANDBY"
    )
    assert graph([wrong, f("pkey.missing", "node01 mlx5_0 port 1")]) == {}


# --------------------------------------------------------------------------------------------- hosts
def test_an_unreachable_host_explains_every_finding_about_it_and_nothing_about_another_host() -> None:
    findings = [
        f("node.unreachable", "node02"),
        f("mpi.unreachable", "node02"),
        f("perf.reach", "node02"),
        f("node.memlock", "node02"),
        f("mpi.run", "node01 -> node02 (as configured)"),
        f("perf.bandwidth", "node02/mlx5_0:1 -> node03/mlx5_0:1 ib_write_bw 64KiB"),
        f("scheduler.node_state", "node02", W),
        f("node.memlock", "node01"),
        f("perf.bandwidth", "node01/mlx5_0:1 -> node03/mlx5_0:1 ib_write_bw 64KiB"),
    ]
    got = graph(findings)
    assert set(got) == {(x.check, x.object) for x in findings[1:7]}
    assert {v for v in got.values()} == {("node.unreachable", "node02", "host.unreachable")}
    assert roots(findings)[0] == ("node.unreachable", "node02", 6)


def test_a_later_section_s_failure_to_reach_never_explains_an_earlier_one_s() -> None:
    got = graph([f("perf.reach", "node02"), f("mpi.unreachable", "node02")])
    assert got == {("perf.reach", "node02"): ("mpi.unreachable", "node02", "host.unreachable")}


# --------------------------------------------------------------------------------------------- links
def test_a_lost_cable_explains_the_findings_at_its_ports_and_the_pairs_that_use_its_hca_port() -> None:
    lost = f("cabling.missing", "node03 mlx5_0 port 1", observed="no link")
    near = [
        f("node.port_state", "node03 mlx5_0 port 1", observed="DOWN"),
        f("pkey.missing", "node03 mlx5_0 port 1"),
        f("qos.switch_sl2vl", "leaf01 port 3"),
        f("routing.reachable", "LID 4 (node03 mlx5_0 port 1)"),
        f("perf.latency", "node01/mlx5_0:1 -> node03/mlx5_0:1 ib_write_lat 2B"),
        f("perf.tcp", "node03/mlx5_0:1 -> node04/mlx5_0:1 iperf3", W),
        f("mpi.latency", "node03 <-> node04"),
        f("counters.threshold", "leaf01 port 3", observed="LinkDownedCounter=3"),
    ]
    far = [
        f("pkey.missing", "node01 mlx5_0 port 1"),
        f("qos.switch_sl2vl", "leaf01 port 30"),
        f("perf.latency", "node01/mlx5_0:1 -> node02/mlx5_0:1 ib_write_lat 2B"),
        f("mpi.latency", "node01 <-> node02"),
    ]
    got = graph([lost, *near, *far])
    assert set(got) == {(x.check, x.object) for x in near}
    assert set(got.values()) == {("cabling.missing", "node03 mlx5_0 port 1", "link.lost")}
    why = explain(report_of([lost, near[2]]).findings, fabric())[("qos.switch_sl2vl", "leaf01 port 3")]
    assert why.evidence == ("the cable at node03 mlx5_0 port 1 is missing (cabling.missing): leaf01 port 3 has no link")


def test_a_planned_sm_behind_a_down_cable_is_explained_by_it() -> None:
    got = graph(
        [
            f("link.down", "sm02 mlx5_0 port 1", observed="Down"),
            f("sm.standby_missing", "sm02 mlx5_0 port 1", observed="no SM running on this port"),
        ]
    )
    assert got == {("sm.standby_missing", "sm02 mlx5_0 port 1"): ("link.down", "sm02 mlx5_0 port 1", "link.lost")}


def test_a_missing_hca_port_explains_its_lost_cable_and_through_it_everything_behind() -> None:
    findings = [
        f("node.hca_missing", "node02 mlx5_0 port 1"),
        f("cabling.missing", "node02 mlx5_0 port 1"),
        f("pkey.missing", "node02 mlx5_0 port 1"),
        f("perf.bandwidth", "node01/mlx5_0:1 -> node02/mlx5_0:1 ib_write_bw 64KiB"),
    ]
    got = graph(findings)
    assert got[("cabling.missing", "node02 mlx5_0 port 1")][2] == "hca.missing"
    assert roots(findings) == [("node.hca_missing", "node02 mlx5_0 port 1", 3)]


def test_a_degraded_link_explains_the_host_s_rate_and_the_pairs_over_it_but_not_its_tables() -> None:
    width = f("link.width", "node01 mlx5_0 port 1", observed="1X")
    rate = f("node.rate", "node01 mlx5_0 port 1", observed="50 Gb/s (1X HDR)")
    pair = f("perf.bandwidth", "node01/mlx5_0:1 -> node02/mlx5_0:1 ib_write_bw 64KiB", observed="41.2 Gb/s")
    pkey = f("pkey.missing", "node01 mlx5_0 port 1")
    got = graph([width, rate, pair, pkey])
    assert got == {
        ("node.rate", "node01 mlx5_0 port 1"): ("link.width", "node01 mlx5_0 port 1", "link.degraded"),
        (pair.check, pair.object): ("link.width", "node01 mlx5_0 port 1", "link.degraded"),
    }


def test_wrong_firmware_explains_the_rate_its_port_trains_at_and_so_the_pairs_over_it() -> None:
    findings = [
        f("node.firmware", "node01 mlx5_0", observed="20.31.1014", expected="20.39.1002"),
        f("link.speed", "node01 mlx5_0 port 1", observed="EDR"),
        f("perf.bandwidth", "node01/mlx5_0:1 -> node02/mlx5_0:1 ib_write_bw 64KiB"),
    ]
    report = explain_report(report_of(findings), fabric())
    assert report.explained[("link.speed", "node01 mlx5_0 port 1")].rule == "hca.firmware"
    assert report.explained[("link.speed", "node01 mlx5_0 port 1")].evidence == (
        "node01 mlx5_0 runs firmware 20.31.1014, not 20.39.1002 (node.firmware)"
    )
    assert [(c.finding.check, len(c.symptoms)) for c in report.causes] == [("node.firmware", 2)]


def test_a_wrong_stack_explains_missing_verbs_transports_on_its_host_only() -> None:
    got = graph(
        [
            f("node.stack_version", "node01", observed="rdma-core 39.0", expected="rdma-core 44.0"),
            f("mpi.verbs_transports", "node01"),
            f("mpi.verbs_transports", "node02"),
        ]
    )
    assert got == {("mpi.verbs_transports", "node01"): ("node.stack_version", "node01", "host.stack")}


# --------------------------------------------------------------------------------------------- switches
FAT_TREE = """version: 1
cluster: {name: ft}
nodes:
  - {name: n1, hcas: [{device: mlx5_0}]}
  - {name: n2, hcas: [{device: mlx5_0}]}
  - {name: n3, hcas: [{device: mlx5_0}]}
switches:
  - {name: leaf1, ports: 8, role: leaf}
  - {name: leaf2, ports: 8, role: leaf}
  - {name: spine1, ports: 8, role: spine}
  - {name: spine2, ports: 8, role: spine}
fabric:
  speed: HDR
  links:
    - leaf1:1 <-> n1/mlx5_0:1
    - leaf1:2 <-> n2/mlx5_0:1
    - leaf2:1 <-> n3/mlx5_0:1
    - leaf1:7 <-> spine1:1
    - leaf1:8 <-> spine2:1
    - leaf2:7 <-> spine1:2
    - leaf2:8 <-> spine2:2
subnet_manager:
  instances: [{node: n1, priority: 15}]
"""


def test_a_switch_gone_explains_every_cable_to_it_and_nothing_else() -> None:
    tree = fabric_of(load_spec_text(FAT_TREE, "ft.yaml"))
    findings = [
        f("cabling.switch_missing", "spine2", observed="not in the fabric"),
        f("cabling.missing", "leaf1 port 8"),
        f("cabling.missing", "leaf2 port 8"),
        f("qos.switch_sl2vl", "leaf2 port 8"),
        f("cabling.missing", "leaf1 port 7"),
    ]
    assert roots(findings, tree) == [
        ("cabling.switch_missing", "spine2", 3),
        ("cabling.missing", "leaf1 port 7", 0),
    ]


def test_a_lost_switch_to_switch_cable_explains_its_two_ports_only() -> None:
    tree = fabric_of(load_spec_text(FAT_TREE, "ft.yaml"))
    findings = [
        f("link.down", "leaf1 port 7"),
        f("qos.switch_vlarb", "spine1 port 1"),
        f("perf.bandwidth", "n1/mlx5_0:1 -> n3/mlx5_0:1 ib_write_bw 64KiB"),  # its route may have crossed it
    ]
    assert graph(findings, tree) == {("qos.switch_vlarb", "spine1 port 1"): ("link.down", "leaf1 port 7", "link.lost")}


# --------------------------------------------------------------------------------------------- the graph
def test_an_edge_that_would_close_a_cycle_is_not_added_and_both_stay_findings() -> None:
    def always(*_args: object) -> str:
        return "each blames the other"

    both = (
        Rule("a", "a explains b", ("x.a",), ("x.b",), always),
        Rule("b", "b explains a", ("x.b",), ("x.a",), always),
    )
    findings = report_of([f("x.a", "node01", C), f("x.b", "node02")]).findings
    got = explain(findings, fabric(), both)
    # the worse finding is taken first and explained by the other; the edge back would close a cycle
    assert {k: e.cause for k, e in got.items()} == {("x.a", "node01"): ("x.b", "node02")}
    report = explain_report(report_of([f("x.a", "node01", C), f("x.b", "node02")]), fabric())
    assert report.root_of(findings[1]) == ("x.b", "node02")  # the real rules tie neither


def test_causes_come_worst_first_then_by_how_much_they_explain() -> None:
    findings = [
        f("cabling.missing", "node01 mlx5_0 port 1"),
        f("cabling.missing", "node02 mlx5_0 port 1"),
        f("pkey.missing", "node02 mlx5_0 port 1"),
        f("sm.rogue", "node04 mlx5_0 port 1", S, observed="STANDBY SM with priority 0"),
    ]
    assert roots(findings) == [
        ("sm.rogue", "node04 mlx5_0 port 1", 0),
        ("cabling.missing", "node02 mlx5_0 port 1", 1),
        ("cabling.missing", "node01 mlx5_0 port 1", 0),
    ]


def test_every_rule_names_only_checks_some_section_has() -> None:
    from ibprov.verify.registry import SECTIONS, load_section

    ids = {c.id for info in SECTIONS for c in load_section(info).checks}
    for rule in RULES:
        for pattern in (*rule.causes, *rule.symptoms):
            matches = [i for i in ids if (i.startswith(pattern) if pattern.endswith(".") else i == pattern)]
            assert matches, f"rule {rule.id}: no check {pattern!r}"


# --------------------------------------------------------------------------------------------- subjects
@pytest.mark.parametrize(
    ("obj", "hosts", "ports"),
    [
        ("node01 mlx5_0 port 1", {"node01"}, {Endpoint("node01", "mlx5_0", 1)}),
        ("leaf01 port 3", set(), {Endpoint("leaf01", None, 3)}),
        ("LID 4 (node03 mlx5_0 port 1)", {"node03"}, {Endpoint("node03", "mlx5_0", 1)}),
        ("node01/mlx5_0:1 -> node03/mlx5_0:1 ib_write_lat 2B", {"node01", "node03"}, None),
        ("leaf01:1 <-> node01/mlx5_0:1", {"node01"}, {Endpoint("leaf01", None, 1), Endpoint("node01", "mlx5_0", 1)}),
        ("node01 <-> node02", {"node01", "node02"}, set()),
        ("node011 mlx5_0 port 1", set(), set()),  # a longer name is another node
        ("node01 mlx5_9 port 1", {"node01"}, set()),  # an HCA node01 does not have
        ("node01/mlx5_9:1", set(), set()),
        ("the planned port 1 of fabric", set(), set()),
    ],
)
def test_an_object_names_only_what_the_plan_has(obj: str, hosts: set[str], ports: set[Endpoint] | None) -> None:
    got = fabric().subjects(obj)
    assert set(got.hosts) == hosts
    if ports is not None:
        assert set(got.ports) == ports


# --------------------------------------------------------------------------------------------- drains
def _slurm(**reasons: str) -> SlurmView:
    nodes = {}
    for name in ("node01", "node02", "node03", "node04"):
        reason = reasons.get(name, "")
        nodes[name] = SlurmNode(name, "drained" if reason else "idle", reason, "root" if reason else "")
    return SlurmView(version="22.05.8", plugin="topology/tree", nodes=nodes)


def test_the_demo_s_drains_name_the_cause_and_what_it_did_on_the_node() -> None:
    report = explain_report(report_of(demo_findings()), fabric())
    nodes = ("node01", "node02", "node03", "node04")
    actions, _notes = plan_actions(report, nodes, _slurm(node02="admin: BIOS update"), drain=True, resume=False)
    got = {a.node: (a.action, a.reason) for a in actions}
    assert got == {
        "node01": ("drain", "ibprov: sm.rogue node04 mlx5_0 port 1 (pkey.missing here)"),
        "node02": ("keep", "admin: BIOS update"),
        "node03": ("drain", "ibprov: cabling.missing node03 mlx5_0 port 1"),
        "node04": ("drain", "ibprov: sm.rogue node04 mlx5_0 port 1 (+1)"),
    }
    why = {a.node: a.why for a in actions}
    assert why["node01"] == "error pkey.missing node01 mlx5_0 port 1 (caused by sm.rogue node04 mlx5_0 port 1)"
    assert all(len(a.reason) <= REASON_MAX for a in actions)


def test_a_node_drained_for_a_cause_elsewhere_is_resumed_once_the_cause_s_check_passes() -> None:
    drained = "ibprov: sm.rogue node04 mlx5_0 port 1 (pkey.missing here)"
    healed = explain_report(report_of([f("cabling.missing", "node03 mlx5_0 port 1")]), fabric())
    judged = replace(
        healed, sections=(replace(healed.sections[0], checks=(*healed.sections[0].checks, _passed("sm.rogue"))),)
    )
    actions, _ = plan_actions(judged, ("node01",), _slurm(node01=drained), drain=False, resume=True)
    assert [(a.node, a.action, a.why) for a in actions] == [("node01", "resume", "sm.rogue passes now")]
    unjudged = plan_actions(healed, ("node01",), _slurm(node01=drained), drain=False, resume=True)[0]
    assert [(a.action, a.why) for a in unjudged] == [("keep", "drained for sm.rogue, which this run did not judge")]


def _passed(check: str) -> CheckResult:
    return CheckResult(check, check, ("node04 mlx5_0 port 1",))


# --------------------------------------------------------------------------------------------- each tie, both ways
def test_a_rule_names_checks_exactly_or_as_a_family_ending_in_a_dot() -> None:
    (wrong_master,) = [r for r in RULES if r.id == "sm.wrong_master"]
    assert wrong_master.may_cause("sm.master")
    assert not wrong_master.may_cause("sm.master_x"), "an exact id is not a prefix"
    assert wrong_master.may_suffer("qos.switch_vlarb"), "qos. is the family"
    assert not wrong_master.may_suffer("qosx.sl2vl")


def test_an_unplanned_single_master_explains_tables_and_a_planned_sm_pushed_to_master_but_no_inactive_port() -> None:
    master = f("sm.master", "fabric", C, observed="node04 mlx5_0 port 1 MASTER (priority 0), not a planned SM")
    findings = [
        master,
        f("pkey.missing", "node01 mlx5_0 port 1"),
        f("node.port_state", "node02 mlx5_0 port 1", observed="INIT"),  # not what a second master does
        f("sm.standby_missing", "sm02 mlx5_0 port 1", observed="MASTER (priority 14)"),
        f("sm.standby_missing", "sm01 mlx5_0 port 1", observed="no SM running on this port"),
    ]
    assert set(graph(findings)) == {
        ("pkey.missing", "node01 mlx5_0 port 1"),
        ("sm.standby_missing", "sm02 mlx5_0 port 1"),
    }
    two = f(
        "sm.master",
        "fabric",
        C,
        observed="2 MASTERs: sm01 mlx5_0 port 1 MASTER (priority 15) and sm02 mlx5_0 port 1 MASTER (priority 14)",
    )
    assert set(graph([two, *findings[1:]])) == set(graph(findings))


def test_a_down_cable_is_said_down_and_a_missing_one_missing() -> None:
    down = explain(
        report_of([f("link.down", "node02 mlx5_0 port 1"), f("pkey.missing", "node02 mlx5_0 port 1")]).findings,
        fabric(),
    )
    assert down[("pkey.missing", "node02 mlx5_0 port 1")].evidence == (
        "the cable at node02 mlx5_0 port 1 is down (link.down): node02 mlx5_0 port 1 has no link"
    )


def test_a_degraded_link_explains_the_mpi_pairs_of_its_host_and_the_perf_suspect_that_names_its_port() -> None:
    width = f("link.width", "node01 mlx5_0 port 1", observed="1X")
    mpi = f("mpi.bandwidth", "node01 <-> node02", observed="2.1 GB/s")
    other = f("mpi.bandwidth", "node03 <-> node04", observed="2.1 GB/s")
    suspect = f("perf.suspect", "fabric", observed="node01 mlx5_0 port 1: 3/3 pairs failed", expected="no common port")
    got = graph([width, mpi, other, suspect])
    assert got == {
        (mpi.check, mpi.object): ("link.width", "node01 mlx5_0 port 1", "link.degraded"),
        (suspect.check, suspect.object): ("link.width", "node01 mlx5_0 port 1", "link.degraded"),
    }


def test_a_missing_hca_port_or_wrong_firmware_explains_nothing_on_another_host() -> None:
    findings = [
        f("node.hca_missing", "node02 mlx5_0 port 1"),
        f("cabling.missing", "node03 mlx5_0 port 1"),
        f("node.firmware", "node01 mlx5_0", observed="20.31.1014", expected="20.39.1002"),
        f("node.rate", "node04 mlx5_0 port 1"),
    ]
    assert graph(findings) == {}


def test_a_finding_whose_first_candidate_would_close_a_cycle_takes_the_next() -> None:
    def always(*_args: object) -> str:
        return "tied"

    both = (
        Rule("a", "a explains b", ("x.a",), ("x.b",), always),
        Rule("b", "b explains a", ("x.b",), ("x.a",), always),
    )
    findings = report_of([f("x.a", "node01", C), f("x.b", "node02"), f("x.a", "node03", W)]).findings
    got = {k: e.cause for k, e in explain(findings, fabric(), both).items()}
    # x.a node01 first: x.b explains it; then x.b: x.a node01 would close a cycle, x.a node03 does not
    assert got == {("x.a", "node01"): ("x.b", "node02"), ("x.b", "node02"): ("x.a", "node03")}


@pytest.mark.parametrize(
    ("obj", "switches", "hcas"),
    [
        ("leaf01 port 3", {"leaf01"}, set()),
        ("node01/mlx5_0:1", set(), {("node01", "mlx5_0")}),
        ("node01 mlx5_0", set(), {("node01", "mlx5_0")}),
        ("leaf01:3 <-> node02.", {"leaf01"}, set()),
        ("leaf01/mlx5_0:1", set(), set()),  # a switch has no HCA
        ("leaf01 port x", {"leaf01"}, set()),
    ],
)
def test_an_object_names_the_switches_and_hcas_the_plan_has(
    obj: str, switches: set[str], hcas: set[tuple[str, str]]
) -> None:
    got = fabric().subjects(obj)
    assert (set(got.switches), set(got.hcas)) == (switches, hcas)


def test_a_word_at_the_end_of_a_sentence_still_names_its_host() -> None:
    assert fabric().subjects("reached from node02.").hosts == {"node02"}
    assert fabric().subjects("node01 mlx5_0 port").ports == frozenset()
