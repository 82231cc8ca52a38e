"""What ``verify --fabric`` reports besides its checks: device and link counts, the subnet managers, the soak,
and the error counters read (every port with a non-zero counter, its values as read: a run history turns two
runs' values into rates, :mod:`ibprov.history.diff`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ibprov.identity.guids import fmt_guid
from ibprov.verify.fabric.checks.sm import planned_instance, sm_name
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.plan import Plan, port_name

__all__ = ["SCHEMA", "FabricFacts", "SmFacts", "fabric_facts"]

_COUNT = {"type": "integer", "minimum": 0}
_SM = {
    "type": "object",
    "required": ["object", "port_guid", "lid", "priority", "state", "planned"],
    "additionalProperties": False,
    "properties": {
        "object": {"type": "string"},
        "port_guid": {"type": "string", "pattern": "^0x[0-9a-f]{16}$"},
        "lid": _COUNT,
        "priority": {"type": "integer", "minimum": 0, "maximum": 15},
        "state": {"enum": ["MASTER", "STANDBY", "DISCOVER", "NOTACT"]},
        "planned": {"type": "boolean"},
    },
}
_PORT_COUNTERS = {
    "type": "object",
    "required": ["object", "counters"],
    "additionalProperties": False,
    "properties": {
        "object": {"type": "string"},
        "counters": {"type": "object", "additionalProperties": _COUNT},
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["switches", "channel_adapters", "links", "master_sm", "subnet_managers", "soak_seconds", "counters"],
    "additionalProperties": False,
    "properties": {
        "switches": _COUNT,
        "channel_adapters": _COUNT,
        "links": _COUNT,
        "master_sm": {"oneOf": [_SM, {"type": "null"}]},
        "subnet_managers": {"type": "array", "items": _SM},
        "soak_seconds": {"type": ["number", "null"], "minimum": 0},
        "counters": {"type": "array", "items": _PORT_COUNTERS},
    },
}


@dataclass(frozen=True)
class SmFacts:
    object: str  # "sm01 mlx5_0 port 1"
    port_guid: int
    lid: int
    priority: int
    state: str  # MASTER, STANDBY, DISCOVER, NOTACT
    planned: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "object": self.object,
            "port_guid": fmt_guid(self.port_guid),
            "lid": self.lid,
            "priority": self.priority,
            "state": self.state,
            "planned": self.planned,
        }


@dataclass(frozen=True)
class FabricFacts:
    switches: int
    channel_adapters: int
    links: int
    subnet_managers: tuple[SmFacts, ...]  # the master first, then by priority
    soak_seconds: float | None = None  # between clearing and re-reading the counters; None: no soak
    # (port name, {counter: value}) for every port with a non-zero error counter, as first read (before a
    # soak's clear), by port name
    counters: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()

    @property
    def master_sm(self) -> SmFacts | None:
        masters = [s for s in self.subnet_managers if s.state == "MASTER"]
        return masters[0] if len(masters) == 1 else None

    def as_dict(self) -> dict[str, Any]:
        master = self.master_sm
        return {
            "switches": self.switches,
            "channel_adapters": self.channel_adapters,
            "links": self.links,
            "master_sm": master.as_dict() if master is not None else None,
            "subnet_managers": [s.as_dict() for s in self.subnet_managers],
            "soak_seconds": None if self.soak_seconds is None else round(self.soak_seconds, 3),
            "counters": [{"object": name, "counters": dict(values)} for name, values in self.counters],
        }

    def lines(self) -> list[str]:
        master = self.master_sm
        out = [
            f"{_n(self.switches, 'switch', 'switches')}, {_n(self.channel_adapters, 'channel adapter')}, "
            f"{_n(self.links, 'link')}",
            f"master SM {master.object} (priority {master.priority})" if master else "no single master SM",
        ]
        if self.soak_seconds is not None:
            out.append(f"soaked {self.soak_seconds:.0f} s")
        return out


def _n(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def fabric_facts(plan: Plan, obs: Observation) -> FabricFacts:
    sms = tuple(
        SmFacts(
            sm_name(plan, obs, sm), sm.port_guid, sm.lid, sm.priority, sm.state, planned_instance(plan, sm) is not None
        )
        for sm in sorted(obs.sms, key=lambda s: (s.state != "MASTER", -s.priority, s.port_guid))
    )
    return FabricFacts(
        switches=sum(1 for n in obs.nodes.values() if n.type == "SW"),
        channel_adapters=sum(1 for n in obs.nodes.values() if n.type == "CA"),
        links=len(obs.links),
        subnet_managers=sms,
        soak_seconds=obs.soak.seconds if obs.soak is not None else None,
        counters=tuple(
            sorted(
                (port_name(plan, obs.nodes, ref), tuple(sorted(values.items())))
                for ref, values in obs.counters.items()
                if any(values.values())
            )
        ),
    )
