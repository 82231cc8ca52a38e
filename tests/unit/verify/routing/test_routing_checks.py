"""The routing section's checks on observations built here (no fabric): each fault named by its check with
the objects, ports and log lines an admin acts on; SL-unaware audits never report a loop the VLs may break."""

from __future__ import annotations

import json

import jsonschema
import pytest
from captures import read_capture
from routingkit import fat_tree, ring

from ibprov.probes import smlog
from ibprov.report import Report, to_json
from ibprov.report.model import SectionReport, Severity
from ibprov.routing.model import RoutingModel
from ibprov.routing.offline import compute_lft
from ibprov.verify.registry import report_schema
from ibprov.verify.routing.observation import EngineLog, RoutingObservation
from ibprov.verify.routing.plan import RoutingPlan
from ibprov.verify.routing.section import audit_observation, latest_router


def plan(engine: str = "minhop", *, tiers: dict[str, int] | None = None, qos: bool = False) -> RoutingPlan:
    return RoutingPlan(
        cluster="c1",
        engines=(engine,),
        qos=qos,
        lmc=0,
        tiers=tiers or {},
        switch_names={},
        ca_names={},
        sm_nodes=("sm01",),
        balance_limit=1.5,
    )


def logged(capture: str) -> EngineLog:
    return EngineLog(smlog.parse(read_capture(f"routing/{capture}")), "sm01:/var/log/opensm.log")


def report(p: RoutingPlan, model: RoutingModel, log: EngineLog | None = None) -> SectionReport:
    engine = log or EngineLog(None, "the SM's log on sm01 could not be read (unreachable)")
    return audit_observation(p, RoutingObservation(model, engine))


def by_check(r: SectionReport, check: str) -> list[str]:
    return [f"{f.object} | {f.expected} | {f.observed}" for f in r.findings if f.check == check]


def ft_tiers(model: RoutingModel, tiers: list[int]) -> dict[str, int]:
    return dict(zip(model.names, tiers, strict=True))


def test_minhop_on_a_ring_is_two_credit_loops_listed_port_by_port_on_vl_0() -> None:
    r = report(plan("minhop"), ring(5), logged("opensm-log-ring5-minhop.txt"))
    assert {f.check for f in r.findings} == {"routing.credit_loops"}
    loops = by_check(r, "routing.credit_loops")
    assert loops == [
        # each channel as the cable it crosses (S0 port 3 is cabled to S1 port 4), the last back to the first
        "fabric | no cycle | cycle 1 of 2: S0:3 → S1:4, S1:3 → S2:4, S2:3 → S3:4, S3:3 → S4:4, S4:3 → S0:4 (VL 0); "
        "5 channels on the cycle, 5 in its strongly connected component",
        "fabric | no cycle | cycle 2 of 2: S0:4 → S4:3, S4:4 → S3:3, S3:4 → S2:3, S2:4 → S1:3, S1:4 → S0:3 (VL 0); "
        "5 channels on the cycle, 5 in its strongly connected component",
    ]
    assert r.facts.as_dict()["credit_loops"] == 2


def test_a_fall_back_to_minhop_is_an_engine_finding_that_quotes_the_log() -> None:
    r = report(plan("updn"), ring(5), logged("opensm-log-ring5-updn-no-roots-fallback.txt"))
    (engine,) = by_check(r, "routing.engine")
    assert engine.startswith("routing engine (planned updn) | updn | fell back to minhop — sm01:/var/log/opensm.log")
    assert "'osm_ucast_mgr_process: minhop tables configured on all switches'" in engine
    assert "'ucast_mgr_route: updn: cannot build lid matrices'" in engine
    assert "disabling UPDN algorithm, no root nodes were found" in engine


