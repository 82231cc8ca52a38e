"""verify --perf's judging, pure: canned observations against a plan built from a small spec (five nodes on
two leaves, HDR 4x, one dual-rail node)."""

from __future__ import annotations

from dataclasses import replace

from ibprov.clusterspec import load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.probes.perfprobe import NodeProbe, PortProbe
from ibprov.report.model import Severity
from ibprov.verify.perf.baseline import Baseline, BaselineEntry
from ibprov.verify.perf.checks import run_object
from ibprov.verify.perf.observation import NodeState, PerfObservation, PerfRun, TcpRun
from ibprov.verify.perf.plan import PerfPlan, build_perf_plan, schedule_for
from ibprov.verify.perf.section import check_perf

SPEC = """\
version: 1
cluster: {name: judge}
nodes:
  - {name: a1, hcas: [{device: mlx5_0}]}
  - {name: a2, hcas: [{device: mlx5_0}]}
  - {name: b1, hcas: [{device: mlx5_0}]}
  - {name: b2, hcas: [{device: mlx5_0}]}
  - {name: b3, hcas: [{device: mlx5_0, numa_node: 1, gid_index: 3}]}
switches:
  - {name: leaf01, role: leaf, ports: 36}
  - {name: leaf02, role: leaf, ports: 36}
  - {name: spine01, role: spine, ports: 36}
  - {name: spine02, role: spine, ports: 36}
fabric:
  speed: HDR
  links:
    - leaf01:1 <-> a1/mlx5_0:1
    - leaf01:2 <-> a2/mlx5_0:1
    - leaf02:1 <-> b1/mlx5_0:1
    - leaf02:2 <-> b2/mlx5_0:1
    - leaf02:3 <-> b3/mlx5_0:1
    - leaf01:33 <-> spine01:1
    - leaf01:34 <-> spine02:1
    - leaf02:33 <-> spine01:2
    - leaf02:34 <-> spine02:2
subnet_manager:
  routing_engine: ftree
  instances: [{node: a1}]
ipoib:
  - {partition: default, subnet: 10.9.0.0/24}
acceptance:
  latency_tests: [ib_write_lat]
  bandwidth_sizes: [65536]
"""
LAT, BW = "ib_write_lat 2B", "ib_write_bw 64KiB"


def plan_of(kind: str = "all-pairs", **acceptance: object) -> PerfPlan:
    loaded = load_spec_text(SPEC, "judge.yaml")
    if acceptance:
        spec = loaded.spec.model_copy(update={"acceptance": loaded.spec.acceptance.model_copy(update=acceptance)})
        loaded = replace(loaded, spec=spec)
    schedule, routing = schedule_for(loaded, kind)  # type: ignore[arg-type]
    return build_perf_plan(loaded, schedule, routing=routing)


def device(rate: str | None = None, pcie: str | None = None) -> NodeState:
    port = PortProbe("mlx5_0", 1, rate=rate, state="4: ACTIVE" if rate else None, pcie=pcie)
    tools = {t: f"/usr/bin/{t}" for t in ("ib_write_lat", "ib_write_bw", "iperf3", "numactl")}
    return NodeState(True, probe=NodeProbe(("mlx5_0",), None, ("mlx5_0",), tools, {("mlx5_0", 1): port}))


def measured(
    plan: PerfPlan, bw: dict[str, float] | None = None, lat: float = 1.1, default_bw: float = 195.0
) -> list[PerfRun]:
    """Every pair measured: latency ``lat``; bandwidth ``default_bw`` unless a node named in ``bw`` is in it."""
    runs = []
    for r, pairs in enumerate(plan.schedule.rounds, start=1):
        for pair in pairs:
            value = min(
                [v for n, v in (bw or {}).items() if n in (pair.client.device, pair.server.device)] or [default_bw]
            )
            runs += [PerfRun(pair, LAT, r, "ok", lat, attempts=1), PerfRun(pair, BW, r, "ok", value, attempts=1)]
    return runs


