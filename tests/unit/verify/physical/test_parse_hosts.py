"""Reading a fabric's probe outputs in forked worker processes gives what reading them in this process gives:
host for host, every field, every section (the lazily read ones too), in the order given; below the threshold,
or with one process asked for, no worker is started."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path

import phykit
import pytest

from ibprov.probes.phyprobe import MARK, parse_phy_probe
from ibprov.verify.physical import collect
from ibprov.verify.physical.collect import parse_hosts


def output(host: int) -> str:
    """A host's probe output: two HCAs, each port the real NDR capture with its own serial and raw BER."""
    lines = [f"{MARK}tools", "mstlink"]
    for j in range(2):
        port = phykit.set_value(phykit.dac_text(), "Vendor Serial Number", f"SN{host:04d}{j}")
        port = phykit.set_value(port, "Raw Physical BER", f"{1 + host % 9}E-{8 + j}")
        lines += [f"{MARK}device mlx5_{j}", f"fw_ver=28.46.{3048 + host % 2}", "board_id=MT_0000000838"]
        lines.append(f"pci=0000:{0x18 + j:02x}:00.0|32.0 GT/s PCIe|16|32.0 GT/s PCIe|16|{j}")
        lines += [f"{MARK}link mlx5_{j} 1", port, "rc=0"]
    lines += [f"{MARK}gpus", f"0000:30:00.0 {host % 2}"]
    return "\n".join(lines) + "\n"


def compare_in_workers() -> None:
    """Run in a fresh interpreter (a test process may run threads, and a process with threads never forks)."""
    assert threading.active_count() == 1
    collect.PARALLEL_FROM = 8
    collect._CHUNK = 3  # several tasks per worker, results in order
    outputs = {f"gpu{i:03d}": output(i) for i in range(23)}  # an odd count: the last task is short
    started = []
    fork = multiprocessing.get_context("fork")
    real_pool = fork.Pool

    def pool(processes: int) -> object:
        started.append(processes)
        return real_pool(processes)

    fork.Pool = pool  # type: ignore[method-assign,assignment]
    in_workers = parse_hosts(outputs, processes=2)
    alone = {host: parse_phy_probe(text) for host, text in outputs.items()}
    assert started == [2]
    assert list(in_workers) == list(outputs)
    assert in_workers == alone
    for host, seen in in_workers.items():
        for name, dev in seen.devices.items():
            for port, reading in dev.links.items():
                assert dict(reading.sections) == dict(alone[host].devices[name].links[port].sections)
    assert in_workers["gpu007"].devices["mlx5_1"].links[1].module.serial == "SN00071"  # type: ignore[union-attr]


def test_workers_read_the_same_as_one_process() -> None:
    here = Path(__file__).resolve().parent
    path = os.pathsep.join([str(here), str(here.parents[2]), str(here.parents[3])])
    done = subprocess.run(
        [sys.executable, "-c", "import test_parse_hosts; test_parse_hosts.compare_in_workers()"],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_process_with_threads_reads_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pool(*_args: object) -> object:
        raise AssertionError("a worker process was forked beside a thread")

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    monkeypatch.setattr(collect, "PARALLEL_FROM", 1)
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    few = {f"gpu{i}": output(i) for i in range(3)}
    assert parse_hosts(few, processes=2) == {h: parse_phy_probe(t) for h, t in few.items()}


def test_few_hosts_or_one_process_start_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pool(*_args: object) -> object:
        raise AssertionError("a worker process was started")

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    few = {f"gpu{i}": output(i) for i in range(3)}
    assert parse_hosts(few) == {h: parse_phy_probe(t) for h, t in few.items()}
    monkeypatch.setattr(collect, "PARALLEL_FROM", 1)
    assert parse_hosts(few, processes=1) == {h: parse_phy_probe(t) for h, t in few.items()}