def test_the_planned_engine_in_the_log_passes_and_an_unread_log_is_skipped_never_passed() -> None:
    model = ring(5, tiers=[2, 1, 0, 0, 1])
    good = report(plan("updn"), model, logged("opensm-log-ring5-updn-root-S0.txt"))
    assert not by_check(good, "routing.engine")
    (result,) = [c for c in good.checks if c.id == "routing.engine"]
    assert not result.skipped
    unread = report(plan("updn"), model)
    (result,) = [c for c in unread.checks if c.id == "routing.engine"]
    assert [reason for _obj, reason in result.skipped] == [
        "skipped: the SM's log on sm01 could not be read (unreachable)"
    ]
    assert unread.facts.as_dict()["engine_used"] is None


def test_a_ring_under_up_down_has_no_loop_and_its_detours_are_a_warning() -> None:
    r = report(plan("updn"), ring(5, tiers=[2, 1, 0, 0, 1]), logged("opensm-log-ring5-updn-root-S0.txt"))
    assert not by_check(r, "routing.credit_loops")
    (minimal,) = [f for f in r.findings if f.check == "routing.minimal"]
    assert minimal.severity is Severity.WARNING
    assert "6 of 20 CA pairs take longer routes" in minimal.observed


def test_with_sls_in_play_and_unread_a_cycle_on_one_vl_is_a_caveat_not_a_loop() -> None:
    r = report(plan("lash", qos=True), ring(5), logged("opensm-log-ring5-lash-Q.txt"))
    assert not by_check(r, "routing.credit_loops")
    (result,) = [c for c in r.checks if c.id == "routing.credit_loops"]
    (caveat,) = result.caveats
    assert caveat[1].startswith("SL-unaware: the path SLs were not read")
    assert r.facts.as_dict()["sl_aware"] is False
    assert any("credit loops checked on one VL (SL-unaware)" in n for n in r.notes)


def test_with_sls_in_play_an_acyclic_graph_on_one_vl_is_clean_without_the_sls() -> None:
    r = report(plan("lash", qos=True), ring(5, tiers=[2, 1, 0, 0, 1]), logged("opensm-log-ring5-lash-Q.txt"))
    (result,) = [c for c in r.checks if c.id == "routing.credit_loops"]
    assert not result.caveats
    assert not by_check(r, "routing.credit_loops")


def test_dead_ends_and_loops_are_named_by_destination_switch_and_port() -> None:
    model, tiers = fat_tree(3, 2, 2)
    n05, n04 = model.cas[4].lid, model.cas[3].lid
    model.lft[model.names.index("leaf01"), n04] = 255
    model.lft[model.names.index("leaf02"), n05] = 3  # up to spine01 ...
    model.lft[model.names.index("spine01"), n05] = 2  # ... which sends it back to leaf02
    r = report(plan("ftree", tiers=ft_tiers(model, tiers)), model)
    assert by_check(r, "routing.reachable") == [
        f"LID {n04} (n021/mlx5_0:1) | delivered from every switch with CA ports | dead end at leaf01 (no entry), "
        "from leaf01 (2 CA ports)"
    ]
    (loop,) = by_check(r, "routing.lft_loop")
    assert loop.startswith(f"LID {n05} (n030/mlx5_0:1) | delivered | forwarding loop ")
    assert "spine01:2 → leaf02:3, leaf02:3 → spine01:2 (and round again)" in loop
    assert loop.endswith("from leaf01, leaf02 (4 CA ports)")


def test_a_route_down_then_up_is_drawn_hop_by_hop() -> None:
    model, tiers = fat_tree(3, 2, 2)
    n01 = model.cas[0].lid  # on leaf01; every leaf sends it up to spine01 (its first uplink)
    model.lft[model.names.index("spine01"), n01] = 3  # down to leaf03 ...
    model.lft[model.names.index("leaf03"), n01] = 4  # ... which sends it up to spine02
    r = report(plan("ftree", tiers=ft_tiers(model, tiers)), model)
    (turn,) = by_check(r, "routing.updown")
    assert "2 CA pairs turn up after going down" in turn
    assert f"to LID {n01} (n010/mlx5_0:1): leaf02 ↑ spine01 ↓ leaf03 ↑ spine02 ↓ leaf01" in turn


