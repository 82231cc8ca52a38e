#!/usr/bin/env python3
"""Benchmark the routing audit (issue 24): every route of a fabric's LFTs traced, plus the credit-loop search.

Target: the audit of a 100,000-endpoint fat tree (LFTs from the offline up*/down* model) in at most 10 s and
2 GB; the growth with fabric size stated.

--offline builds fat trees of 64-port switches (NDR QM9700: leaves with 32 host ports and 32 uplinks) with
:class:`ibprov.routing.model.ModelBuilder` -- two levels up to 2,048 endpoints, three (pods of 32 spines, and
cores) above -- cabled as ibprov's ``fabric.fat_tree`` generator cables (``ibprov/clusterspec/topology.py``),
LIDs on the CA ports first, then the switches, and fills the LFTs with
:func:`ibprov.routing.offline.compute_lft` (setup, timed apart). Each size runs in two fresh subprocesses:
one builds the model and its LFTs and saves them; the other loads them and times ``audit(model, tiers,
switch_routes=True)`` (verify's default on a fabric routed on SL 0) +
``find_cycles(...)`` (the audit proper), reading the peak RSS of that process (``ru_maxrss``: the model
loaded + the audit's working set), then repeats the audit under ``tracemalloc`` for the audit's own peak
allocation (numpy's buffers are traced).

--twin starts the twin of the 1,024-node fat tree (bench/fat_tree_1024.py; ibsim + the planned OpenSMs,
routing engine ftree), runs ``ibnetdiscover`` and ``dump_lfts`` on a sim host that runs no SM, and times
the two diags, their parsing, the model (``from_discovery``) and the audit with the cycle search.

Usage:
    bench/routing_audit.py [--offline] [--sizes 1024,4096,...] [--twin] [--update-docs]

--update-docs writes the "Routing audit (issue 24)" section of docs/benchmarks.md (between its markers;
appended when it is not there yet).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "scripts"))

from docblock import replace_block  # noqa: E402

from ibprov.routing.audit import RouteAudit, audit  # noqa: E402
from ibprov.routing.cdg import Cycles, find_cycles  # noqa: E402
from ibprov.routing.model import ModelBuilder, RoutingModel  # noqa: E402
from ibprov.routing.offline import compute_lft  # noqa: E402

DOCS = REPO / "docs" / "benchmarks.md"
BEGIN = "<!-- BEGIN_BENCH_ROUTING_AUDIT -->"
END = "<!-- END_BENCH_ROUTING_AUDIT -->"
TARGET_S = 10.0
TARGET_BYTES = 2 * 1024**3
TARGET_SIZE = 100_000
SIZES = [1024, 4096, 16384, 32768, 100_000]

RADIX = 64
HOSTS = 32  # host ports per leaf
UP = RADIX - HOSTS  # uplinks per leaf
MAX_PODS = RADIX  # a core takes one cable from each pod at most
TIER = ("leaf", "spine", "core")
TRACE_LIMIT_S = 60.0  # the audit is repeated under tracemalloc only when it took at most this long

SECTION_INTRO = """
## Routing audit (issue 24)

The routing audit (`ibprov/routing/audit.py`: every CA -> LID route traced through the LFTs -- delivery,
hops, minimality, paths and destinations per port, up*/down* turns, channel dependencies -- and the
credit-loop search of `ibprov/routing/cdg.py`) must take at most **10 s** and **2 GB** on a 100,000-endpoint
fat tree. `bench/routing_audit.py --offline` builds fat trees of 64-port switches (NDR QM9700: leaves with
32 host ports and 32 uplinks; two levels up to 2,048 endpoints, three above), cabled like ibprov's
`fabric.fat_tree` generator, with LIDs on the CA ports first, then the switches, and LFTs from the offline
up*/down* model (`ibprov/routing/offline.py`; that is setup, timed apart). The audit proper is
`audit(model, tiers)` + `find_cycles(*audit.edge_list(model), model.channel_count)`. Each size runs in fresh
subprocesses: one builds and saves the model; the other loads it, times the audit once and reads its peak
RSS (`getrusage(RUSAGE_SELF).ru_maxrss`: interpreter + the loaded model, whose LFT alone is switches x LIDs
bytes, + the audit's working set; this is the number held against 2 GB), then, where the audit took at
most 60 s, runs it again under `tracemalloc` for the audit's own peak allocation (numpy's buffers
included). `--twin` does the same on the LFTs the real OpenSM (ftree) programs on the 1,024-node twin, read
with `ibnetdiscover` and `dump_lfts`.
Run it with `.venv/bin/python bench/routing_audit.py --offline --twin --update-docs`.

