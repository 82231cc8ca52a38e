"""`ibprov verify --fabric`: exit codes 0/1/2/3 with a one-line reason, the table, report files."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from reportkit import clean_fabric, fabric_with_findings

from ibprov.cli import cli
from ibprov.report import SectionReport

RACK = Path(__file__).resolve().parents[3] / "examples" / "rack.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["verify", *args], catch_exceptions=False)


def fake_verify(monkeypatch: pytest.MonkeyPatch, report: SectionReport) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def verify_fabric(loaded: Any, runner: Any, **kwargs: Any) -> SectionReport:
        calls.append({"runner": runner, "prefetched": list(getattr(runner, "_early", {})), **kwargs})
        return report

    def prefetch(runner: Any, argv: Any) -> None:  # remembered, not started: no diags run in unit tests
        runner._early[tuple(argv)] = None

    monkeypatch.setattr("ibprov.verify.fabric.section.verify_fabric", verify_fabric)
    monkeypatch.setattr("ibprov.probes.runner.LocalRunner.prefetch", prefetch)
    monkeypatch.setattr("ibprov.probes.runner.LocalRunner.close", lambda runner: None)
    return calls


def test_a_clean_fabric_exits_0_with_the_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_verify(monkeypatch, clean_fabric())
    result = run("--fabric", str(RACK), "--synthetic-guids", "--soak", "5")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].startswith("PASS: no findings; 24 checks over")
    assert (calls[0]["soak"], calls[0]["synthetic_guids"]) == (5.0, True)
    assert calls[0]["runner"].where == "this host"
    assert calls[0]["prefetched"] == [("ibnetdiscover", "--cache", "{scratch}/fabric.cache")], (
        "the discovery starts before the spec is loaded"
    )


def test_findings_exit_1_with_one_table_line_each_and_write_json_and_junit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_verify(monkeypatch, fabric_with_findings())
    result = run("--fabric", str(RACK), "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml"))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("FAIL: 3 findings (3 error)")
    rows = [line for line in lines if line.startswith("error ")]
    assert len(rows) == 3
    assert any("cabling.miswire" in r and "node01 mlx5_0 port 1" in r and "leaf01 port 9" in r for r in rows)
    assert json.loads((tmp_path / "r.json").read_text())["exit_code"] == 1
    assert ET.parse(tmp_path / "r.xml").getroot().get("failures") == "3"


def test_a_spec_error_exits_2(tmp_path: Path) -> None:
    result = run("--fabric", str(tmp_path / "missing.yaml"))
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / 'missing.yaml'}:1:1: no such file\n1 problem found\n"


def test_no_diags_no_fabric_exits_3_with_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no infiniband-diags here
    result = run("--fabric", str(RACK))
    assert result.exit_code == 3
    assert result.stderr == (
        "error: could not collect from the fabric: ibnetdiscover exited 127: "
        "ibnetdiscover: command not found (install infiniband-diags) (run verify on a host with an HCA on this "
        "fabric, or --via HOST to run the diags there; for the twin: `ibprov twin SPEC --verify`, or "
        "`--target twin` with a twin rack up)\n"
    )


def test_an_unwritable_report_path_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_verify(monkeypatch, clean_fabric())
    result = run("--fabric", str(RACK), "--json", str(tmp_path / "no" / "dir" / "r.json"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: cannot write {tmp_path / 'no' / 'dir' / 'r.json'}: ")


def test_via_runs_through_ansible_on_the_named_node(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_verify(monkeypatch, clean_fabric())
    assert run("--fabric", str(RACK), "--via", "sm01", "--from-host", "H-x").exit_code == 0
    runner = calls[0]["runner"]
    assert (runner.where, runner.env) == ("sm01 (ansible)", {"SIM_HOST": "H-x"})
    assert calls[0]["prefetched"] == [], "nothing runs on this host with --via"


def test_a_spec_error_still_writes_report_json_and_junit_with_the_problems(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from ibprov.verify.registry import report_schema

    out_json, out_xml = tmp_path / "r.json", tmp_path / "r.xml"
    result = run("--fabric", str(tmp_path / "missing.yaml"), "--json", str(out_json), "--junit", str(out_xml))
    assert result.exit_code == 2
    doc = json.loads(out_json.read_text())
    assert (doc["result"], doc["exit_code"], doc["command"]) == ("error", 2, "verify --fabric")
    assert doc["problems"] == [f"{tmp_path / 'missing.yaml'}:1:1: no such file"]
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    suite = ET.parse(out_xml).getroot()
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("1", "1", "0")
    error = suite.find("testsuite/testcase/error")
    assert error is not None
    assert error.get("message") == f"{tmp_path / 'missing.yaml'}:1:1: no such file"


def test_a_fabric_that_cannot_be_collected_still_writes_the_reports(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no infiniband-diags here
    out_json, out_xml = tmp_path / "r.json", tmp_path / "r.xml"
    result = run("--fabric", str(RACK), "--json", str(out_json), "--junit", str(out_xml))
    assert result.exit_code == 3
    doc = json.loads(out_json.read_text())
    assert (doc["result"], doc["exit_code"], doc["cluster"]) == ("error", 3, "")
    assert doc["problems"][0].startswith("could not collect from the fabric: ibnetdiscover exited 127")
    assert ET.parse(out_xml).getroot().get("errors") == "1"


def test_a_failed_twin_proof_is_one_junit_failure_per_problem() -> None:
    from ibprov.report.failure import failure_junit

    xml = failure_junit(
        "twin", "rack1", ["no SUBNET UP within 120s", "partitions.conf parse error: PARSE ERROR"], kind="failure"
    )
    root = ET.fromstring(xml)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "2", "0")
    assert [f.get("message") for f in root.iter("failure")] == [
        "no SUBNET UP within 120s",
        "partitions.conf parse error: PARSE ERROR",
    ]
