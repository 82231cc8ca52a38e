"""The metrics of a run (ibprov.history.metrics): OpenMetrics text holding only the catalog's metrics with
exactly their labels, bounded per-object series, the perf values, the file replaced atomically, and a failed
run's metrics carrying the last kept run's findings over."""

from __future__ import annotations

import re
import stat
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from historykit import (
    NO_ERRORS,
    SM02,
    cable_end,
    cable_row,
    fabric_run,
    fabric_section,
    finding,
    pair_result,
    parse_metrics,
    perf_section,
    physical_section,
    report_of,
    run,
    valid,
    when,
)

from ibprov.errors import IbprovError
from ibprov.history.catalog import (
    CATALOG,
    MAX_FINDING_SERIES,
    MAX_PAIR_SERIES,
    MAX_PHY_SERIES,
    MAX_RATE_SERIES,
    PORT_IDS,
    metric,
)
from ibprov.history.diff import diff_runs, ended, first_seen
from ibprov.history.keep import failed_run
from ibprov.history.metrics import RunOutcome, openmetrics, run_outcome, write_metrics
from ibprov.history.store import History
from ibprov.report.json_report import to_dict
from ibprov.report.model import Finding, PortIds

P1 = "node01 mlx5_0 port 1"
P2 = "leaf01 port 2"


def full_text() -> str:
    """A run with every kind of metric: findings with first-seen times, the fabric, counters that moved (one
    over its limit), perf results, and a previous run to compare with."""
    old = fabric_run(0, [finding("link.down", P2), finding("cabling.miswire", P1)], counters={P1: {"PortRcvErrors": 1}})
    new = run(
        fabric_section(
            6,
            [
                finding("link.down", P1),
                finding("cabling.miswire", P1),
                finding("sm.standby_missing", "fabric", "warning"),
            ],
            counters={P1: {"PortRcvErrors": 3, "LinkDownedCounter": 1}},
            master=SM02,
        ),
        perf_section(
            6,
            [finding("perf.bandwidth", "a1 mlx5_0 -> b1 mlx5_0")],
            results=[pair_result("a1 mlx5_0", "b1 mlx5_0", 150.0), pair_result("a2 mlx5_0", "b2 mlx5_0", 190.0)],
            skipped=["perf.tcp"],
        ),
    )
    valid(new)
    diff = diff_runs(old, new, {"LinkDownedCounter": 0.0, "PortRcvErrors": 10.0})
    return openmetrics(run_outcome(new), new, diff=diff, seen=first_seen(new, [old]), links_planned=6)


def test_every_sample_is_a_catalog_metric_with_exactly_its_labels() -> None:
    parsed = parse_metrics(full_text())
    catalog = {m.name: m for m in CATALOG}
    assert parsed.samples
    for sample in parsed.samples:
        assert sample.name in catalog, sample
        assert set(sample.labels) == set(catalog[sample.name].labels), sample
        assert sample.labels["ib_cluster"] == "rack1"


def test_every_metric_has_its_catalog_help_and_type_once() -> None:
    parsed = parse_metrics(full_text())  # parse_metrics fails on a HELP or TYPE given twice
    named = {s.name for s in parsed.samples}
    assert set(parsed.help) == set(parsed.type) == named
    for m in CATALOG:
        if m.name in named:
            assert (parsed.help[m.name], parsed.type[m.name]) == (m.help, "gauge")


def test_no_series_is_written_twice() -> None:
    parsed = parse_metrics(full_text())
    keys = [(s.name, tuple(sorted(s.labels.items()))) for s in parsed.samples]
    assert len(keys) == len(set(keys))