def test_a_cable_between_two_leaves_of_a_fat_tree_disagrees_with_the_tiers() -> None:
    model, tiers = fat_tree(3, 2, 2)
    r = report(plan("ftree", tiers={**ft_tiers(model, tiers), "spine02": 0}), model)  # the spec calls spine02 a leaf
    cables = by_check(r, "routing.tiers")
    assert len(cables) == 3
    assert all("joins a leaf and leaf" in c for c in cables)


def test_a_lost_uplink_is_a_balance_finding_naming_the_busiest_and_idlest_ports() -> None:
    model, tiers = fat_tree(3, 2, 2)
    leaf01 = model.names.index("leaf01")
    model.peer[leaf01, 3] = model.peer_port[leaf01, 3] = -1
    spine01 = model.names.index("spine01")
    model.peer[spine01, 1] = model.peer_port[spine01, 1] = -1
    model = RoutingModel(model.names, model.guids, model.lids, model.ports, model.peer, model.peer_port, model.cas,
                         model.lft)  # fmt: skip
    model.lft = compute_lft(model, tiers)
    r = report(plan("ftree", tiers=ft_tiers(model, tiers)), model)
    (balance,) = by_check(r, "routing.balance")
    assert balance.startswith("every leaf uplink (5 ports) | at most 1.5 x the mean")
    assert "leaf01:4 → spine02:1 carries 4 destination LIDs" in balance
    assert not by_check(r, "routing.credit_loops")


@pytest.mark.parametrize("hosts", [[1, 2, 3], [2, 2, 2], [5, 1, 1, 4]])
def test_a_clean_fat_tree_with_odd_leaf_populations_is_balanced(hosts: list[int]) -> None:
    model, tiers = fat_tree(len(hosts), 2, hosts)
    r = report(plan("ftree", tiers=ft_tiers(model, tiers)), model)
    assert not r.findings, [f.text for f in r.findings]


def test_the_routing_report_json_validates_against_the_published_schema() -> None:
    model, tiers = fat_tree(3, 2, 2)
    section = report(plan("ftree", tiers=ft_tiers(model, tiers)), model, logged("opensm-log-fattree-ftree.txt"))
    doc = json.loads(to_json(Report.from_sections(cluster="c1", spec="c1.yaml", sections=[section])))
    jsonschema.validate(doc, report_schema())
    facts = doc["sections"]["routing"]["facts"]
    assert facts["engine_used"] == "ftree"
    assert facts["switches_per_route"] == {"1": 6, "3": 24}
    assert [row["group"] for row in facts["balance"]] == ["leaf ↑", "spine ↓"]


def test_the_engine_is_read_from_the_sm_that_routed_last_a_standby_after_a_failover() -> None:
    older = smlog.parse(read_capture("routing/opensm-log-ring5-minhop.txt"))  # Dec 04 13:51:52
    newer = smlog.parse(read_capture("routing/opensm-log-ring5-updn-root-S0.txt"))  # Dec 04 13:51:55
    standby = smlog.parse(read_capture("routing/opensm-log-ring5-minhop.txt").split("minhop tables")[0])
    assert latest_router({"sm01": older, "sm02": newer}) == "sm02"
    assert latest_router({"sm02": newer, "sm01": older}) == "sm02"
    assert latest_router({"sm01": older, "sm02": standby}) == "sm01"
    assert latest_router({}) is None


def test_an_sm_that_routed_on_feb_29_is_dated_and_wins_over_one_that_routed_on_feb_28() -> None:
    # OpenSM's log stamps have no year: a Feb 29 stamp must still parse (it did not with Python's default 1900)
    older = smlog.parse(read_capture("routing/opensm-log-ring5-minhop.txt").replace("Dec 04 ", "Feb 28 "))
    leap = smlog.parse(read_capture("routing/opensm-log-ring5-updn-root-S0.txt").replace("Dec 04 ", "Feb 29 "))
    assert latest_router({"sm02": leap, "sm01": older}) == "sm02"
    assert latest_router({"sm01": older, "sm02": leap}) == "sm02"