def obs_of(plan: PerfPlan, runs: list[PerfRun], **states: NodeState) -> PerfObservation:
    nodes = {n: states.get(n, device()) for n in plan.nodes}
    return PerfObservation(nodes=nodes, runs=tuple(runs))


def findings(plan: PerfPlan, obs: PerfObservation) -> dict[tuple[str, str], str]:
    return {(f.check, f.object): f.observed for f in check_perf(plan, obs).findings}


def test_a_clean_run_passes_and_judges_bandwidth_against_0_9_of_the_planned_line_rate() -> None:
    plan = plan_of(tcp_probe=False)
    report = check_perf(plan, obs_of(plan, measured(plan, default_bw=180.5)))
    assert report.findings == []
    bandwidth = {c.id: c for c in report.checks}["perf.bandwidth"]
    assert len(bandwidth.objects) == 10  # all pairs of five nodes
    assert all("planned rate" in why for _o, why in bandwidth.caveats), "no sysfs rate: judged on the plan's"


def test_bandwidth_below_the_line_rate_fraction_is_a_finding_with_the_share_of_line_rate() -> None:
    plan = plan_of(tcp_probe=False)
    found = findings(plan, obs_of(plan, measured(plan, default_bw=179.9)))
    pair = plan.schedule.pairs[0]
    assert found[("perf.bandwidth", run_object(pair, BW))] == "179.9 Gb/s (90 % of line rate)"


def test_the_active_rate_and_the_pcie_link_set_the_line_rate_when_the_node_shows_them() -> None:
    plan = plan_of(tcp_probe=False)
    # b3 trained at EDR (100) on a PCIe 3.0 x8 link (63 Gb/s): its pairs are judged against 0.9 x 63.0
    states = {"b3": device("100 Gb/sec (4X EDR)", "8.0 GT/s PCIe x8")}
    found = findings(plan, obs_of(plan, measured(plan, bw={"b3": 56.0}), **states))
    b3 = [k for k in found if "b3" in k[1] and k[0] == "perf.bandwidth"]
    assert len(b3) == 4
    assert all("Gb/s (89 % of line rate)" in found[k] for k in b3)
    ok = findings(plan, obs_of(plan, measured(plan, bw={"b3": 57.0}), **states))
    assert not [k for k in ok if k[0] == "perf.bandwidth"]


def test_bidirectional_runs_are_judged_against_twice_the_line_rate() -> None:
    plan = plan_of(tcp_probe=False, bidirectional=True)
    found = findings(plan, obs_of(plan, measured(plan, default_bw=300.0)))
    assert set(found.values()) == {"300.0 Gb/s (75 % of line rate)"}


def test_latency_above_its_limit_and_a_run_without_result_are_findings_with_perftest_s_reason() -> None:
    plan = plan_of(tcp_probe=False)
    runs = measured(plan)
    first, second = plan.schedule.pairs[0], plan.schedule.pairs[1]
    runs = [
        replace(r, value=2.61) if (r.pair, r.test) == (first, LAT) else
        replace(r, status="failed", value=None, reason="client did not finish within 60 s (stopped)", attempts=2)
        if (r.pair, r.test) == (second, BW) else r
        for r in runs
    ]  # fmt: skip
    found = findings(plan, obs_of(plan, runs))
    assert found[("perf.latency", run_object(first, LAT))] == "2.61 us"
    assert found[("perf.bandwidth", run_object(second, BW))] == "no result: client did not finish within 60 s (stopped)"


def test_a_node_whose_every_pair_fails_is_named_as_the_suspect_and_others_are_not() -> None:
    plan = plan_of(tcp_probe=False)
    found = findings(plan, obs_of(plan, measured(plan, bw={"b2": 120.0})))
    suspects = {obj: text for (check, obj), text in found.items() if check == "perf.suspect"}
    assert suspects == {"b2 mlx5_0 port 1": "4/4 pairs failed (below threshold or no result): suspect its HCA or cable"}


