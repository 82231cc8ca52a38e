"""What ``verify --history/--metrics`` does with a finished (or failed) run: keep it, compare it with the
previous one, and write its metrics."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ibprov.history.diff import TREND_RUNS, RunDiff, diff_runs, first_seen, trends
from ibprov.history.metrics import RunOutcome, openmetrics, run_outcome
from ibprov.history.store import DEFAULT_KEEP, History, Run
from ibprov.report.json_report import to_dict
from ibprov.report.model import Report

__all__ = ["Kept", "failed_run", "keep_run"]


@dataclass(frozen=True)
class Kept:
    """A kept run: the report with first-seen times and counter trends, the comparison with the previous
    run (None: none kept), the run (None: no history) and its metrics text."""

    report: Report
    diff: RunDiff | None
    run: Run | None
    metrics: str


def _older(runs: list[Run]) -> Iterator[dict[str, Any]]:
    for run in reversed(runs):
        yield run.report()


def keep_run(
    report: Report,
    history: History | None,
    *,
    limits: Mapping[str, float],
    links_planned: int | None,
    keep: int = DEFAULT_KEEP,
) -> Kept:
    """Keep ``report`` in ``history`` (when given), compare it with the previous run, and make its metrics."""
    data = to_dict(report)
    if history is None:
        return Kept(report, None, None, openmetrics(run_outcome(data), data, links_planned=links_planned))
    before = history.runs()
    previous = before[-1].report() if before else None
    diff = diff_runs(previous, data, limits) if previous is not None else None
    # everything read from the earlier runs is read before the save, which may remove the oldest of them
    seen = first_seen(data, _older(before))
    recent = [r.report() for r in before[-(TREND_RUNS - 1) :]] + [data]
    moved = [r for r in diff.rates if r.increase > 0] if diff is not None else []
    run = history.save(data, keep=keep, ended=run_outcome(data).ended)
    shown = replace(
        report,
        first_seen={key: _iso(when) for key, when in seen.items()},
        trends=tuple(trends(recent, moved)),
    )
    text = openmetrics(run_outcome(data), data, diff=diff, seen=seen, links_planned=links_planned)
    return Kept(shown, diff, run, text)


def failed_run(
    cluster: str, exit_code: int, started: datetime, history: History | None, *, links_planned: int | None
) -> str:
    """The metrics of a run that produced no report: its outcome, and the last kept run's findings carried
    over unchanged (an alert on a finding neither resolves nor fires because a run failed)."""
    now = datetime.now(UTC)
    outcome = RunOutcome(cluster, exit_code, now, max(0.0, (now - started) / timedelta(seconds=1)))
    runs = history.runs() if history is not None else []
    last = runs[-1].report() if runs else None
    older = _older(runs[:-1])
    seen = first_seen(last, older) if last is not None else None
    return openmetrics(outcome, last, seen=seen, links_planned=links_planned)


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