@pytest.mark.parametrize(
    ("port", "said"),
    [(0, "port 0, the switch itself"), (2, "port 2, to n011/mlx5_0:1"), (7, "port 7, which has no cable to a switch")],
)
def test_a_dead_end_says_what_its_entry_points_at(port: int, said: str) -> None:
    model, tiers = fat_tree(3, 2, 2)
    n05 = model.cas[4].lid
    model.lft[model.names.index("leaf01"), n05] = port
    r = report(plan("ftree", tiers=ft_tiers(model, tiers)), model)
    (dead,) = by_check(r, "routing.reachable")
    assert f"dead end at leaf01 ({said}), from leaf01 (2 CA ports)" in dead


def _twin_switches() -> RoutingModel:
    """Two switches joined by two parallel cables (S0:3 - S1:4, S0:5 - S1:6), four CA ports on each: a
    direct network (no tiers), as a ring or a torus is."""
    from ibprov.routing.model import ModelBuilder

    b = ModelBuilder()
    s0, s1 = b.switch("S0", 0x100), b.switch("S1", 0x101)
    b.cable(s0, 3, s1, 4)
    b.cable(s0, 5, s1, 6)
    for h, port in enumerate((1, 2, 7, 8)):
        b.ca(f"a{h}/mlx5_0:1", 1 + h, s0, port)
        b.ca(f"b{h}/mlx5_0:1", 5 + h, s1, port)
    b.lids = [9, 10]
    model = b.build()
    model.lft = compute_lft(model)
    return model


def test_a_direct_network_is_judged_by_routes_over_parallel_cables_and_told_nothing_of_fat_trees() -> None:
    model = _twin_switches()
    s0, s1 = model.names.index("S0"), model.names.index("S1")
    for lid in (5, 6, 7, 8):
        model.lft[s0, lid] = 3 if lid < 7 else 5  # two destinations over each cable: balanced
    for lid in (1, 2, 3, 4):
        model.lft[s1, lid] = 4 if lid < 3 else 6
    assert by_check(report(plan("minhop"), model), "routing.balance") == []
    for lid in (5, 6, 7, 8):
        model.lft[s0, lid] = 3  # every route from S0 to S1 over one of the two cables
    r = report(plan("minhop"), model)
    assert by_check(r, "routing.balance") == [
        "S0 → S1 (2 parallel cables) | at most 1.5 x the mean (8.0 routes per cable) | S0:3 → S1:4 carries 16 "
        "routes (2.00 x the mean); least loaded S0:5 → S1:6: 0"
    ]
    (finding,) = [f for f in r.findings if f.check == "routing.balance"]
    assert "fat tree" not in finding.fix
    assert "uplink" not in finding.fix
    assert finding.fix.startswith("Parallel cables between two switches should carry alike")


def test_routes_to_switch_lids_join_the_loop_graph_where_everything_runs_on_sl_0() -> None:
    from dataclasses import replace

    from routingkit import ring as _ring

    model = _ring(3)
    for i in range(3):  # the switch LIDs two hops round the ring, the CA LIDs one hop the short way
        target = model.lids[i]
        model.lft[(i + 1) % 3, target] = 3
        model.lft[(i + 2) % 3, target] = 3
    off, on = plan("minhop"), replace(plan("minhop"), switch_routes=True)
    assert by_check(report(off, model), "routing.credit_loops") == []
    (loop,) = by_check(report(on, model), "routing.credit_loops")
    assert "S0:3 → S1:4" in loop
    assert report(on, model).facts.as_dict()["switch_routes"] is True
    sl_engine = replace(plan("lash", qos=True), switch_routes=True)  # their SLs are not read: left out
    assert report(sl_engine, model).facts.as_dict()["switch_routes"] is False
