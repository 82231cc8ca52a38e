"""Reports of a verification: the model and its views (console table, report.json, junit.xml)."""

from __future__ import annotations

from ibprov.report.json_report import SCHEMA, SCHEMA_VERSION, to_dict, to_json
from ibprov.report.junit import to_junit
from ibprov.report.model import FABRIC, CheckResult, Finding, Report, Severity

__all__ = [
    "FABRIC",
    "SCHEMA",
    "SCHEMA_VERSION",
    "CheckResult",
    "Finding",
    "Report",
    "Severity",
    "to_dict",
    "to_json",
    "to_junit",
]