def test_when_every_pair_fails_no_single_port_is_blamed() -> None:
    plan = plan_of(tcp_probe=False)
    found = findings(plan, obs_of(plan, measured(plan, default_bw=10.0)))
    assert not [k for k in found if k[0] == "perf.suspect"]


def test_a_cable_every_failing_pair_crosses_and_no_passing_pair_does_is_named_on_route_aware_schedules() -> None:
    plan = plan_of("route-aware", tcp_probe=False)
    assert plan.paths, "route-aware plans carry each pair's path"
    target = next(iter(plan.paths[plan.schedule.pairs[0]]))  # a leaf -> spine direction
    cable = " <-> ".join(sorted((str(target.src), str(target.dst))))
    crossing = {p for p, path in plan.paths.items() if any({d.src, d.dst} == {target.src, target.dst} for d in path)}
    assert len(crossing) >= 2, "route-aware loads both directions of every cable"
    runs = [replace(r, value=20.0) if r.test == BW and r.pair in crossing else r for r in measured(plan)]
    found = findings(plan, obs_of(plan, runs))
    links = {obj: text for (check, obj), text in found.items() if check == "perf.suspect" and "<->" in obj}
    assert cable in links
    # every cable named is on the path of every failing pair and of no passing one (here: the cable at the
    # other leaf on the same spine is as suspect: both pairs cross both)
    for named, text in links.items():
        assert text == (
            f"{len(crossing)}/{len(crossing)} pairs failed (below threshold or no result): "
            "suspect this link (cable or switch port)"
        ), named
        ends = set(named.split(" <-> "))
        for pair, path in plan.paths.items():
            assert any({str(d.src), str(d.dst)} == ends for d in path) == (pair in crossing)


def test_skipped_runs_are_neither_passed_nor_failed_and_say_why() -> None:
    plan = plan_of(tcp_probe=False)
    runs = [
        replace(r, status="skipped", value=None, reason="no RDMA device on b1") if "b1/" in str(r.pair) else r
        for r in measured(plan)
    ]
    report = check_perf(plan, obs_of(plan, runs))
    bandwidth = {c.id: c for c in report.checks}["perf.bandwidth"]
    assert len(bandwidth.skipped) == 4
    assert bandwidth.status == "pass"
    assert report.findings == []
    all_skipped = [replace(r, status="skipped", value=None, reason="no RDMA device on x") for r in runs]
    report = check_perf(plan, obs_of(plan, all_skipped))
    assert {c.id: c for c in report.checks}["perf.bandwidth"].status == "skipped"


def test_a_node_without_rdma_device_is_an_error_on_hardware_and_a_skip_on_the_twin() -> None:
    plan = plan_of(tcp_probe=False)
    bare = NodeState(True, probe=NodeProbe((), "ibv_devices is not installed (ibverbs-utils)", (), {}, {}))
    found = findings(plan, obs_of(plan, measured(plan), b1=bare))
    assert found[("perf.rdma_device", "b1")] == (
        "no RDMA device (ibv_devices and sysfs); ibv_devices is not installed (ibverbs-utils)"
    )
    twin = replace(plan, twin=True)
    report = check_perf(twin, obs_of(twin, measured(twin), b1=bare))
    device_check = {c.id: c for c in report.checks}["perf.rdma_device"]
    assert dict(device_check.skipped) == {"b1": "no RDMA device on b1 (the twin's containers have none)"}
    assert ("perf.rdma_device", "b1") not in {(f.check, f.object) for f in report.findings}


