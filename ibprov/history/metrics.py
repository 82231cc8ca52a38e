"""The last verify run as OpenMetrics text, for node_exporter's textfile collector (``--metrics FILE``).

Written from report.json's dict (and, with a history, the comparison with the previous run and when each
finding was first seen), only the metrics of :mod:`ibprov.history.catalog`. The file is replaced atomically
(written beside it, then renamed: the collector never reads half a file). A run that failed (spec error,
nothing collected, another run holding the lock) still writes the run's own metrics, and carries the
previous run's findings over unchanged, so that alerts on findings neither resolve nor fire because a run
failed; the run metrics say it failed.
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ibprov.errors import IbprovError
from ibprov.history.catalog import (
    CATALOG,
    CLUSTER,
    MAX_FINDING_SERIES,
    MAX_PAIR_SERIES,
    MAX_PHY_SERIES,
    MAX_RATE_SERIES,
    PORT_IDS,
    metric,
)
from ibprov.history.diff import RunDiff, ended, findings_of
from ibprov.report.model import Severity

__all__ = ["PortLookup", "RunOutcome", "openmetrics", "run_outcome", "write_metrics"]

# an object -> the planned port it names, as report.json writes a finding's "port" (guid, port, remote_guid,
# remote_port); None: not one planned port
PortLookup = Callable[[str], Mapping[str, Any] | None]
_SEVERITIES = ("critical", "security", "error", "warning")
_GBIT = 1e9 / 8  # bytes per second in a Gb/s
_US = 1e-6

_LINK_CHECKS = ("link.down", "link.width", "link.speed")
# mstlink's BER when nothing was counted is 15E-255: below this, a port has no errors and no BER series
_NO_ERRORS = 1e-100
# per-port physical metrics: (metric, the cable report's end field, the check whose findings are written first,
# the least value written)
_PHY_SERIES = (
    ("ibprov_port_effective_ber", "effective_ber", "phy.ber_effective", _NO_ERRORS),
    ("ibprov_port_raw_ber", "raw_ber", "phy.ber_raw", _NO_ERRORS),
    ("ibprov_module_temperature_celsius", "temperature_c", "phy.module_temperature", -math.inf),
)


@dataclass(frozen=True)
class RunOutcome:
    """How the run itself went: its exit code, when it ended and how long it took."""

    cluster: str
    exit_code: int
    ended: datetime
    duration_seconds: float

    @property
    def success(self) -> bool:
        return self.exit_code in (0, 1)


@dataclass
class _Samples:
    rows: dict[str, list[tuple[dict[str, str], float]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, name: str, labels: Mapping[str, str], value: float) -> None:
        known = metric(name)  # KeyError for a metric the catalog does not have
        if tuple(labels) != known.labels:
            raise ValueError(f"{name}: labels {tuple(labels)} are not the catalog's {known.labels}")
        self.rows[name].append((dict(labels), value))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))


def _text(samples: _Samples) -> str:
    out = []
    for m in CATALOG:
        rows = samples.rows.get(m.name)
        if not rows:
            continue
        out.append(f"# HELP {m.name} {m.help}")
        out.append(f"# TYPE {m.name} {m.type}")
        for labels, value in rows:
            shown = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
            out.append(f"{m.name}{{{shown}}} {_number(value)}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _port_labels(obj: str, known: Mapping[str, Any] | None, lookup: PortLookup | None) -> dict[str, str]:
    """The labels that join a series with the per-port exporters: ``known`` (report.json's "port" of a
    finding), else what ``lookup`` says of the object; empty where neither names one planned port."""
    ids = known if known is not None else lookup(obj) if lookup is not None else None
    if ids is None:
        return dict.fromkeys(PORT_IDS, "")
    return {k: "" if ids.get(k) is None else str(ids[k]) for k in PORT_IDS}


def _findings(
    s: _Samples,
    cluster: str,
    report: Mapping[str, Any],
    seen: Mapping[tuple[str, str], datetime],
    lookup: PortLookup | None,
) -> None:
    found = findings_of(report)
    counts: Counter[tuple[str, str, str]] = Counter((f["section"], f["check"], f["severity"]) for f in found.values())
    causes = Counter((f["section"], f["check"], f["severity"]) for f in found.values() if "caused_by" not in f)
    ran: set[tuple[str, str]] = set()
    for check in report.get("checks", []):
        if check["status"] == "skipped":
            continue
        ran.add((check["section"], check["id"]))
        key = {CLUSTER: cluster, "section": check["section"], "check": check["id"]}
        s.add("ibprov_check_passed", key, 1 if check["status"] == "pass" else 0)
        s.add("ibprov_check_objects", key, check["objects"])
    # every check that ran, each severity: a healthy run writes zeros, never no series
    judged = sorted(ran | {(section, check_id) for section, check_id, _ in counts})
    for name, by in (("ibprov_findings", counts), ("ibprov_causes", causes)):
        for section, check_id in judged:
            for severity in _SEVERITIES:
                labels = {CLUSTER: cluster, "section": section, "check": check_id, "severity": severity}
                s.add(name, labels, by[(section, check_id, severity)])
    # the worst first: past the cap, warnings lose their series before critical findings do
    ordered = sorted(found.values(), key=lambda f: (Severity(f["severity"]).rank, f["check"], f["object"]))
    for f in ordered[:MAX_FINDING_SERIES]:
        labels = {
            CLUSTER: cluster,
            "section": f["section"],
            "check": f["check"],
            "severity": f["severity"],
            "object": f["object"],
            **_port_labels(f["object"], f.get("port"), lookup),
        }
        s.add("ibprov_finding_info", labels, 1)
        when = seen.get((f["check"], f["object"]))
        if when is not None:
            s.add("ibprov_finding_first_seen_timestamp_seconds", labels, when.timestamp())
    s.add("ibprov_finding_series_dropped", {CLUSTER: cluster}, max(0, len(ordered) - MAX_FINDING_SERIES))


def _fabric(s: _Samples, cluster: str, report: Mapping[str, Any], links_planned: int | None) -> None:
    fabric = report.get("sections", {}).get("fabric")
    if fabric is None:
        return
    master = fabric.get("facts", {}).get("master_sm")
    if isinstance(master, dict):
        labels = {
            CLUSTER: cluster,
            "object": str(master["object"]),
            "port_guid": str(master["port_guid"]),
            "planned": "true" if master.get("planned") else "false",
        }
        s.add("ibprov_sm_master_info", labels, 1)
    if links_planned is not None:
        s.add("ibprov_links_planned", {CLUSTER: cluster}, links_planned)
    below = {f["object"] for f in report.get("findings", []) if f["check"] in _LINK_CHECKS}
    s.add("ibprov_links_below_plan", {CLUSTER: cluster}, len(below))


def _diff(s: _Samples, cluster: str, diff: RunDiff, lookup: PortLookup | None) -> None:
    for word, found in (("ibprov_findings_new", diff.new), ("ibprov_findings_resolved", diff.resolved)):
        by = Counter(f["severity"] for f in found)
        for severity in _SEVERITIES:
            s.add(word, {CLUSTER: cluster, "severity": severity}, by[severity])
    s.add("ibprov_sm_master_changed", {CLUSTER: cluster}, 1 if diff.master_changed else 0)
    moved = sorted((r for r in diff.rates if r.increase > 0), key=lambda r: (not r.over, -r.rate, r.object))
    for rate in moved[:MAX_RATE_SERIES]:
        labels = {
            CLUSTER: cluster,
            "object": rate.object,
            **_port_labels(rate.object, None, lookup),
            "counter": rate.counter,
        }
        s.add("ibprov_port_errors_per_second", labels, float(f"{rate.rate / 3600:.6g}"))
        if rate.over:
            s.add("ibprov_port_error_limit_exceeded", labels, 1)
    s.add("ibprov_port_counters_over_limit", {CLUSTER: cluster}, len(diff.over))


def _verdict(result: Mapping[str, Any]) -> str:
    """A perftest result as the metrics label it: ``pass`` / ``missed_limit`` (measured against its limit:
    bandwidth below it, latency above it), else the run's own status (``failed``: it did not run through,
    ``skipped``: it could not run here)."""
    value, limit = result.get("value"), result.get("limit")
    if result.get("status") != "ok" or value is None:
        return str(result.get("status") or "failed")
    if limit is None:
        return "pass"
    missed = value > limit if result.get("unit") == "us" else value < limit
    return "missed_limit" if missed else "pass"


def _base(result: Mapping[str, Any]) -> tuple[str, float]:
    """A measured perftest result in Prometheus' base units: (the metric's kind, its value): latency in
    seconds (perftest: us), bandwidth in bytes per second (perftest: Gb/s)."""
    if result["unit"] == "us":
        return "latency_seconds", float(result["value"]) * _US
    return "bandwidth_bytes_per_second", float(result["value"]) * _GBIT


def _perf(s: _Samples, cluster: str, report: Mapping[str, Any]) -> None:
    perf = report.get("sections", {}).get("perf")
    if perf is None:
        return
    results: Sequence[Mapping[str, Any]] = perf.get("facts", {}).get("results", [])
    statuses: Counter[tuple[str, str]] = Counter((r["test"], _verdict(r)) for r in results)
    for (test, status), n in sorted(statuses.items()):
        s.add("ibprov_perf_pairs", {CLUSTER: cluster, "test": test, "status": status}, n)
    measured = [r for r in results if r.get("status") == "ok" and r.get("value") is not None]
    by_test: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in measured:
        kind, value = _base(r)
        by_test[(r["test"], kind)].append(value)
    for (test, kind), values in sorted(by_test.items()):
        for stat, value in (("min", min(values)), ("median", statistics.median(values)), ("max", max(values))):
            s.add(f"ibprov_perf_{kind}", {CLUSTER: cluster, "test": test, "stat": stat}, value)
    every = len(measured) <= MAX_PAIR_SERIES
    for r in measured:
        verdict = _verdict(r)
        if every or verdict == "missed_limit":
            kind, value = _base(r)
            labels = {CLUSTER: cluster, "test": r["test"], "client": r["client"], "server": r["server"]}
            s.add(f"ibprov_perf_pair_{kind}", {**labels, "status": verdict}, value)


def _physical(s: _Samples, cluster: str, report: Mapping[str, Any], lookup: PortLookup | None) -> None:
    """The physical section's totals, and per port (each end of the cable report that was read) its BERs and
    module temperature: bounded, the ports with a finding of that check first, then the worst."""
    physical = report.get("sections", {}).get("physical")
    if physical is None:
        return
    facts = physical.get("facts", {})
    rows: Sequence[Mapping[str, Any]] = facts.get("cables", [])
    c = {CLUSTER: cluster}
    s.add("ibprov_physical_ports_read", c, int(facts.get("ports_read", 0)))
    s.add("ibprov_cables_not_as_planned", c, sum(1 for row in rows if row.get("status") == "not as planned"))
    ends: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        for end in row.get("ends", []):
            if end.get("read"):
                ends.setdefault(str(end["port"]), end)
    flagged: dict[str, set[str]] = defaultdict(set)
    for f in report.get("findings", []):
        flagged[f["check"]].add(f["object"])
    for name, key, check, least in _PHY_SERIES:
        values = [
            (port, float(end[key]))
            for port, end in ends.items()
            if isinstance(end.get(key), int | float) and end[key] > least
        ]
        found = flagged[check]
        values.sort(key=lambda pv: (pv[0] not in found, -pv[1], pv[0]))
        for port, value in values[:MAX_PHY_SERIES]:
            s.add(name, {CLUSTER: cluster, "object": port, **_port_labels(port, None, lookup)}, value)


def openmetrics(
    outcome: RunOutcome,
    report: Mapping[str, Any] | None,
    *,
    diff: RunDiff | None = None,
    seen: Mapping[tuple[str, str], datetime] | None = None,
    links_planned: int | None = None,
    ports: PortLookup | None = None,
) -> str:
    """The metrics of a run: ``outcome`` always; ``report`` (this run's, or for a failed run the last one
    kept) its findings, checks, fabric, perf and physical layer; ``diff`` against the previous run and ``seen``
    (first-seen times) when there is a history; ``links_planned``: the spec's cable count; ``ports``: the port
    an object names, for the series of ports that report.json does not identify itself (counters, BERs)."""
    s = _Samples()
    c = {CLUSTER: outcome.cluster}
    s.add("ibprov_verify_last_run_timestamp_seconds", c, round(outcome.ended.timestamp(), 3))
    s.add("ibprov_verify_last_run_duration_seconds", c, round(outcome.duration_seconds, 3))
    s.add("ibprov_verify_last_run_exit_code", c, outcome.exit_code)
    s.add("ibprov_verify_last_run_success", c, 1 if outcome.success else 0)
    if report is not None:
        _findings(s, outcome.cluster, report, seen or {}, ports)
        _fabric(s, outcome.cluster, report, links_planned)
        _perf(s, outcome.cluster, report)
        _physical(s, outcome.cluster, report, ports)
    if diff is not None:
        _diff(s, outcome.cluster, diff, ports)
    return _text(s)


def write_metrics(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (a temporary file beside it, renamed), mode 0644."""
    if path.suffix != ".prom":
        raise IbprovError(f"--metrics {path}: node_exporter's textfile collector reads only files ending in .prom")
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # dot: the collector skips it
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise IbprovError(f"cannot write {path}: {exc.strerror or exc}") from None


def run_outcome(report: Mapping[str, Any]) -> RunOutcome:
    """The outcome of a run that produced a report."""
    return RunOutcome(
        str(report["cluster"]), int(report["exit_code"]), ended(report), float(report["duration_seconds"])
    )
