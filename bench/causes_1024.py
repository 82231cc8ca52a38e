"""Benchmark and proof: one spine of the 1,024-node twin loses every cable; `verify --fabric` then finds a
finding per lost cable and the switch gone, and the cause graph must leave exactly one cause, the switch,
explaining every other finding. Times the cause graph against the section it explains (target: the graph
costs under 5 % of verify --fabric). With --update-docs the result goes into docs/benchmarks.md (between
``<!-- causes:begin -->`` and ``<!-- causes:end -->``).

Run: .venv/bin/python bench/causes_1024.py [--update-docs]   (needs ibsim-utils, libumad2sim0, opensm)
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "scripts"))

from docblock import replace_block  # noqa: E402
from fat_tree_1024 import spec_text  # noqa: E402
from verify_1024 import start  # noqa: E402

from ibprov.clusterspec import load_spec_text  # noqa: E402
from ibprov.probes.runner import LocalRunner  # noqa: E402
from ibprov.report.model import Report  # noqa: E402
from ibprov.twin.bringup import hca_id  # noqa: E402
from ibprov.twinnet.netfile import switch_id  # noqa: E402
from ibprov.verify.causes import explain, explain_report, fabric_of  # noqa: E402
from ibprov.verify.fabric.section import verify_fabric  # noqa: E402

SPINE = "spine08"
RUNS = 5
DOC = ROOT / "docs" / "benchmarks.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update-docs", action="store_true", help="write the result into docs/benchmarks.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ibprov-bench-causes-") as tmp:
        spec = Path(tmp) / "cluster.yaml"
        spec.write_text(spec_text())
        loaded = load_spec_text(spec.read_text(), str(spec))
        ports = sorted(e.port for link in loaded.topology.links for e in (link.a, link.b) if e.device == SPINE)
        run = start(loaded, Path(tmp) / "twin")
        try:
            for port in ports:
                run.sim.console(f'Unlink "{switch_id(SPINE)}"[{port}]')
            time.sleep(5)  # the SM's next sweep; verify reads the fabric as it is either way
            runner = LocalRunner(env=run.sim.env(hca_id("node0003", "mlx5_0")), workers=2)
            try:
                t0 = time.perf_counter()
                section = verify_fabric(loaded, runner, synthetic_guids=True)
                verify_s = time.perf_counter() - t0
            finally:
                runner.close()
        finally:
            run.stop()
    report = Report.from_sections(cluster="bench1024", spec=str(spec), sections=[section])
    fabric = fabric_of(loaded)
    findings = report.findings
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        explain(findings, fabric)
        times.append(time.perf_counter() - t0)
    graph_s = statistics.median(times)
    explained = explain_report(report, fabric)
    causes = explained.causes
    print(f"{len(ports)} cables of {SPINE} pulled; {len(findings)} findings; {len(causes)} cause(s):")
    for cause in causes:
        print(f"  {cause.finding.check} {cause.finding.object}: explains {len(cause.symptoms)}")
    print(f"verify --fabric {verify_s:.1f} s; cause graph {graph_s * 1000:.1f} ms (median of {RUNS})")
    ok = [(c.finding.check, c.finding.object) for c in causes] == [("cabling.switch_missing", SPINE)]
    print("one cause explains every finding" if ok else "FAIL: not one cause")
    if args.update_docs:
        machine = f"{platform.processor() or platform.machine()}, {platform.system()} {platform.release()}"
        block = (
            f"| {date.today().isoformat()} | {machine} | {len(ports)} cables of {SPINE} | {len(findings)} | "
            f"{len(causes)}: {', '.join(f'{c.finding.check} {c.finding.object}' for c in causes)} | "
            f"{verify_s:.1f} s | {graph_s * 1000:.1f} ms | {graph_s / verify_s:.2%} |\n"
        )
        header = (
            "| Date | Machine | Pulled | Findings | Causes | verify --fabric | Cause graph (median of 5) | "
            "Graph / verify |\n|---|---|---|---:|---|---:|---:|---:|\n"
        )
        text = DOC.read_text()
        DOC.write_text(replace_block(text, "<!-- causes:begin -->", "<!-- causes:end -->", header + block, where=DOC))
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