def test_unreachable_nodes_and_missing_tools_are_findings() -> None:
    plan = plan_of()
    no_numactl = device()
    assert no_numactl.probe is not None
    tools = {**no_numactl.probe.tools, "numactl": None}
    states = {
        "a2": NodeState(False, "SSH to root@a2:22: Connection refused"),
        "b3": replace(no_numactl, probe=replace(no_numactl.probe, tools=tools)),
    }
    found = findings(plan, obs_of(plan, measured(plan), **states))
    assert found[("perf.reach", "a2")] == "SSH to root@a2:22: Connection refused"
    assert found[("perf.tools", "b3")] == "not installed: numactl", "b3's HCA has a NUMA node: numactl is needed"


def test_a_result_worse_than_the_baseline_by_more_than_the_tolerance_is_flagged() -> None:
    plan = plan_of(tcp_probe=False)
    pair = plan.schedule.pairs[0]
    base = Baseline(
        "site.json",
        "judge",
        "2026-11-01",
        {run_object(pair, BW): BaselineEntry(195.0 / 0.94, "Gb/s"), run_object(pair, LAT): BaselineEntry(1.1, "us")},
    )
    found = findings(replace(plan, baseline=base), obs_of(plan, measured(plan)))
    assert found == {("perf.baseline", run_object(pair, BW)): "195 Gb/s, 6.0 % worse"}


def test_the_tcp_probe_warns_when_it_cannot_run_and_fails_below_tcp_min_gbps() -> None:
    plan = plan_of(tcp_min_gbps=20.0)
    pairs = plan.schedule.pairs
    tcp = (
        TcpRun(pairs[0], "ok", 25.0, over="IPoIB ib0 (10.9.0.3)"),
        TcpRun(pairs[1], "ok", 12.5, over="IPoIB ib0 (10.9.0.4)"),
        TcpRun(pairs[2], "failed", reason="iperf3: unable to connect to server: Connection refused"),
    )
    obs = replace(obs_of(plan, measured(plan)), tcp=tcp)
    report = check_perf(plan, obs)
    by_object = {f.object: f for f in report.findings}
    assert by_object[f"{pairs[1]} iperf3"].observed == "12.50 Gb/s over IPoIB ib0 (10.9.0.4)"
    assert by_object[f"{pairs[1]} iperf3"].severity is Severity.ERROR
    assert "Connection refused" in by_object[f"{pairs[2]} iperf3"].observed
    assert f"{pairs[0]} iperf3" not in by_object


def test_the_plan_takes_ports_gid_index_numa_node_and_ipoib_addresses_from_the_spec() -> None:
    plan = plan_of()
    b3 = plan.endpoints[Endpoint("b3", "mlx5_0", 1)]
    assert (b3.gid_index, b3.numa_node, b3.planned_gbps) == (3, 1, 200.0)
    assert plan.tcp.addresses["a1"] == "10.9.0.1"
    assert plan.tcp.interface == "ib0"
    assert [t.name for t in plan.tests] == [LAT, BW]


def test_a_perf_report_with_failures_skips_and_tcp_results_matches_the_published_schema() -> None:
    import jsonschema

    from ibprov.report import Report
    from ibprov.report.json_report import to_dict
    from ibprov.verify.registry import report_schema

    plan = plan_of()
    runs = [replace(r, status="skipped", value=None, reason="no RDMA device on b1") if "b1/" in str(r.pair) else r
            for r in measured(plan, bw={"b2": 120.0})]  # fmt: skip
    tcp = (TcpRun(plan.schedule.pairs[0], "ok", 25.0, over="IPoIB ib0 (10.9.0.3)", retransmits=3),)
    report = Report.from_sections(
        cluster="judge", spec="judge.yaml", sections=[check_perf(plan, replace(obs_of(plan, runs), tcp=tcp))]
    )
    data = to_dict(report)
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    facts = data["sections"]["perf"]["facts"]
    assert facts["runs"] == {"ok": 12, "failed": 0, "skipped": 8}
    assert facts["tcp_results"][0]["retransmits"] == 3
    statuses = {c["id"]: c["status"] for c in data["checks"]}
    assert statuses["perf.bandwidth"] == "fail"
    assert statuses["perf.baseline"] == "pass"
