"""The run history of one cluster: each verify run's report.json kept in its own directory, newest last.

Layout: ``DIR/<cluster>/<run id>/report.json`` (run id: the run's end, UTC, ``20261206T051200Z``, made unique
with a suffix when two runs end in one second) and ``DIR/<cluster>/.lock``. A run is written to a temporary
directory and renamed into place, so a reader never sees half a run; the oldest runs beyond ``keep`` are
removed after each save. :meth:`History.lock` is held by a verify run from before it collects until its run
is saved: two runs of one cluster never overlap (a second one is refused at once, not queued).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ibprov.errors import CollectError, IbprovError

__all__ = ["DEFAULT_KEEP", "History", "LockHeld", "Run"]

DEFAULT_KEEP = 90  # runs kept per cluster: three weeks of 6-hourly runs
REPORT = "report.json"
LOCK = ".lock"


class LockHeld(CollectError):
    """Another run of the same cluster holds the history's lock."""


@dataclass(frozen=True)
class Run:
    """One kept run: its id (directory name) and its report.json, read when asked for."""

    id: str
    path: Path

    def report(self) -> dict[str, Any]:
        try:
            data = json.loads((self.path / REPORT).read_text())
        except (OSError, ValueError) as exc:
            raise IbprovError(f"cannot read {self.path / REPORT}: {exc}") from None
        if not isinstance(data, dict):
            raise IbprovError(f"{self.path / REPORT}: not a report (a JSON object)")
        return data


def _order(run: Run) -> tuple[str, int]:
    """Runs in time order: by stamp, then by the suffix of the runs that ended in the same second (2 < 10)."""
    stamp, _, n = run.id.partition("-")
    return stamp, int(n) if n.isdigit() else 1


class History:
    """The runs of cluster ``cluster`` under ``root``."""

    def __init__(self, root: Path, cluster: str) -> None:
        if not cluster or "/" in cluster or cluster.startswith("."):
            raise IbprovError(f"cannot keep a history for cluster name {cluster!r}")
        self.root = root
        self.path = root / cluster
        self.cluster = cluster

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the cluster's run lock (``.lock``, flock): LockHeld at once when another run holds it."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            handle = (self.path / LOCK).open("a+")
        except OSError as exc:
            raise CollectError(f"cannot use the history directory {self.path}: {exc.strerror or exc}") from None
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise LockHeld(
                    f"another verify run of cluster {self.cluster} is running ({holder} holds {self.path / LOCK}); "
                    "this one did not start"
                ) from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}\n")
            handle.flush()
            try:
                yield
            finally:
                handle.seek(0)
                handle.truncate()
                fcntl.flock(handle, fcntl.LOCK_UN)

    def runs(self) -> list[Run]:
        """The kept runs, oldest first (run ids sort by time)."""
        if not self.path.is_dir():
            return []
        found = [
            Run(p.name, p)
            for p in self.path.iterdir()
            if p.is_dir() and not p.name.startswith(".") and (p / REPORT).is_file()  # .saving-*: not a run yet
        ]
        return sorted(found, key=_order)

    def save(self, report: dict[str, Any], *, keep: int = DEFAULT_KEEP, ended: datetime | None = None) -> Run:
        """Keep ``report`` (report.json's dict) as a new run; remove the oldest beyond ``keep``."""
        if keep < 1:
            raise IbprovError("--keep: keep at least 1 run")
        stamp = (ended or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            run_id, n = stamp, 1
            while (self.path / run_id).exists():
                n += 1
                run_id = f"{stamp}-{n}"
            tmp = Path(tempfile.mkdtemp(prefix=".saving-", dir=self.path))
            (tmp / REPORT).write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
            tmp.rename(self.path / run_id)
        except OSError as exc:
            raise CollectError(f"cannot keep the run in {self.path}: {exc.strerror or exc}") from None
        for old in self.runs()[:-keep]:
            shutil.rmtree(old.path, ignore_errors=True)
        return Run(run_id, self.path / run_id)
