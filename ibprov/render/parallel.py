"""A piece of render computed in a forked child while the parent does the rest.

Render's two largest files (the topology file and the twin's net file, ~75 MB for 100,000 HCA ports) depend
on nothing the rest of render computes, so on a large fabric each is built in a child process (``fork``:
the loaded spec is shared copy-on-write, nothing is read or parsed again) while the parent builds the SM
data, the inventory and the OpenSM files. A child sends its result back pickled through a pipe and exits.

The result is the same either way: when forking is not possible or not worth it (a small fabric, one CPU,
other threads running, no ``os.fork``) or the child fails for any reason, the work runs in the parent
(where a failure raises as it would have)."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

MIN_LINKS = 20_000  # below this a fabric's files take well under a second: not worth a process


def can_fork() -> bool:
    """A child can run beside this process: fork exists, more than one CPU, and no other thread (a fork
    copies only the calling thread; a lock another thread held would stay locked in the child)."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus > 1


class Pending(Generic[T]):
    """``work()``, started in a child (or, if that cannot be, run at :meth:`result` in this process)."""

    def __init__(self, work: Callable[[], T], *, fork: bool) -> None:
        self._work = work
        self._pid = 0
        self._read = -1
        if fork and can_fork():
            self._start()

    def _start(self) -> None:
        try:
            read, write = os.pipe()
        except OSError:
            return  # no file descriptors left: the work runs here
        try:
            pid = os.fork()
        except OSError:  # no memory or process left for a child: the work runs here
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: compute, send, leave without running the parent's exit handlers
            code = 1
            try:
                os.close(read)
                data = pickle.dumps(self._work(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self) -> T:
        """The child's result; the work done here if there is no child or the child failed."""
        if not self._pid:
            return self._work()
        try:
            with os.fdopen(self._read, "rb") as pipe:
                self._read = -1
                data = pipe.read()
        finally:
            status = self._reap()
        if status == 0 and data:
            value: T = pickle.loads(data)
            return value
        return self._work()  # the child failed (killed, out of memory, a bug): the same work, here

    def cancel(self) -> None:
        """Stop the child (render failed before it needed the result)."""
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            self._reap()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1

    def _reap(self) -> int:
        pid, self._pid = self._pid, 0
        _pid, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)
