#!/usr/bin/python3 -I
"""ib-healthcheck: is this node's InfiniBand fit for jobs? Small enough for Slurm's HealthCheckProgram.

Installed by the ibprov role ib_healthcheck as /usr/local/sbin/ib-healthcheck; reads its expectations from
/etc/ibprov/healthcheck.json (written by the same role). Python 3.9+ standard library only.

Checks, for every expected port, under the sysfs root (/sys/class/infiniband):
  ports/N/state       "4: ACTIVE"
  ports/N/phys_state  "5: LinkUp"
  ports/N/rate        "200 Gb/sec (4X HDR)": the data rate of that width and speed >= the expected rate
  ports/N/pkeys/*     "0x8010": every expected P_Key, by its 15-bit partition key and its full-member bit
  device/current_link_speed, current_link_width   "16.0 GT/s PCIe" (or "16 GT/s"), "8": the HCA's PCIe link
                      carries its fastest expected port's rate (GT/s x encoding efficiency x width); missing
                      files (mlx4) or an "Unknown" speed are no problem: nothing is guessed
and the locked-memory limit a job gets: slurmd's (its children, jobs and this program alike, inherit it),
read from /proc/<slurmd>/limits; without a running slurmd, this process's own limit.

Prints one line per problem and exits 1 on any problem, 0 when healthy. With "drain" in the configuration and
scontrol on PATH, it then drains the node (problems) or resumes it (healthy) the way NHC does: a node drained or
downed by someone else keeps its state and reason; only a node whose reason starts with the configured prefix
is resumed. --dry-run prints the scontrol command instead; --no-slurm only checks.

Everything finishes well inside Slurm's 60 s kill limit: each command gets COMMAND_TIMEOUT_S and the whole run
DEADLINE_S (an alarm), after which it stops without touching Slurm.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from typing import Any, NamedTuple

CONFIG = "/etc/ibprov/healthcheck.json"
SYSFS_ROOT = "/sys/class/infiniband"
PROC_ROOT = "/proc"
SLURMD_PIDFILES = ("/run/slurmd.pid", "/var/run/slurmd.pid")
DEFAULT_PREFIX = "ibprov: node.health"
DEADLINE_S = 40  # the whole run; Slurm kills a HealthCheckProgram after 60 s
COMMAND_TIMEOUT_S = 10  # sinfo, scontrol: a controller that does not answer must not hold the node's check
# Slurm 22.05 takes a 5,000-character reason whole (measured for `ibprov verify --drain`): the limit is what
# people read, one line of `sinfo -R -o '%64E %N'` and `scontrol show node`; every problem is on stdout.
REASON_MAX = 64
SEP = "\x1f"  # sinfo's field separator: reasons may hold '|' and ',', never the unit separator

# The P_Key contract of ibprov/pkey.py (tests/roles/test_ib_healthcheck.py proves the copies agree).
FULL_MEMBER_BIT = 0x8000
BASE_MASK = 0x7FFF
MAX_WIRE = BASE_MASK | FULL_MEMBER_BIT
# Per-lane data rate in Gb/s, as ibprov.clusterspec.units.LANE_DATA_GBPS (the same test proves it).
LANE_DATA_GBPS = {
    "SDR": 2.0,
    "DDR": 4.0,
    "QDR": 8.0,
    "FDR10": 10.0,
    "FDR": 13.64,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}
# PCIe per-lane transfer rate (GT/s) and encoding efficiency (8b/10b for Gen1-2, 128b/130b for Gen3-5, 242B/256B
# FLIT for Gen6), as ibprov.clusterspec.physical's PcieLink has them (a test proves it).
PCIE_GT_S = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
PCIE_EFFICIENCY = {1: 0.8, 2: 0.8, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256}
_GT_S = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*GT/s")
_RATE = re.compile(r"^\s*([0-9.]+)\s*Gb/sec(?:\s*\((\d+)X\s+([A-Z0-9]+)\))?", re.IGNORECASE)
_LIMIT = re.compile(r"^Max locked memory\s+(\S+)\s+(\S+)\s+(\S+)", re.MULTILINE)
# sinfo's state flags of a node in transition (reboot requested or issued, powering up or down, powered off):
# left alone, as NHC leaves a node that is rebooting
_TRANSIENT = set("@^#%!~")


class Problem(NamedTuple):
    text: str  # the line printed: "mlx5_0 port 1: state DOWN, expected ACTIVE"
    short: str  # its words in a drain reason: "mlx5_0:1 DOWN"


class Action(NamedTuple):
    verb: str  # "drain", "resume" or "keep"
    why: str
    argv: list[str] | None = None


class Deadline(Exception):
    pass


def data_rate_gbps(speed: str, lanes: int) -> float | None:
    per_lane = LANE_DATA_GBPS.get(speed.upper())
    return None if per_lane is None else round(per_lane * lanes, 2)


def parse_rate(text: str) -> float | None:
    """The data rate of a sysfs rate ("200 Gb/sec (4X HDR)" -> 200.0, "56 Gb/sec (4X FDR)" -> 54.56), as
    `ibprov verify --nodes` reads it; the signalling number when the speed is unknown; None if unreadable."""
    m = _RATE.match(text)
    if m is None:
        return None
    if m.group(2) and m.group(3):
        rate = data_rate_gbps(m.group(3), int(m.group(2)))
        if rate is not None:
            return rate
    try:
        return float(m.group(1))
    except ValueError:
        return None


def parse_pkey(text: str) -> int:
    value = int(text, 16) if text.strip().lower().startswith("0x") else int(text)
    if not 0 <= value <= MAX_WIRE:
        raise ValueError(f"P_Key {text} is not 16 bits")
    return value


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _state_word(text: str) -> str:
    """ "4: ACTIVE" -> "ACTIVE"."""
    return text.split(":", 1)[1].strip() if ":" in text else text.strip()


def check_pkeys(name: str, short: str, expected: list[str], table: set[int]) -> list[Problem]:
    """Each expected entry must be in the table as it is: same partition key (low 15 bits), same membership."""
    out = []
    bases = {entry & BASE_MASK: entry for entry in table}
    for text in expected:
        want = parse_pkey(text)
        if want in table:
            continue
        held = bases.get(want & BASE_MASK)
        membership = "full" if want & FULL_MEMBER_BIT else "limited"
        if held is None:
            out.append(Problem(f"{name}: P_Key 0x{want:04x} ({membership}) missing", f"{short} pkey 0x{want:04x}"))
        else:
            other = "full" if held & FULL_MEMBER_BIT else "limited"
            out.append(
                Problem(
                    f"{name}: P_Key 0x{want & BASE_MASK:04x} held as {other} member (0x{held:04x}), "
                    f"expected {membership} (0x{want:04x})",
                    f"{short} pkey 0x{want:04x} {other}",
                )
            )
    return out


def _pkey_table(directory: str) -> set[int] | None:
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    table = set()
    for entry in names:
        text = _read(os.path.join(directory, entry))
        if text is None:
            continue
        try:
            value = parse_pkey(text)
        except ValueError:
            continue
        if value & BASE_MASK:  # 0x0000 and 0x8000 are empty entries
            table.add(value)
    return table


def check_port(root: str, spec: dict[str, Any]) -> list[Problem]:
    device, port = str(spec["device"]), int(spec["port"])
    name, short = f"{device} port {port}", f"{device}:{port}"
    if not os.path.isdir(root):
        return [Problem(f"{name}: no {root} (no InfiniBand driver loaded?)", f"{device} missing")]
    if not os.path.isdir(os.path.join(root, device)):
        seen = ", ".join(sorted(os.listdir(root))) or "none"
        return [Problem(f"{name}: device {device} not found in {root} (devices: {seen})", f"{device} missing")]
    base = os.path.join(root, device, "ports", str(port))
    state = _read(os.path.join(base, "state"))
    if state is None:
        return [Problem(f"{name}: no such port ({base}/state unreadable)", f"{short} missing")]
    out = []
    word = _state_word(state)
    if word != "ACTIVE":
        out.append(Problem(f"{name}: state {word}, expected ACTIVE", f"{short} {word}"))
    phys = _state_word(_read(os.path.join(base, "phys_state")) or "unreadable")
    if phys != "LinkUp":
        out.append(Problem(f"{name}: physical state {phys}, expected LinkUp", f"{short} {phys}"))
    want_rate = spec.get("rate_gbps")
    if want_rate is not None and word == "ACTIVE":  # a port that is not up has no meaningful rate
        text = _read(os.path.join(base, "rate")) or ""
        rate = parse_rate(text)
        if rate is None:
            out.append(Problem(f"{name}: rate unreadable ({text!r}), expected >= {want_rate:g} Gb/s", f"{short} rate"))
        elif rate + 0.01 < float(want_rate):
            out.append(
                Problem(
                    f"{name}: rate {text} ({rate:g} Gb/s data), expected >= {float(want_rate):g} Gb/s",
                    f"{short} rate {rate:g}<{float(want_rate):g}",
                )
            )
    pkeys = spec.get("pkeys") or []
    if pkeys:
        table = _pkey_table(os.path.join(base, "pkeys"))
        if table is None:
            out.append(Problem(f"{name}: P_Key table unreadable ({base}/pkeys)", f"{short} pkeys"))
        else:
            out += check_pkeys(name, short, pkeys, table)
    return out


def pcie_generation(text: str | None) -> int | None:
    """A sysfs current_link_speed ("16.0 GT/s PCIe", older kernels "16 GT/s") -> 4; None for "Unknown", an
    empty or missing file, or a rate no generation has."""
    m = _GT_S.search(text or "")
    if m is None:
        return None
    gt_s = float(m.group(1))
    return next((gen for gen, rate in PCIE_GT_S.items() if abs(rate - gt_s) < 0.01), None)


def pcie_width(text: str | None) -> int | None:
    """A sysfs current_link_width ("8", or "x8") -> 8; None for 0 (no link), empty or missing."""
    value = (text or "").strip().lstrip("xX")
    return int(value) if value.isdigit() and int(value) > 0 else None


def pcie_gbps(generation: int, width: int) -> float:
    """Usable Gb/s of a PCIe link (Gen4 x8 -> 126.03)."""
    return PCIE_GT_S[generation] * PCIE_EFFICIENCY[generation] * width


def check_pcie(root: str, specs: list[dict[str, Any]]) -> list[Problem]:
    """Each expected device's PCIe link (sysfs <root>/<device>/device/current_link_*) must carry its fastest
    expected port's rate (a dual-port card carries one port at its full rate, as ibprov verify --physical
    judges it). Missing files or an unknown speed: nothing said."""
    need: dict[str, float] = {}
    for spec in specs:
        rate = spec.get("rate_gbps")
        if rate is not None:
            device = str(spec["device"])
            need[device] = max(need.get(device, 0.0), float(rate))
    out = []
    for device, rate in need.items():
        base = os.path.join(root, device, "device")
        generation = pcie_generation(_read(os.path.join(base, "current_link_speed")))
        width = pcie_width(_read(os.path.join(base, "current_link_width")))
        if generation is None or width is None:
            continue
        usable = pcie_gbps(generation, width)
        if usable < rate:
            out.append(
                Problem(
                    f"{device}: PCIe Gen{generation} x{width} = {usable:.0f} Gb/s usable < {rate:g} Gb/s planned",
                    f"{device} PCIe Gen{generation} x{width}",
                )
            )
    return out


def _comm(proc: str, pid: str) -> str:
    return _read(os.path.join(proc, pid, "comm")) or ""


def slurmd_pid(proc: str = PROC_ROOT) -> str | None:
    """slurmd's PID: this program's parent when slurmd runs it, else the one in slurmd's PID file (Slurm's
    default SlurmdPidFile), else the first slurmd in /proc."""
    parent = str(os.getppid())
    if _comm(proc, parent) == "slurmd":
        return parent
    for pidfile in SLURMD_PIDFILES:
        pid = (_read(pidfile) or "").strip()
        if pid.isdigit() and _comm(proc, pid) == "slurmd":
            return pid
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return None
    return next((p for p in pids if _comm(proc, p) == "slurmd"), None)


def _kib(value: str, unit: str) -> int | None:
    if value == "unlimited":
        return None
    return int(value) // 1024 if unit == "bytes" else int(value)


def memlock_kib(proc: str = PROC_ROOT) -> tuple[int | None, str]:
    """The soft locked-memory limit jobs get (None = unlimited) and whose it is. slurmd's children (jobs and
    this program) inherit slurmd's limits, which come from its systemd unit (LimitMEMLOCK), not from
    /etc/security/limits.d (PAM applies those to logins only): so slurmd's limit is read, from /proc."""
    pid = slurmd_pid(proc)
    if pid is not None:
        m = _LIMIT.search(_read(os.path.join(proc, pid, "limits")) or "")
        if m is not None:
            try:
                return _kib(m.group(1), m.group(3)), f"slurmd (pid {pid})"
            except ValueError:
                pass
    soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return (None if soft == resource.RLIM_INFINITY else soft // 1024), "this process (no slurmd running)"


def check_memlock(expected: Any, proc: str = PROC_ROOT) -> list[Problem]:
    if expected is None:
        return []
    have, whose = memlock_kib(proc)
    if have is None:
        return []
    if expected == "unlimited":
        return [Problem(f"memlock {have} KiB for {whose}, expected unlimited", f"memlock {have}K")]
    if have < int(expected):
        return [Problem(f"memlock {have} KiB for {whose}, expected >= {int(expected)} KiB", f"memlock {have}K")]
    return []


def check(config: dict[str, Any], proc: str = PROC_ROOT) -> list[Problem]:
    root = str(config.get("sysfs_root") or SYSFS_ROOT)
    out: list[Problem] = []
    specs = config.get("ports") or []
    for spec in specs:
        out += check_port(root, spec)
    out += check_pcie(root, specs)
    out += check_memlock(config.get("memlock"), proc)
    return out


# ----------------------------------------------------------------------------------------------- Slurm
def reason_for(prefix: str, problems: list[Problem]) -> str:
    """ "<prefix> <first problem's short words> (+N)", at most REASON_MAX characters, printable ASCII only."""
    more = f" (+{len(problems) - 1})" if len(problems) > 1 else ""
    head = prefix.rstrip() + " "
    words = "".join(c if c.isprintable() and c != '"' else " " for c in problems[0].short)
    words = " ".join(words.split())
    room = REASON_MAX - len(head) - len(more)
    if len(words) > room:
        words = words[: max(room - 3, 0)] + "..."
    return (head + words).rstrip() + more


def update_argv(node: str, state: str, reason: str | None = None) -> list[str]:
    argv = ["scontrol", "update", f"NodeName={node}", f"State={state}"]
    if reason is not None:
        argv.append(f"Reason={reason}")
    return argv


def decide(node: str, state: str, reason: str, prefix: str, problems: list[Problem]) -> Action:
    """NHC's convention, from sinfo's extended state (%T, lower case) and reason (%E, "none" when empty)."""
    reason = "" if reason.strip().lower() in ("", "none", "(null)") else reason.strip()
    mine = reason.startswith(prefix)
    drained = "drain" in state
    flags = set(state) & _TRANSIENT
    if flags:
        return Action("keep", f"state {state}: rebooting or powering, left alone")
    if state.startswith(("down", "fail", "unknown", "future")) and not drained:
        return Action("keep", f"state {state}: left to Slurm")
    if problems:
        new = reason_for(prefix, problems)
        if drained and not mine:
            return Action("keep", f"drained by someone else ({reason or 'no reason'}): their reason kept")
        if drained and reason == new:
            return Action("keep", "already drained for this")
        return Action("drain", new, update_argv(node, "DRAIN", new))
    if drained and mine:
        return Action("resume", f"healthy again (was: {reason})", update_argv(node, "RESUME"))
    if drained:
        return Action("keep", f"drained by someone else ({reason or 'no reason'}): never resumed here")
    return Action("keep", "healthy")


def _run(argv: list[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return 124, f"{argv[0]} did not answer within {COMMAND_TIMEOUT_S} s"
    except OSError as exc:
        return 127, f"{argv[0]}: {exc.strerror}"
    return done.returncode, (done.stdout if done.returncode == 0 else (done.stderr or done.stdout)).strip()


def node_state(node: str) -> tuple[tuple[str, str] | None, str]:
    """(state, reason) of ``node`` as sinfo shows it, or None and why not."""
    rc, out = _run(["sinfo", "--noheader", "--Node", "--nodes", node, f"--format=%T{SEP}%E"])
    if rc != 0:
        return None, f"sinfo failed: {out or rc}"
    line = next((x for x in out.splitlines() if SEP in x), None)
    if line is None:
        return None, f"Slurm does not know node {node}"
    state, reason = line.split(SEP, 1)
    return (state.strip().lower(), reason.strip()), ""


def act(node: str, config: dict[str, Any], problems: list[Problem], dry_run: bool) -> list[str]:
    """Drain or resume through scontrol; the notes (for stderr) say what was done and why."""
    prefix = str(config.get("reason_prefix") or DEFAULT_PREFIX)
    if shutil.which("scontrol") is None or shutil.which("sinfo") is None:
        return ["scontrol/sinfo not on PATH: Slurm not touched"]
    seen, why = node_state(node)
    if seen is None:
        return [f"{why}: Slurm not touched"]
    action = decide(node, seen[0], seen[1], prefix, problems)
    if action.argv is None:
        return [f"{node}: {action.why}"]
    if dry_run:
        print(shlex.join(action.argv))
        return [f"{node}: dry run, would {action.verb}"]
    rc, out = _run(action.argv)
    if rc != 0:
        return [f"{node}: {shlex.join(action.argv)} failed: {out or rc}"]
    return [f"{node}: {action.verb}: {action.why}"]


def _deadline(_signum: int, _frame: Any) -> None:
    raise Deadline()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ib-healthcheck", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--config", default=CONFIG, help=f"expectations file (default {CONFIG})")
    parser.add_argument("--node", help="Slurm node name (default: the configuration's, else hostname -s)")
    parser.add_argument("--dry-run", action="store_true", help="print the scontrol command instead of running it")
    parser.add_argument("--no-slurm", action="store_true", help="only check; never ask or change Slurm")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _deadline)
    signal.alarm(DEADLINE_S)
    try:
        try:
            with open(args.config, encoding="utf-8") as handle:
                config = json.load(handle)
            if not isinstance(config, dict):
                raise ValueError("not a JSON object")
            problems = check(config)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"ib-healthcheck: cannot use {args.config}: {exc}")
            return 1
        for problem in problems:
            print(problem.text)
        if config.get("drain") and not args.no_slurm:
            node = args.node or str(config.get("node") or socket.gethostname().split(".", 1)[0])
            for note in act(node, config, problems, args.dry_run):
                print(f"ib-healthcheck: {note}", file=sys.stderr)
    except Deadline:
        print(f"ib-healthcheck: gave up after {DEADLINE_S} s (Slurm kills health checks at 60 s)")
        return 1
    finally:
        signal.alarm(0)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
