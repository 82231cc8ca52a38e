"""What changed between two verify runs (report.json dicts): findings new, resolved and persisting; error
counters as rates; the master SM. And, over a history: when each finding was first seen, and the values of
the counters that moved.

Counters are read as a live fabric's are: their absolute values count since the last clear, which may be
months ago, so only the increase between two runs means something -- per hour, judged against
``acceptance.error_rates_per_hour``. A counter lower than in the earlier run was cleared in between (by
``ibqueryerrors -k``, a soak, a reboot of the switch): its increase is at least its value now, and is judged
so (a lower bound, said in the note). A counter at its maximum (the PortCounters fields saturate, they do not
wrap: 4 bits for LocalLinkIntegrityErrors, 8 for LinkDownedCounter, 16 for SymbolErrorCounter, ...) gives
an increase that is a lower bound too; the note says to clear it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ibprov.report.model import CounterTrend, Severity, utc_text

__all__ = [
    "COUNTER_MAX",
    "TREND_RUNS",
    "CounterRate",
    "RunDiff",
    "diff_runs",
    "ended",
    "findings_of",
    "first_seen",
    "trends",
]

# PortCounters field widths (IBA vol. 1, PortCounters attribute): each stops at its maximum
COUNTER_MAX = {
    "SymbolErrorCounter": 0xFFFF,
    "LinkErrorRecoveryCounter": 0xFF,
    "LinkDownedCounter": 0xFF,
    "PortRcvErrors": 0xFFFF,
    "PortRcvRemotePhysicalErrors": 0xFFFF,
    "PortRcvSwitchRelayErrors": 0xFFFF,
    "PortXmitDiscards": 0xFFFF,
    "PortXmitConstraintErrors": 0xFF,
    "PortRcvConstraintErrors": 0xFF,
    "LocalLinkIntegrityErrors": 0xF,
    "ExcessiveBufferOverrunErrors": 0xF,
    "VL15Dropped": 0xFFFF,
    "PortXmitWait": 0xFFFFFFFF,
}
TREND_RUNS = 20  # the runs a counter's trend shows, newest last


def ended(report: Mapping[str, Any]) -> datetime:
    """When a run ended: its start plus its duration."""
    start = datetime.fromisoformat(str(report["started"]))  # Python 3.11 reads a trailing "Z"
    return start + timedelta(seconds=float(report.get("duration_seconds") or 0))


def span(hours: float) -> str:
    """A time between two runs as people say it: ``12 s``, ``4.5 min``, ``6.0 h`` (never ``0.0 h``)."""
    seconds = hours * 3600
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{hours:.1f} h"


def findings_of(report: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(check, object) -> the finding, with its section added (from the run's checks)."""
    sections = {c["id"]: c["section"] for c in report.get("checks", [])}
    out = {}
    for f in report.get("findings", []):
        out[(f["check"], f["object"])] = {**f, "section": sections.get(f["check"], f["check"].split(".")[0])}
    return out


