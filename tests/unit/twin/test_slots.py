"""ibsim's slot list read from its console (a real capture of ibsim 0.10's ``Attached``), and which slots the twin
takes back: only those no live process holds, seen so twice (a client that connects or exits meanwhile is left
alone)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from captures import read_capture

from ibprov.twin.slots import Client, Holder, SlotReport, parse_attached, reclaim, sim_processes, unheld

ATTACHED = read_capture("ibsim/attached-opensm-and-two-ibping-one-killed-v0.10.txt")
OPENSM, PING2, PING3 = parse_attached(ATTACHED)


def test_attached_lists_each_slot_with_its_pid_node_port_and_sm_flag() -> None:
    assert Client(0, 6311, "H0", 0x100001, 1, 0, True) == OPENSM
    assert Client(1, 6321, "H2", 0x100005, 8, 0, False) == PING2
    assert Client(2, 6322, "H3", 0x100007, 9, 0, False) == PING3


def test_clients_after_prompts_and_a_slot_listed_twice_count_once() -> None:
    text = "sim> " + ATTACHED.splitlines()[1] + "\nsim> sim> " + ATTACHED
    assert [c.slot for c in parse_attached(text)] == [0, 1, 2]
    assert parse_attached("sim> ") == []


def test_a_client_is_held_only_by_a_live_process_on_its_node_with_its_pid() -> None:
    procs = {("H0", 6311): Holder(900, "opensm"), ("H3", 6321): Holder(901, "ibping"), ("H3", 6322): Holder(902, "x")}
    assert unheld([OPENSM, PING2, PING3], procs) == [PING2]  # pid 6321 lives, but on another node


class Console:
    """ibsim's console played from a script of ``Attached`` answers; records what was typed."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.typed: list[str] = []

    def __call__(self, command: str) -> str:
        self.typed.append(command)
        return self.answers.pop(0) if command == "Attached" else "sim> "


def run(console: Console, *looks: Mapping[tuple[str, int], Holder]) -> SlotReport:
    views = list(looks)
    return reclaim(console, processes=lambda: views.pop(0), sleep=lambda _s: None)


def test_a_slot_whose_process_is_gone_in_two_looks_is_freed_and_live_ones_are_kept() -> None:
    live = {("H0", 6311): Holder(900, "opensm"), ("H3", 6322): Holder(902, "ibping")}
    console = Console(ATTACHED, ATTACHED)
    report = run(console, live, live)
    assert console.typed == ["Attached", "Attached", "X 1"]
    assert report.freed == (PING2,)
    assert report.free == 8
    assert report.lines() == [
        "ibsim client slots: 2 of 10 in use",
        "    slot 0: opensm (pid 6311) on H0 as SM",
        "    slot 1: pid 6321 on H2: its process is gone; taken back",
        "    slot 2: ibping (pid 6322) on H3",
    ]


def test_a_process_seen_in_the_second_look_is_not_freed() -> None:
    first = {("H0", 6311): Holder(900, "opensm")}
    second = {**first, ("H2", 6321): Holder(903, "ibping"), ("H3", 6322): Holder(902, "ibping")}
    console = Console(ATTACHED, ATTACHED)
    assert run(console, first, second).freed == ()
    assert console.typed == ["Attached", "Attached"]


def test_a_slot_taken_by_another_client_between_the_looks_is_not_freed() -> None:
    newcomer = ATTACHED.replace("pid 6321", "pid 7000")  # slot 1 freed by its client and taken by a new one
    console = Console(ATTACHED, newcomer)
    procs = {("H0", 6311): Holder(900, "opensm"), ("H3", 6322): Holder(902, "ibping")}
    assert run(console, procs, procs).freed == ()  # pid 7000 is not the client first seen gone
    assert console.typed == ["Attached", "Attached"]


def test_looking_only_frees_nothing() -> None:
    console = Console(ATTACHED)
    report = reclaim(console, processes=dict, free=False)
    assert console.typed == ["Attached"]
    assert report.freed == ()
    assert len(report.clients) == 3


def test_processes_are_found_by_preloaded_umad2sim_sim_host_and_innermost_pid(tmp_path: Path) -> None:
    def process(pid: int, env: dict[str, str], nspid: str, comm: str) -> None:
        entry = tmp_path / str(pid)
        entry.mkdir()
        (entry / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in env.items()) + b"\0")
        (entry / "status").write_text(f"Name:\t{comm}\nNSpid:\t{nspid}\n")
        (entry / "comm").write_text(comm + "\n")

    lib = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
    process(4100, {"LD_PRELOAD": lib, "SIM_HOST": "H-node01"}, "4100\t212", "opensm")  # in a container
    process(4200, {"LD_PRELOAD": lib, "SIM_HOST": "H-probe"}, "4200", "ibnetdiscover")  # on this host
    process(4300, {"SIM_HOST": "H-node02"}, "4300\t7", "bash")  # not attached through umad2sim
    process(4400, {"LD_PRELOAD": lib}, "4400\t8", "sshd")  # no SIM_HOST
    (tmp_path / "self").mkdir()
    assert sim_processes(tmp_path) == {
        ("H-node01", 212): Holder(4100, "opensm"),
        ("H-probe", 4200): Holder(4200, "ibnetdiscover"),
    }
