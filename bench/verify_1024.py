"""Benchmark: `ibprov verify --fabric` on the 1,024-node twin against ibnetdiscover + ibqueryerrors alone.

Both are measured in the same run on the same fabric, interleaved, median of 5 (target: ratio <= 1.5),
then verify is profiled in-process (time per collection batch and for the checks). With --append the
result goes into docs/benchmarks.md under "verify --fabric" (between its markers).

Run: .venv/bin/python bench/verify_1024.py [--append]   (needs ibsim-utils, libumad2sim0, opensm)
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "scripts"))

from docblock import replace_block  # noqa: E402
from fat_tree_1024 import spec_text  # noqa: E402

from ibprov.clusterspec import LoadedSpec, load_spec  # noqa: E402
from ibprov.identity.guids import GuidBook  # noqa: E402
from ibprov.probes.runner import CommandResult, LocalRunner  # noqa: E402
from ibprov.twin.bringup import TwinRun, hca_id, start_twin  # noqa: E402
from ibprov.verify.fabric.collect import collect  # noqa: E402
from ibprov.verify.fabric.plan import build_plan  # noqa: E402
from ibprov.verify.fabric.section import check_observation  # noqa: E402

RUNS = 5


def start(loaded: LoadedSpec, workdir: Path) -> TwinRun:
    """The twin with its SMs started one after the other (master first, standby once it is up)."""
    run = start_twin(loaded, workdir, start_sms=False)
    try:
        for inst in sorted(loaded.spec.subnet_manager.instances, key=lambda i: -i.priority):
            conf = workdir / "opensm" / inst.node / f"opensm.mlx5_0-{inst.port}.conf"
            sm = run.sim.start_opensm(hca_id(inst.node, "mlx5_0"), conf, name=f"opensm-{inst.node}")
            settled = "SUBNET UP" if not run.sms else "Entering STANDBY state"
            run.sms.append((inst.node, inst.priority, sm))
            if not sm.wait_for(settled, 900):
                raise SystemExit(f"{inst.node}: no '{settled}' in {sm.log}")
    except BaseException:
        run.stop()
        raise
    return run


def timed(argvs: Sequence[Sequence[str]], env: dict[str, str], cwd: Path) -> tuple[float, list[int]]:
    t0 = time.perf_counter()
    codes = [subprocess.run(list(a), env=env, cwd=cwd, capture_output=True, check=False).returncode for a in argvs]
    return time.perf_counter() - t0, codes


class TimingRunner(LocalRunner):
    """A LocalRunner that records how long each batch took and how many commands it ran."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.batches: list[tuple[int, float]] = []

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        t0 = time.perf_counter()
        out = super().run_batch(commands, parallel=parallel)
        self.batches.append((len(commands), time.perf_counter() - t0))
        return out


