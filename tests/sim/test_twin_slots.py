"""ibsim's ten client slots on the real ibsim 0.10 / umad2sim: a process killed by a signal keeps its slot until
ibsim exits; the twin finds the slots no live process holds and takes them back (never a live client's), so a
timed-out diag, a killed server or a SIGKILLed OpenSM never uses the fabric up."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from captures import capture_path

from ibprov.twin.sim import SimError, SimFabric, start_sim
from ibprov.twin.slots import MAX_CLIENTS

pytestmark = pytest.mark.sim
HOSTS = ("H0", "H1", "H2", "H3", "H4")
WAIT_S = 30.0  # bound on every wait below (a loaded 2-core machine answers in well under a second)


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[SimFabric]:
    net = tmp_path / "ring5.net"
    net.write_text(capture_path("routing/ring5.net").read_text())
    fabric = start_sim(net, tmp_path / "sim")
    try:
        yield fabric
    finally:
        fabric.stop()


def attached(sim: SimFabric) -> int:
    return len(sim.slots(free=False).clients)


def wait_attached(sim: SimFabric, count: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while (now := attached(sim)) != count:
        assert time.monotonic() < deadline, f"waited {WAIT_S:g} s for {count} ibsim clients, {now} attached"
        time.sleep(0.2)


def servers(sim: SimFabric, count: int) -> list[subprocess.Popen[bytes]]:
    """``ibping -S`` servers: each holds one slot for as long as it runs."""
    (sim.workdir / "clients").mkdir(exist_ok=True)
    return [
        subprocess.Popen(
            ["ibping", "-S"],
            env=sim.env(HOSTS[i % len(HOSTS)]),
            cwd=sim.workdir / "clients",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(count)
    ]


def kill(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=WAIT_S)


def test_killed_clients_keep_their_slots_until_taken_back_and_then_the_full_fabric_runs_diags_again(
    sim: SimFabric,
) -> None:
    procs = servers(sim, MAX_CLIENTS)
    wait_attached(sim, MAX_CLIENTS)
    refused = sim.run(["ibnetdiscover"], "H0", timeout=WAIT_S)
    assert refused.returncode != 0  # ten slots taken: ibsim turns the eleventh client away
    kill(procs)
    looked = sim.slots(free=False)
    assert len(looked.clients) == MAX_CLIENTS  # killed: no slot came back by itself
    assert not looked.holders
    assert all(line.endswith("its process is gone") for line in looked.lines()[1:])
    report = sim.slots()
    assert sorted(c.slot for c in report.freed) == list(range(MAX_CLIENTS))
    assert attached(sim) == 0
    assert sim.run(["ibnetdiscover"], "H0", timeout=WAIT_S).returncode == 0


def test_live_clients_are_never_taken_back(sim: SimFabric) -> None:
    live, dead = servers(sim, 3), servers(sim, 2)
    try:
        wait_attached(sim, 5)
        kill(dead)
        report = sim.slots()
        assert {c.pid for c in report.freed} == {p.pid for p in dead}
        assert {c.pid for c in sim.slots(free=False).clients} == {p.pid for p in live}
        assert set(report.holders) == {c.slot for c in report.clients if c.pid in {p.pid for p in live}}
        assert {h.comm for h in report.holders.values()} == {"ibping"}
    finally:
        kill(live)


def test_a_diag_stopped_by_its_timeout_gives_its_slot_back(sim: SimFabric) -> None:
    with pytest.raises(SimError, match=r"did not finish within 2s on the twin \(its ibsim client slot taken back"):
        sim.run(["ibping", "-S"], "H2", timeout=2)
    assert attached(sim) == 0


def test_a_sigkilled_opensm_frees_its_sm_slot_so_an_sm_can_start_on_that_node_again(sim: SimFabric) -> None:
    first = sim.start_opensm("H1", name="first")
    first.expect("SUBNET UP")
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(timeout=WAIT_S)
    report = sim.slots()
    assert [(c.node, c.sm) for c in report.freed] == [("H1", True)]
    second = sim.start_opensm("H1", name="second")
    second.expect("SUBNET UP")