def _counters(report: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """(port, counter) -> value, of a run that has the fabric section (the callers ask only such runs)."""
    fabric = report["sections"]["fabric"].get("facts", {})
    return {(p["object"], name): int(v) for p in fabric.get("counters", []) for name, v in p["counters"].items()}


def _master(report: Mapping[str, Any]) -> dict[str, Any] | None:
    fabric = report.get("sections", {}).get("fabric")
    if fabric is None:
        return None
    master = fabric.get("facts", {}).get("master_sm")
    return master if isinstance(master, dict) else None


@dataclass(frozen=True)
class CounterRate:
    """One port counter's increase between two runs."""

    object: str  # the port: "sm02 mlx5_0 port 1"
    counter: str
    before: int  # 0 when the earlier run did not list the port (no non-zero counter then)
    after: int
    hours: float
    increase: int
    limit: float | None  # acceptance.error_rates_per_hour[counter]; None: not judged
    note: str = ""  # cleared in between, or at its maximum: the increase is a lower bound

    @property
    def rate(self) -> float:
        return self.increase / self.hours if self.hours > 0 else float(self.increase)

    @property
    def over(self) -> bool:
        if self.limit is None or self.increase <= 0:
            return False
        return self.rate > self.limit

    def line(self) -> str:
        limit = "not judged" if self.limit is None else f"limit {self.limit:g}/h"
        text = (
            f"{self.counter} on {self.object}: {self.before} -> {self.after}, +{self.increase} in "
            f"{span(self.hours)} = {self.rate:.3g}/h ({limit}){' OVER' if self.over else ''}"
        )
        return f"{text}; {self.note}" if self.note else text

    def as_dict(self) -> dict[str, Any]:
        return {
            "object": self.object,
            "counter": self.counter,
            "before": self.before,
            "after": self.after,
            "hours": round(self.hours, 4),
            "increase": self.increase,
            "rate_per_hour": round(self.rate, 6),
            "limit_per_hour": self.limit,
            "over": self.over,
            "note": self.note,
        }


def _rate(obj: str, name: str, before: int, after: int, hours: float, limit: float | None) -> CounterRate:
    notes = []
    increase = after - before
    if after < before:
        increase = after
        notes.append(f"cleared since the earlier run ({before} then): the increase is at least {after}")
    top = COUNTER_MAX.get(name)  # None: a counter whose width the table does not know never "stops"
    if top is not None and after >= top:
        notes.append(f"at its maximum ({after}): the increase may be larger; clear the counters (ibqueryerrors -k)")
    return CounterRate(obj, name, before, after, hours, increase, limit, "; ".join(notes))


@dataclass(frozen=True)
class RunDiff:
    """Two runs compared: ``old`` the earlier report, ``new`` the later."""

    old_ended: datetime
    new_ended: datetime
    new: tuple[dict[str, str], ...]
    resolved: tuple[dict[str, str], ...]
    persisting: tuple[dict[str, str], ...]
    rates: tuple[CounterRate, ...]  # every counter that moved, by port
    master_before: dict[str, Any] | None
    master_after: dict[str, Any] | None
    fabric_compared: bool  # both runs have the fabric section (its counters and master)
    # the causes (findings nothing explains) among the new and the resolved findings; None: that run's
    # report.json has no cause graph (written before ibprov had one)
    new_causes: tuple[dict[str, str], ...] | None = None
    resolved_causes: tuple[dict[str, str], ...] | None = None

    @property
    def hours(self) -> float:
        return (self.new_ended - self.old_ended).total_seconds() / 3600

    @property
    def master_changed(self) -> bool:
        """Both runs read the fabric, and their single masters' ports differ (none counts as a port)."""
        before, after = self.master_before or {}, self.master_after or {}
        return self.fabric_compared and before.get("port_guid") != after.get("port_guid")

    @property
    def over(self) -> tuple[CounterRate, ...]:
        return tuple(r for r in self.rates if r.over)

    @property
    def exit_code(self) -> int:
        """1 when a new finding fails verify or a counter rate is over its limit, else 0."""
        worse = any(Severity(f["severity"]).fails for f in self.new)
        return 1 if worse or self.over else 0

    def lines(self) -> list[str]:
        out = [
            f"{len(self.new)} new, {len(self.resolved)} resolved, {len(self.persisting)} persisting over "
            f"{span(self.hours)} ({self.old_ended:%Y-%m-%d %H:%M} -> {self.new_ended:%Y-%m-%d %H:%M} UTC)"
        ]
        causes = []
        for word, found in (("new", self.new_causes), ("resolved", self.resolved_causes)):
            if found:
                named = ", ".join(f"{c['check']} {c['object']}" for c in found[:3])
                causes.append(f"{len(found)} {word} ({named}{', ...' if len(found) > 3 else ''})")
        if causes:
            out.append(f"causes: {'; '.join(causes)}")
        for word, found in (("new", self.new), ("resolved", self.resolved), ("persisting", self.persisting)):
            for f in sorted(found, key=lambda f: (Severity(f["severity"]).rank, f["check"], f["object"])):
                by = f.get("caused_by")
                because = f" (caused by {by['check']} {by['object']})" if isinstance(by, dict) else ""
                # a resolved finding is what the earlier run found: this run found the plan
                seen = f"the earlier run found {f['observed']}" if word == "resolved" else f"found {f['observed']}"
                out.append(
                    f"  {word:<10} {f['severity']:<8} {f['check']:<24} {f['object']}: planned {f['expected']}, "
                    f"{seen}{because}"
                )
        if not self.fabric_compared:
            out.append("counters: not compared (a run without the fabric section)")
        elif not self.rates:
            out.append("counters: none moved")
        for rate in self.rates:
            out.append(f"  counter    {rate.line()}")
        if self.master_changed:
            out.append(f"master SM changed: {_sm(self.master_before)} -> {_sm(self.master_after)}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "from": self.old_ended.isoformat(),
            "to": self.new_ended.isoformat(),
            "hours": round(self.hours, 4),
            "new": list(self.new),
            "resolved": list(self.resolved),
            "persisting": list(self.persisting),
            "counter_rates": [r.as_dict() for r in self.rates],
            "fabric_compared": self.fabric_compared,
            "master_sm": {"before": self.master_before, "after": self.master_after, "changed": self.master_changed},
            "causes": {
                "new": None if self.new_causes is None else [_key(f) for f in self.new_causes],
                "resolved": None if self.resolved_causes is None else [_key(f) for f in self.resolved_causes],
            },
            "exit_code": self.exit_code,
        }


def _key(finding: Mapping[str, Any]) -> dict[str, str]:
    return {"check": finding["check"], "object": finding["object"]}


def _causes(report: Mapping[str, Any], found: Sequence[dict[str, str]]) -> tuple[dict[str, str], ...] | None:
    """The findings of ``found`` (``report``'s) that nothing explains; None when ``report`` has no cause graph."""
    if "causes" not in report:
        return None
    return tuple(f for f in found if "caused_by" not in f)


def _sm(master: Mapping[str, Any] | None) -> str:
    return f"{master['object']} ({master['port_guid']})" if master else "no single master"


def diff_runs(old: Mapping[str, Any], new: Mapping[str, Any], limits: Mapping[str, float]) -> RunDiff:
    """``new`` against ``old``; ``limits``: acceptance.error_rates_per_hour."""
    before, after = findings_of(old), findings_of(new)
    start, end = ended(old), ended(new)
    hours = (end - start).total_seconds() / 3600
    compared = "fabric" in old.get("sections", {}) and "fabric" in new.get("sections", {})
    rates: list[CounterRate] = []
    if compared:
        was, now = _counters(old), _counters(new)
        for (obj, name), value in sorted(now.items()):
            prior = was.get((obj, name), 0)
            if value != prior:
                rates.append(_rate(obj, name, prior, value, hours, limits.get(name)))
    new_found = tuple(f for k, f in after.items() if k not in before)
    resolved = tuple(f for k, f in before.items() if k not in after)
    return RunDiff(
        old_ended=start,
        new_ended=end,
        new=new_found,
        resolved=resolved,
        persisting=tuple(f for k, f in after.items() if k in before),
        rates=tuple(rates),
        master_before=_master(old),
        master_after=_master(new),
        fabric_compared=compared,
        new_causes=_causes(new, new_found),
        resolved_causes=_causes(old, resolved),
    )


def first_seen(newest: Mapping[str, Any], older: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], datetime]:
    """(check, object) -> when the run history first saw each finding of ``newest`` without a break since:
    the end of the earliest run, of the unbroken line of runs ending with the newest, that has it. ``older``:
    the earlier runs, newest first (read lazily: the walk stops once every finding's line is broken). A run
    that did not judge a finding's check or object (another set of sections, a check or object skipped) does
    not break its line."""
    out = {key: ended(newest) for key in findings_of(newest)}
    open_keys = set(out)
    runs = iter(older)
    while open_keys and (report := next(runs, None)) is not None:
        checks = report.get("checks", [])
        judged = {c["id"] for c in checks if c.get("status") != "skipped"}
        skipped = {(c["id"], s["object"]) for c in checks for s in c.get("skipped", [])}
        seen = findings_of(report)
        for key in list(open_keys):
            if key in seen:
                out[key] = ended(report)
            elif key[0] in judged and key not in skipped:
                open_keys.discard(key)
    return out


def trends(reports: Sequence[Mapping[str, Any]], moved: Sequence[CounterRate]) -> list[CounterTrend]:
    """The values, over the last :data:`TREND_RUNS` runs (``reports``, oldest first), of the counters that
    moved (``moved``)."""
    recent = list(reports[-TREND_RUNS:])
    read = [(utc_text(ended(r)), _counters(r) if "fabric" in r.get("sections", {}) else None) for r in recent]
    out = []
    for rate in moved:
        key = (rate.object, rate.counter)
        points = tuple((t, None if values is None else values.get(key, 0)) for t, values in read)
        out.append(CounterTrend(rate.object, rate.counter, points))
    return out
