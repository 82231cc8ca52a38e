"""Reports for the cause-graph tests: the example rack the demo runs (``ibprov example``: sm01, sm02, node01-04
on leaf01), findings as the sections write them, and the demo's own faulty run (a fixture with its source)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.example import example_text
from ibprov.report.model import CheckResult, Finding, Report, SectionReport, Severity
from ibprov.verify.causes import Fabric, explain, explain_report, fabric_of
from ibprov.verify.nodes.facts import NodesFacts

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "causes" / "demo-faults-findings.txt"
E, S, C, W = Severity.ERROR, Severity.SECURITY, Severity.CRITICAL, Severity.WARNING


@cache
def rack() -> LoadedSpec:
    return load_spec_text(example_text(), "cluster.yaml")


@cache
def fabric() -> Fabric:
    return fabric_of(rack())


def f(check: str, obj: str, severity: Severity = E, observed: str = "seen", expected: str = "planned") -> Finding:
    return Finding(check, severity, obj, expected, observed, "fix it")


def report_of(findings: Sequence[Finding]) -> Report:
    by_check: dict[str, list[Finding]] = {}
    for finding in findings:
        by_check.setdefault(finding.check, []).append(finding)
    checks = tuple(CheckResult(c, c, tuple(x.object for x in fs), tuple(fs)) for c, fs in by_check.items())
    section = SectionReport("nodes", "Nodes", "each host", "2026-12-07T00:00:00Z", 1.0, checks, NodesFacts(6, 6))
    return Report.from_sections(cluster="rack1", spec="cluster.yaml", sections=[section])


def graph(findings: Sequence[Finding], on: Fabric | None = None) -> dict[tuple[str, str], tuple[str, str, str]]:
    """symptom -> (cause check, cause object, rule)"""
    got = explain(report_of(findings).findings, on or fabric())
    return {k: (e.cause[0], e.cause[1], e.rule) for k, e in got.items()}


def roots(findings: Sequence[Finding], on: Fabric | None = None) -> list[tuple[str, str, int]]:
    r = explain_report(report_of(findings), on or fabric())
    return [(c.finding.check, c.finding.object, len(c.symptoms)) for c in r.causes]


def demo_findings() -> list[Finding]:
    data = {"findings": json.loads(FIXTURE.read_text().split("\n", 1)[1])}  # after its "# source:" line
    return [
        Finding(d["check"], Severity(d["severity"]), d["object"], d["expected"], d["observed"], d["fix"])
        for d in data["findings"]
    ]