100,000 endpoints do not fit a non-blocking three-level tree of 64-port switches (at most 64 pods of 1,024:
65,536), nor one subnet's unicast LIDs (49,151): the bench's largest tree keeps the 32 + 32 leaves and puts
49 of them in each of 64 pods, with spines of 49 ports down and 15 up (3.3:1 above the spines). The model
does not care about the LID limit; it is the audit's scale that is measured.

"""


# --- the fat trees -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    endpoints: int
    leaves: int
    spines: int
    pods: int
    cores: int
    spine_up: int  # uplinks per spine (0: two levels)

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores

    def describe(self) -> str:
        if not self.cores:
            return f"2 levels: {self.leaves} leaves, {self.spines} spines"
        lp, sp = self.leaves // self.pods, self.spines // self.pods
        taper = f", spines {lp} down / {self.spine_up} up" if self.spine_up != lp else ""
        return f"3 levels: {self.pods} pods x ({lp} leaves, {sp} spines), {self.cores} cores{taper}"


def _least_divisor(n: int, at_least: int) -> int | None:
    return next((d for d in range(1, n + 1) if n % d == 0 and d >= at_least), None)


def shape(endpoints: int) -> Shape:
    """The fat tree of 64-port switches for ``endpoints`` CA ports (see the module docstring)."""
    leaves = math.ceil(endpoints / HOSTS)
    if leaves * UP <= RADIX * UP:  # two levels: every spine takes at most RADIX leaf uplinks
        spines = _least_divisor(UP, math.ceil(leaves * UP / RADIX))
        assert spines is not None
        return Shape(endpoints, leaves, spines, 1, 0, 0)
    per_pod = max(RADIX // 2, math.ceil(leaves / MAX_PODS))  # leaves per pod (one cable to each pod spine)
    pods = math.ceil(leaves / per_pod)
    spine_up = RADIX - per_pod
    group = _least_divisor(spine_up, math.ceil(pods * spine_up / RADIX))  # cores above each spine position
    assert group is not None, (endpoints, per_pod)
    return Shape(endpoints, pods * per_pod, pods * UP, pods, UP * group, spine_up)


def build(s: Shape) -> tuple[RoutingModel, list[int]]:
    """The model of ``s`` with its up*/down* LFTs, and the switch tiers (leaf 0, spine 1, core 2)."""
    b = ModelBuilder()
    leaves = [b.switch(f"leaf{i + 1:04d}", 0x10000 + i) for i in range(s.leaves)]
    spines = [b.switch(f"spine{i + 1:04d}", 0x20000 + i) for i in range(s.spines)]
    cores = [b.switch(f"core{i + 1:04d}", 0x30000 + i) for i in range(s.cores)]
    lp, sp = s.leaves // s.pods, s.spines // s.pods
    per_spine = UP // sp  # cables from a leaf to each spine of its pod
    for li, leaf in enumerate(leaves):  # _add_spine_links
        pod, in_pod = divmod(li, lp)
        for k in range(UP):
            j, c = k % sp, k // sp
            b.cable(leaf, HOSTS + 1 + k, spines[pod * sp + j], in_pod * per_spine + c + 1)
    if s.cores:  # _add_core_links
        group = s.cores // sp
        per_core = s.spine_up // group
        spine_down = lp * UP // sp
        for si, spine in enumerate(spines):
            pod, j = divmod(si, sp)
            for k in range(s.spine_up):
                core, c = j * group + k % group, k // group
                b.cable(spine, spine_down + 1 + k, cores[core], pod * per_core + c + 1)
    for e in range(s.endpoints):  # node-grouped: 32 CA ports per leaf, in order
        leaf, port = divmod(e, HOSTS)
        b.ca(f"node{e + 1:06d}/mlx5_0:1", e + 1, leaves[leaf], port + 1)
    b.lids = list(range(s.endpoints + 1, s.endpoints + 1 + s.switches))
    tiers = [0] * s.leaves + [1] * s.spines + [2] * s.cores
    model = b.build()
    model.lft = compute_lft(model, tiers)
    return model, tiers


# --- measuring -------------------------------------------------------------------------------------------


def rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def audit_all(model: RoutingModel, tiers: list[int] | None) -> tuple[RouteAudit, Cycles]:
    """The audit proper: every route, then the credit-loop search on its channel dependencies (with the routes
    to switch LIDs, as verify --routing has them on a fabric routed on SL 0)."""
    result = audit(model, tiers, switch_routes=True)
    return result, find_cycles(*result.edge_list(model), model.channel_count)


def summary(model: RoutingModel, result: RouteAudit, cycles: Cycles, tiers: list[int] | None) -> dict[str, Any]:
    """What the audit found, in numbers for the table."""
    used = result.chan_routes > 0
    out: dict[str, Any] = {
        "switches": model.switch_count,
        "channels": model.channel_count,
        "lids": int(model.top_lid),
        "pairs": result.pairs,
        "delivered": result.delivered,
        "broken": result.broken_pairs,
        "hops": {str(k): v for k, v in sorted(result.switches_per_route.items())},
        "nonminimal": result.nonminimal_pairs,
        "updown": result.updown_pairs,
        "edges": int(result.edges.sum()),
        "cycles": len(cycles.component_sizes),
        "cycle_vertices": cycles.vertices_left,
    }
    if tiers is not None and used.any():  # balance: routes and destination LIDs per channel, by tier pair
        t = np.asarray(tiers)
        for a, b in ((0, 1), (1, 2), (2, 1), (1, 0)):
            sel = used & (t[model.chan_src] == a) & (t[model.chan_dst] == b)
            if sel.any():
                routes, dlids = result.chan_routes[sel], result.chan_dlids[sel]
                key = f"{TIER[a]}->{TIER[b]}"
                out.setdefault("balance", {})[key] = [
                    int(routes.min()),
                    int(routes.max()),
                    int(dlids.min()),
                    int(dlids.max()),
                ]
    return out


def balance_text(info: dict[str, Any]) -> str:
    """Routes per channel (min-max) and destination LIDs per channel, by tier pair."""
    return "; ".join(
        f"{key} {lo:,}-{hi:,} ({dlo:,}-{dhi:,} LIDs)" for key, (lo, hi, dlo, dhi) in info.get("balance", {}).items()
    )


def child_setup(size: int, out: Path) -> None:
    """Subprocess: build the fat tree and its LFTs, save them (LFT with np.save, the rest pickled)."""
    s = shape(size)
    t0 = time.perf_counter()
    model, tiers = build(s)
    t_setup = time.perf_counter() - t0
    np.save(out / "lft.npy", model.lft)
    lft, model.lft = model.lft, np.zeros((0, 0), dtype=np.uint8)
    with open(out / "model.pickle", "wb") as f:
        pickle.dump((model, tiers), f, protocol=pickle.HIGHEST_PROTOCOL)
    print(json.dumps({"setup_s": t_setup, "setup_rss": rss_bytes(), "lft_bytes": int(lft.nbytes)}))


def child_audit(out: Path, traced: bool) -> None:
    """Subprocess: load the model, time the audit, its peak RSS, then its own peak allocation."""
    with open(out / "model.pickle", "rb") as f:
        model, tiers = pickle.load(f)
    model.lft = np.load(out / "lft.npy")
    loaded = rss_bytes()
    t0 = time.perf_counter()
    result = audit(model, tiers, switch_routes=True)  # as verify --routing runs it on an SL-0 fabric
    t1 = time.perf_counter()
    cycles = find_cycles(*result.edge_list(model), model.channel_count)
    t2 = time.perf_counter()
    peak = rss_bytes()
    info = summary(model, result, cycles, tiers)
    info.update(audit_s=t2 - t0, cycles_s=t2 - t1, loaded_rss=loaded, audit_rss=peak)
    if traced and t2 - t0 <= TRACE_LIMIT_S:
        del result, cycles
        tracemalloc.start()
        audit_all(model, tiers)
        info["traced_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(json.dumps(info))


def run_child(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"{' '.join(args)}: exited {proc.returncode}\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def offline(sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="ibprov-bench-audit-") as tmp:
            setup = run_child(["--child-setup", str(size), tmp])
            row = {"size": size, "shape": shape(size).describe(), **setup}
            row.update(run_child(["--child-audit", tmp]))
        rows.append(row)
        print(
            f"{size} endpoints: setup {row['setup_s']:.1f} s, audit {row['audit_s']:.2f} s "
            f"(cycles {row['cycles_s']:.2f} s), peak RSS {row['audit_rss'] / 2**20:.0f} MiB, "
            f"traced {row.get('traced_peak', 0) / 2**20:.0f} MiB",
            file=sys.stderr,
        )
    return rows


def slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of log y against log x."""
    lx, ly = np.log(np.asarray(xs, dtype=float)), np.log(np.asarray(ys, dtype=float))
    return float(np.polyfit(lx, ly, 1)[0])


