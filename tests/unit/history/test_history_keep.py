"""What verify does with a finished run (ibprov.history.keep.keep_run): keep it, compare it with the previous
run, return the report with first-seen times and counter trends, and make its metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from historykit import fabric_section, finding, parse_metrics, perf_section, report_of

from ibprov.history.diff import ended
from ibprov.history.keep import keep_run
from ibprov.history.store import History
from ibprov.report.json_report import to_dict

P1 = "node01 mlx5_0 port 1"
P2 = "leaf01 port 2"
LIMITS = {"SymbolErrorCounter": 1.0}


def test_the_first_run_kept_has_nothing_to_compare_with(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    kept = keep_run(report_of(fabric_section(0)), history, limits=LIMITS, links_planned=6)
    assert kept.diff is None
    assert kept.run is not None
    assert [r.id for r in history.runs()] == [kept.run.id] == ["20261201T000100Z"]


def test_the_second_run_is_compared_and_has_first_seen_times_and_trends(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    first = report_of(fabric_section(0, [finding("link.down", P1)], counters={P1: {"SymbolErrorCounter": 2}}))
    keep_run(first, history, limits=LIMITS, links_planned=6)
    second = report_of(
        fabric_section(
            2,
            [finding("link.down", P1), finding("cabling.miswire", P2)],
            counters={P1: {"SymbolErrorCounter": 12}, P2: {"PortRcvErrors": 1}},
        )
    )
    kept = keep_run(second, history, limits=LIMITS, links_planned=6)
    assert kept.diff is not None
    assert [(f["check"], f["object"]) for f in kept.diff.new] == [("cabling.miswire", P2)]
    assert kept.diff.exit_code == 1
    assert kept.report.first_seen == {
        ("link.down", P1): "2026-12-01T00:01:00Z",
        ("cabling.miswire", P2): "2026-12-01T02:01:00Z",
    }
    assert {(t.object, t.counter): [v for _t, v in t.points] for t in kept.report.trends} == {
        (P1, "SymbolErrorCounter"): [2, 12],
        (P2, "PortRcvErrors"): [0, 1],
    }
    assert [r.id for r in history.runs()] == ["20261201T000100Z", "20261201T020100Z"]
    parsed = parse_metrics(kept.metrics)
    assert parsed.value("ibprov_findings_new", severity="error") == 1
    assert parsed.value("ibprov_port_error_limit_exceeded", object=P1, counter="SymbolErrorCounter") == 1


def test_the_kept_report_is_the_runs_report_json(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    report = report_of(fabric_section(0, [finding("link.down", P1)]))
    kept = keep_run(report, history, limits=LIMITS, links_planned=6)
    assert kept.run is not None
    assert kept.run.report() == to_dict(report)


def test_a_run_without_the_fabric_between_two_shows_as_a_gap_in_the_trend(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    keep_run(
        report_of(fabric_section(0, counters={P1: {"SymbolErrorCounter": 2}})), history, limits={}, links_planned=6
    )
    keep_run(report_of(perf_section(1)), history, limits={}, links_planned=6)
    keep_run(
        report_of(fabric_section(2, counters={P1: {"SymbolErrorCounter": 2}})), history, limits={}, links_planned=6
    )
    kept = keep_run(
        report_of(fabric_section(3, counters={P1: {"SymbolErrorCounter": 5}})), history, limits={}, links_planned=6
    )
    (trend,) = kept.report.trends
    assert [v for _t, v in trend.points] == [2, None, 2, 5]


def test_without_a_history_nothing_is_compared_but_the_metrics_are_made(tmp_path: Path) -> None:
    report = report_of(fabric_section(0, [finding("link.down", P1)]))
    kept = keep_run(report, None, limits=LIMITS, links_planned=6)
    assert (kept.diff, kept.run) == (None, None)
    assert kept.report is report
    parsed = parse_metrics(kept.metrics)
    assert parsed.value("ibprov_verify_last_run_timestamp_seconds") == ended(to_dict(report)).timestamp()
    assert [s.labels["object"] for s in parsed.of("ibprov_finding_info")] == [P1]
    assert parsed.value("ibprov_links_planned") == 6
    assert parsed.of("ibprov_findings_new") == []
    assert list(tmp_path.iterdir()) == []


def test_keep_n_keeps_the_newest_n_runs(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    for hours in range(3):
        keep_run(report_of(fabric_section(hours)), history, limits={}, links_planned=6, keep=3)
    assert len(history.runs()) == 3


def test_a_run_kept_in_a_full_history_with_a_small_keep_does_not_fail(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    for hours in range(3):
        keep_run(report_of(fabric_section(hours)), history, limits={}, links_planned=6, keep=2)
    assert len(history.runs()) == 2


def test_a_finding_in_every_run_of_a_full_history_does_not_fail_the_run(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    for hours in range(21):
        kept = keep_run(
            report_of(fabric_section(hours, [finding("link.down", P1)])), history, limits={}, links_planned=6, keep=20
        )
    assert len(history.runs()) == 20
    assert kept.report.first_seen[("link.down", P1)] <= "2026-12-01T01:01:00Z"


def test_each_earlier_run_is_read_once_however_many_uses_it_has(tmp_path: Path, monkeypatch: Any) -> None:
    """The previous run serves the comparison, the first-seen walk and the trends: one read of its
    report.json (megabytes on a large fabric), not three."""
    from ibprov.history.store import Run

    history = History(tmp_path, "rack1")
    for hours in range(4):
        keep_run(report_of(fabric_section(hours, [finding("link.down", P1)])), history, limits={}, links_planned=6)
    reads: list[str] = []
    real = Run.report
    monkeypatch.setattr(Run, "report", lambda self: reads.append(self.id) or real(self))
    keep_run(report_of(fabric_section(4, [finding("link.down", P1)])), history, limits={}, links_planned=6)
    assert sorted(reads) == sorted(r.id for r in history.runs()[:-1]), "every earlier run, each once"
