"""A :class:`~ibprov.report.model.Table` as CSV (RFC 4180, a header row first): the cable report a site hands to
its cabling contractor (``ibprov report cables --csv``)."""

from __future__ import annotations

import csv
import io

from ibprov.report.model import Table

__all__ = ["table_csv"]


def table_csv(table: Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(table.columns)
    writer.writerows(table.rows)
    return out.getvalue()
