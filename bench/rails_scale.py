#!/usr/bin/env python3
"""Benchmark a rail-optimized AI-cluster spec: 12,500 nodes x 8 HCAs (100,000 endpoints), generator form.

The spec is what `ibprov design --nodes 12500 --radix 128 --rails 8` writes (three levels of 128-port
switches, scalable units of 64 nodes on 8 leaves, one per rail; ~300,000 cables the generator expands),
plus one partition of every node (so render writes a P_Key entry for each of the 100,000 ports).

Targets (issue 13): `ibprov validate` <= 2 s and `ibprov render` <= 4 s. Each is timed end to end as a
subprocess, best and median of N runs, and shown with its ratio to the floor: a bare YAML load of the
same file (`python -c "yaml.load(f, CSafeLoader)"`, also a subprocess, start-up included). Peak RSS
(maximum resident set size of the subprocess, from wait4) is recorded for each.

Usage:
    bench/rails_scale.py [--runs 3] [--update-docs] [--profile validate|render]
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


def _run(cmd: list[str]) -> tuple[float, int]:
    """Wall time (s) and peak RSS (KiB) of one subprocess."""
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
    return elapsed, usage.ru_maxrss


def _measure(
    make_cmd: Callable[[int], list[str]], runs: int, cleanup: Callable[[int], object] | None = None
) -> dict[str, float]:
    times, rss = [], []
    for i in range(runs):
        cmd = make_cmd(i)
        t, m = _run(cmd)
        times.append(t)
        rss.append(m)
        if cleanup is not None:
            cleanup(i)
    return {"best": min(times), "median": statistics.median(times), "rss_mib": max(rss) / 1024}


def run(runs: int) -> str:
    info = machine()  # before the run, for the load average
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="ibprov-bench-rails-") as tmp:
        spec = Path(tmp) / "rails12k.yaml"
        text = rails_spec()
        spec.write_text(text)
        floor = _measure(
            lambda _i: [py, "-c", f"import yaml; yaml.load(open({str(spec)!r}), Loader=yaml.CSafeLoader)"], runs
        )
        results = {
            "validate": _measure(lambda _i: [py, "-m", "ibprov", "validate", "-q", str(spec)], runs),
            "render": _measure(
                lambda i: [py, "-m", "ibprov", "render", str(spec), "-o", f"{tmp}/out{i}", "--synthetic-guids"],
                runs,
                lambda i: shutil.rmtree(f"{tmp}/out{i}"),
            ),
        }
        size = len(text) / 1e6
    info["Load average (1 min) after the run"] = f"{os.getloadavg()[0]:.2f}"
    rows = [
        f"| bare YAML load (the floor) | {floor['best']:.2f} s | {floor['median']:.2f} s | 1.0 | | "
        f"{floor['rss_mib']:.0f} MiB |"
    ]
    for name, r in results.items():
        rows.append(
            f"| `ibprov {name}` | {r['best']:.2f} s | {r['median']:.2f} s | {r['median'] / floor['median']:.1f} | "
            f"{r['median'] / TARGETS[name]:.0%} of {TARGETS[name]:g} s | {r['rss_mib']:.0f} MiB |"
        )
        print(f"{name}: best {r['best']:.2f}s median {r['median']:.2f}s rss {r['rss_mib']:.0f} MiB", file=sys.stderr)
    out = [
        f"Measured {time.strftime('%Y-%m-%d')} with `bench/rails_scale.py --runs {runs}` (best and median of "
        f"{runs} runs, each a subprocess).",
        "",
        "| Machine | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in info.items()],
        "",
        f"Spec: {NODES:,} nodes x {RAILS} HCAs, `ibprov design --nodes {NODES} --radix {RADIX} --rails {RAILS}` "
        f"(rail-optimized, generator form) plus one partition of all nodes; {size:.1f} MB of YAML.",
        "",
        "| Command | best | median | median / floor | median / target | peak RSS |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    return "\n".join(out)


def profile(what: str) -> None:
    from ibprov.render import render_files
    from ibprov.spec import load_spec_text

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
    args = ap.parse_args(argv)
    if args.profile:
        profile(args.profile)
        return 0
    section = run(args.runs)
    print(section)
    if args.update_docs:
        doc = DOCS.read_text(encoding="utf-8")
        DOCS.write_text(replace_block(doc, BEGIN, END, section, where=DOCS), encoding="utf-8")
        print(f"updated {DOCS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
