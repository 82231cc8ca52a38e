#!/usr/bin/env python3
"""Run a test command again and again with every core of the machine busy, and stop at the first failure.

Issue 26 asks that the twin's waits hold on a loaded machine. This starts one busy-looping process per core
(or ``--hogs N``) at the tests' own priority, runs the command ``--times`` times in a row beside them, and
stops the hogs (by their pids: only what it started). Each run's exit code and duration go to the console and
to ``--log`` (one line per run); the command's own output goes to a file per run beside the log.

Usage:
    scripts/under_load.py [--times 10] [--hogs N] [--log out/under-load/runs.log] -- CMD...

Example (what docs/verify.md records, under "ibsim's client slots, and waits on a loaded machine"):
    scripts/under_load.py --times 10 -- .venv/bin/pytest -q -m sim tests/sim/test_verify_faults.py
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _spin() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--times", type=int, default=10, help="runs in a row (default 10)")
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 1, help="busy processes (default: one per core)")
    ap.add_argument("--log", type=Path, default=REPO / "out" / "under-load" / "runs.log")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command given (after --)")
    args.log.parent.mkdir(parents=True, exist_ok=True)
    hogs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.hogs)]
    for hog in hogs:
        hog.start()
    stamp = time.strftime("%Y%m%dT%H%M%S")
    header = f"{stamp} {args.hogs} hogs on {os.cpu_count()} cores, {args.times} runs of: {' '.join(command)}"
    print(header, flush=True)
    with args.log.open("a") as log:
        log.write(header + "\n")
    rc = 0
    try:
        for n in range(1, args.times + 1):
            out = args.log.parent / f"{stamp}-run{n:02d}.out"
            started = time.monotonic()
            with out.open("wb") as sink:
                rc = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, check=False).returncode
            line = f"run {n}/{args.times}: exit {rc} in {time.monotonic() - started:.0f} s ({out.name})"
            print(line, flush=True)
            with args.log.open("a") as log:
                log.write(line + "\n")
            if rc != 0:
                break
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join(5)
    return rc


if __name__ == "__main__":
    sys.exit(main())
