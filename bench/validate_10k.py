#!/usr/bin/env python3
"""Benchmark `ibprov validate` on a 10,000-node, 640-switch three-level fat tree (target: <= 2 s).

Two variants of the same fabric are generated into a temporary directory:

* generator — nodes plus ``fabric.fat_tree`` parameters (the loader expands 17,400 cables itself);
* explicit  — every switch and every one of the 17,400 cables written out, and a node GUID and port
              GUID per HCA: the largest file (most YAML to parse, most values to locate and check).

The fabric: radix-40 switches; 340 leaves with 30 host ports and 10 uplinks each (3:1), in 20 pods of
17 leaves and 10 spines; each spine has 20 uplinks to 100 cores. Both variants also have an IPoIB
/18 for all nodes and three partitions.

For each variant it times `ibprov validate -q SPEC` end to end as a subprocess (interpreter start-up,
imports, read, parse, check) and `load_spec(SPEC)` in process, best of N and median.

Usage:
    bench/validate_10k.py [--runs 5] [--update-docs] [--profile VARIANT]

--update-docs rewrites the "validate" section of docs/benchmarks.md with the results.
--profile prints the top of a cProfile of one in-process load of VARIANT (generator|explicit).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
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

from docblock import replace_block  # noqa: E402

from ibprov.clusterspec import load_spec, load_spec_text  # noqa: E402

DOCS = REPO / "docs" / "benchmarks.md"
BEGIN = "<!-- BEGIN_BENCH_VALIDATE -->"
END = "<!-- END_BENCH_VALIDATE -->"
TARGET_S = 2.0

NODES = 10_000
FAT_TREE = {
    "radix": 40,
    "pods": 20,
    "leaves": 340,
    "spines": 200,
    "cores": 100,
    "hosts_per_leaf": 30,
    "uplinks_per_leaf": 10,
    "uplinks_per_spine": 20,
    "hosts_group": "compute",
}


def _head() -> list[str]:
    return [
        "version: 1",
        "cluster: {name: bench10k}",
        "nodes:",
        "  - {name: sm01, groups: [compute, infra], hcas: [{device: mlx5_0}]}",
        "  - {name: sm02, groups: [compute, infra], hcas: [{device: mlx5_0}]}",
    ]


def _tail() -> list[str]:
    return [
        "subnet_manager:",
        "  routing_engine: ftree",
        "  sm_key: env:IBPROV_SM_KEY",
        "  instances: [{node: sm01, priority: 15}, {node: sm02, priority: 14}]",
        "partitions:",
        "  - {name: compute, pkey: 0x0010, ipoib: true, defmember: full, members: [{group: compute}]}",
        "  - {name: storage, pkey: 0x0020, members: [{group: compute, membership: limited}]}",
        "  - {name: mgmt, pkey: 0x0030, members: [{all: true}, {group: infra, membership: full}]}",
        "ipoib:",
        "  - {partition: default, subnet: 10.128.0.0/18, addresses: {sm01: 10.128.0.1, sm02: 10.128.0.2},"
        " pool_start: 10.128.0.11}",
        "acceptance: {pairs: route-aware}",
    ]


def generator_spec() -> str:
    lines = _head()
    lines += [f"  - {{name: n{i:05d}, groups: [compute], hcas: [{{device: mlx5_0}}]}}" for i in range(1, NODES - 1)]
    lines += ["fabric:", "  speed: HDR", "  fat_tree: {" + ", ".join(f"{k}: {v}" for k, v in FAT_TREE.items()) + "}"]
    return "\n".join(lines + _tail()) + "\n"


def explicit_spec(generated: str) -> str:
    """The same fabric with every switch and cable written out, and GUIDs on every HCA and switch."""
    topology = load_spec_text(generated, "generator.yaml").topology
    lines = _head()[:3]
    names = ["sm01", "sm02"] + [f"n{i:05d}" for i in range(1, NODES - 1)]
    for i, name in enumerate(names):
        guid = 0x0C42A10300000000 + i * 4
        groups = "[compute, infra]" if name.startswith("sm") else "[compute]"
        lines.append(
            f"  - {{name: {name}, groups: {groups}, hcas: [{{device: mlx5_0, node_guid: 0x{guid:016x}, "
            f"port_guids: {{1: 0x{guid:016x}}}}}]}}"
        )
    lines.append("switches:")
    for i, sw in enumerate(topology.switches.values()):
        guid = 0xB8599F0300000000 + i * 2
        lines.append(f"  - {{name: {sw.name}, role: {sw.role}, ports: {sw.ports}, node_guid: 0x{guid:016x}}}")
    lines += ["fabric:", "  speed: HDR", "  links:"]
    lines += [f"    - {link.a} <-> {link.b}" for link in topology.links]
    return "\n".join(lines + _tail()) + "\n"


def _times(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples), statistics.median(samples)


def _validate(path: Path) -> None:
    cmd = [sys.executable, "-m", "ibprov", "validate", "-q", str(path)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {result.returncode}:\n{result.stderr[:2000]}")


def _startup() -> None:
    subprocess.run([sys.executable, "-c", "import ibprov.cli, ibprov.clusterspec"], check=True)


def machine() -> dict[str, str]:
    model = platform.processor() or "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    import pydantic
    import yaml

    return {
        "CPUs (nproc)": str(os.cpu_count()),
        "CPU model": model,
        "Python": platform.python_version(),
        "pydantic": pydantic.VERSION,
        "PyYAML": f"{yaml.__version__} ({'libyaml' if yaml.__with_libyaml__ else 'pure Python'} parser)",
        "OS": f"{platform.system()} {platform.release()}",
        "Load average (1 min) before the run": f"{os.getloadavg()[0]:.2f}",
    }


def run(runs: int) -> str:
    info = machine()  # before the run, for the load average
    with tempfile.TemporaryDirectory(prefix="ibprov-bench-") as tmp:
        gen_text = generator_spec()
        variants = {"generator": gen_text, "explicit": explicit_spec(gen_text)}
        rows = []
        for name, text in variants.items():
            path = Path(tmp) / f"{name}.yaml"
            path.write_text(text)
            loaded = load_spec(path)
            nodes, switches, links = len(loaded.spec.nodes), len(loaded.topology.switches), len(loaded.topology.links)
            cli_best, cli_median = _times(lambda p=path: _validate(p), runs)
            lib_best, lib_median = _times(lambda p=path: load_spec(p), runs)
            rows.append(
                f"| {name} | {len(text) / 1e6:.1f} MB | {nodes} / {switches} / {links} | "
                f"{cli_best:.2f} s | {cli_median:.2f} s | {lib_best:.2f} s | {lib_median:.2f} s | "
                f"{cli_median / TARGET_S:.0%} |"
            )
            print(f"{name}: cli best {cli_best:.3f}s median {cli_median:.3f}s; "
                  f"load_spec best {lib_best:.3f}s median {lib_median:.3f}s", file=sys.stderr)  # fmt: skip
    startup_best, startup_median = _times(_startup, runs)
    out = [
        f"Measured {time.strftime('%Y-%m-%d')} with `bench/validate_10k.py --runs {runs}` "
        f"(best and median of {runs} runs).",
        "",
        "| Machine | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in info.items()],
        "",
        "| Variant | Spec size | Nodes / switches / links | `ibprov validate` best | median | "
        "`load_spec` best | median | Median / 2 s target |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Of that, interpreter start-up and imports (`python -c 'import ibprov.cli, ibprov.clusterspec'`) take "
        f"{startup_best:.2f} s (best), {startup_median:.2f} s (median).",
        "",
    ]
    return "\n".join(out)


def update_docs(section: str) -> None:
    doc = DOCS.read_text(encoding="utf-8")
    DOCS.write_text(replace_block(doc, BEGIN, END, section, where=DOCS), encoding="utf-8")
    print(f"updated {DOCS}", file=sys.stderr)


def profile(variant: str) -> None:
    gen_text = generator_spec()
    text = gen_text if variant == "generator" else explicit_spec(gen_text)
    prof = cProfile.Profile()
    prof.enable()
    load_spec_text(text, f"{variant}.yaml")
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
    print(buf.getvalue())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs per measurement (default 5)")
    ap.add_argument("--update-docs", action="store_true", help="rewrite the validate section of docs/benchmarks.md")
    ap.add_argument("--profile", choices=["generator", "explicit"], help="cProfile one in-process load")
    args = ap.parse_args(argv)
    if args.profile:
        profile(args.profile)
        return 0
    section = run(args.runs)
    print(section)
    if args.update_docs:
        update_docs(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
