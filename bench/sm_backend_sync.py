#!/usr/bin/env python3
"""Benchmark the SM back ends' sync (issue 28): what a run sends and how long it takes, read back first.

The back ends run as ``ibprov apply`` runs them (ibprov's HTTP client, login, read back, diff, send one call
at a time) against the contract servers of tests/contracts on 127.0.0.1 -- the same servers the tests use,
which follow the documented APIs but are not the products: the times are ibprov's side plus a loopback HTTP
server, never a switch's or UFM's own. Desired states, with synthetic port GUIDs:

* switch: 2,000 nodes (a managed switch's embedded SM is sized for fabrics up to about 2,000 nodes);
* UFM: 10,000 nodes.

Each with three partitions: compute (every node, full), storage (every node limited, 16 storage nodes full),
gpu (a quarter of the nodes, full). Runs, one after the other on the same server:

1. the first apply, from an empty back end;
2. a second apply with nothing changed (it must send nothing that changes state);
3. a node replaced (its port GUID leaves every partition, the new one joins them).

Baseline: a tool that does not read back re-pushes the whole configuration every run (the first apply's
state-changing requests again). The ratio is the state-changing requests of run 2 and 3 against it. No
target was named in the issue: ours are 0 state-changing requests on run 2, and run 3 sending only what the
replaced node touches.

Usage: bench/sm_backend_sync.py [--switch-nodes 2000] [--ufm-nodes 10000] [--update-docs]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
# the contract servers: test doubles, here only to be measured against
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from contracts.mlnxos import DEFAULT_PASSWORD as SW_PASSWORD
from contracts.mlnxos import DEFAULT_USER as SW_USER
from contracts.mlnxos import MlnxosContract
from contracts.ufm import DEFAULT_PASSWORD as UFM_PASSWORD
from contracts.ufm import DEFAULT_USER as UFM_USER
from contracts.ufm import UfmContract
from docblock import replace_block
from pytest_httpserver import HTTPServer
from validate_10k import machine

from ibprov.clusterspec.model import SwitchSm, UfmSm
from ibprov.smbackend.actions import BackendResult
from ibprov.smbackend.state import BackendState, Member, PartitionState, SmState
from ibprov.smbackend.switch.backend import apply_switch
from ibprov.smbackend.switch.backend import connect as switch_connect
from ibprov.smbackend.ufm.backend import apply_ufm
from ibprov.smbackend.ufm.backend import connect as ufm_connect

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- BEGIN_BENCH_SM_BACKENDS -->"
END = "<!-- END_BENCH_SM_BACKENDS -->"
BASE_GUID = 0x0C42A10300000000
REPLACEMENT = 0x0C42A103FFFF0000


def desired(nodes: int, *, sm: bool, replaced: bool = False) -> BackendState:
    guids = [BASE_GUID + i for i in range(nodes)]
    if replaced:
        guids[7] = REPLACEMENT

    def part(pkey: int, name: str, ipoib: bool, members: list[Member], **qos: object) -> PartitionState:
        return replace(PartitionState(pkey, name, ipoib, frozenset(members)), **qos)  # type: ignore[arg-type]

    storage = set(guids[-16:])
    parts = [
        part(0x10, "compute", True, [(g, "full") for g in guids], mtu=5),
        part(0x20, "storage", True, [(g, "full" if g in storage else "limited") for g in guids]),
        part(0x30, "gpu", False, [(g, "full") for g in guids[: nodes // 4]], mtu=5, rate=200.0, sl=1),
    ]
    return BackendState(SmState(True, 15) if sm else None, {p.pkey: p for p in parts})


def _timed(fn: Callable[[], BackendResult]) -> tuple[BackendResult, float]:
    t0 = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t0


def _rows(
    backend: str, nodes: int, apply: Callable[[BackendState], BackendResult], sent: Callable[[], list[int]]
) -> list[str]:
    """The three runs against one server; ``sent`` gives the size of each state-changing request so far."""
    rows = []
    baseline: tuple[int, int] | None = None
    sm = backend == "switch"
    for run, want in (
        (f"first apply (empty {backend})", desired(nodes, sm=sm)),
        ("second apply, nothing changed", desired(nodes, sm=sm)),
        ("a node replaced", desired(nodes, sm=sm, replaced=True)),
    ):
        before = len(sent())
        result, took = _timed(lambda want=want: apply(want))
        assert result.ok, result.message
        sizes = sent()[before:]
        baseline = baseline or (len(sizes), sum(sizes))
        rows.append(_row(backend, nodes, run, len(sizes), sum(sizes), took, baseline))
    return rows


def switch_rows(nodes: int, os_env: dict[str, str]) -> list[str]:
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    try:
        switch = MlnxosContract(server)
        cfg = SwitchSm.model_validate(
            {"name": "leaf01", "url": switch.url, "username": "env:BENCH_SW_USER", "password": "env:BENCH_SW_PASSWORD"}
        )
        os_env.update(BENCH_SW_USER=SW_USER, BENCH_SW_PASSWORD=SW_PASSWORD)
        return _rows(
            "switch",
            nodes,
            lambda want: apply_switch(switch_connect(cfg), cfg, want),
            lambda: [len(c) for c in switch.changing_commands()],
        )
    finally:
        server.stop()


def ufm_rows(nodes: int, os_env: dict[str, str]) -> list[str]:
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    try:
        ufm = UfmContract(server)
        cfg = UfmSm.model_validate(
            {"url": ufm.url, "auth": "session", "username": "env:BENCH_UFM_USER", "password": "env:BENCH_UFM_PASSWORD"}
        )
        os_env.update(BENCH_UFM_USER=UFM_USER, BENCH_UFM_PASSWORD=UFM_PASSWORD)
        return _rows(
            "UFM",
            nodes,
            lambda want: apply_ufm(ufm_connect(cfg), cfg, want),
            lambda: [
                len(r.path) + (len(json.dumps(r.body)) if r.body is not None else 0) for r in ufm.changing_calls()
            ],
        )
    finally:
        server.stop()


def _row(backend: str, nodes: int, run: str, sent: int, size: int, took: float, baseline: tuple[int, int]) -> str:
    return (
        f"| {backend} | {nodes} | {run} | {sent} | {size / 1e3:.1f} kB | {took:.2f} s | "
        f"{sent / baseline[0]:.2%} | {size / baseline[1]:.2%} |"
    )


def run(switch_nodes: int, ufm_nodes: int) -> str:
    import os

    info = machine()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the contract servers' request log
    rows = switch_rows(switch_nodes, os.environ) + ufm_rows(ufm_nodes, os.environ)  # type: ignore[arg-type]
    lines = [
        "Against the contract servers of tests/contracts on 127.0.0.1 (not the products: the times are ibprov's "
        "side plus a loopback server). Baseline: re-pushing the whole configuration each run (the first apply's "
        "state-changing requests and what they carry). Targets (ours): nothing sent on a second run; a replaced node "
        "sends only what it touches (<= 1% of the baseline's bytes).",
        "",
        "| Machine | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in info.items()),
        "",
        "| Back end | Nodes | Run | State-changing requests | What they carry (commands / paths and JSON) | "
        "Wall time (login, read, diff, send) | Requests / baseline | Carried / baseline |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--switch-nodes", type=int, default=2000)
    parser.add_argument("--ufm-nodes", type=int, default=10000)
    parser.add_argument("--update-docs", action="store_true")
    args = parser.parse_args()
    text = run(args.switch_nodes, args.ufm_nodes)
    print(text)
    if args.update_docs:
        doc = DOCS.read_text(encoding="utf-8")
        if BEGIN not in doc:
            doc += (
                "\n## SM back ends: what a sync sends (issue 28)\n\n`bench/sm_backend_sync.py --update-docs`.\n\n"
                f"{BEGIN}\n{END}\n"
            )
        DOCS.write_text(replace_block(doc, BEGIN, END, text, where=DOCS), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