def mib(n: float) -> str:
    v = n / 2**20
    return f"{v:,.0f} MiB" if v >= 10 else f"{v:.2g} MiB"


def offline_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| Endpoints | Fat tree | Switches | Channels | LFT (switches x LIDs) | Setup: `compute_lft` "
        "| Audit + cycles | of which `find_cycles` | Peak RSS (audit process) | Audit's own peak (tracemalloc) "
        "| Pairs delivered | Hops (switches: pairs) | Non-minimal / up-down turns / cycles "
        "| Routes per channel, min-max (destination LIDs) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        hops = ", ".join(f"{k}: {v:,}" for k, v in r["hops"].items())
        cells = [
            f"{r['size']:,}",
            r["shape"],
            f"{r['switches']:,}",
            f"{r['channels']:,}",
            mib(r["lft_bytes"]),
            f"{r['setup_s']:.1f} s",
            f"{r['audit_s']:.2f} s",
            f"{r['cycles_s']:.2f} s",
            mib(r["audit_rss"]),
            mib(r["traced_peak"]) if "traced_peak" in r else "(not repeated)",
            f"{r['delivered']:,} of {r['pairs']:,}",
            hops,
            f"{r['nonminimal']} / {r['updown']} / {r['cycles']}",
            balance_text(r),
        ]
        lines.append(f"| {' | '.join(cells)} |")
    lines.append("")
    if len(rows) >= 2:
        xs = [r["size"] for r in rows]
        tr = [r for r in rows if "traced_peak" in r]
        traced_slope = (
            f"{slope([r['size'] for r in tr], [r['traced_peak'] for r in tr]):.2f} (to {tr[-1]['size']:,})"
            if len(tr) >= 2
            else "n/a"
        )
        lines.append(
            f"Growth (least-squares slope of log y on log endpoints, {xs[0]:,} to {xs[-1]:,}): audit time "
            f"{slope(xs, [r['audit_s'] for r in rows]):.2f}, peak RSS {slope(xs, [r['audit_rss'] for r in rows]):.2f}, "
            f"audit's own peak {traced_slope}, setup "
            f"{slope(xs, [r['setup_s'] for r in rows]):.2f}; pairs grow with slope 2, LFT bytes "
            f"{slope(xs, [r['lft_bytes'] for r in rows]):.2f}."
        )
        lines.append("")
    big = [r for r in rows if r["size"] == TARGET_SIZE]
    if big:
        r = big[0]
        t, m = r["audit_s"] / TARGET_S, r["audit_rss"] / TARGET_BYTES
        lines.append(
            f"Target ({TARGET_SIZE:,} endpoints): audit + cycles {r['audit_s']:.2f} s = {t:.2f} x the 10 s target, "
            f"peak RSS {mib(r['audit_rss'])} = {m:.2f} x the 2 GB target: "
            f"{'met' if t <= 1 and m <= 1 else 'NOT met'}."
        )
        lines.append("")
    return lines


