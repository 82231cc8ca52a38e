"""What the back end showed: its state in the one model (:mod:`ibprov.smbackend.state`), or why it could not be
read. An unreachable or refusing back end is data, not an exception, so that the report names it as a finding."""

from __future__ import annotations

from dataclasses import dataclass

from ibprov.smbackend.state import BackendState

__all__ = ["BackendView"]


@dataclass(frozen=True)
class BackendView:
    kind: str  # "switch" | "ufm"
    where: str  # "switch leaf01 (https://...)"
    state: BackendState | None  # as read, every field the reader gives (None: not read)
    error: str | None = None  # the located error ("cluster.yaml:48:10: subnet_manager.switch.url: ...")
