"""Where the planned SMs run, with their port GUIDs: the switch's embedded SM at its port 0 (``backend:
switch``), else the spec's instances (host OpenSM, or the UFM server ports where UFM's own SM runs). One
answer for the partition plan (the SM ports are full members of Default), verify and the twin."""

from __future__ import annotations

from dataclasses import dataclass

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.types import Endpoint
from ibprov.identity.guids import GuidBook

__all__ = ["PlannedSm", "planned_master", "planned_sms"]


@dataclass(frozen=True)
class PlannedSm:
    node: str  # the node, or the switch whose embedded SM it is
    device: str | None  # the HCA; None: a switch's port 0
    port: int
    priority: int
    port_guid: int | None  # a switch's port 0 has the switch's GUID; None: not known (or no GuidBook asked)

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.node, self.device, self.port)

    @property
    def where(self) -> str:
        """'leaf01 port 0' or 'sm01 mlx5_0:1'."""
        return f"{self.node} port 0" if self.device is None else f"{self.node} {self.device}:{self.port}"


def planned_sms(loaded: LoadedSpec, book: GuidBook | None = None) -> list[PlannedSm]:
    """Every SM the plan names, in the spec's order (GUIDs from ``book``; without one, ``port_guid`` is None)."""
    spec = loaded.spec
    sm = spec.subnet_manager
    if sm.backend == "switch" and sm.switch is not None:
        guid = book.switch_guid(sm.switch.name) if book is not None else None
        return [PlannedSm(sm.switch.name, None, 0, sm.switch.priority, guid)]
    devices = {n.name: n.hcas[0].device for n in spec.nodes if n.hcas}
    out = []
    for inst in sm.instances:
        device = inst.hca or devices[inst.node]
        guid = book.port_guid(inst.node, device, inst.port) if book is not None else None
        out.append(PlannedSm(inst.node, device, inst.port, inst.priority, guid))
    return out


def planned_master(loaded: LoadedSpec, book: GuidBook | None = None) -> PlannedSm:
    """The SM the plan makes master: the highest priority (the first of equals, as the spec lists them)."""
    return max(planned_sms(loaded, book), key=lambda s: s.priority)
