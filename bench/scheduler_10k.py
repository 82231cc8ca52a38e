#!/usr/bin/env python3
"""Benchmark the scheduler side of issue 25 on the 10,000-node fat tree of bench/validate_10k.py with a
``scheduler:`` section: Slurm's tree of the plan and the topology file (render), the verify --scheduler checks
against a Slurm view of the same size (read back from the rendered file: what scontrol would print), and the
drain plan of a report with 1,000 failing nodes. Issue 25 names no target; this records the cost.

Usage: bench/scheduler_10k.py [--runs 5] [--update-docs]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_10k import generator_spec, machine

from ibprov.clusterspec import load_spec_text
from ibprov.probes.slurm import SlurmNode, SlurmSwitch, SlurmView
from ibprov.render.slurm import plan_tree, slurm_vars, topology_text
from ibprov.report.model import CheckResult, Finding, Report, SectionReport, Severity
from ibprov.verify.nodes.facts import NodesFacts
from ibprov.verify.scheduler.drain import plan_actions
from ibprov.verify.scheduler.plan import build_scheduler_plan
from ibprov.verify.scheduler.section import check_scheduler

SCHEDULER = "scheduler: {controller: sm01, group: compute, topology: {top: single}}\n"


def best(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return min(samples)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    loaded = load_spec_text(generator_spec() + SCHEDULER, "bench.yaml")
    tree = plan_tree(loaded)
    print(f"{len(tree.node_leaf)} Slurm nodes under {len(tree.leaves)} leaves")
    plan = build_scheduler_plan(loaded)
    switches = {leaf.name: SlurmSwitch(leaf.name, 0, leaf.nodes) for leaf in tree.leaves}
    switches.update({up.name: SlurmSwitch(up.name, 1, (), up.switches) for up in tree.uppers})
    view = SlurmView("22.05.8", "topology/tree", switches, {n: SlurmNode(n, "idle") for n in plan.nodes})
    failing = plan.nodes[::10]
    findings = tuple(Finding("link.state", Severity.ERROR, f"leafX:1 <-> {n}/mlx5_0:1", "a", "b", "c") for n in failing)
    section = SectionReport(
        "fabric", "Fabric", "", "", 0.0, (CheckResult("link.state", "t", (), findings),), NodesFacts(0, 0)
    )
    report = Report.from_sections(cluster="b", spec="b.yaml", sections=[section])
    rows = [
        ("plan_tree (Slurm's tree of the cabling)", best(lambda: plan_tree(loaded), args.runs)),
        ("slurm_vars + topology.conf text", best(lambda: topology_text(loaded, slurm_vars(loaded)), args.runs)),
        ("verify --scheduler checks (10,000-node view)", best(lambda: check_scheduler(plan, view), args.runs)),
        (
            f"drain plan ({len(failing)} failing nodes)",
            best(lambda: plan_actions(report, plan.nodes, view, drain=True, resume=True), args.runs),
        ),
    ]
    for name, seconds in rows:
        print(f"{name}: {seconds * 1000:.0f} ms (best of {args.runs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
