"""One apply (or plan) of a cluster at a time: the run directory's lock (``.lock``, flock), refused at once when
another process holds it, naming that process. The kernel releases a flock when its holder dies, so an apply
killed half-way (SIGKILL) leaves no stale lock: the next one starts, and completes what was not done."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from ibprov.errors import CollectError

__all__ = ["LOCK", "RunLockHeld", "run_lock"]

LOCK = ".lock"


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
