"""What ``verify --nodes`` reports besides its checks: how many planned hosts answered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SCHEMA", "NodesFacts"]

_COUNT = {"type": "integer", "minimum": 0}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["hosts", "hosts_reached"],
    "additionalProperties": False,
    "properties": {"hosts": _COUNT, "hosts_reached": _COUNT},
}


@dataclass(frozen=True)
class NodesFacts:
    hosts: int  # planned
    hosts_reached: int  # answered through Ansible

    def as_dict(self) -> dict[str, Any]:
        return {"hosts": self.hosts, "hosts_reached": self.hosts_reached}

    def lines(self) -> list[str]:
        return [f"{self.hosts_reached} of {self.hosts} hosts answered"]
