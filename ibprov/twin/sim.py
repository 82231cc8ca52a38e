"""Run the twin: ibsim on a net file, and real OpenSM / infiniband-diags attached to it through libumad2sim.

Each SimFabric has its own ibsim socket name and working directory, so several can run side by side;
it only ever stops the processes it started.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ibprov.clusterspec.units import Speed
from ibprov.errors import CollectError
from ibprov.twin.slots import SlotReport, reclaim
from ibprov.twinnet.limits import SIM_SPEEDS, SIMULATOR

UMAD2SIM = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
READY = "Network simulator ready."
# Bound on waiting for an OpenSM state (SUBNET UP, MASTER, STANDBY): a sweep takes about a second here, but a
# 2-core machine with every core busy has been seen to take over 30 s; a wait that succeeds returns at once.
SM_WAIT_S = 120.0
IBSIM_ENV = "IBPROV_IBSIM"  # another ibsim binary to run the twin with (e.g. one that runs NDR)
_NDR_PROBE = (
    'switchguid=0x0200000000000100\nSwitch\t2 "S-probe"\t\t# "probe" enhanced port 0\n'
    '[1]\t"H-probe"[1]\tw=2 e=8\n\ncaguid=0x0200000000000200\nCa\t1 "H-probe"\t\t# "probe"\n'
    '[1]\t"S-probe"[1]\tw=2 e=8\n'
)


class SimError(CollectError):
    """The simulated fabric could not be started or used."""


def ibsim_binary() -> str:
    """The ibsim the twin runs: ``$IBPROV_IBSIM`` if set, else ``ibsim`` from PATH (Debian's ibsim-utils)."""
    return os.environ.get(IBSIM_ENV) or "ibsim"


@functools.lru_cache(maxsize=8)
def _probe(binary: str, _stamp: float) -> tuple[str, frozenset[Speed]]:
    speeds = set(SIM_SPEEDS)
    with tempfile.TemporaryDirectory(prefix="ibprov-ibsim-probe-") as tmp:
        net = Path(tmp) / "net"
        net.write_text(_NDR_PROBE)
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        env["IBSIM_SOCKNAME"] = f"ibprov-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        log = Path(tmp) / "log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [binary, "-s", str(net)], env=env, cwd=tmp, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None and READY not in log.read_text(errors="replace"):
            time.sleep(0.02)
        if READY in log.read_text(errors="replace"):
            speeds.add(Speed.NDR)
        _stop(proc)
        if proc.stdin is not None:
            proc.stdin.close()
    version = "ibsim 0.11+" if Speed.NDR in speeds else SIMULATOR
    return (version if binary == "ibsim" else f"{version} ({binary})"), frozenset(speeds)


def simulator() -> tuple[str, frozenset[Speed]]:
    """The ibsim the twin runs, and the link speeds it takes: measured by starting it on a two-node net file
    with an NDR link (ibsim 0.10 refuses ``e=8``; 0.11 and later run it). Cached per binary and modification time."""
    binary = ibsim_binary()
    path = shutil.which(binary)
    if path is None:
        return SIMULATOR, SIM_SPEEDS
    return _probe(binary, os.stat(path).st_mtime)


def sim_available() -> str | None:
    """None when ibsim, libumad2sim and opensm are installed, else what is missing."""
    missing = [tool for tool in (ibsim_binary(), "opensm", "ibnetdiscover", "smpquery") if shutil.which(tool) is None]
    if not UMAD2SIM.exists():
        missing.append(str(UMAD2SIM))
    return (
        f"missing {', '.join(missing)} (apt install ibsim-utils libumad2sim0 opensm infiniband-diags)"
        if missing
        else None
    )


@dataclass
class OpenSM:
    proc: subprocess.Popen[bytes]
    log: Path
    sim_host: str

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_for(self, text: str, timeout: float = 60.0, after: int = 0) -> bool:
        """Wait until ``text`` appears in the log past offset ``after``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log_text()[after:]:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.2)
        return False

    def expect(self, text: str, timeout: float = SM_WAIT_S, after: int = 0) -> None:
        """Wait until ``text`` appears in the log past ``after``; else SimError saying what was awaited, for
        how long (or that OpenSM exited) and the log's last lines."""
        if self.wait_for(text, timeout, after):
            return
        ended = self.proc.poll()
        how = f"exited ({ended})" if ended is not None else f"gave up after {timeout:g} s"
        tail = "\n".join(self.log_text()[after:].strip().splitlines()[-15:])
        raise SimError(f"OpenSM on {self.sim_host}: {how} waiting for {text!r} in {self.log}; its last lines:\n{tail}")

    def signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self) -> None:
        _stop(self.proc)