def test_the_full_run_writes_the_values_it_was_given() -> None:
    parsed = parse_metrics(full_text())
    assert parsed.value("ibprov_verify_last_run_success") == 1
    assert parsed.value("ibprov_verify_last_run_exit_code") == 1
    assert (
        parsed.value("ibprov_verify_last_run_timestamp_seconds")
        == ended(run(fabric_section(6), perf_section(6))).timestamp()
    )
    assert parsed.value("ibprov_links_planned") == 6
    assert parsed.value("ibprov_links_below_plan") == 1
    assert parsed.value("ibprov_sm_master_changed") == 1
    assert parsed.of("ibprov_sm_master_info")[0].labels["port_guid"] == "0x0c42a10300d8e2b4"
    assert parsed.value("ibprov_findings_new", severity="error") == 2  # link.down on P1 and perf.bandwidth
    assert parsed.value("ibprov_findings_new", severity="warning") == 1
    assert parsed.value("ibprov_findings_new", severity="critical") == 0
    assert parsed.value("ibprov_findings_resolved", severity="error") == 1
    assert parsed.value("ibprov_port_errors_per_second", object=P1, counter="PortRcvErrors") == pytest.approx(
        2 / (6 + 30 / 3600) / 3600, rel=1e-5
    ), "per second"
    assert [s.labels["counter"] for s in parsed.of("ibprov_port_error_limit_exceeded")] == ["LinkDownedCounter"]


def test_a_persisting_finding_is_first_seen_in_the_earlier_run() -> None:
    parsed = parse_metrics(full_text())
    first = parsed.of("ibprov_finding_first_seen_timestamp_seconds", check="cabling.miswire")
    new = parsed.of("ibprov_finding_first_seen_timestamp_seconds", check="link.down")
    assert [s.value for s in first] == [when(0).timestamp() + 60]
    assert [s.value for s in new] == [when(6).timestamp() + 90]  # the new run: fabric 60 s + perf 30 s


def test_checks_passed_and_failed_have_a_series_and_skipped_checks_none() -> None:
    parsed = parse_metrics(full_text())
    assert parsed.value("ibprov_check_passed", check="link.down") == 0
    assert parsed.value("ibprov_check_passed", check="counters.threshold") == 1
    assert parsed.value("ibprov_check_objects", check="counters.threshold") == 1
    assert parsed.of("ibprov_check_passed", check="perf.tcp") == []
    assert parsed.of("ibprov_check_objects", check="perf.tcp") == []


def test_label_values_with_quotes_backslashes_and_newlines_are_escaped() -> None:
    odd = 'node "07"\\mlx5_0\nport 1'
    data = fabric_run(0, [finding("link.down", odd)])
    text = openmetrics(run_outcome(data), data)
    parsed = parse_metrics(text)  # each sample on one line, its labels parsed back
    assert [s.labels["object"] for s in parsed.of("ibprov_finding_info")] == [odd]
    assert 'object="node \\"07\\"\\\\mlx5_0\\nport 1"' in text


def test_findings_beyond_the_cap_are_dropped_worst_last_and_counted() -> None:
    warnings = [finding("link.down", f"node{i:04d} mlx5_0 port 1", "warning") for i in range(MAX_FINDING_SERIES)]
    critical = [finding("sm.standby_missing", "fabric", "critical"), finding("cabling.miswire", P1, "critical")]
    data = fabric_run(0, [*warnings, *critical])
    parsed = parse_metrics(openmetrics(run_outcome(data), data))
    series = parsed.of("ibprov_finding_info")
    assert len(series) == MAX_FINDING_SERIES
    assert {(s.labels["check"], s.labels["object"]) for s in parsed.of("ibprov_finding_info", severity="critical")} == {
        ("sm.standby_missing", "fabric"),
        ("cabling.miswire", P1),
    }
    assert len(parsed.of("ibprov_finding_info", severity="warning")) == MAX_FINDING_SERIES - 2
    assert parsed.value("ibprov_finding_series_dropped") == 2
    assert parsed.value("ibprov_findings", check="link.down", severity="warning") == MAX_FINDING_SERIES


def test_findings_within_the_cap_are_all_written_and_none_dropped() -> None:
    data = fabric_run(0, [finding("link.down", P1), finding("link.down", P2, "warning")])
    parsed = parse_metrics(openmetrics(run_outcome(data), data))
    assert len(parsed.of("ibprov_finding_info")) == 2
    assert parsed.value("ibprov_finding_series_dropped") == 0


