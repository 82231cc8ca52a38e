"""One apply (or plan) of a cluster at a time: the run directory's lock (``.lock``, flock), refused at once when
another process holds it, naming that process. The kernel releases a flock when its holder dies, so an apply
killed half-way (SIGKILL) leaves no stale lock; but the ansible-playbook it started goes on (ansible-runner
starts it with SIGHUP ignored) until it next writes to the terminal that went with ibprov, which can be a long
task later: while it runs, the next apply is refused too, naming it. Once it is gone, the next apply starts, and
completes what was not done."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from ibprov.errors import CollectError

__all__ = ["LOCK", "PLAYBOOK_PID", "RunLockHeld", "note_playbook", "run_lock"]

LOCK = ".lock"
# ansible-runner starts ansible-playbook with SIGHUP ignored, so it outlives an ibprov killed with SIGKILL and goes
# on changing the nodes: its PID is noted here (runner/playbook.pid) while it runs, and the lock counts it
PLAYBOOK_PID = "playbook.pid"


class RunLockHeld(CollectError):
    """Another apply or plan of the same cluster holds the run directory's lock."""


@contextlib.contextmanager
def run_lock(directory: Path, what: str) -> Iterator[None]:
    """Hold ``directory``'s lock while inside; :class:`RunLockHeld` at once when another process holds it.
    ``what`` ("apply of cluster lab") is written into the lock for whoever finds it held."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle = (directory / LOCK).open("a+")
    except OSError as exc:
        raise CollectError(f"cannot use the run directory {directory}: {exc.strerror or exc}") from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = " ".join(handle.read().split()) or "another process"
            raise RunLockHeld(
                f"{directory / LOCK} is held by {holder}: one apply or plan of a cluster at a time; this one did "
                "not start (wait for it, or stop it)"
            ) from None
        orphan = _running_playbook(directory)
        if orphan is not None:
            raise RunLockHeld(
                f"the ansible-playbook of an earlier apply or plan in {directory} still runs (pid {orphan}; the "
                f"ibprov that started it was stopped): this one did not start; wait for it to end, or stop it "
                f"(kill {orphan})"
            )
        handle.seek(0)
        handle.truncate()
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        handle.write(f"{what} (pid {os.getpid()} on {socket.gethostname()}, since {since})\n")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def note_playbook(pid_file: Path, pid: int) -> None:
    """Note the PID of the ansible-playbook a run started (removed when the run ends)."""
    with contextlib.suppress(OSError):
        pid_file.write_text(f"{pid}\n")


def _running_playbook(directory: Path) -> int | None:
    """The PID of an ansible-playbook noted in ``directory`` that still runs (an earlier ibprov's, killed)."""
    for noted in (directory / PLAYBOOK_PID, directory / "runner" / PLAYBOOK_PID):
        try:
            pid = int(noted.read_text().strip())
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if b"ansible-playbook" in command:
            return pid
    return None
