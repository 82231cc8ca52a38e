#!/usr/bin/env python3
"""Benchmark the day-2 metrics of a 10,000-node fabric (issue 27): series written and the time to write them.

The fabric is bench/validate_10k.py's 10,000-node fat tree (640 switches, 17,400 cables, 34,800 ports). Two
runs of a history are made from it as report.json dicts, the second against the first:

* a bad day: 1 % of cables below plan, 0.5 % of ports over a counter threshold, 2 % of ports whose counters
  moved since the run before, one rogue SM, a quick perftest schedule (5,000 pairs, 1 % failing);
* the worst case: every port with a finding and every port's 13 counters moved.

Measured: series per metric, the file's size, ``openmetrics`` best/median of N, ``diff_runs`` and
``first_seen`` over a 90-run history (read from disk as `verify --history` reads it). Baseline: an exporter
that writes one series per port and counter (the per-cable counter exporters: 34,800 x 13 series), the
cardinality a site's Prometheus already carries for the same fabric; the target: ibprov's series at most
5 % of that on the bad day, and the metrics written in <= 1 s.

Usage: bench/metrics_10k.py [--runs 5] [--update-docs]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from docblock import replace_block
from validate_10k import generator_spec, machine

from ibprov.clusterspec import load_spec_text
from ibprov.clusterspec.model import ERROR_RATES_PER_HOUR_DEFAULT
from ibprov.history.diff import COUNTER_MAX, diff_runs, first_seen
from ibprov.history.metrics import openmetrics, run_outcome
from ibprov.history.store import History

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
TARGET_S = 1.0
BEGIN = "<!-- BEGIN_BENCH_METRICS -->"
END = "<!-- END_BENCH_METRICS -->"
TARGET_SHARE = 0.05
COUNTERS = sorted(COUNTER_MAX)


def _report(ports: list[str], links: list[str], ended: datetime, worst: bool, seed: int) -> dict[str, Any]:
    """A report.json dict of a verify --fabric --perf run of the fabric (what metrics and diff read)."""
    findings, checks = [], []
    below = links if worst else links[::100]
    hot = ports if worst else ports[::200]
    moved = ports if worst else ports[::50]
    for obj in below:
        findings.append(_f("link.width", "error", obj, "4x HDR", "1x HDR"))
    for obj in hot:
        findings.append(_f("counters.threshold", "error", obj, "SymbolErrorCounter <= 10", "SymbolErrorCounter = 99"))
    findings.append(_f("sm.rogue", "security", ports[7], "no subnet manager", "STANDBY SM with priority 0"))
    for check, section, objects in (("link.width", "fabric", links), ("counters.threshold", "fabric", ports)):
        failed = sum(1 for f in findings if f["check"] == check)
        checks.append(_c(check, section, len(objects), failed))
    checks += [_c(f"check.n{i}", "fabric", 100, 0) for i in range(20)]
    checks.append(_c("sm.rogue", "fabric", 1, 1))
    counters = [{"object": p, "counters": {c: 1 + seed for c in (COUNTERS if worst else COUNTERS[:2])}} for p in moved]
    pairs = [
        {"client": f"n{i:05d}/mlx5_0:1", "server": f"n{i + 1:05d}/mlx5_0:1", "test": "ib_write_bw", "round": 0,
         "status": "ok", "value": 170.0 if i % 100 == 0 else 180.0 + i % 7, "unit": "Gb/s", "limit": 180.0,
         "reason": "", "attempts": 1, "seconds": 2.0}
        for i in range(0, 10000, 2)
    ]  # fmt: skip
    master = {"object": "sm01 mlx5_0 port 1", "port_guid": "0x0002c90300000001", "lid": 1, "priority": 15,
              "state": "MASTER", "planned": True}  # fmt: skip
    started = ended - timedelta(seconds=300)
    return {
        "cluster": "big",
        "started": started.isoformat().replace("+00:00", "Z"),
        "duration_seconds": 300.0,
        "exit_code": 1,
        "checks": checks,
        "findings": findings,
        "sections": {
            "fabric": {"facts": {"master_sm": master, "counters": counters}},
            "perf": {"facts": {"results": pairs}},
        },
    }


def _f(check: str, severity: str, obj: str, expected: str, observed: str) -> dict[str, str]:
    return {"check": check, "severity": severity, "object": obj, "expected": expected, "observed": observed, "fix": ""}


def _c(check: str, section: str, objects: int, findings: int) -> dict[str, Any]:
    return {"id": check, "section": section, "title": check, "status": "fail" if findings else "pass",
            "objects": objects, "findings": findings, "caveats": [], "skipped": []}  # fmt: skip


def _time(runs: int, fn: Callable[[], object]) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def _series(text: str) -> Counter[str]:
    return Counter(line.split("{", 1)[0] for line in text.splitlines() if line and not line.startswith("#"))


def run(runs: int) -> str:
    info = machine()
    loaded = load_spec_text(generator_spec(), "10k.yaml")
    links = sorted({str(link.a) for link in loaded.topology.links})
    ports = sorted({str(e) for link in loaded.topology.links for e in (link.a, link.b)})
    baseline = len(ports) * len(COUNTERS)
    now = datetime(2026, 12, 6, 12, tzinfo=UTC)
    rows = []
    for name, worst in (("bad day", False), ("worst case", True)):
        old = _report(ports, links, now - timedelta(hours=6), worst, 0)
        new = _report(ports, links, now, worst, 1)
        diff = diff_runs(old, new, ERROR_RATES_PER_HOUR_DEFAULT)

        def write(new: dict[str, Any] = new, diff: Any = diff) -> str:
            return openmetrics(run_outcome(new), new, diff=diff, links_planned=len(loaded.topology.links))

        text = write()
        series = _series(text)
        best, median = _time(runs, write)
        dbest, dmedian = _time(runs, lambda old=old, new=new: diff_runs(old, new, ERROR_RATES_PER_HOUR_DEFAULT))
        total = sum(series.values())
        top = ", ".join(f"`{k}` {v}" for k, v in series.most_common(3))
        rows.append(
            f"| {name} | {len(new['findings'])} | {len(diff.rates)} | {total} | {top} | {len(text) / 1e6:.1f} MB | "
            f"{best:.2f} s | {median:.2f} s | {dbest:.2f} s / {dmedian:.2f} s | {total / baseline:.1%} | "
            f"{median / TARGET_S:.0%} |"
        )
    with tempfile.TemporaryDirectory(prefix="ibprov-bench-") as tmp:
        history = History(Path(tmp), "big")
        for i in range(90):
            history.save(_report(ports, links, now - timedelta(hours=6 * (90 - i)), False, i), keep=90)
        kept = history.runs()
        newest = kept[-1].report()

        def walk() -> dict[Any, Any]:
            return first_seen(newest, (r.report() for r in reversed(kept[:-1])))

        fbest, fmedian = _time(max(1, runs // 2), walk)
        size = sum(f.stat().st_size for f in Path(tmp).rglob("report.json")) / 1e6
    lines = [
        f"Fabric: {len(ports)} ports on {len(links)} cables (bench/validate_10k.py's 10,000-node fat tree); "
        f"baseline: one series per port and counter, {baseline} series. Targets: series <= "
        f"{TARGET_SHARE:.0%} of the baseline on a bad day, metrics written in <= {TARGET_S:g} s.",
        "",
        "| Machine | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in info.items()),
        "",
        "| Run | Findings | Counters moved | Series | Largest metrics | File | `openmetrics` best | median | "
        "`diff_runs` best / median | Series / baseline | `openmetrics` median / 1 s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"`first_seen` of the bad day's {len(newest['findings'])} findings over a 90-run history ({size:.0f} MB of "
        f"report.json on disk, each finding present in every run: the walk reads all 89 earlier runs): "
        f"best {fbest:.1f} s, median {fmedian:.1f} s.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--update-docs", action="store_true")
    args = parser.parse_args()
    text = run(args.runs)
    print(text)
    if args.update_docs:
        doc = DOCS.read_text(encoding="utf-8")
        DOCS.write_text(replace_block(doc, BEGIN, END, text, where=DOCS), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