def test_rate_series_beyond_the_cap_keep_those_over_their_limit_first_then_the_fastest() -> None:
    counters = {f"node{i:04d} mlx5_0 port 1": {"SymbolErrorCounter": 100 + i} for i in range(MAX_RATE_SERIES + 1)}
    counters |= {P1: {"LinkDownedCounter": 1}, P2: {"LinkDownedCounter": 1}}  # slow, but over a limit of 0
    old, new = fabric_run(0), fabric_run(1, counters=counters)
    diff = diff_runs(old, new, {"LinkDownedCounter": 0.0})
    parsed = parse_metrics(openmetrics(run_outcome(new), new, diff=diff))
    rates = parsed.of("ibprov_port_errors_per_second")
    assert len(rates) == MAX_RATE_SERIES
    assert {s.labels["object"] for s in parsed.of("ibprov_port_error_limit_exceeded")} == {P1, P2}
    dropped = {f"node{i:04d} mlx5_0 port 1" for i in range(3)}  # the three slowest
    assert {s.labels["object"] for s in rates} == set(counters) - dropped
    assert parsed.value("ibprov_port_counters_over_limit") == 2


def test_every_rate_over_its_limit_is_counted_even_without_its_own_series() -> None:
    counters = {f"node{i:04d} mlx5_0 port 1": {"LinkDownedCounter": 2} for i in range(MAX_RATE_SERIES + 5)}
    old, new = fabric_run(0), fabric_run(1, counters=counters)
    parsed = parse_metrics(openmetrics(run_outcome(new), new, diff=diff_runs(old, new, {"LinkDownedCounter": 0.0})))
    assert len(parsed.of("ibprov_port_error_limit_exceeded")) == MAX_RATE_SERIES
    assert parsed.value("ibprov_port_counters_over_limit") == MAX_RATE_SERIES + 5


def _perf_text(results: list[dict]) -> str:
    data = valid(run(perf_section(0, results=results)))
    return openmetrics(run_outcome(data), data)


def test_every_measured_pair_has_a_series_while_at_most_the_cap_were_measured() -> None:
    results = [pair_result(f"a{i} mlx5_0", f"b{i} mlx5_0", 190.0) for i in range(MAX_PAIR_SERIES - 1)]
    results.append(pair_result("slow mlx5_0", "b0 mlx5_0", 90.0))
    results.append(pair_result("x mlx5_0", "y mlx5_0", None, status="failed"))
    parsed = parse_metrics(_perf_text(results))
    assert len(parsed.of("ibprov_perf_pair_bandwidth_bytes_per_second")) == MAX_PAIR_SERIES
    assert parsed.of("ibprov_perf_pair_bandwidth_bytes_per_second", client="x mlx5_0") == [], (
        "a pair without a value has no series"
    )
    assert parsed.value(
        "ibprov_perf_pair_bandwidth_bytes_per_second", client="slow mlx5_0", status="missed_limit"
    ) == pytest.approx(90e9 / 8), "bytes per second, from perftest's Gb/s"
    assert len(parsed.of("ibprov_perf_pair_bandwidth_bytes_per_second", status="pass")) == MAX_PAIR_SERIES - 1
    assert parsed.value("ibprov_perf_pairs", status="pass") == MAX_PAIR_SERIES - 1
    assert parsed.value("ibprov_perf_pairs", status="missed_limit") == 1
    assert parsed.value("ibprov_perf_pairs", status="failed") == 1


def test_beyond_the_cap_pairs_within_their_limit_have_no_series() -> None:
    results = [pair_result(f"a{i} mlx5_0", f"b{i} mlx5_0", 190.0) for i in range(MAX_PAIR_SERIES + 1)]
    parsed = parse_metrics(_perf_text(results))
    assert parsed.of("ibprov_perf_pair_bandwidth_bytes_per_second") == []
    assert parsed.value("ibprov_perf_pairs", status="pass") == MAX_PAIR_SERIES + 1


