"""What ``verify --scheduler`` reports besides its checks: Slurm's version and plugin, and its nodes by state."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SCHEMA", "SchedulerFacts"]

_COUNT = {"type": "integer", "minimum": 0}
_STR = {"type": "string"}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["controller", "slurm_version", "plugin", "planned_nodes", "known_nodes", "states"],
    "additionalProperties": False,
    "properties": {
        "controller": _STR,
        "slurm_version": _STR,
        "plugin": _STR,
        "planned_nodes": _COUNT,
        "known_nodes": _COUNT,
        "states": {"type": "object", "additionalProperties": _COUNT},
    },
}


@dataclass(frozen=True)
class SchedulerFacts:
    controller: str
    slurm_version: str  # "" when the controller did not answer
    plugin: str
    planned_nodes: int
    known_nodes: int  # planned nodes Slurm knows
    states: dict[str, int] = field(default_factory=dict)  # Slurm state -> planned nodes in it

    @classmethod
    def of(
        cls, controller: str, version: str, plugin: str, planned: list[str], states: dict[str, str]
    ) -> SchedulerFacts:
        known = [n for n in planned if n in states]
        counts = Counter(states[n] for n in known)
        return cls(controller, version, plugin, len(planned), len(known), dict(sorted(counts.items())))

    def as_dict(self) -> dict[str, Any]:
        return {
            "controller": self.controller,
            "slurm_version": self.slurm_version,
            "plugin": self.plugin,
            "planned_nodes": self.planned_nodes,
            "known_nodes": self.known_nodes,
            "states": dict(self.states),
        }

    def lines(self) -> list[str]:
        if not self.slurm_version:
            return [f"Slurm on {self.controller}: not asked (the controller did not answer)"]
        states = ", ".join(f"{n} {s}" for s, n in self.states.items()) or "none"
        return [
            f"Slurm {self.slurm_version} on {self.controller}, {self.plugin or 'topology plugin not read'}: "
            f"{self.known_nodes} of {self.planned_nodes} planned nodes known ({states})"
        ]
