"""ibsim's client slots: who holds them, and taking back the ones held by processes that are gone.

ibsim serves at most ten client processes (``IBSIM_MAX_CLIENTS``). A client gives its slot back when it
exits normally (umad2sim sends a disconnect from its exit path); a process killed by a signal (a diag
stopped by a timeout, a perftest double stopped by ``kill``, an OpenSM killed with SIGKILL) never does, and
its slot stays taken until ibsim exits. Ten such deaths use the fabric up: every later diag fails with
"can't open new connection".

ibsim's console lists the clients (``Attached``: ``Client N: pid P connected at "NODE" port 0x..., lid L,
qp Q [SM]``) and frees one (``X N``). NODE is the simulated node the client attached to (its ``SIM_HOST``);
P is the id umad2sim connected with (ibsim's ``umad2sim/sim_client.c``, ``sim_connect(sc, remote_mode ?
port : pid, ...)``): on a local socket the client's own ``getpid()``, i.e. in its PID namespace (a node
container's, or this host's); in remote mode (``IBSIM_SERVER_NAME`` set: the rack) the UDP port of the
socket it receives on, which it holds while it lives. So a slot is held by a live process when some process
on this host (root sees every container's processes in ``/proc``) has libumad2sim preloaded,
``SIM_HOST=NODE`` in its environment, and P as its innermost pid (``NSpid``) or as the local port of a UDP
socket among its open files (``/proc/PID/net/udp`` of its network namespace, by socket inode). Matching is
deliberately loose (any twin's process with that node and that pid or port counts): a live client taken for
dead would lose its fabric (and is left attached to nothing), a dead one taken for live only waits for the
next look.
A slot is freed only when two looks, :data:`CONFIRM_S` apart, both find no holder (a process that has just
connected is in ``/proc`` before it can be listed; one that has just exited normally has disconnected).

:func:`parse_attached` and :func:`unheld` are pure; :func:`sim_processes` reads ``/proc``.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONFIRM_S",
    "MAX_CLIENTS",
    "Client",
    "Holder",
    "SlotReport",
    "parse_attached",
    "reclaim",
    "sim_processes",
    "udp_ports",
    "unheld",
]

MAX_CLIENTS = 10  # ibsim's IBSIM_MAX_CLIENTS
CONFIRM_S = 1.0  # a slot is freed only when two looks this far apart find no holder
_CLIENT = re.compile(
    r'Client (\d+): pid (\d+) connected at "([^"]*)" port 0x([0-9a-fA-F]+), lid (\d+), qp (\d+) ?(SM)?', re.ASCII
)
_PRELOAD = "libumad2sim"


@dataclass(frozen=True)
class Client:
    """One taken slot, as ibsim's ``Attached`` lists it."""

    slot: int
    pid: int  # the id it connected with: its pid in its PID namespace, or (remote mode) its UDP port
    node: str  # the simulated node it attached to (its SIM_HOST)
    port_guid: int
    lid: int
    qp: int
    sm: bool  # attached as a subnet manager (ibsim lets one SM per node)


@dataclass(frozen=True)
class Holder:
    """A live process attached through libumad2sim: its pid on this host and its command name."""

    host_pid: int
    comm: str


@dataclass(frozen=True)
class SlotReport:
    """What one look at the slots found: the clients, who holds each, and the slots freed."""

    clients: tuple[Client, ...]
    holders: Mapping[int, Holder]  # slot -> its live holder
    freed: tuple[Client, ...] = ()

    @property
    def free(self) -> int:
        return MAX_CLIENTS - len(self.clients) + len(self.freed)

    def lines(self) -> list[str]:
        """``twin status``' lines: slots in use, each client and its holder (its command and its pid on this
        host), or ibsim's id of a client whose process is gone, and the slots just taken back."""
        out = [f"ibsim client slots: {len(self.clients) - len(self.freed)} of {MAX_CLIENTS} in use"]
        freed = {c.slot for c in self.freed}
        for client in self.clients:
            holder = self.holders.get(client.slot)
            who = f"{holder.comm} (pid {holder.host_pid})" if holder else f"client id {client.pid}"
            where = f"{who} on {client.node}{' as SM' if client.sm else ''}"
            if holder is None:
                where += ": its process is gone" + ("; taken back" if client.slot in freed else "")
            out.append(f"    slot {client.slot}: {where}")
        return out


