"""The console view of an apply/plan run: one row per host with its task counts and result.

Nothing here prints: :func:`hosts_table` returns a rich renderable for ``ibprov.cli`` to print.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

if TYPE_CHECKING:
    from ibprov.run import RunResult

__all__ = ["hosts_table"]

_COLUMNS = ("host", "ok", "changed", "failed", "unreachable", "result")


def hosts_table(result: RunResult, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in _COLUMNS:
        table.add_column(column)
    for host, r in sorted(result.hosts.items()):
        table.add_row(host, str(r.ok), str(r.changed), str(r.failed), str(r.unreachable), r.status)
    return table