# --- the twin --------------------------------------------------------------------------------------------


def twin_lines() -> list[str]:
    from fat_tree_1024 import spec_text

    from ibprov.clusterspec import load_spec_text
    from ibprov.identity.guids import GuidBook
    from ibprov.probes import ibnetdiscover, lfts
    from ibprov.routing.model import from_discovery
    from ibprov.twin.bringup import start_twin
    from ibprov.twin.sim import sim_available

    missing = sim_available()
    if missing:
        return [f"Twin part skipped: {missing}.", ""]
    loaded = load_spec_text(spec_text(), "bench1024.yaml")
    book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)  # the GUIDs the twin gives the switches
    names = {guid: name for name in loaded.topology.switches if (guid := book.switch_guid(name)) is not None}
    with tempfile.TemporaryDirectory(prefix="ibprov-bench-audit-twin-") as tmp:
        t0 = time.perf_counter()
        run = start_twin(loaded, Path(tmp))
        try:
            if not run.master.wait_for("SUBNET UP", 600):
                raise SystemExit("1,024-node twin: no SUBNET UP")
            t_up = time.perf_counter() - t0
            sm_hosts = {sm.sim_host for _n, _p, sm in run.sms}
            probe = sorted(h for h in run.sim_hosts.values() if h not in sm_hosts)[0]
            t0 = time.perf_counter()
            topo = run.sim.run(list(ibnetdiscover.argv()), probe, timeout=600)
            t1 = time.perf_counter()
            dump = run.sim.run(list(lfts.argv()), probe, timeout=1800)
            t2 = time.perf_counter()
        finally:
            run.stop()
    if topo.returncode or dump.returncode:
        raise SystemExit(f"twin: ibnetdiscover exited {topo.returncode}, dump_lfts {dump.returncode}")
    t_nd, t_dump = t1 - t0, t2 - t1
    t0 = time.perf_counter()
    fabric = ibnetdiscover.parse(topo.stdout)
    t1 = time.perf_counter()
    tables = lfts.parse(dump.stdout)
    t2 = time.perf_counter()
    model = from_discovery(fabric, tables, switch_names=names)
    t3 = time.perf_counter()
    role = {name: sw.role for name, sw in loaded.topology.switches.items()}
    tiers = [{"leaf": 0, "spine": 1, "core": 2}[role[name]] for name in model.names]
    result, cycles = audit_all(model, tiers)
    t4 = time.perf_counter()
    info = summary(model, result, cycles, tiers)
    hops = ", ".join(f"{k}: {v:,}" for k, v in info["hops"].items())
    print(f"twin: audit {t4 - t3:.3f} s, {info['delivered']}/{info['pairs']} delivered", file=sys.stderr)
    return [
        f"Twin (bench/fat_tree_1024.py: {len(loaded.spec.nodes)} nodes, {model.switch_count} switches, "
        f"{model.channel_count} switch-to-switch channels; ibsim + OpenSM 3.3.23, ftree; twin up to SUBNET UP "
        f"in {t_up:.1f} s; diags run on sim host {probe}, which runs no SM):",
        "",
        "| Step | Time |",
        "|---|---|",
        f"| `ibnetdiscover` | {t_nd:.2f} s |",
        f"| `dump_lfts` ({len(tables.switches)} switches) | {t_dump:.2f} s |",
        f"| parse `ibnetdiscover` | {t1 - t0:.3f} s |",
        f"| parse `dump_lfts` | {t2 - t1:.3f} s |",
        f"| model (`from_discovery`) | {t3 - t2:.3f} s |",
        f"| audit + cycles | {t4 - t3:.3f} s |",
        "",
        f"Found: {info['delivered']:,} of {info['pairs']:,} CA -> CA pairs delivered ({info['broken']} broken); "
        f"hops (switches on the route: pairs) {hops}; {info['nonminimal']} non-minimal; {info['updown']} "
        f"turned up after going down; {info['edges']:,} channel dependencies, {info['cycles']} cycle(s). "
        f"Balance, CA -> CA routes per channel, min-max (destination LIDs): {balance_text(info)}.",
        "",
    ]