def profile(loaded: LoadedSpec, env: dict[str, str], workers: int) -> dict[str, float]:
    runner = TimingRunner(env=env, workers=workers)
    try:
        t0 = time.perf_counter()
        obs = collect(runner, qos=loaded.spec.qos.enabled)
        t1 = time.perf_counter()
        plan = build_plan(loaded, GuidBook.for_spec(loaded, allow_synthetic=True, twin=True), obs.nodes.values())
        report = check_observation(plan, obs)
        t2 = time.perf_counter()
    finally:
        runner.close()
    if report.findings:
        raise SystemExit(f"findings on the clean twin: {[f.text for f in report.findings][:5]}")
    (n1, b1), (n2, b2), (n3, b3) = runner.batches
    return {
        "batch1": b1,
        "batch2": b2,
        "n2": n2,
        "batch3": b3,
        "per_port": n3,
        "collect": t1 - t0,
        "checks": t2 - t1,
        "n1": n1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--append", action="store_true", help="append the result to docs/benchmarks.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ibprov-bench-verify-") as tmp:
        work = Path(tmp)
        spec = work / "bench1024.yaml"
        spec.write_text(spec_text())
        loaded = load_spec(spec)
        run = start(loaded, work / "twin")
        try:
            sm_hosts = {sm.sim_host for _n, _p, sm in run.sms}
            probe = sorted(h for h in run.sim_hosts.values() if h not in sm_hosts)[0]
            env = run.sim.env(probe)
            clients = work / "clients"
            clients.mkdir()
            ibprov = [str(Path(sys.executable).parent / "ibprov"), "verify", "--fabric", str(spec), "--synthetic-guids"]
            baseline, verify = [], []
            for _ in range(RUNS):
                t, codes = timed([["ibnetdiscover"], ["ibqueryerrors"]], env, clients)
                if codes[0] != 0 or codes[1] not in (0, 1):
                    raise SystemExit(f"ibnetdiscover / ibqueryerrors exited {codes}")
                baseline.append(t)
                t, codes = timed([ibprov], env, clients)
                if codes != [0]:
                    raise SystemExit(f"verify exited {codes[0]} on the clean twin")
                verify.append(t)
            prof = {w: profile(loaded, env, w) for w in (1, 6)}
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import ibprov.cli, ibprov.verify.fabric"], check=True)
            imports = time.perf_counter() - t0
        finally:
            run.stop()
    b, v = statistics.median(baseline), statistics.median(verify)
    cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True)
    machine = f"{platform.node()}: {cpu.stdout.strip() or platform.processor()}, {subprocess.getoutput('nproc')} cores"
    lines = [
        f"machine: {machine}; Python {platform.python_version()}; {date.today().isoformat()}",
        f"fabric: {len(loaded.spec.nodes)} nodes, {len(loaded.topology.switches)} switches, "
        f"{len(loaded.topology.links)} links (bench/fat_tree_1024.py), 2 OpenSMs",
        f"ibnetdiscover + ibqueryerrors: median {b:.2f} s ({', '.join(f'{x:.2f}' for x in baseline)})",
        f"ibprov verify --fabric:        median {v:.2f} s ({', '.join(f'{x:.2f}' for x in verify)})",
        f"ratio: {v / b:.2f} (target <= 1.5)",
        f"python start + imports: {imports:.2f} s",
    ]
    for w, p in prof.items():
        lines.append(
            f"in-process, {w} worker(s): batch 1 (discovery + cache) {p['batch1']:.2f} s, "
            f"batch 2 ({p['n2']:.0f} concurrent: link info, counters, sminfo, PKey probe) {p['batch2']:.2f} s, "
            f"batch 3 ({p['per_port']:.0f} per-port commands) {p['batch3']:.2f} s, "
            f"plan + checks + report {p['checks']:.2f} s"
        )
    print("\n".join(lines))
    if args.append:
        print(f"wrote {update_docs(lines)}")


BEGIN, END = "<!-- BEGIN_BENCH_VERIFY -->", "<!-- END_BENCH_VERIFY -->"
SECTION = f"""## verify --fabric

`ibprov verify --fabric` (no soak) on the 1,024-node twin must take at most **1.5 x** the time of
`ibnetdiscover` + `ibqueryerrors` alone on the same fabric. `bench/verify_1024.py` starts the twin of
`bench/fat_tree_1024.py` (ibsim + both planned OpenSMs), times both as subprocesses, interleaved, median
of 5 (interpreter start-up and spec loading included), then profiles verify in process. Run it with
`.venv/bin/python bench/verify_1024.py --append` (replaces the block between the markers).

{BEGIN}
{END}
"""


def update_docs(lines: list[str]) -> Path:
    doc = ROOT / "docs" / "benchmarks.md"
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    if BEGIN not in text:
        text = text.rstrip("\n") + "\n\n" + SECTION
    doc.write_text(replace_block(text, BEGIN, END, "```\n" + "\n".join(lines) + "\n```\n", where=doc))
    return doc


if __name__ == "__main__":
    main()
