#!/usr/bin/env python3
"""Benchmark a rail-optimized AI-cluster spec: 12,500 nodes x 8 HCAs (100,000 endpoints), generator form.

The spec is what `ibprov design --nodes 12500 --radix 128 --rails 8` writes (three levels of 128-port
switches, scalable units of 64 nodes on 8 leaves, one per rail; ~300,000 cables the generator expands),
plus one partition of every node (so render writes a P_Key entry for each of the 100,000 ports).

Targets (issue 13): `ibprov validate` <= 2 s and `ibprov render` <= 4 s. Each is timed end to end as a
subprocess, best and median of N runs, and shown with its ratio to the floor: a bare YAML load of the
same file (`python -c "yaml.load(f, CSafeLoader)"`, also a subprocess, start-up included). Peak RSS
(maximum resident set size of the subprocess, from wait4) is recorded for each.

Each row also gives the CPU time (user + system, children included) and the 1-minute load average when the
runs started: the machine is shared, and the wall times follow its load; ``--below`` waits for a quieter
moment before each run. The peak PSS of render and the child processes it forks is sampled in one more run.

Usage:
    bench/rails_scale.py [--runs 3] [--below 2.5 [--patience 300]] [--update-docs] [--profile validate|render]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "bench"))

from docblock import replace_block  # noqa: E402
from validate_10k import machine  # noqa: E402

from ibprov.design import design, spec_text  # noqa: E402

DOCS = REPO / "docs" / "benchmarks.md"
BEGIN = "<!-- BEGIN_BENCH_RAILS -->"
END = "<!-- END_BENCH_RAILS -->"
NODES, RAILS, RADIX = 12_500, 8, 128
TARGETS = {"validate": 2.0, "render": 4.0}
PARTITION = "partitions:\n  - {name: train, pkey: 0x0010, defmember: full, members: [{group: compute}]}\n"


def rails_spec() -> str:
    return spec_text(design(NODES, RADIX, rails=RAILS), cluster="rails12k") + PARTITION


def _wait_for_load(below: float | None, patience: float) -> float:
    """Wait (at most ``patience`` seconds) until the 1-minute load average is below ``below``; the load then."""
    deadline = time.monotonic() + patience
    while below is not None and os.getloadavg()[0] >= below and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def _run(cmd: list[str]) -> tuple[float, int, float]:
    """Wall time (s), peak RSS (KiB) and CPU time (user + system, s) of one subprocess. Both come from wait4:
    they include the children it waited for (render's), and the peak is that of the largest process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{err[:2000]}")
    if proc.stderr:
        proc.stderr.close()
    return elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def _pss_kib(pid: int) -> int:
    """Proportional set size of ``pid`` and its descendants (shared pages counted once in all)."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            total += next((int(line.split()[1]) for line in rollup if line.startswith("Pss:")), 0)
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as children:
                total += sum(_pss_kib(int(child)) for child in children.read().split())
    except (OSError, ValueError):
        pass  # the process ended while being read
    return total


def peak_pss(cmd: list[str]) -> float:
    """Peak PSS (MiB) of ``cmd`` and its children, sampled every 20 ms (an untimed run: sampling costs CPU)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _pss_kib(proc.pid))
        time.sleep(0.02)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return peak / 1024


def _measure(
    make_cmd: Callable[[int], list[str]],
    runs: int,
    cleanup: Callable[[int], object] | None = None,
    *,
    below: float | None = None,
    patience: float = 0.0,
) -> dict[str, float]:
    times, rss, cpu, loads = [], [], [], []
    for i in range(runs):
        cmd = make_cmd(i)
        loads.append(_wait_for_load(below, patience))
        t, m, c = _run(cmd)
        times.append(t)
        rss.append(m)
        cpu.append(c)
        if cleanup is not None:
            cleanup(i)
    return {
        "best": min(times),
        "median": statistics.median(times),
        "rss_mib": max(rss) / 1024,
        "cpu": statistics.median(cpu),
        "load_min": min(loads),
        "load_max": max(loads),
    }


