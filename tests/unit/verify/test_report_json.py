from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from reportkit import clean_report, report_with_findings

from ibprov.report import SCHEMA_VERSION, to_dict, to_json
from ibprov.verify.registry import report_schema

DOCS = Path(__file__).resolve().parents[3] / "docs" / "verify.md"


def test_reports_validate_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(report_schema(), format_checker=jsonschema.FormatChecker())
    for report in (clean_report(), report_with_findings()):
        validator.validate(json.loads(to_json(report)))


def test_the_schema_in_docs_verify_md_is_the_one_the_code_writes() -> None:
    text = DOCS.read_text()
    match = re.search(r"<!-- schema:begin -->\s*```json\n(.*?)```\s*<!-- schema:end -->", text, re.DOTALL)
    assert match, "docs/verify.md lost its schema block"
    assert json.loads(match[1]) == report_schema()


def test_findings_are_worst_first_with_every_field() -> None:
    data = to_dict(report_with_findings())
    assert data["schema_version"] == SCHEMA_VERSION == 3
    assert [f["severity"] for f in data["findings"]] == ["error", "error", "error"]
    assert {f["check"] for f in data["findings"]} == {"cabling.miswire", "counters.threshold", "sm.standby_missing"}
    miswire = next(f for f in data["findings"] if f["check"] == "cabling.miswire")
    assert miswire["object"] == "node01 mlx5_0 port 1"
    assert (miswire["expected"], miswire["observed"]) == ("leaf01 port 1", "leaf01 port 9")
    assert miswire["fix"]
    assert (data["result"], data["exit_code"]) == ("fail", 1)
    assert data["summary"]["by_severity"] == {"critical": 0, "security": 0, "error": 3, "warning": 0}


def test_the_fabric_section_names_the_master_sm() -> None:
    data = to_dict(clean_report())
    assert (data["result"], data["exit_code"], data["findings"]) == ("pass", 0, [])
    fabric = data["sections"]["fabric"]["facts"]
    assert fabric["master_sm"]["object"] == "sm01 mlx5_0 port 1"
    assert [s["state"] for s in fabric["subnet_managers"]] == ["MASTER", "STANDBY"]
    assert (fabric["switches"], fabric["channel_adapters"], fabric["links"]) == (1, 6, 6)
    assert data["sections"]["fabric"]["collected_from"] == "this host"
    assert all(c["status"] == "pass" for c in data["checks"])
