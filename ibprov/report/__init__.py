"""Reports of a verification: the model and its views (console table, report.json, junit.xml)."""

from __future__ import annotations

from ibprov.report.html import to_html
from ibprov.report.json_report import SCHEMA_VERSION, report_schema, to_dict, to_json
from ibprov.report.junit import to_junit
from ibprov.report.model import FABRIC, CheckResult, Finding, Report, SectionFacts, SectionReport, Severity

__all__ = [
    "FABRIC",
    "SCHEMA_VERSION",
    "CheckResult",
    "Finding",
    "Report",
    "SectionFacts",
    "SectionReport",
    "Severity",
    "report_schema",
    "to_dict",
    "to_html",
    "to_json",
    "to_junit",
]