def run(runs: int, below: float | None = None, patience: float = 0.0) -> str:
    info = machine()  # before the run, for the load average
    py = sys.executable
    waits = {"below": below, "patience": patience}
    with tempfile.TemporaryDirectory(prefix="ibprov-bench-rails-") as tmp:
        spec = Path(tmp) / "rails12k.yaml"
        text = rails_spec()
        spec.write_text(text)
        floor = _measure(
            lambda _i: [py, "-c", f"import yaml; yaml.load(open({str(spec)!r}), Loader=yaml.CSafeLoader)"],
            runs,
            **waits,
        )
        render_cmd = [py, "-m", "ibprov", "render", str(spec), "--synthetic-guids", "-o"]
        results = {
            "validate": _measure(lambda _i: [py, "-m", "ibprov", "validate", "-q", str(spec)], runs, **waits),
            "render": _measure(
                lambda i: [*render_cmd, f"{tmp}/out{i}"], runs, lambda i: shutil.rmtree(f"{tmp}/out{i}"), **waits
            ),
        }
        render_pss = peak_pss([*render_cmd, f"{tmp}/out-pss"])
        size = len(text) / 1e6
    info["Load average (1 min) after the run"] = f"{os.getloadavg()[0]:.2f}"
    rows = [
        f"| bare YAML load (the floor) | {floor['best']:.2f} s | {floor['median']:.2f} s | 1.0 | | "
        f"{floor['cpu']:.2f} s | {floor['rss_mib']:.0f} MiB | {_loads(floor)} |"
    ]
    for name, r in results.items():
        rows.append(
            f"| `ibprov {name}` | {r['best']:.2f} s | {r['median']:.2f} s | {r['median'] / floor['median']:.1f} | "
            f"{r['median'] / TARGETS[name]:.0%} of {TARGETS[name]:g} s | {r['cpu']:.2f} s | {r['rss_mib']:.0f} MiB | "
            f"{_loads(r)} |"
        )
        print(
            f"{name}: best {r['best']:.2f}s median {r['median']:.2f}s cpu {r['cpu']:.2f}s rss {r['rss_mib']:.0f} MiB "
            f"load {_loads(r)}",
            file=sys.stderr,
        )
    waited = (
        f", each run started once the 1-minute load average was below {below:g} or after {patience:g} s"
        if below
        else ""
    )
    out = [
        f"Measured {time.strftime('%Y-%m-%d')} with `bench/rails_scale.py --runs {runs}"
        f"{f' --below {below:g}' if below else ''}` (best and median of {runs} runs, each a subprocess{waited}).",
        "",
        "| Machine | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in info.items()],
        "",
        f"Spec: {NODES:,} nodes x {RAILS} HCAs, `ibprov design --nodes {NODES} --radix {RADIX} --rails {RAILS}` "
        f"(rail-optimized, generator form) plus one partition of all nodes; {size:.1f} MB of YAML.",
        "",
        "| Command | best | median | median / floor | median / target | CPU (user + sys, median) | peak RSS | "
        "load (1 min) at the runs' start |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"CPU and peak RSS come from `wait4` and include the child processes render forks (peak RSS is that of the "
        f"largest process). Peak PSS of render and its children together (shared pages counted once; one more "
        f"run, sampled every 20 ms): {render_pss:.0f} MiB.",
        "",
    ]
    return "\n".join(out)


def _loads(r: dict[str, float]) -> str:
    low, high = f"{r['load_min']:.1f}", f"{r['load_max']:.1f}"
    return low if low == high else f"{low}-{high}"


def profile(what: str) -> None:
    from ibprov.clusterspec import load_spec_text
    from ibprov.render import parallel, render_files

    parallel.can_fork = lambda: False  # all of render in this process, where the profiler sees it

    text = rails_spec()
    prof = cProfile.Profile()
    if what == "validate":
        prof.enable()
        load_spec_text(text, "rails12k.yaml")
    else:
        loaded = load_spec_text(text, "rails12k.yaml")
        prof.enable()
        render_files(loaded, synthetic_guids=True)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(30)
    print(buf.getvalue())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (default 3)")
    ap.add_argument("--update-docs", action="store_true", help="rewrite the rails section of docs/benchmarks.md")
    ap.add_argument("--profile", choices=["validate", "render"], help="cProfile one in-process run")
    ap.add_argument("--below", type=float, help="start each run once the 1-minute load average is below this")
    ap.add_argument("--patience", type=float, default=300.0, help="but wait at most this long (s, default 300)")
    args = ap.parse_args(argv)
    if args.profile:
        profile(args.profile)
        return 0
    section = run(args.runs, args.below, args.patience)
    print(section)
    if args.update_docs:
        doc = DOCS.read_text(encoding="utf-8")
        DOCS.write_text(replace_block(doc, BEGIN, END, section, where=DOCS), encoding="utf-8")
        print(f"updated {DOCS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
