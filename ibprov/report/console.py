"""The console view: a table with one line per finding, worst first, and the summary line. When the report has
a cause graph, each cause comes first and the findings it explains follow it, their check marked ``└``.

Nothing here prints: :func:`findings_table` returns a rich renderable for ``ibprov.cli`` to print.
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from ibprov.report.model import Finding, Report, Severity

__all__ = [
    "SEVERITY_STYLE",
    "facts_lines",
    "findings_table",
    "fix_lines",
    "ordered",
    "summary_text",
    "table_width",
]

SEVERITY_STYLE = {
    Severity.CRITICAL: "bold red",
    Severity.SECURITY: "bold magenta",
    Severity.ERROR: "red",
    Severity.WARNING: "yellow",
}
_COLUMNS = ("severity", "check", "object", "expected", "found", "fix")


def _columns(with_fix: bool) -> tuple[str, ...]:
    return _COLUMNS if with_fix else _COLUMNS[:-1]


def ordered(report: Report) -> list[tuple[Finding, bool]]:
    """(finding, whether it is a symptom) in the order the console shows them: each cause, worst first, then
    what it explains; without a cause graph, the findings worst first."""
    if not report.explained:
        return [(f, False) for f in report.findings]
    out: list[tuple[Finding, bool]] = []
    for cause in report.causes:
        out += [(cause.finding, False), *((s, True) for s in cause.symptoms)]
    return out


def _rows(report: Report, with_fix: bool = True) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [
        (str(f.severity), f"└ {f.check}" if symptom else f.check, f.object, f.expected, f.observed, f.fix)
        for f, symptom in ordered(report)
    ]
    return rows if with_fix else [r[:-1] for r in rows]


def findings_table(report: Report, *, with_fix: bool = True) -> Table | None:
    """The findings, worst first, one line each (cells never wrap); None when there are none. Without the
    fix column (a narrow terminal) the fixes follow the table once per check (:func:`fix_lines`)."""
    rows = _rows(report, with_fix)
    if not rows:
        return None
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for name in _columns(with_fix):
        table.add_column(name.upper(), no_wrap=True, overflow="ellipsis")
    for (finding, _symptom), row in zip(ordered(report), rows, strict=True):
        table.add_row(Text(row[0], style=SEVERITY_STYLE[finding.severity]), *row[1:])
    return table


def table_width(report: Report, *, with_fix: bool = True) -> int:
    """The width at which every cell of the findings table fits on one line."""
    columns = _columns(with_fix)
    rows = [columns, *_rows(report, with_fix)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(columns))]
    return sum(widths) + 3 * len(widths) + 2  # padding and separators


def fix_lines(report: Report) -> list[str]:
    """``fix <check>: <fix>``, once per check and fix, in the order of the findings."""
    return [f"fix {check}: {fix}" for check, fix in dict.fromkeys((f.check, f.fix) for f in report.findings)]


def summary_text(report: Report) -> Text:
    style = "bold green" if not report.findings else "bold yellow" if report.exit_code == 0 else "bold red"
    return Text(report.summary, style=style)


def facts_lines(report: Report) -> list[str]:
    """One line per section: what it looked at and where from (``fabric (this host): 1 switch, ...``)."""
    out = []
    for section in report.sections:
        facts = "; ".join(section.facts.lines())
        out.append(f"{section.name} ({section.collected_from}): {facts}" if facts else section.name)
    return out
