"""ibsim's slot list read from its console (a real capture of ibsim 0.10's ``Attached``), and which slots the twin
takes back: only those no live process holds, seen so twice (a client that connects or exits meanwhile is left
alone)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from captures import read_capture

from ibprov.twin.slots import (
    Client,
    Holder,
    SlotReport,
    parse_attached,
    reclaim,
    sim_processes,
    udp_ports,
    unheld,
)

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
        "    slot 0: opensm (pid 900) on H0 as SM",
        "    slot 1: client id 6321 on H2: its process is gone; taken back",
        "    slot 2: ibping (pid 902) on H3",
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


# /proc/PID/net/udp of an OpenSM in a twin rack container (ibsim remote mode), read on this machine
UDP_TABLE = """\
   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
 3923: 0300590A:AF20 0200590A:1B9E 01 00000000:00000000 00:00000000 00000000     0        0 236698 2 00000000a036f312 0
 9780: 0300590A:8601 0200590A:1B9F 01 00000000:00000000 00:00000000 00000000     0        0 236697 2 00000000a9e78f7a 0
 9781: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 111111 2 00000000a9e78f7b 0
"""


def test_in_remote_mode_a_client_is_held_by_the_process_with_its_udp_port(tmp_path: Path) -> None:
    """ibsim lists a remote client by the UDP port it receives on (0x8601 = 34305), not by its pid: the
    process that has that socket open holds the slot; another process's socket in the same table does not."""
    lib = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
    env = {"LD_PRELOAD": lib, "SIM_HOST": "H-sm01-mlx5_0", "IBSIM_SERVER_NAME": "10.89.0.2"}
    entry = tmp_path / "2299"
    (entry / "fd").mkdir(parents=True)
    (entry / "net").mkdir()
    (entry / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in env.items()) + b"\0")
    (entry / "status").write_text("Name:\topensm\nNSpid:\t2299\t1497\n")
    (entry / "comm").write_text("opensm\n")
    (entry / "net" / "udp").write_text(UDP_TABLE)
    for fd, inode in (("4", "236696"), ("5", "236697"), ("6", "236698")):
        (entry / "fd" / fd).symlink_to(f"socket:[{inode}]")
    found = sim_processes(tmp_path)
    assert found[("H-sm01-mlx5_0", 34305)] == Holder(2299, "opensm")
    assert found[("H-sm01-mlx5_0", 0xAF20)] == Holder(2299, "opensm")
    assert ("H-sm01-mlx5_0", 0x35) not in found, "a socket of another process in the namespace"
    (entry / "net" / "udp6").write_text(UDP_TABLE.splitlines()[0] + "\n" + (
        "   12: 00000000000000000000000000000000:C350 00000000000000000000000000000000:0000 07 "
        "00000000:00000000 00:00000000 00000000     0        0 236696 2 00000000a036f399 0\n"))  # fmt: skip
    assert sim_processes(tmp_path)[("H-sm01-mlx5_0", 0xC350)] == Holder(2299, "opensm"), "an IPv6 socket too"
    client = parse_attached('Client 0: pid 34305 connected at "H-sm01-mlx5_0" port 0x2004b370ffea501, lid 1, qp 0 SM')
    assert unheld(client, found) == []


def test_udp_rows_without_the_tables_columns_are_passed_over() -> None:
    assert udp_ports(
        ["garbage", " 1: 0100007F:zz 0:0 07 x x x x 0 0 5", *UDP_TABLE.splitlines()[1:]], {"5", "236697"}
    ) == [34305]
