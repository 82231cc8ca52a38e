"""What the routing audit read from the fabric: the routing model (topology and every switch's table), what
the SM's log says about the engine, and — where routes use SLs — the path SLs and the switches' SL2VL tables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ibprov.probes.pathrecords import PathRecords
from ibprov.probes.smlog import RoutingLog
from ibprov.routing.model import RoutingModel

__all__ = ["EngineLog", "RoutingObservation", "SlTables"]

# (switch index, egress port) -> {(ingress port, SL): VL}
Sl2VlTable = Mapping[tuple[int, int], Mapping[tuple[int, int], int]]


@dataclass(frozen=True)
class EngineLog:
    """The SM's log as read (``log`` None: it could not be, ``where`` says why)."""

    log: RoutingLog | None
    where: str  # "sm01:/var/log/opensm.0x0002c90300a1b2c3.log", or why nothing was read


@dataclass(frozen=True)
class SlTables:
    """Path SLs from the SA and SL2VL tables from the switches (None: not read; ``missing`` says why)."""

    paths: PathRecords | None
    sl2vl: Sl2VlTable
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # what smpquery sl2vl printed besides its tables (read past)


@dataclass
class RoutingObservation:
    model: RoutingModel
    engine: EngineLog
    sls: SlTables | None = None  # read only where routes may use SLs
    notes: tuple[str, ...] = ()  # what the tools printed besides their output (read past), one note per tool
