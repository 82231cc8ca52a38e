"""Benchmark: start the twin of the 1,024-node fat tree and time ibsim start and OpenSM to SUBNET UP.

Run: .venv/bin/python bench/twin_1024.py   (needs ibsim-utils, libumad2sim0, opensm)
"""

from __future__ import annotations

import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fat_tree_1024 import spec_text

from ibprov.clusterspec import load_spec_text
from ibprov.twin.bringup import start_twin, write_twin
from ibprov.twin.sim import start_sim


def main() -> None:
    loaded = load_spec_text(spec_text(), "bench1024.yaml")
    runs = []
    for _ in range(3):
        with tempfile.TemporaryDirectory(prefix="ibprov-bench-") as tmp:
            work = Path(tmp)
            t0 = time.perf_counter()
            netfile, _configs, _twin = write_twin(loaded, work / "files")
            t_files = time.perf_counter() - t0
            sim = start_sim(netfile, work / "sim-only")
            t_sim = time.perf_counter() - t0 - t_files
            sim.stop()
            t1 = time.perf_counter()
            run = start_twin(loaded, work / "full")
            try:
                up = run.master.wait_for("SUBNET UP", 600)
                t_up = time.perf_counter() - t1
            finally:
                run.stop()
            assert up, "SUBNET UP not reached"
            runs.append((t_files, t_sim, t_up))
    cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True)
    print(
        f"machine: {platform.node()} {cpu.stdout.strip()} ({subprocess.getoutput('nproc')} cores), "
        f"Python {platform.python_version()}"
    )
    print(
        f"fabric: {len(loaded.spec.nodes)} nodes, {len(loaded.topology.switches)} switches, "
        f"{len(loaded.topology.links)} links"
    )
    for name, idx in (
        ("render twin files", 0),
        ("ibsim start (parse + ready)", 1),
        ("twin start to SUBNET UP (ibsim + OpenSM ftree)", 2),
    ):
        values = sorted(r[idx] for r in runs)
        print(f"{name}: median {values[len(values) // 2]:.2f} s, best {values[0]:.2f} s (n={len(values)})")


if __name__ == "__main__":
    main()
