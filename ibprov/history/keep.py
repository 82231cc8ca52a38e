"""What ``verify --history/--metrics`` does with a finished (or failed) run: keep it, compare it with the
previous one, and write its metrics."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ibprov.history.diff import TREND_RUNS, RunDiff, diff_runs, first_seen, trends
from ibprov.history.metrics import PortLookup, RunOutcome, openmetrics, run_outcome
from ibprov.history.store import DEFAULT_KEEP, History, Run
from ibprov.report.json_report import to_dict
from ibprov.report.model import Report, utc_text

__all__ = ["Kept", "failed_run", "keep_run"]


@dataclass(frozen=True)
class Kept:
    """A kept run: the report with first-seen times and counter trends, the comparison with the previous
    run (None: none kept), the run (None: no history) and its metrics text."""

    report: Report
    diff: RunDiff | None
    run: Run | None
    metrics: str


class _Reports:
    """The kept runs' report.json, each read (and parsed: megabytes on a large fabric) at most once."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs = runs
        self._read: dict[str, dict[str, Any]] = {}

    def __getitem__(self, index: int) -> dict[str, Any]:
        run = self.runs[index]
        if run.id not in self._read:
            self._read[run.id] = run.report()
        return self._read[run.id]

    def newest_first(self, skip: int = 0) -> Iterator[dict[str, Any]]:
        """The runs, newest first, after the ``skip`` newest (read lazily)."""
        for index in range(len(self.runs) - 1 - skip, -1, -1):
            yield self[index]


def keep_run(
    report: Report,
    history: History | None,
    *,
    limits: Mapping[str, float],
    links_planned: int | None,
    keep: int = DEFAULT_KEEP,
    ports: PortLookup | None = None,
) -> Kept:
    """Keep ``report`` in ``history`` (when given), compare it with the previous run, and make its metrics."""
    data = to_dict(report)
    if history is None:
        return Kept(report, None, None, openmetrics(run_outcome(data), data, links_planned=links_planned, ports=ports))
    before = _Reports(history.runs())
    diff = diff_runs(before[-1], data, limits) if before.runs else None
    # everything read from the earlier runs is read before the save, which may remove the oldest of them
    seen = first_seen(data, before.newest_first())
    count = len(before.runs)
    recent = [before[i] for i in range(max(0, count - (TREND_RUNS - 1)), count)] + [data]
    moved = [r for r in diff.rates if r.increase > 0] if diff is not None else []
    run = history.save(data, keep=keep, ended=run_outcome(data).ended)
    shown = replace(
        report,
        first_seen={key: utc_text(when) for key, when in seen.items()},
        trends=tuple(trends(recent, moved)),
    )
    text = openmetrics(run_outcome(data), data, diff=diff, seen=seen, links_planned=links_planned, ports=ports)
    return Kept(shown, diff, run, text)


def failed_run(
    cluster: str,
    exit_code: int,
    started: datetime,
    history: History | None,
    *,
    links_planned: int | None,
    ports: PortLookup | None = None,
) -> str:
    """The metrics of a run that produced no report: its outcome, and the last kept run's findings carried
    over unchanged (an alert on a finding neither resolves nor fires because a run failed)."""
    now = datetime.now(UTC)
    outcome = RunOutcome(cluster, exit_code, now, max(0.0, (now - started) / timedelta(seconds=1)))
    kept = _Reports(history.runs() if history is not None else [])
    last = kept[-1] if kept.runs else None
    seen = first_seen(last, kept.newest_first(skip=1)) if last is not None else None
    return openmetrics(outcome, last, seen=seen, links_planned=links_planned, ports=ports)
