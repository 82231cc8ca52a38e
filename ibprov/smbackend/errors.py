"""A back end that cannot be read or refuses a change: one actionable message, located at the spec field that
names what to fix (the URL for an unreachable host, the username for refused credentials, the partition a
refused payload came from)."""

from __future__ import annotations

from ibprov.clusterspec.positions import Path
from ibprov.errors import CollectError

__all__ = ["BackendError"]


class BackendError(CollectError):
    """The switch or UFM could not be reached, refused the login, or refused a change (exit 3)."""

    def __init__(self, path: Path, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(message)