def test_beyond_the_cap_only_the_pairs_that_missed_their_limit_have_a_series() -> None:
    results = [pair_result(f"a{i} mlx5_0", f"b{i} mlx5_0", 190.0) for i in range(MAX_PAIR_SERIES)]
    results += [pair_result("slow1 mlx5_0", "b0 mlx5_0", 90.0), pair_result("slow2 mlx5_0", "b1 mlx5_0", 120.0)]
    parsed = parse_metrics(_perf_text(results))
    series = parsed.of("ibprov_perf_pair_bandwidth_bytes_per_second")
    assert sorted((s.labels["client"], s.labels["status"]) for s in series) == [
        ("slow1 mlx5_0", "missed_limit"),
        ("slow2 mlx5_0", "missed_limit"),
    ]


def test_a_latency_misses_its_limit_above_it_and_a_bandwidth_below_it() -> None:
    lat = {"test": "ib_write_lat 2B", "unit": "us", "limit": 3.0}
    results = [
        pair_result("a mlx5_0", "b mlx5_0", 2.0, **lat),
        pair_result("c mlx5_0", "d mlx5_0", 4.0, **lat),
        pair_result("e mlx5_0", "f mlx5_0", 170.0),
        pair_result("g mlx5_0", "h mlx5_0", 5.0, limit=None, test="ib_read_bw 8MiB"),
    ]
    parsed = parse_metrics(_perf_text(results))
    series = parsed.of("ibprov_perf_pair_bandwidth_bytes_per_second") + parsed.of("ibprov_perf_pair_latency_seconds")
    verdicts = {s.labels["client"]: s.labels["status"] for s in series}
    assert verdicts == {"a mlx5_0": "pass", "c mlx5_0": "missed_limit", "e mlx5_0": "missed_limit", "g mlx5_0": "pass"}
    assert parsed.value("ibprov_perf_pair_latency_seconds", client="c mlx5_0") == pytest.approx(4e-6), "seconds"


def test_perf_values_are_the_min_median_and_max_of_the_measured_pairs() -> None:
    values = [100.0, 190.0, 150.0, 120.0]
    results = [pair_result(f"a{i} mlx5_0", f"b{i} mlx5_0", v) for i, v in enumerate(values)]
    results.append(pair_result("x mlx5_0", "y mlx5_0", None, status="skipped"))
    parsed = parse_metrics(_perf_text(results))
    series = parsed.of("ibprov_perf_bandwidth_bytes_per_second", test="ib_write_bw 8MiB")
    stats = {s.labels["stat"]: s.value for s in series}
    assert stats == pytest.approx({"min": 100e9 / 8, "median": 135e9 / 8, "max": 190e9 / 8})


# ------------------------------------------------------------------------------------------------ physical layer
PHY_PORT_METRICS = ("ibprov_port_effective_ber", "ibprov_port_raw_ber", "ibprov_module_temperature_celsius")
H1, H2, H3 = (f"node0{i} mlx5_0 port 1" for i in (1, 2, 3))
L1, L2, L3 = (f"leaf01 port {i}" for i in (1, 2, 3))


def _physical_text(*findings: Finding, cables: list[dict[str, Any]]) -> str:
    data = run(physical_section(0, findings, cables=cables))
    return openmetrics(run_outcome(data), data)


def test_the_physical_section_writes_its_totals_and_each_ports_values() -> None:
    cables = [
        cable_row(cable_end(H1, effective_ber=2e-13, raw_ber=3e-9, temperature_c=61.0), cable_end(L1, raw_ber=1e-10)),
        cable_row(cable_end(H2), cable_end(L2, temperature_c=38.5), status="not as planned"),
        cable_row(cable_end(H3, read=False), cable_end(L3, read=False), status="not read"),
    ]
    data = valid(run(physical_section(0, cables=cables)))
    parsed = parse_metrics(openmetrics(run_outcome(data), data))
    catalog = {m.name: m for m in CATALOG}
    for sample in parsed.samples:
        assert set(sample.labels) == set(catalog[sample.name].labels), sample
    assert parsed.value("ibprov_physical_ports_read") == 4
    assert parsed.value("ibprov_cables_not_as_planned") == 1
    assert {s.labels["object"]: s.value for s in parsed.of("ibprov_port_effective_ber")} == {H1: 2e-13}
    assert {s.labels["object"]: s.value for s in parsed.of("ibprov_port_raw_ber")} == {H1: 3e-9, L1: 1e-10}
    assert {s.labels["object"]: s.value for s in parsed.of("ibprov_module_temperature_celsius")} == {
        H1: 61.0,
        L1: 40.0,
        H2: 40.0,
        L2: 38.5,
    }


