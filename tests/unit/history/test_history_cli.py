"""The command line of the history: `verify --history/--keep/--metrics` (the fabric section faked: no diags
run) and `report diff`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from historykit import RACK, fabric_run, fabric_section, finding, parse_metrics, when

from ibprov.cli import cli
from ibprov.errors import CollectError
from ibprov.history.store import History
from ibprov.report import SectionReport

P1 = "node01 mlx5_0 port 1"
P2 = "leaf01 port 2"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def fake_fabric(monkeypatch: pytest.MonkeyPatch, *reports: SectionReport | Exception) -> None:
    """verify --fabric returns these section reports (or raises), one per run; no diag starts."""
    queue = list(reports)

    def verify_fabric(loaded: Any, runner: Any, **kwargs: Any) -> SectionReport:
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def prefetch(runner: Any, argv: Any) -> None:
        runner._early[tuple(argv)] = None

    monkeypatch.setattr("ibprov.verify.fabric.section.verify_fabric", verify_fabric)
    monkeypatch.setattr("ibprov.probes.runner.LocalRunner.prefetch", prefetch)
    monkeypatch.setattr("ibprov.probes.runner.LocalRunner.close", lambda runner: None)


# ------------------------------------------------------------------------------------------------ verify
def test_keep_without_history_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_fabric(monkeypatch)  # nothing to return: a run that got this far would fail differently
    result = invoke("verify", "--fabric", str(RACK), "--keep", "3")
    assert result.exit_code == 2
    assert "--keep: only with --history" in result.stderr


def test_metrics_to_a_file_not_ending_in_prom_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_fabric(monkeypatch)
    result = invoke("verify", "--fabric", str(RACK), "--metrics", str(tmp_path / "x.txt"))
    assert result.exit_code == 2
    assert "x.txt" in result.stderr
    assert "*.prom" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_verify_with_history_keeps_each_run_and_compares_it_with_the_previous(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_fabric(monkeypatch, fabric_section(0), fabric_section(1, [finding("cabling.miswire", P1)]))
    args = ["verify", "--fabric", str(RACK), "--history", str(tmp_path / "h"), "--metrics", str(tmp_path / "m.prom")]
    first = invoke(*args)
    assert first.exit_code == 0, first.stderr
    assert "history: the first run kept: nothing to compare with" in first.stderr
    second = invoke(*args, "--keep", "5")
    assert second.exit_code == 1, second.stderr
    assert any(
        line.startswith("since the previous run:   new") and "cabling.miswire" in line
        for line in second.stderr.splitlines()
    )
    runs = History(tmp_path / "h", "rack1").runs()
    assert [len(r.report()["findings"]) for r in runs] == [0, 1]
    parsed = parse_metrics((tmp_path / "m.prom").read_text())
    assert (parsed.value("ibprov_verify_last_run_exit_code"), parsed.value("ibprov_verify_last_run_success")) == (1, 1)
    assert parsed.value("ibprov_findings_new", severity="error") == 1
    assert parsed.value("ibprov_links_planned") == 6


def test_a_second_run_while_one_holds_the_lock_exits_3_and_writes_its_metrics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_fabric(monkeypatch, fabric_section(0))
    history = History(tmp_path / "h", "rack1")
    history.save(fabric_run(0, [finding("link.down", P2)]), ended=when(0))
    with history.lock():
        result = invoke(
            "verify", "--fabric", str(RACK), "--history", str(tmp_path / "h"), "--metrics", str(tmp_path / "m.prom")
        )
    assert result.exit_code == 3
    assert f"pid {os.getpid()} holds {tmp_path / 'h' / 'rack1' / '.lock'}" in result.stderr
    assert len(history.runs()) == 1, "the refused run was not kept"
    parsed = parse_metrics((tmp_path / "m.prom").read_text())
    assert (parsed.value("ibprov_verify_last_run_exit_code"), parsed.value("ibprov_verify_last_run_success")) == (3, 0)
    assert [s.labels["object"] for s in parsed.of("ibprov_finding_info")] == [P2], "the last kept findings carried over"


def test_a_run_that_cannot_collect_still_writes_its_metrics(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_fabric(monkeypatch, CollectError("could not collect from the fabric: no HCA"))
    result = invoke("verify", "--fabric", str(RACK), "--metrics", str(tmp_path / "m.prom"))
    assert result.exit_code == 3
    parsed = parse_metrics((tmp_path / "m.prom").read_text())
    assert (parsed.value("ibprov_verify_last_run_exit_code"), parsed.value("ibprov_verify_last_run_success")) == (3, 0)
    assert parsed.of("ibprov_verify_last_run_success")[0].labels["ib_cluster"] == "rack1"


# ------------------------------------------------------------------------------------------------ report diff
def write(path: Path, data: dict[str, Any]) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def test_report_diff_exits_1_with_a_new_error_finding(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", fabric_run(0, [finding("link.down", P2)]))
    new = write(tmp_path / "new.json", fabric_run(6, [finding("cabling.miswire", P1)]))
    result = invoke("report", "diff", old, new)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1 new, 1 resolved, 0 persisting over 6.0 h")
    assert any(line.split()[:3] == ["new", "error", "cabling.miswire"] for line in lines)
    assert any(line.split()[:3] == ["resolved", "error", "link.down"] for line in lines)


def test_report_diff_exits_0_when_findings_were_only_resolved(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", fabric_run(0, [finding("link.down", P2)]))
    new = write(tmp_path / "new.json", fabric_run(6))
    result = invoke("report", "diff", old, new)
    assert result.exit_code == 0
    assert any(line.split()[:2] == ["resolved", "error"] for line in result.stdout.splitlines())


def test_report_diff_judges_rates_by_the_default_limits_without_a_spec(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", fabric_run(0, counters={P1: {"LinkDownedCounter": 1}}))
    new = write(tmp_path / "new.json", fabric_run(6, counters={P1: {"LinkDownedCounter": 2}}))
    result = invoke("report", "diff", old, new)
    assert result.exit_code == 1
    assert any("LinkDownedCounter on " + P1 in line and "OVER" in line for line in result.stdout.splitlines())


def test_report_diff_writes_the_comparison_as_json(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", fabric_run(0))
    new = write(tmp_path / "new.json", fabric_run(2, [finding("link.down", P1, "warning")]))
    result = invoke("report", "diff", old, new, "--json", str(tmp_path / "diff.json"))
    assert result.exit_code == 0
    data = json.loads((tmp_path / "diff.json").read_text())
    assert ([f["object"] for f in data["new"]], data["hours"], data["exit_code"]) == ([P1], 2.0, 0)


def test_report_diff_of_a_history_compares_its_newest_two_runs(tmp_path: Path) -> None:
    history = History(tmp_path, "c")
    for hours, found in ((0, [finding("link.down", P1)]), (1, [finding("link.down", P2)]), (2, [])):
        history.save(fabric_run(hours, found), ended=when(hours))
    result = invoke("report", "diff", "--history", str(tmp_path), "--cluster", "c")
    assert result.exit_code == 0
    assert "comparing runs 20261201T010000Z and 20261201T020000Z of c" in result.stderr
    assert result.stdout.startswith("0 new, 1 resolved, 0 persisting")


@pytest.mark.parametrize("runs", [0, 1])
def test_report_diff_of_a_history_with_fewer_than_two_runs_says_so(tmp_path: Path, runs: int) -> None:
    history = History(tmp_path, "c")
    for hours in range(runs):
        history.save(fabric_run(hours), ended=when(hours))
    result = invoke("report", "diff", "--history", str(tmp_path), "--cluster", "c")
    assert result.exit_code not in (0, 1)
    assert f"{runs} run(s) kept" in result.stderr
    assert "two are needed to compare" in result.stderr


def test_report_diff_of_one_file_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("report", "diff", write(tmp_path / "old.json", fabric_run(0)))
    assert result.exit_code == 2
    assert "give two reports" in result.stderr


def test_report_diff_of_a_file_that_is_not_a_report_says_which(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", fabric_run(0))
    other = write(tmp_path / "other.json", {"hello": 1})
    result = invoke("report", "diff", old, other)
    assert result.exit_code == 2
    assert f"{other}: not a report.json of ibprov verify" in result.stderr


def test_report_diff_judges_rates_by_the_specs_limits(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(RACK.read_text() + "\nacceptance:\n  error_rates_per_hour: {LinkDownedCounter: 5}\n")
    old = write(tmp_path / "old.json", fabric_run(0, counters={P1: {"LinkDownedCounter": 1}}))
    new = write(tmp_path / "new.json", fabric_run(6, counters={P1: {"LinkDownedCounter": 2}}))
    result = invoke("report", "diff", old, new, "--spec", str(spec))
    assert result.exit_code == 0, result.output
    assert any("LinkDownedCounter" in line and "limit 5/h" in line for line in result.stdout.splitlines())


def test_report_diff_of_a_history_finds_the_cluster_through_the_spec(tmp_path: Path) -> None:
    history = History(tmp_path / "h", "rack1")
    for hours in range(2):
        history.save(fabric_run(hours), ended=when(hours))
    result = invoke("report", "diff", "--history", str(tmp_path / "h"), "--spec", str(RACK))
    assert result.exit_code == 0, result.output
    assert "of rack1" in result.stderr
