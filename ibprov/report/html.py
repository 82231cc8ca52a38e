"""report.html: one self-contained page (no external assets, no script) for every section that ran.

The page shows what an admin looks for first: the result and the summary line, then the findings worst
first with the fix for each, then per section its facts, its notes (what the twin could not show, where the
diags ran), and every check with the objects it examined, passed, failed or judged with a caveat (expand a
check to see them). Like the console, JSON and JUnit views it knows a section only through its name, title,
checks, facts (``lines()``) and notes.
"""

from __future__ import annotations

from html import escape

from ibprov import __version__
from ibprov.report.model import CheckResult, Finding, Report, SectionReport, Severity

__all__ = ["to_html"]

_CSS = """
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
ul.notes{margin:6px 0;padding-left:20px}ul.notes li{margin:2px 0}
details summary{cursor:pointer}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.facts{margin:0 0 8px;color:#39424e}
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _findings_table(findings: list[Finding]) -> str:
    if not findings:
        return '<p class="pass no-findings">No findings.</p>'
    rows = "".join(
        f'<tr class="finding"><td><span class="sev {_e(f.severity)}">{_e(f.severity)}</span></td>'
        f"<td><code>{_e(f.check)}</code></td><td>{_e(f.object)}</td><td>{_e(f.expected)}</td>"
        f"<td>{_e(f.observed)}</td><td>{_e(f.fix)}</td></tr>"
        for f in findings
    )
    return (
        '<table class="findings"><thead><tr><th>Severity</th><th>Check</th><th>Object</th><th>Planned</th>'
        f"<th>Found</th><th>Fix</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _check_rows(check: CheckResult) -> str:
    caveats = dict(check.caveats)
    cases = check.cases()
    failed = sum(1 for _o, f in cases if f)
    status = "fail" if failed else "pass"
    items = []
    for obj, findings in cases:
        if findings:
            items.append(f'<li class="fail">{_e(obj)}: ' + "; ".join(_e(f.text) for f in findings) + "</li>")
        elif obj in caveats:
            items.append(f'<li class="caveat">{_e(obj)}: {_e(caveats[obj])}</li>')
        else:
            items.append(f"<li>{_e(obj)}: passed</li>")
    objects = f"<details><summary>{len(cases)} objects</summary><ul>{''.join(items)}</ul></details>" if cases else "—"
    caveat = f' <span class="caveat">({len(caveats)} with a caveat)</span>' if caveats else ""
    return (
        f'<tr class="check" data-check="{_e(check.id)}"><td><code>{_e(check.id)}</code></td><td>{_e(check.title)}</td>'
        f'<td class="{status}">{status}{caveat}</td><td>{objects}</td></tr>'
    )


def _section(section: SectionReport) -> str:
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
        + _findings_table(section.findings)
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
        + '<section id="all-findings"><h2>Findings, worst first</h2>'
        + _findings_table(report.findings)
        + "</section>"
        + "".join(_section(s) for s in report.sections)
        + "</main></body></html>\n"
    )
