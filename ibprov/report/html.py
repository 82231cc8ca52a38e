"""report.html: one self-contained page (no external assets, no script) for every section that ran.

The page shows what an admin looks for first: the result and the summary line, then the findings worst
first with the fix for each (with a run history: when each was first seen, and the error counters that
moved since the previous run, each over the last runs), then per section its facts, its notes (what the
twin could not show, where the diags ran), and every check with the objects it examined, passed, failed or
judged with a caveat (expand a check to see them). Like the console, JSON and JUnit views it knows a
section only through its name, title, checks, facts (``lines()``) and notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from ibprov import __version__
from ibprov.report.model import (
    BarChart,
    Cell,
    CheckResult,
    CounterTrend,
    Finding,
    HasCharts,
    HasMatrices,
    HasTables,
    Matrix,
    Report,
    SectionReport,
    Severity,
    Table,
)

__all__ = ["to_html"]

_CSS = """
table.cables td{font-size:12px;white-space:nowrap}table.cables tr.fail td{background:#fdecea;font-weight:400}
table.cables tr.skipped td{color:#667085}table.cables tr.pass td{font-weight:400;color:#1b1f24}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{padding:18px 28px;color:#fff}
header.pass{background:#1f7a3a;color:#fff}header.fail{background:#b42318;color:#fff}
header h1{margin:0 0 4px;font-size:22px}header p{margin:0;opacity:.92}
main{padding:18px 28px;max-width:1400px}
section{background:#fff;border:1px solid #d8dde3;border-radius:8px;padding:14px 18px;margin:0 0 18px}
h2{font-size:18px;margin:0 0 10px}h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e6e9ee;vertical-align:top}
th{background:#f0f2f5;font-weight:600}
.sev{font-weight:700;text-transform:uppercase;font-size:11px;padding:2px 6px;border-radius:4px;color:#fff}
.critical{background:#7a0916}.security{background:#86198f}.error{background:#b42318}.warning{background:#b54708}
main .pass{color:#1f7a3a;font-weight:600}main .fail{color:#b42318;font-weight:600}.caveat{color:#b54708}
main .skipped{color:#5d6b7a}
ul.notes{margin:6px 0;padding-left:20px}ul.notes li{margin:2px 0}
details summary{cursor:pointer}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.facts{margin:0 0 8px;color:#39424e}
svg.chart{font:12px sans-serif;display:block;margin:4px 0 12px}svg.chart rect.bar{fill:#4a7bb7}
svg.chart line.low{stroke:#c0392b;stroke-width:2}
table.heatmap{width:auto}table.heatmap td{text-align:right;min-width:54px;font-variant-numeric:tabular-nums}
table.heatmap td.none{background:#f0f2f5;color:#8a94a3}table.heatmap th.row{text-align:right}
.legend{color:#5d6b7a;font-size:12px;margin:4px 0 10px}
svg.trend polyline{fill:none;stroke:#b42318;stroke-width:1.5}svg.trend circle{fill:#b42318}
td.first-seen{white-space:nowrap;font-variant-numeric:tabular-nums}
div.cause{border-left:4px solid #b42318;padding:2px 10px;margin:8px 0}div.cause p{margin:4px 0}
details.symptoms summary{cursor:pointer;color:#444}
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _findings_table(findings: list[Finding], first_seen: Mapping[tuple[str, str], str] | None = None) -> str:
    """The findings; with a run history (``first_seen``), when each was first seen without a break."""
    if not findings:
        return '<p class="pass no-findings">No findings.</p>'
    seen = first_seen or {}
    rows = "".join(
        f'<tr class="finding"><td><span class="sev {_e(f.severity)}">{_e(f.severity)}</span></td>'
        f"<td><code>{_e(f.check)}</code></td><td>{_e(f.object)}</td><td>{_e(f.expected)}</td>"
        f"<td>{_e(f.observed)}</td><td>{_e(f.fix)}</td>"
        + (f'<td class="first-seen">{_e(seen.get((f.check, f.object), "—"))}</td>' if seen else "")
        + "</tr>"
        for f in findings
    )
    return (
        '<table class="findings"><thead><tr><th>Severity</th><th>Check</th><th>Object</th><th>Planned</th>'
        f"<th>Found</th><th>Fix</th>{'<th>First seen</th>' if seen else ''}</tr></thead><tbody>{rows}</tbody></table>"
    )


def _causes(report: Report) -> str:
    """Each cause, worst first, open; what it explains folded under it, each symptom with the evidence that ties
    it (none without a cause graph)."""
    if not report.explained:
        return ""
    blocks = []
    for cause in report.causes:
        f = cause.finding
        head = (
            f'<span class="sev {_e(f.severity)}">{_e(f.severity)}</span> <code>{_e(f.check)}</code> '
            f"{_e(f.object)}: planned {_e(f.expected)}, found {_e(f.observed)}"
        )
        if cause.symptoms:
            rows = "".join(
                f'<tr class="symptom"><td><span class="sev {_e(s.severity)}">{_e(s.severity)}</span></td>'
                f"<td><code>{_e(s.check)}</code></td><td>{_e(s.object)}</td><td>{_e(s.observed)}</td>"
                f"<td>{_e(report.explained[(s.check, s.object)].evidence)}</td></tr>"
                for s in cause.symptoms
            )
            folded = (
                f'<details class="symptoms"><summary>explains {len(cause.symptoms)} finding'
                f"{'' if len(cause.symptoms) == 1 else 's'}</summary>"
                '<table class="findings"><thead><tr><th>Severity</th><th>Check</th><th>Object</th><th>Found</th>'
                f"<th>Tied by</th></tr></thead><tbody>{rows}</tbody></table></details>"
            )
        else:
            folded = '<p class="legend">explains no other finding</p>'
        blocks.append(f'<div class="cause"><p>{head}</p><p class="fix">fix: {_e(f.fix)}</p>{folded}</div>')
    return f'<section id="causes"><h2>Causes, worst first</h2>{"".join(blocks)}</section>'


def _sparkline(trend: CounterTrend) -> str:
    """A counter's values over the last runs: a line through the runs that read it, its last value named."""
    values = [(i, v) for i, (_t, v) in enumerate(trend.points) if v is not None]
    width, height, pad = 220, 36, 3
    top = max((v for _i, v in values), default=0) or 1
    span = max(1, len(trend.points) - 1)
    xy = [(pad + i / span * (width - 2 * pad), height - pad - v / top * (height - 2 * pad)) for i, v in values]
    segments: list[list[str]] = []  # a run that did not read the counters breaks the line
    last = -2
    for (x, y), (i, _v) in zip(xy, values, strict=True):
        if i != last + 1:
            segments.append([])
        segments[-1].append(f"{x:.1f},{y:.1f}")
        last = i
    lines = "".join(f'<polyline points="{" ".join(seg)}"/>' for seg in segments)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2"><title>{_e(trend.points[i][0])}: {v}</title></circle>'
        for (x, y), (i, v) in zip(xy, values, strict=True)
    )
    return (
        f'<svg class="trend" width="{width}" height="{height}" role="img" '
        f'aria-label="{_e(trend.counter)} on {_e(trend.object)}">{lines}{dots}</svg>'
    )


def _trends(report: Report) -> str:
    if not report.trends:
        return ""
    rows = "".join(
        f'<tr class="trend" data-object="{_e(t.object)}" data-counter="{_e(t.counter)}"><td>{_e(t.object)}</td>'
        f"<td><code>{_e(t.counter)}</code></td><td>{_sparkline(t)}</td>"
        f"<td>{_e(next((v for _t, v in reversed(t.points) if v is not None), '—'))}</td></tr>"
        for t in report.trends
    )
    return (
        '<section id="counter-trends"><h2>Counters that moved since the previous run</h2>'
        f'<p class="legend">each error counter over the last {max(len(t.points) for t in report.trends)} runs of '
        "the history (a gap: a run that did not read the fabric's counters)</p>"
        '<table class="trends"><thead><tr><th>Port</th><th>Counter</th><th>Over the last runs</th><th>Now</th>'
        f"</tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _actions(report: Report) -> str:
    """What verify --drain / --resume did to the scheduler's nodes."""
    if not report.actions:
        return ""
    rows = "".join(
        f'<tr class="action {_e(a.action)}"><td>{_e(a.node)}</td><td>{_e(a.action)}</td><td>{_e(a.reason)}</td>'
        f"<td>{_e(a.why)}</td><td>{_e(a.result)}</td></tr>"
        for a in report.actions
    )
    return (
        '<section id="scheduler-actions"><h2>Slurm: drains and resumes</h2><table class="findings"><thead><tr>'
        "<th>Node</th><th>Action</th><th>Reason</th><th>Why</th><th>Result</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _check_rows(check: CheckResult) -> str:
    caveats = dict(check.caveats)
    skips = dict(check.skipped)
    cases = check.cases()
    status = check.status
    items = []
    for obj, findings in cases:
        if findings:
            items.append(f'<li class="fail">{_e(obj)}: ' + "; ".join(_e(f.text) for f in findings) + "</li>")
        elif obj in skips:
            items.append(f'<li class="skipped">{_e(obj)}: skipped: {_e(skips[obj])}</li>')
        elif obj in caveats:
            items.append(f'<li class="caveat">{_e(obj)}: {_e(caveats[obj])}</li>')
        else:
            items.append(f"<li>{_e(obj)}: passed</li>")
    objects = f"<details><summary>{len(cases)} objects</summary><ul>{''.join(items)}</ul></details>" if cases else "—"
    caveat = f' <span class="caveat">({len(caveats)} with a caveat)</span>' if caveats else ""
    if skips and status != "skipped":
        caveat += f' <span class="skipped">({len(skips)} skipped)</span>'
    return (
        f'<tr class="check" data-check="{_e(check.id)}"><td><code>{_e(check.id)}</code></td><td>{_e(check.title)}</td>'
        f'<td class="{status}">{status}{caveat}</td><td>{objects}</td></tr>'
    )


def _shade(matrix: Matrix, cell: Cell) -> str:
    """Green when it passes (paler near the limit), red when it fails (darker the further off), grey skipped."""
    if cell.status == "skipped" or cell.value is None:
        return "#e4e7eb" if cell.status == "skipped" else "#f4c7c3"
    limit = matrix.limit
    if not limit:
        return "#d9f0df" if cell.status == "pass" else "#f4c7c3"
    ratio = cell.value / limit if matrix.higher_is_better else limit / cell.value if cell.value else 0.0
    if cell.status == "pass":
        light = max(0.0, min(1.0, (ratio - 1.0) / 0.15))  # at the limit: pale; 15 % better: full green
        return f"rgb({int(217 - 110 * light)},{int(240 - 40 * light)},{int(223 - 100 * light)})"
    dark = max(0.0, min(1.0, (1.0 - ratio) / 0.5))  # just under: pale red; half the limit: dark red
    return f"rgb({int(244 - 64 * dark)},{int(199 - 164 * dark)},{int(195 - 160 * dark)})"


def _heatmap(matrix: Matrix) -> str:
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in matrix.columns)
    rows = []
    for r in matrix.rows:
        cells = []
        for c in matrix.columns:
            cell = matrix.cells.get((r, c))
            if cell is None:
                cells.append('<td class="none">·</td>')
                continue
            shown = f"{cell.value:.3g}" if cell.value is not None else ("skip" if cell.status == "skipped" else "—")
            cells.append(
                f'<td class="cell {_e(cell.status)}" style="background:{_shade(matrix, cell)}" '
                f'title="{_e(cell.text)}" data-status="{_e(cell.status)}">{_e(shown)}</td>'
            )
        rows.append(f'<tr><th class="row" scope="row">{_e(r)}</th>{"".join(cells)}</tr>')
    limit = (
        f"; pass {'≥' if matrix.higher_is_better else '≤'} {matrix.limit:g} {_e(matrix.unit)}" if matrix.limit else ""
    )
    return (
        f"<h3>{_e(matrix.title)} ({_e(matrix.unit)})</h3>"
        f'<p class="legend">rows: client, columns: server{limit}; hover a cell for the pair; grey: skipped</p>'
        f'<table class="heatmap" data-matrix="{_e(matrix.title)}"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _worst(matrices: list[Matrix], limit: int = 20) -> str:
    """The cells that failed or came closest to failing, worst first."""
    ranked = []
    for m in matrices:
        for cell in m.cells.values():
            if cell.value is None or not m.limit:
                if cell.status == "fail":
                    ranked.append((-1.0, m, cell))
                continue
            margin = cell.value / m.limit - 1 if m.higher_is_better else 1 - cell.value / m.limit
            ranked.append((margin, m, cell))
    ranked.sort(key=lambda x: x[0])
    if not ranked:
        return ""
    rows = "".join(
        f'<tr class="{_e(cell.status)}"><td class="{_e(cell.status)}">{_e(cell.status)}</td><td>{_e(m.title)}</td>'
        f"<td>{_e(cell.text)}</td></tr>"
        for _margin, m, cell in ranked[:limit]
    )
    return (
        '<h3>Worst pairs first</h3><table class="worst"><thead><tr><th>Result</th><th>Test</th><th>Pair</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _matrices(section: SectionReport) -> str:
    facts = section.facts
    if not isinstance(facts, HasMatrices):
        return ""
    matrices = facts.matrices()
    details = "".join(
        f'<details class="drilldown"><summary>{_e(title)}</summary><ul>'
        + "".join(f"<li><code>{_e(line)}</code></li>" for line in lines)
        + "</ul></details>"
        for title, lines in facts.details()
    )
    return (
        _worst(matrices)
        + "".join(_heatmap(m) for m in matrices if m.cells)
        + (f"<h3>Schedule and per-node detail</h3>{details}" if details else "")
    )


def _chart(chart: BarChart) -> str:
    """Horizontal bars scaled to the largest value (an SVG, so that it prints as it shows)."""
    top = max((v for _label, v in chart.bars), default=0.0) or 1.0
    row, width, label_w = 22, 360, 230
    parts = []
    for i, (label, value) in enumerate(chart.bars):
        y = i * row
        length = value / top * width
        low = chart.low[i] / top * width if i < len(chart.low) else None
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">{_e(label)}</text>'
            f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{length:.1f}" height="{row - 6}" '
            f'data-label="{_e(label)}" data-value="{value:g}">'
            f"<title>{_e(label)}: {value:g} {_e(chart.unit)}</title></rect>"
            + (
                f'<line class="low" x1="{label_w + low:.1f}" x2="{label_w + low:.1f}" y1="{y + 1}" y2="{y + row - 1}"/>'
                if low is not None
                else ""
            )
            + f'<text x="{label_w + length + 4:.1f}" y="{y + 15}">{value:g}</text>'
        )
    height = max(row, row * len(chart.bars))
    legend = "; the mark on each bar: the least loaded port" if chart.low else ""
    return (
        f"<h3>{_e(chart.title)}</h3>"
        f'<p class="legend">{_e(chart.unit)}{legend}</p>'
        f'<svg class="chart" data-chart="{_e(chart.title)}" width="{label_w + width + 60}" height="{height}" '
        f'role="img" aria-label="{_e(chart.title)}">{"".join(parts)}</svg>'
    )


def _charts(section: SectionReport) -> str:
    facts = section.facts
    return "".join(_chart(c) for c in facts.charts() if c.bars) if isinstance(facts, HasCharts) else ""


_SHOWN_ROWS = 2000  # rows of a table the page shows; the whole table is in report.json and the CSV


def _table(table: Table) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
    rows = []
    for i, row in enumerate(table.rows[:_SHOWN_ROWS]):
        status = table.status[i] if i < len(table.status) else ""
        rows.append(f'<tr class="{_e(status)}">' + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>")
    more = len(table.rows) - _SHOWN_ROWS
    tail = f'<p class="legend">and {more} more rows: ibprov report cables writes them all</p>' if more > 0 else ""
    return (
        f"<h3>{_e(table.title)}</h3>"
        f'<table class="cables" data-table="{_e(table.title)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{tail}"
    )


def _tables(section: SectionReport) -> str:
    facts = section.facts
    return "".join(_table(t) for t in facts.report_tables()) if isinstance(facts, HasTables) else ""


def _section(section: SectionReport, first_seen: Mapping[tuple[str, str], str]) -> str:
    facts = "; ".join(section.facts.lines())
    notes = "".join(f"<li>{_e(n)}</li>" for n in section.notes)
    status = "pass" if section.exit_code == 0 else "fail"
    checks = "".join(_check_rows(c) for c in section.checks)
    return (
        f'<section class="section" id="section-{_e(section.name)}"><h2>{_e(section.title)} '
        f'<span class="{status}">{status.upper()}</span></h2>'
        f'<p class="facts">{_e(facts)}</p>'
        f"<p>Collected from {_e(section.collected_from)} at {_e(section.started or '—')} in "
        f"{section.duration_seconds:.1f} s.</p>"
        + (f'<h3>Notes</h3><ul class="notes">{notes}</ul>' if notes else "")
        + "<h3>Findings</h3>"
        + _findings_table(section.findings, first_seen)
        + _matrices(section)
        + _charts(section)
        + _tables(section)
        + '<h3>Checks</h3><table class="checks"><thead><tr><th>Check</th><th>Passes when</th><th>Result</th>'
        f"<th>Objects</th></tr></thead><tbody>{checks}</tbody></table></section>"
    )


def to_html(report: Report) -> str:
    status = "pass" if report.exit_code == 0 else "fail"
    counts = report.by_severity()
    badges = " ".join(f'<span class="sev {_e(s)}">{counts[str(s)]} {_e(s)}</span>' for s in Severity if counts[str(s)])
    notes = "".join(f"<li>{_e(n)}</li>" for n in report.notes)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>ibprov {_e(report.command)}: {_e(report.cluster)}'
        f'</title><meta name="viewport" content="width=device-width"><style>{_CSS}</style></head><body>'
        f'<header class="{status}"><h1>ibprov {_e(report.command)} — {_e(report.cluster)}</h1>'
        f'<p id="summary">{_e(report.summary)}</p>'
        f"<p>spec {_e(report.spec or '—')}; started {_e(report.started or '—')}; ibprov {_e(__version__)}"
        f"{'; ' + badges if badges else ''}</p></header><main>"
        + (f'<section><h2>Notes</h2><ul class="notes">{notes}</ul></section>' if notes else "")
        + _causes(report)
        + '<section id="all-findings"><h2>Findings, worst first</h2>'
        + _findings_table(report.findings, report.first_seen)
        + "</section>"
        + _trends(report)
        + _actions(report)
        + "".join(_section(s, report.first_seen) for s in report.sections)
        + "</main></body></html>\n"
    )