# --- the report ------------------------------------------------------------------------------------------


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem = next(
        int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines() if "MemTotal" in line
    )
    return (
        f"{model}, {os.cpu_count()} cores, {mem / 2**30:.0f} GiB RAM; Python {platform.python_version()}, "
        f"numpy {np.__version__}; {platform.system()} {platform.release()}; "
        f"load average {os.getloadavg()[0]:.2f} before the run"
    )


def report(argv: list[str], sizes: list[int], do_offline: bool, twin: bool) -> str:
    info = machine()
    command = " ".join(["bench/routing_audit.py", *argv])
    lines = [f"Measured {time.strftime('%Y-%m-%d')} with `{command}`; machine: {info}.", ""]
    if do_offline:
        lines += offline_lines(offline(sizes))
    if twin:
        lines += twin_lines()
    return "\n".join(lines)


def update_docs(section: str) -> None:
    doc = DOCS.read_text(encoding="utf-8")
    if BEGIN in doc:
        DOCS.write_text(replace_block(doc, BEGIN, END, section, where=DOCS), encoding="utf-8")
    else:  # first run: append the section, leave the rest of the file alone
        DOCS.write_text(f"{doc.rstrip()}\n{SECTION_INTRO}{BEGIN}\n{section}{END}\n", encoding="utf-8")
    print(f"updated {DOCS}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--offline", action="store_true", help="audit offline fat trees of the sizes")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="endpoints, comma-separated")
    ap.add_argument("--twin", action="store_true", help="audit the 1,024-node twin's LFTs (needs ibsim, opensm)")
    ap.add_argument("--update-docs", action="store_true", help="write the section of docs/benchmarks.md")
    ap.add_argument("--child-setup", nargs=2, metavar=("SIZE", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--child-audit", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--untraced", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_setup:
        child_setup(int(args.child_setup[0]), Path(args.child_setup[1]))
        return 0
    if args.child_audit:
        child_audit(Path(args.child_audit), not args.untraced)
        return 0
    if not (args.offline or args.twin):
        ap.error("nothing to do: --offline and/or --twin")
    sizes = [int(x) for x in args.sizes.split(",") if x]
    section = report(argv, sizes, args.offline, args.twin)
    print(section)
    if args.update_docs:
        update_docs(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
