#!/usr/bin/env python3
"""Benchmark the route-aware perftest schedule of `ibprov verify --perf`.

Target (issue 11): on fat trees of 64, 512 and 2,048 nodes, every inter-switch link direction that
host-to-host routes use carries test traffic (100 % coverage), in at most 2 x the lower bound of rounds,
computed in at most 1 s for 2,048 nodes.

The fabrics are the specs `ibprov design` writes (non-blocking, three levels): 64 nodes with radix-8
switches, 512 with radix 16, 2,048 with radix 40 (HDR 40-port switches); two more 2,048-node trees for
comparison: radix 32 (a full tree, 32 pods) and radix 40 at 2:1 blocking.

For each fabric it times `route_aware(loaded)` in process from the loaded spec -- the offline model of the
routes, the routable directions, the lower bound and the rounds; loading the spec is not included (that
is `ibprov validate`'s benchmark) -- median and best of N runs.

--twin also brings each fabric up on the twin (ibsim + the planned OpenSM, routing engine ftree), reads
`ibnetdiscover` and `dump_lfts -n` from it, and builds the schedule from the routes OpenSM programmed
(`route_aware_from_lfts` over the routing model `from_discovery` builds from the parsed outputs, timed from
that model; parsing timed apart), and counts how many host-to-host routes the offline model predicts exactly.

Usage:
    bench/perf_schedule.py [--runs 5] [--twin] [--update-docs]

--update-docs writes the results into the "verify --perf: route-aware schedule" section of
docs/benchmarks.md (between its markers; the section is appended when it is not there yet).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from docblock import replace_block  # noqa: E402

from ibprov.clusterspec import LoadedSpec, load_spec_text  # noqa: E402
from ibprov.design import design, spec_text  # noqa: E402
from ibprov.probes import ibnetdiscover, lfts  # noqa: E402
from ibprov.routing.model import RoutingModel, from_discovery  # noqa: E402
from ibprov.verify.perf.routes import lft_routing, planned_routing  # noqa: E402
from ibprov.verify.perf.schedule import Schedule, route_aware, route_aware_from_lfts  # noqa: E402

DOCS = REPO / "docs" / "benchmarks.md"
BEGIN = "<!-- BEGIN_BENCH_PERF_SCHEDULE -->"
END = "<!-- END_BENCH_PERF_SCHEDULE -->"
TARGET_S = 1.0
TARGET_RATIO = 2.0

# (nodes, radix, blocking, part of the target)
FABRICS = [
    (64, 8, "1", True),
    (512, 16, "1", True),
    (2048, 40, "1", True),
    (2048, 32, "1", False),
    (2048, 40, "2", False),
]

SECTION_INTRO = """
## verify --perf: route-aware schedule

The route-aware perftest schedule (`ibprov/verify/perf/schedule.py`) must, on fat trees of 64, 512 and
2,048 nodes, load every inter-switch link direction that host-to-host routes use (100 % coverage) in at
most **2 x the lower bound** of rounds, computed in at most **1 s** for 2,048 nodes.
`bench/perf_schedule.py` builds the specs `ibprov design` writes (non-blocking three-level trees: 64 nodes
of radix-8 switches, 512 of radix 16, 2,048 of radix 40; for comparison 2,048 of radix 32 and of radix 40
at 2:1) and times `route_aware(loaded)` in process from the loaded spec: the offline model of the routes,
the routable directions, the lower bound and the rounds. With `--twin` it also builds each tree on the
twin, reads `ibnetdiscover` and `dump_lfts -n` there, schedules from the routes OpenSM (ftree) programmed,
and counts the routes the offline model predicts exactly. Run it with
`.venv/bin/python bench/perf_schedule.py --twin --update-docs`.