def test_ports_that_counted_no_bit_error_have_no_ber_series() -> None:
    cables = [cable_row(cable_end(f"node{i:04d} mlx5_0 port 1"), cable_end(f"leaf01 port {i}")) for i in range(50)]
    parsed = parse_metrics(_physical_text(cables=cables))
    assert parsed.of("ibprov_port_effective_ber") == []
    assert parsed.of("ibprov_port_raw_ber") == []
    assert len(parsed.of("ibprov_module_temperature_celsius")) == 100
    assert parsed.value("ibprov_physical_ports_read") == 100


def test_a_10000_port_physical_section_writes_at_most_the_cap_per_metric_the_worst_kept() -> None:
    cables = [
        cable_row(
            cable_end(f"node{i:05d} mlx5_0 port 1", effective_ber=(i + 1) * 1e-15, raw_ber=(i + 1) * 1e-10,
                      temperature_c=30 + i / 1000),
            cable_end(f"leaf{i // 40:03d} port {i % 40 + 1}", effective_ber=NO_ERRORS, raw_ber=1e-12,
                      temperature_c=25.0),
            status="not as planned" if i % 100 == 0 else "as planned",
        )
        for i in range(5000)
    ]  # fmt: skip
    parsed = parse_metrics(_physical_text(cables=cables))
    worst = {f"node{i:05d} mlx5_0 port 1" for i in range(5000 - MAX_PHY_SERIES, 5000)}
    for name in PHY_PORT_METRICS:
        series = parsed.of(name)
        assert len(series) == MAX_PHY_SERIES, name
        assert {s.labels["object"] for s in series} == worst, name
    assert parsed.value("ibprov_physical_ports_read") == 10000
    assert parsed.value("ibprov_cables_not_as_planned") == 50


def test_past_the_cap_ports_with_a_finding_keep_their_series_before_worse_ones() -> None:
    # a module whose own alarm is low: 45 C is a finding, while 1,000 others run hotter without one
    cables = [
        cable_row(
            cable_end(f"node{i:04d} mlx5_0 port 1", temperature_c=60.0, raw_ber=1e-6), cable_end(f"leaf port {i}")
        )
        for i in range(MAX_PHY_SERIES)
    ]
    cables.append(cable_row(cable_end(H1, temperature_c=45.0, raw_ber=2e-7), cable_end(L1)))
    text = _physical_text(
        finding("phy.module_temperature", H1, "warning"), finding("phy.ber_raw", H1, "warning"), cables=cables
    )
    parsed = parse_metrics(text)
    for name, value in (("ibprov_module_temperature_celsius", 45.0), ("ibprov_port_raw_ber", 2e-7)):
        assert len(parsed.of(name)) == MAX_PHY_SERIES, name
        assert parsed.value(name, object=H1) == value, name


def test_a_physical_section_read_nowhere_writes_its_totals_only() -> None:
    cables = [cable_row(cable_end(H1, read=False), cable_end(L1, read=False), status="not read")]
    parsed = parse_metrics(_physical_text(cables=cables))
    assert {s.name for s in parsed.samples} >= {"ibprov_physical_ports_read", "ibprov_cables_not_as_planned"}
    assert [s for s in parsed.samples if s.name in PHY_PORT_METRICS] == []
    assert parsed.value("ibprov_physical_ports_read") == 0


def test_a_run_without_a_physical_section_has_no_physical_metrics() -> None:
    names = {s.name for s in parse_metrics(full_text()).samples}
    assert names.isdisjoint({*PHY_PORT_METRICS, "ibprov_physical_ports_read", "ibprov_cables_not_as_planned"})


