#!/usr/bin/env python3
"""Benchmark `ibprov render` on the 10,000-node fat tree of bench/validate_10k.py (target: <= 3 s).

Times the whole command as a subprocess (start-up, load and check the spec, render, write ~10,000
files) into a fresh directory and again into an up-to-date one, best of N and median, for both spec
variants (generator / explicit). Partitions need port GUIDs, so the run uses --synthetic-guids.

Usage: bench/render_10k.py [--runs 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_10k import explicit_spec, generator_spec, machine

TARGET_S = 3.0
IBPROV = [sys.executable, "-m", "ibprov"]


def _time(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    info = machine()
    print(f"machine: {info}")
    with tempfile.TemporaryDirectory(prefix="ibprov-bench-render-") as tmp:
        work = Path(tmp)
        gen = generator_spec()
        for name, text in (("generator", gen), ("explicit", explicit_spec(gen))):
            spec = work / f"{name}.yaml"
            spec.write_text(text)
            fresh, again = [], []
            for i in range(args.runs):
                out = work / f"out-{name}-{i}"
                cmd = [*IBPROV, "render", str(spec), "-o", str(out), "--synthetic-guids"]
                fresh.append(_time(cmd))
                again.append(_time(cmd))
                shutil.rmtree(out)
            for label, values in (("fresh directory", fresh), ("up to date", again)):
                best, median = min(values), statistics.median(values)
                print(
                    f"render {name:9s} {label:15s}: best {best:.2f} s, median {median:.2f} s, "
                    f"ratio to the {TARGET_S:g} s target {median / TARGET_S:.2f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
