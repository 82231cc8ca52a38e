from __future__ import annotations

import io
from typing import Any

from reportkit import clean_report, report_with_findings
from rich.console import Console

from ibprov.report.console import findings_table, summary_text, table_width
from ibprov.report.model import CheckResult, Finding, Report, SectionReport, Severity


def render(report: Report) -> list[str]:
    table = findings_table(report)
    assert table is not None
    out = io.StringIO()
    Console(file=out, width=table_width(report), color_system=None).print(table)
    return out.getvalue().splitlines()


def test_one_line_per_finding_under_a_header() -> None:
    report = report_with_findings()
    lines = render(report)
    assert lines[0].split() == ["SEVERITY", "CHECK", "OBJECT", "EXPECTED", "FOUND", "FIX"]
    rows = [line for line in lines[2:] if line.strip()]
    assert len(rows) == len(report.findings) == 3
    assert "…" not in "".join(rows)  # nothing cut off at the width the CLI uses


def _report(*findings: Finding) -> Report:
    section = SectionReport("x", "X", "here", "", 0.0, (CheckResult("x.y", "t", ("o",), findings),), _NoFacts())
    return Report.from_sections(cluster="c", spec="c.yaml", sections=[section])


class _NoFacts:
    def as_dict(self) -> dict[str, Any]:
        return {}

    def lines(self) -> list[str]:
        return []


def test_the_worst_finding_comes_first() -> None:
    warn = Finding("x.y", Severity.WARNING, "a", "e", "o", "f")
    crit = Finding("x.y", Severity.CRITICAL, "b", "e", "o", "f")
    sec = Finding("x.y", Severity.SECURITY, "c", "e", "o", "f")
    report = _report(warn, crit, sec)
    assert [f.severity for f in report.findings] == [Severity.CRITICAL, Severity.SECURITY, Severity.WARNING]
    assert [line.split()[0] for line in render(report)[2:5]] == ["critical", "security", "warning"]


def test_the_summary_line_says_pass_or_fail_and_counts_by_severity() -> None:
    assert str(summary_text(clean_report())).startswith("PASS: no findings; 24 checks over")
    assert findings_table(clean_report()) is None
    assert report_with_findings().summary.startswith("FAIL: 3 findings (3 error); 24 checks over")


def test_warnings_alone_do_not_fail_verify() -> None:
    report = _report(Finding("x.y", Severity.WARNING, "o", "e", "o", "f"))
    assert report.exit_code == 0
    assert report.summary == "PASS with 1 finding (1 warning); 1 check over 1 object"
    assert _report(Finding("x.y", Severity.ERROR, "a", "e", "o", "f")).exit_code == 1


def test_without_the_fix_column_each_fix_follows_once_per_check() -> None:
    from ibprov.report.console import fix_lines

    report = report_with_findings()
    assert table_width(report, with_fix=False) < table_width(report)
    table = findings_table(report, with_fix=False)
    assert table is not None
    assert [c.header for c in table.columns] == ["SEVERITY", "CHECK", "OBJECT", "EXPECTED", "FOUND"]
    assert fix_lines(report) == [f"fix {f.check}: {f.fix}" for f in report.findings]
    doubled = _report(
        Finding("x.y", Severity.ERROR, "a", "e", "o", "same fix"),
        Finding("x.y", Severity.ERROR, "b", "e", "o", "same fix"),
    )
    assert fix_lines(doubled) == ["fix x.y: same fix"]
