"""The twin rack's slot keeper: a process beside the rack that takes back the ibsim client slots of killed
processes (:mod:`ibprov.twin.slots`), so that no timeout, ``kill`` or crash uses the rack's ten slots up.

``ibprov twin up`` starts it (``python -m ibprov.twin.keeper STATE_DIR``, its pid in ``keeper.pid``, its log
in ``keeper.log``) and ``ibprov twin down`` stops it by that pid. Every :data:`INTERVAL_S` seconds it asks
ibsim's console ``Attached`` and frees the slots no live process holds (two looks a second apart). It exits
when the rack's state directory is gone. ``ibprov twin status`` does the same once and lists the slots.

The console is the FIFO ibsim reads in its container; it is reached from this host through the container's
root (``/proc/PID/root``: no ``podman exec`` every few seconds), else through ``podman exec``. A lock file in
the state directory keeps two reclaimers (the keeper and a ``twin status``) from freeing one slot twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ibprov.twin.rack import CONSOLE_FIFO, CONSOLE_LOG, STATE_FILE, RackError, RackState, podman
from ibprov.twin.slots import SlotReport, reclaim

__all__ = ["INTERVAL_S", "ask_console", "main", "slot_report"]

INTERVAL_S = 3.0
ANSWER_S = 10.0  # how long ibsim's console may take to answer one command
PROMPT = "sim> "
LOCK_FILE = "slots.lock"
GIVE_UP = 40  # looks in a row that fail (the rack's ibsim is gone): the keeper stops


def _container_root(state: RackState) -> Path | None:
    """The ibsim container's root directory as this host sees it, when this process may write its FIFO."""
    pid = podman("inspect", "--format", "{{.State.Pid}}", state.ibsim, check=False, timeout=30).strip()
    if not pid.isdigit() or pid == "0":
        return None
    root = Path(f"/proc/{pid}/root")
    return root if os.access(root / CONSOLE_FIFO.lstrip("/"), os.W_OK) else None


def _ask_here(root: Path, command: str, timeout: float) -> str:
    fifo, log = root / CONSOLE_FIFO.lstrip("/"), root / CONSOLE_LOG.lstrip("/")
    offset = log.stat().st_size
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO at once when ibsim no longer reads it
    except OSError as exc:
        raise RackError(f"ibsim's console does not answer ({fifo}: {exc.strerror}): has ibsim exited?") from None
    try:
        os.write(fd, command.encode() + b"\n")
    finally:
        os.close(fd)
    deadline = time.monotonic() + timeout
    while True:
        with log.open("rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
        if PROMPT in text:
            return text
        if time.monotonic() > deadline:
            raise RackError(f"ibsim's console did not answer {command!r} within {timeout:g} s (got {text[-200:]!r})")
        time.sleep(0.05)


def _ask_exec(state: RackState, command: str, timeout: float) -> str:
    script = (
        f"n=$(wc -c < {CONSOLE_LOG}); timeout 5 sh -c 'echo \"$0\" > {CONSOLE_FIFO}' {command!r} || exit 3; "
        f"i=0; while [ $i -lt {int(timeout * 10)} ]; do tail -c +$((n + 1)) {CONSOLE_LOG} > /tmp/.ask; "
        f"grep -q '{PROMPT}' /tmp/.ask && break; sleep 0.1; i=$((i + 1)); done; cat /tmp/.ask"
    )
    return podman("exec", state.ibsim, "sh", "-c", script, timeout=timeout + 30)


def ask_console(state: RackState, command: str, timeout: float = ANSWER_S) -> str:
    """Type one command at the rack's ibsim console and return what it printed (up to its next prompt)."""
    root = _container_root(state)
    return _ask_here(root, command, timeout) if root is not None else _ask_exec(state, command, timeout)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with (path / LOCK_FILE).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def slot_report(state: RackState, *, free: bool = True, root: Path | None = None) -> SlotReport:
    """The rack's ibsim slots, and (``free``) the slots of processes that are gone taken back; ``root``: the
    ibsim container's root as :func:`_container_root` found it (looked up when not given)."""
    root = root or _container_root(state)

    def ask(command: str) -> str:
        return _ask_here(root, command, ANSWER_S) if root is not None else _ask_exec(state, command, ANSWER_S)

    with _locked(state.path):
        return reclaim(ask, free=free)


def main(argv: list[str]) -> int:
    """Keep the slots of the rack whose state directory is ``argv[0]``, until that directory is gone."""
    path = Path(argv[0])
    root: Path | None = None
    failures = 0
    while (path / STATE_FILE).is_file() and failures < GIVE_UP:
        try:
            state = RackState.load(path)
            root = root if root is not None and root.exists() else _container_root(state)
            report = slot_report(state, root=root)
            failures = 0
            for client in report.freed:
                print(
                    f"{time.strftime('%H:%M:%S')} took back slot {client.slot}: client id {client.pid} on {client.node}"
                    f"{' (SM)' if client.sm else ''} was gone",
                    flush=True,
                )
        except (RackError, OSError, ValueError, subprocess.SubprocessError) as exc:
            root, failures = None, failures + 1
            print(f"{time.strftime('%H:%M:%S')} {exc}", flush=True)
        time.sleep(INTERVAL_S)
    if failures >= GIVE_UP:
        print(f"{time.strftime('%H:%M:%S')} no answer from ibsim {GIVE_UP} times in a row: stopping", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