"""


@dataclass
class Row:
    label: str
    target: bool
    switches: int
    schedule: Schedule
    best: float
    median: float


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} CPUs (nproc); Python {platform.python_version()}; "
        f"{platform.system()} {platform.release()}; load average {os.getloadavg()[0]:.2f} before the run"
    )


def fabric(nodes: int, radix: int, blocking: str) -> LoadedSpec:
    return load_spec_text(spec_text(design(nodes, radix, Fraction(blocking))), f"design-{nodes}-{radix}.yaml")


def label(nodes: int, radix: int, blocking: str, loaded: LoadedSpec) -> str:
    ft = loaded.spec.fabric.fat_tree
    assert ft is not None
    shape = f"{ft.leaves} leaves, {ft.spines} spines, {ft.cores} cores, {ft.pods} pods"
    return f"{nodes} nodes, radix {radix}" + (f", {blocking}:1" if blocking != "1" else "") + f" ({shape})"


def times(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples), statistics.median(samples)


def row_cells(schedule: Schedule) -> list[str]:
    """Directions, routable, coverage, rounds, lower bound, ratio."""
    c, bound = schedule.coverage, schedule.lower_bound
    if c is None or bound is None:
        raise SystemExit("a route-aware schedule without coverage or lower bound")
    return [
        f"{c.total}",
        f"{c.routable}",
        f"{c.routable_percent:.1f} % ({c.percent:.1f} % of all)",
        f"{len(schedule.rounds)}",
        f"{bound}",
        f"{len(schedule.rounds) / bound:.2f}",
    ]


def plan_rows(runs: int) -> list[Row]:
    rows = []
    for nodes, radix, blocking, target in FABRICS:
        loaded = fabric(nodes, radix, blocking)
        schedule = route_aware(loaded)
        best, median = times(lambda loaded=loaded: route_aware(loaded), runs)
        rows.append(
            Row(label(nodes, radix, blocking, loaded), target, len(loaded.topology.switches), schedule, best, median)
        )
        print(
            f"plan {rows[-1].label}: {len(schedule.rounds)} rounds, best {best:.3f} s, median {median:.3f} s",
            file=sys.stderr,
        )
    return rows


def twin_rows(runs: int) -> list[str]:
    from ibprov.twin.bringup import start_twin
    from ibprov.twin.sim import sim_available

    missing = sim_available()
    if missing:
        return [f"Twin part skipped: {missing}."]
    out = [
        "| Fabric (twin, OpenSM ftree) | `ibnetdiscover` + `dump_lfts -n` | parse both | schedule best / median "
        "| Directions | Routable | Coverage of routable | Rounds | Lower bound | Ratio "
        "| Routes the model predicts exactly | Same routable directions |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for nodes, radix, blocking, _ in FABRICS:
        loaded = fabric(nodes, radix, blocking)
        with tempfile.TemporaryDirectory(prefix="ibprov-bench-") as tmp:
            run = start_twin(loaded, Path(tmp))
            try:
                if not run.master.wait_for("SUBNET UP", 600):
                    raise SystemExit(f"{nodes}-node twin: no SUBNET UP")
                start = time.perf_counter()
                topo = run.sim.run(["ibnetdiscover"], run.master.sim_host, timeout=600)
                dump = run.sim.run(["dump_lfts", "-n"], run.master.sim_host, timeout=1800)
                collect = time.perf_counter() - start
            finally:
                run.stop()
        if topo.returncode or dump.returncode:
            raise SystemExit(f"{nodes}-node twin: ibnetdiscover exited {topo.returncode}, dump_lfts {dump.returncode}")
        start = time.perf_counter()
        found, tables = ibnetdiscover.parse(topo.stdout), lfts.parse(dump.stdout)
        parse = time.perf_counter() - start
        model = from_discovery(found, tables)
        schedule = route_aware_from_lfts(model)
        best, median = times(lambda model=model: route_aware_from_lfts(model), runs)
        same, total, equal = agreement(loaded, model)
        cells = [
            label(nodes, radix, blocking, loaded),
            f"{collect:.1f} s",
            f"{parse:.2f} s",
            f"{best:.3f} s / {median:.3f} s",
            *row_cells(schedule),
            f"{same} of {total} ({100 * same / total:.1f} %)",
            "yes" if equal else "no",
        ]
        out.append(f"| {' | '.join(cells)} |")
        print(f"twin {nodes}/{radix}/{blocking}: {len(schedule.rounds)} rounds, {same}/{total} routes", file=sys.stderr)
    return out


def agreement(loaded: LoadedSpec, programmed: RoutingModel) -> tuple[int, int, bool]:
    """Routes (host switch x destination) the model predicts exactly, how many, and whether the routable
    directions are the same."""
    real, model = lft_routing(programmed), planned_routing(loaded)
    host = {end: i for i, end in enumerate(model.endpoints)}
    switch = {name: i for i, name in enumerate(model.g.names)}
    same = total = 0
    for d, end in enumerate(real.endpoints):
        for x in real.g.host_switches:
            a, b = real.route(x, d), model.route(switch[real.g.names[x]], host[end])
            total += 1
            same += (
                a is not None
                and b is not None
                and list(map(str, map(real.direction, a))) == list(map(str, map(model.direction, b)))
            )
    routable = {str(real.direction(e)) for e in real.routable} == {str(model.direction(e)) for e in model.routable}
    return same, total, routable


def report(runs: int, twin: bool) -> str:
    info = machine()  # before the run, for the load average
    rows = plan_rows(runs)
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} with `bench/perf_schedule.py --runs {runs}{' --twin' if twin else ''}` "
        f"(best and median of {runs} runs); machine: {info}.",
        "",
        "| Fabric (from the plan) | Switches | Directions | Routable | Coverage of routable | Rounds | Lower bound "
        "| Ratio | `route_aware` best | median | Median / 1 s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        name = r.label if r.target else f"*{r.label}*"
        cells = [name, f"{r.switches}", *row_cells(r.schedule), f"{r.best:.3f} s", f"{r.median:.3f} s"]
        lines.append(f"| {' | '.join(cells)} | {r.median / TARGET_S:.0%} |")
    target = [r for r in rows if r.target]
    met = all(
        r.schedule.coverage is not None
        and r.schedule.coverage.complete
        and r.schedule.ratio is not None
        and r.schedule.ratio <= TARGET_RATIO
        for r in target
    ) and all(r.median <= TARGET_S for r in target if "2048" in r.label)
    lines += ["", f"Target (rows not in italics): {'met' if met else 'NOT met'}.", ""]
    if twin:
        lines += [*twin_rows(runs), ""]
    return "\n".join(lines)


def update_docs(section: str) -> None:
    doc = DOCS.read_text(encoding="utf-8")
    if BEGIN in doc:
        DOCS.write_text(replace_block(doc, BEGIN, END, section, where=DOCS), encoding="utf-8")
    else:  # first run: append the section, leave the rest of the file alone
        with DOCS.open("a", encoding="utf-8") as out:
            out.write(f"{SECTION_INTRO}{BEGIN}\n{section}{END}\n")
    print(f"updated {DOCS}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs per measurement (default 5)")
    ap.add_argument("--twin", action="store_true", help="also schedule from the twin's LFTs (needs ibsim, opensm)")
    ap.add_argument("--update-docs", action="store_true", help="write the section of docs/benchmarks.md")
    args = ap.parse_args(argv)
    section = report(args.runs, args.twin)
    print(section)
    if args.update_docs:
        update_docs(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
