"""What ``verify --backend`` reports besides its checks: which back end it read, that it is contract-tested
(not run against the product), how many partitions were planned and held, and whether apply would send nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ibprov.clusterspec.model import CONTRACT_TESTED

__all__ = ["SCHEMA", "BackendFacts"]

_COUNT = {"type": "integer", "minimum": 0}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "kind",
        "where",
        "label",
        "reachable",
        "partitions_planned",
        "partitions_held",
        "partitions_unplanned",
        "in_sync",
    ],
    "additionalProperties": False,
    "properties": {
        "kind": {"enum": ["switch", "ufm"]},
        "where": _STR,
        "label": _STR,
        "reachable": _BOOL,
        "partitions_planned": _COUNT,
        "partitions_held": _COUNT,
        "partitions_unplanned": _COUNT,
        "in_sync": _BOOL,
    },
}


@dataclass(frozen=True)
class BackendFacts:
    kind: str  # "switch" | "ufm"
    where: str  # "switch leaf01 (https://...)"
    reachable: bool
    partitions_planned: int
    partitions_held: int  # every partition the back end holds but Default (0 when it did not answer)
    partitions_unplanned: int  # of those, the ones the plan does not name
    in_sync: bool  # planned partitions and SM held as planned, and nothing to prune: apply would send nothing
    label: str = CONTRACT_TESTED

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "where": self.where,
            "label": self.label,
            "reachable": self.reachable,
            "partitions_planned": self.partitions_planned,
            "partitions_held": self.partitions_held,
            "partitions_unplanned": self.partitions_unplanned,
            "in_sync": self.in_sync,
        }

    def lines(self) -> list[str]:
        head = f"{self.where}, {self.label}"
        if not self.reachable:
            return [f"{head}: not read (it did not answer)"]
        sync = "in sync" if self.in_sync else "not in sync"
        return [
            f"{head}: {self.partitions_held} partition(s) held, {self.partitions_planned} planned, "
            f"{self.partitions_unplanned} unplanned; {sync}"
        ]