def test_a_run_without_history_has_no_comparison_or_first_seen_series() -> None:
    data = fabric_run(0, [finding("link.down", P1)], counters={P1: {"SymbolErrorCounter": 5}})
    parsed = parse_metrics(openmetrics(run_outcome(data), data))
    names = {s.name for s in parsed.samples}
    assert "ibprov_finding_info" in names
    assert names.isdisjoint(
        {
            "ibprov_findings_new",
            "ibprov_findings_resolved",
            "ibprov_sm_master_changed",
            "ibprov_port_errors_per_second",
            "ibprov_finding_first_seen_timestamp_seconds",
            "ibprov_links_planned",
        }
    )


@pytest.mark.parametrize(("code", "success"), [(0, True), (1, True), (2, False), (3, False), (70, False)])
def test_a_run_succeeded_when_it_exited_0_or_1(code: int, success: bool) -> None:
    assert RunOutcome("rack1", code, when(0), 1.0).success is success


# ------------------------------------------------------------------------------------------------ the file
def test_write_metrics_refuses_a_file_the_collector_would_not_read(tmp_path: Path) -> None:
    with pytest.raises(IbprovError, match=r"\.prom"):
        write_metrics(tmp_path / "ibprov.txt", "# EOF\n")
    assert list(tmp_path.iterdir()) == []


def test_write_metrics_replaces_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "ibprov.prom"
    path.write_text("old\n")
    before = path.stat().st_ino
    write_metrics(path, "new\n# EOF\n")
    assert path.read_text() == "new\n# EOF\n"
    assert path.stat().st_ino != before, "replaced by a rename, not rewritten in place"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["ibprov.prom"]


def test_a_write_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "ibprov.prom").mkdir()  # the rename onto it fails
    with pytest.raises(IbprovError, match="cannot write"):
        write_metrics(tmp_path / "ibprov.prom", "# EOF\n")
    assert [p.name for p in tmp_path.iterdir()] == ["ibprov.prom"]


# ------------------------------------------------------------------------------------------------ a failed run
def test_a_failed_run_says_so_and_carries_the_last_kept_runs_findings_over(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    for hours, found in ((0, [finding("link.down", P1)]), (6, [finding("link.down", P1), finding("link.down", P2)])):
        data = fabric_run(hours, found)
        history.save(data, ended=ended(data))
    began = datetime.now(UTC)
    parsed = parse_metrics(failed_run("rack1", 3, began, history, links_planned=6))
    assert parsed.value("ibprov_verify_last_run_success") == 0
    assert parsed.value("ibprov_verify_last_run_exit_code") == 3
    assert parsed.value("ibprov_verify_last_run_timestamp_seconds") >= int(began.timestamp())
    assert {s.labels["object"]: s.value for s in parsed.of("ibprov_finding_first_seen_timestamp_seconds")} == {
        P1: when(0).timestamp() + 60,
        P2: when(6).timestamp() + 60,
    }
    assert {s.labels["object"] for s in parsed.of("ibprov_finding_info")} == {P1, P2}
    assert parsed.of("ibprov_findings_new") == [], "a failed run compared nothing"


def test_a_failed_run_without_history_writes_only_its_outcome() -> None:
    parsed = parse_metrics(failed_run("rack1", 2, datetime.now(UTC), None, links_planned=6))
    assert {s.name for s in parsed.samples} == {
        "ibprov_verify_last_run_timestamp_seconds",
        "ibprov_verify_last_run_duration_seconds",
        "ibprov_verify_last_run_exit_code",
        "ibprov_verify_last_run_success",
    }
    assert parsed.value("ibprov_verify_last_run_success") == 0


# ------------------------------------------------------------------------ Prometheus' conventions (issue 39)
def test_a_healthy_run_writes_zero_findings_and_causes_for_every_check_and_severity_instead_of_no_series() -> None:
    data = valid(fabric_run(0))
    parsed = parse_metrics(openmetrics(run_outcome(data), data))
    ran = {c["id"] for c in data["checks"] if c["status"] != "skipped"}
    for name in ("ibprov_findings", "ibprov_causes"):
        series = parsed.of(name)
        assert {(s.labels["check"], s.labels["severity"]) for s in series} == {
            (check, severity) for check in ran for severity in ("critical", "security", "error", "warning")
        }, name
        assert {s.value for s in series} == {0}, name


def test_a_finding_counts_under_its_severity_and_the_other_severities_stay_zero() -> None:
    data = valid(fabric_run(0, [finding("link.down", P1), finding("link.down", P2, "warning")]))
    parsed = parse_metrics(openmetrics(run_outcome(data), data))
    by = {s.labels["severity"]: s.value for s in parsed.of("ibprov_findings", check="link.down")}
    assert by == {"critical": 0, "security": 0, "error": 1, "warning": 1}


def test_no_two_metric_names_differ_by_a_single_letter() -> None:
    def one_edit_apart(a: str, b: str) -> bool:
        if abs(len(a) - len(b)) > 1 or a == b:
            return False
        if len(a) == len(b):
            return sum(x != y for x, y in zip(a, b, strict=True)) == 1
        short, long = sorted((a, b), key=len)
        return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))

    names = [m.name for m in CATALOG]
    close = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if one_edit_apart(a, b)]
    assert close == []
    assert one_edit_apart("ibprov_finding", "ibprov_findings"), "the control: the pair issue 39 found"