@dataclass
class SimFabric:
    netfile: Path
    workdir: Path
    socket: str
    proc: subprocess.Popen[bytes]
    output: Path
    opensms: list[OpenSM] = field(default_factory=list)

    def env(self, sim_host: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IBSIM_", "SIM_"))}
        env.update(LD_PRELOAD=str(UMAD2SIM), IBSIM_SOCKNAME=self.socket, SIM_HOST=sim_host, **extra)
        return env

    def run(self, argv: Sequence[str], sim_host: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run a libibumad tool attached to ``sim_host``'s port; umad2sim's fake sysfs stays in workdir."""
        tmp = self.workdir / "clients"
        tmp.mkdir(exist_ok=True)
        try:
            return subprocess.run(
                list(argv),
                env=self.env(sim_host),
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            freed = self.slots().freed  # the killed diag never gave its ibsim client slot back
            back = f" (its ibsim client slot taken back: {len(freed)} freed)" if freed else ""
            raise SimError(f"{argv[0]} did not finish within {timeout:g}s on the twin{back}") from exc

    def console(self, command: str) -> None:
        """Send one ibsim console command (Unlink, Link, PerformanceSet, Error, ...)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, command: str, timeout: float = 10.0) -> str:
        """Send one console command and return what ibsim printed for it (up to its next prompt)."""
        offset = self.output.stat().st_size
        self.console(command)
        deadline = time.monotonic() + timeout
        while True:
            with self.output.open("rb") as f:
                f.seek(offset)
                text = f.read().decode(errors="replace")
            if "sim> " in text:
                return text
            if self.proc.poll() is not None or time.monotonic() > deadline:
                state = "exited" if self.proc.poll() is not None else f"did not answer within {timeout:g} s"
                raise SimError(f"ibsim's console {state} after {command!r} (got {text[-200:]!r})")
            time.sleep(0.05)

    def slots(self, *, free: bool = True) -> SlotReport:
        """Who holds ibsim's client slots; (``free``) the slots of processes that are gone taken back."""
        return reclaim(self.ask, free=free)

    def start_opensm(
        self, sim_host: str, config: Path | None = None, args: Sequence[str] = (), name: str = "opensm"
    ) -> OpenSM:
        """Start OpenSM on ``sim_host`` with its own log, cache and dump directories."""
        base = self.workdir / name
        base.mkdir(exist_ok=True)
        log = base / "opensm.log"
        # -d2: flush the log after every message, so waiting for "SUBNET UP" sees it at once
        # -t 1000 --retries 5: a loaded 2-core CI machine delays the simulator's MAD replies past OpenSM's
        # 200 ms default, and a sweep full of timeouts can leave the twin without SUBNET UP
        argv = [
            "opensm",
            "-d2",
            "-t",
            "1000",
            "--retries",
            "5",
            "-f",
            str(log),
            *(["-F", str(config)] if config else []),
            *args,
        ]
        env = self.env(sim_host, OSM_CACHE_DIR=str(base), OSM_TMP_DIR=str(base))
        with open(base / "stdout.log", "wb") as out:
            proc = subprocess.Popen(
                argv, env=env, cwd=base, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
            )
        sm = OpenSM(proc, log, sim_host)
        self.opensms.append(sm)
        return sm

    def stop(self) -> None:
        for sm in self.opensms:
            sm.stop()
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        _stop(self.proc)

    def __enter__(self) -> SimFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_sim(
    netfile: Path,
    workdir: Path,
    *,
    socket: str | None = None,
    timeout: float = 60.0,
    max_nodes: int = 4096,
    max_switches: int = 1024,
    max_ports: int = 65536,
) -> SimFabric:
    """Start ``ibsim -s`` on ``netfile`` (local mode, a socket name unique to this run) and wait until ready."""
    reason = sim_available()
    if reason:
        raise SimError(f"cannot start the twin: {reason}")
    workdir.mkdir(parents=True, exist_ok=True)
    socket = socket or f"ibprov-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    output = workdir / "ibsim.log"
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",)}
    env["IBSIM_SOCKNAME"] = socket
    argv = [ibsim_binary(), "-s", "-N", str(max_nodes), "-S", str(max_switches), "-P", str(max_ports), str(netfile)]
    with open(output, "wb") as out:
        proc = subprocess.Popen(argv, env=env, cwd=workdir, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
    sim = SimFabric(netfile, workdir, socket, proc, output)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = output.read_text(errors="replace")
        if READY in text:
            return sim
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    how = f"exited ({proc.poll()})" if proc.poll() is not None else f"gave up after {timeout:g} s waiting for {READY!r}"
    sim.stop()
    tail = " / ".join(output.read_text(errors="replace").strip().splitlines()[-3:])
    raise SimError(f"ibsim did not start on {netfile}: {how}; its last lines: {tail or 'no output'}")


def _stop(proc: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(grace)
