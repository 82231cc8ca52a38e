"""The GUID and port number of the planned port a report's object names, as the per-port exporters label
ports (node GUID and port number: ``on(guid, port)`` joins ibprov's series with theirs), with the other end of
its planned cable. Read from the object against the plan (:mod:`ibprov.verify.causes.subjects`) and the GUID
book (the spec, its lock file, or the twin's synthetic GUIDs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.types import Endpoint
from ibprov.errors import SpecError
from ibprov.identity.guids import GuidBook
from ibprov.report.model import PortIds, Report
from ibprov.verify.causes.subjects import Fabric, fabric_of

__all__ = ["PortIndex", "identify_ports", "port_lookup"]


class PortIndex:
    """Objects -> :class:`PortIds`, for objects that name one planned port, or the two ends of one cable."""

    def __init__(self, fabric: Fabric, book: GuidBook) -> None:
        self._fabric = fabric
        self._book = book

    @classmethod
    def for_spec(cls, loaded: LoadedSpec, fabric: Fabric, *, synthetic_guids: bool = False) -> PortIndex | None:
        """The index of a loaded spec; None when its GUID lock file does not match it (the sections say so)."""
        try:
            book = GuidBook.for_spec(loaded, allow_synthetic=synthetic_guids, twin=synthetic_guids)
        except SpecError:
            return None
        return cls(fabric, book)

    def of(self, obj: str) -> PortIds | None:
        ports = self._fabric.subjects(obj).ports
        if len(ports) == 2:
            first, second = sorted(ports, key=lambda end: _position(obj, end))
            if self._fabric.cable(first) != self._fabric.cable(second) or self._fabric.cable(first) is None:
                return None
            ports = frozenset({first})
        if len(ports) != 1:
            return None
        (end,) = ports
        cable = self._fabric.cable(end)
        peer = None if cable is None else cable[1] if cable[0] == end else cable[0]
        return PortIds(
            self._guid(end),
            end.port,
            None if peer is None else self._guid(peer),
            None if peer is None else peer.port,
        )

    def _guid(self, end: Endpoint) -> int | None:
        return self._book.hca_guid(end.device, end.hca) if end.hca else self._book.switch_guid(end.device)


def _position(obj: str, end: Endpoint) -> int:
    """Where an endpoint is written in an object (``leaf01:1 <-> cn01/mlx5_0:1``): the first written is the
    object's own end."""
    written = f"{end.device}/{end.hca}:{end.port}" if end.hca else f"{end.device}:{end.port}"
    at = obj.find(written)
    return at if at >= 0 else len(obj)


def identify_ports(report: Report, index: PortIndex | None) -> Report:
    """``report`` with the port of each finding whose object names one."""
    if index is None:
        return report
    ports: dict[str, PortIds] = {}
    for finding in report.findings:
        if finding.object not in ports and (ids := index.of(finding.object)) is not None:
            ports[finding.object] = ids
    return replace(report, ports=ports)


def port_lookup(loaded: LoadedSpec, *, synthetic_guids: bool = False) -> Callable[[str], Mapping[str, Any] | None]:
    """What the metrics ask of an object: its port as report.json writes a finding's ``port`` (None: no port)."""
    index = PortIndex.for_spec(loaded, fabric_of(loaded), synthetic_guids=synthetic_guids)

    def look(obj: str) -> Mapping[str, Any] | None:
        ids = index.of(obj) if index is not None else None
        return None if ids is None else ids.as_dict()

    return look