def test_metric_names_carry_base_units_and_per_second_rates_and_no_unit_label() -> None:
    for m in CATALOG:
        assert "unit" not in m.labels, m.name
        assert not re.search(r"per_hour|_us\b|_us_|gbit|gb_s", m.name.lower()), m.name
        if m.name.endswith(("_seconds", "_per_second", "_celsius")):
            continue
        assert not re.search(r"latency|bandwidth|duration", m.name), f"{m.name}: a measure without its unit"


def test_the_cluster_label_never_clashes_with_a_target_label_named_cluster() -> None:
    for m in CATALOG:
        assert m.labels[0] == "ib_cluster", m.name
        assert not {"cluster", "instance", "job"} & set(m.labels), m.name


def test_help_texts_give_numbers_not_python_names() -> None:
    for m in CATALOG:
        assert not re.search(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", m.help), m.help
    assert str(MAX_FINDING_SERIES) in metric("ibprov_finding_info").help


def test_finding_series_carry_the_guid_and_port_report_json_gives_them_and_others_empty_ones() -> None:
    report = replace(
        report_of(fabric_section(0, [finding("link.down", P1), finding("sm.standby_missing", "fabric")])),
        ports={P1: PortIds(0x0002C90300000010, 1, 0x0002C90300000100, 7)},
    )
    data = valid(to_dict(report))
    parsed = parse_metrics(openmetrics(run_outcome(data), data))
    (port,) = parsed.of("ibprov_finding_info", check="link.down")
    assert {k: port.labels[k] for k in PORT_IDS} == {
        "guid": "0x0002c90300000010",
        "port": "1",
        "remote_guid": "0x0002c90300000100",
        "remote_port": "7",
    }
    (fabric,) = parsed.of("ibprov_finding_info", check="sm.standby_missing")
    assert {k: fabric.labels[k] for k in PORT_IDS} == dict.fromkeys(PORT_IDS, "")


def test_counter_and_physical_series_get_their_port_labels_from_the_lookup() -> None:
    old = fabric_run(0, counters={P1: {"PortRcvErrors": 1}})
    new = fabric_run(6, counters={P1: {"PortRcvErrors": 30}})
    ids = {P1: {"guid": "0x0002c90300000010", "port": 1, "remote_guid": "0x0002c90300000100", "remote_port": 7}}
    text = openmetrics(run_outcome(new), new, diff=diff_runs(old, new, {"PortRcvErrors": 0.0}), ports=ids.get)
    parsed = parse_metrics(text)
    for name in ("ibprov_port_errors_per_second", "ibprov_port_error_limit_exceeded"):
        (series,) = parsed.of(name)
        assert (series.labels["guid"], series.labels["port"], series.labels["remote_port"]) == (
            "0x0002c90300000010",
            "1",
            "7",
        ), name
    cables = [cable_row(cable_end(H1, raw_ber=3e-9), cable_end(L1, raw_ber=1e-10))]
    data = run(physical_section(0, cables=cables))
    parsed = parse_metrics(openmetrics(run_outcome(data), data, ports=ids.get))
    by = {s.labels["object"]: s.labels["guid"] for s in parsed.of("ibprov_port_raw_ber")}
    assert by == {H1: "0x0002c90300000010", L1: ""}


# ---------------------------------------------------------------------------------- values and labels exactly
@pytest.mark.parametrize(
    ("value", "text"),
    [
        (float("nan"), "NaN"),
        (float("inf"), "+Inf"),
        (float("-inf"), "-Inf"),
        (0.0, "0"),
        (3.0, "3"),
        (-2.0, "-2"),
        (0.5, "0.5"),
        (1e-12, "1e-12"),
        (float(2**53 - 1), "9007199254740991"),
        (float(2**53), "9007199254740992.0"),  # past 2**53 an integer-valued float is not exact: written as a float
        (-float(2**53), "-9007199254740992.0"),
    ],
)
def test_sample_values_are_written_as_openmetrics_reads_them(value: float, text: str) -> None:
    from ibprov.history.metrics import _number

    assert _number(value) == text


def test_the_master_sm_series_carries_its_port_guid_and_whether_it_is_planned() -> None:
    import copy

    data = fabric_run(0, master=SM02)
    for planned in (True, False):
        run_data = copy.deepcopy(data)
        run_data["sections"]["fabric"]["facts"]["master_sm"]["planned"] = planned
        (master,) = parse_metrics(openmetrics(run_outcome(run_data), run_data)).of("ibprov_sm_master_info")
        assert (master.labels["object"], master.labels["port_guid"], master.value) == (
            SM02[0],
            f"0x{SM02[1]:016x}",
            1,
        )
        assert master.labels["planned"] == ("true" if planned else "false")


def test_a_report_without_sections_or_facts_writes_the_run_and_no_fabric_series() -> None:
    data = fabric_run(0)
    bare = {k: v for k, v in data.items() if k != "sections"}
    parsed = parse_metrics(openmetrics(run_outcome(data), bare, links_planned=4))
    assert parsed.of("ibprov_sm_master_info") == []
    assert parsed.of("ibprov_links_planned") == []
    no_facts = {**data, "sections": {"fabric": {k: v for k, v in data["sections"]["fabric"].items() if k != "facts"}}}
    parsed = parse_metrics(openmetrics(run_outcome(data), no_facts, links_planned=4))
    assert parsed.of("ibprov_sm_master_info") == []
    assert parsed.value("ibprov_links_planned") == 4


@pytest.mark.parametrize(
    ("result", "verdict"),
    [
        ({"status": "ok", "value": 180.0, "unit": "Gb/s", "limit": 180.0}, "pass"),  # at the limit: met
        ({"status": "ok", "value": 179.9, "unit": "Gb/s", "limit": 180.0}, "missed_limit"),
        ({"status": "ok", "value": 2.5, "unit": "us", "limit": 2.5}, "pass"),
        ({"status": "ok", "value": 2.51, "unit": "us", "limit": 2.5}, "missed_limit"),
        ({"status": "ok", "value": 9.0, "unit": "us", "limit": None}, "pass"),
        ({"status": "ok", "value": None, "unit": "us", "limit": 2.5}, "ok"),  # no value: its own status
        ({"status": "skipped", "value": None}, "skipped"),
        ({"status": "failed", "value": 3.0}, "failed"),
        ({"value": None}, "failed"),  # no status at all
        ({"status": "", "value": None}, "failed"),
    ],
)
def test_a_perftest_result_is_pass_or_missed_limit_when_measured_else_its_own_status(
    result: dict[str, Any], verdict: str
) -> None:
    from ibprov.history.metrics import _verdict

    assert _verdict(result) == verdict