def parse_attached(text: str) -> list[Client]:
    """The clients in ibsim console output (``Attached``), found anywhere on a line (after ``sim> `` prompts);
    a slot listed twice (two ``Attached`` in the text) counts once, its last listing."""
    found: dict[int, Client] = {}
    for m in _CLIENT.finditer(text):
        slot = int(m[1])
        found[slot] = Client(slot, int(m[2]), m[3], int(m[4], 16), int(m[5]), int(m[6]), m[7] == "SM")
    return [found[slot] for slot in sorted(found)]


def _environ(path: Path) -> dict[str, str]:
    try:
        raw = (path / "environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _ns_pid(path: Path) -> int | None:
    try:
        for line in (path / "status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError):
        return None
    return None


def sim_processes(proc: Path = Path("/proc")) -> dict[tuple[str, int], Holder]:
    """(SIM_HOST, pid in its namespace) -> the live process, for every process on this host that has
    libumad2sim preloaded (the twin's OpenSMs, diags and daemons, in its containers or on this host)."""
    out: dict[tuple[str, int], Holder] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        env = _environ(entry)
        if _PRELOAD not in env.get("LD_PRELOAD", "") or not env.get("SIM_HOST"):
            continue
        ns_pid = _ns_pid(entry)
        if ns_pid is None:
            continue
        try:
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        holder = Holder(int(entry.name), comm)
        out[(env["SIM_HOST"], ns_pid)] = holder
        if env.get("IBSIM_SERVER_NAME"):  # remote mode: ibsim knows the client by its UDP port
            for port in _udp_ports(entry):
                out[(env["SIM_HOST"], port)] = holder
    return out


def _udp_ports(entry: Path) -> set[int]:
    """The local ports of the UDP sockets process ``entry`` has open (umad2sim's remote mode opens IPv4
    sockets; IPv6 ones are read too, should a build resolve the server to an IPv6 address)."""
    try:
        inodes = {
            link[len("socket:[") : -1]
            for fd in (entry / "fd").iterdir()
            if (link := _readlink(fd)).startswith("socket:[")
        }
    except OSError:
        return set()
    ports: set[int] = set()
    for name in ("udp", "udp6"):
        try:
            table = (entry / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        ports.update(udp_ports(table, inodes))
    return ports


def udp_ports(table: Sequence[str], inodes: set[str]) -> list[int]:
    """The local ports of the rows of a ``/proc/net/udp`` table (header dropped) whose socket inode is in
    ``inodes``; rows that do not have the table's columns are passed over."""
    ports = []
    for row in table:
        cols = row.split()
        if len(cols) < 10 or ":" not in cols[1] or cols[9] not in inodes:
            continue
        with contextlib.suppress(ValueError):
            ports.append(int(cols[1].rsplit(":", 1)[1], 16))
    return ports


def _readlink(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def holders(clients: Sequence[Client], processes: Mapping[tuple[str, int], Holder]) -> dict[int, Holder]:
    """slot -> its live holder, for the clients that have one."""
    return {c.slot: h for c in clients if (h := processes.get((c.node, c.pid))) is not None}


def unheld(clients: Sequence[Client], processes: Mapping[tuple[str, int], Holder]) -> list[Client]:
    """The clients no live process holds."""
    held = holders(clients, processes)
    return [c for c in clients if c.slot not in held]


def reclaim(
    ask: Callable[[str], str],
    *,
    processes: Callable[[], Mapping[tuple[str, int], Holder]] = sim_processes,
    confirm: float = CONFIRM_S,
    sleep: Callable[[float], None] = time.sleep,
    free: bool = True,
) -> SlotReport:
    """Look at the slots through ``ask`` (sends one console command, returns the output it printed) and free
    each slot whose process is gone, seen so twice ``confirm`` seconds apart; ``free=False`` only looks."""
    clients = parse_attached(ask("Attached"))
    procs = processes()
    suspects = unheld(clients, procs)
    if not suspects or not free:
        return SlotReport(tuple(clients), holders(clients, procs))
    sleep(confirm)
    again = {c.slot: c for c in parse_attached(ask("Attached"))}
    procs = processes()
    gone = [c for c in unheld(list(again.values()), procs) if c in suspects]  # the same client, still unheld
    for client in gone:
        ask(f"X {client.slot}")
    return SlotReport(tuple(again.values()), holders(list(again.values()), procs), tuple(gone))
