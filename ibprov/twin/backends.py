"""The twin plays a switch or UFM SM with the real OpenSM 3.3.23: what the back end would hold after an apply
(the spec rendered to the switch's CLI or UFM's payload, then parsed back: :mod:`ibprov.smbackend`) becomes
the partitions.conf of an OpenSM attached where the vendor's SM runs -- the switch's port 0 (ibsim lets an SM
bind there: measured, see docs/sm-backends.md) or the UFM server's port. So the twin proves that the partitions
a back end carries give every port the planned P_Key table, and a host OpenSM started beside it is a second SM
that verify must find. It cannot show the vendor SM's own behaviour (its election, its defaults, its options)."""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import SubnetManager
from ibprov.identity.guids import GuidBook, fmt_guid
from ibprov.render.sm import SmData
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.opensm import partition_vars
from ibprov.smbackend.state import BackendState
from ibprov.smbackend.switch.commands import parse_commands, render_commands
from ibprov.smbackend.ufm.payload import parse_payload, render_payload

__all__ = ["SWITCH_DEVICE", "PlannedMaster", "planned_master", "play_backend"]

SWITCH_DEVICE = "sw"  # the twin's file name for a switch SM's "device" (opensm.sw-0.conf)


class PlannedMaster:
    """Where the planned master SM runs: name (node or switch), port GUID, priority, and the twin's key of
    its opensm.conf ("host/device:port")."""

    def __init__(self, name: str, where: str, guid: int | None, priority: int, conf_key: str) -> None:
        self.name, self.where, self.guid, self.priority, self.conf_key = name, where, guid, priority, conf_key


def planned_master(loaded: LoadedSpec, book: GuidBook) -> PlannedMaster:
    sm: SubnetManager = loaded.spec.subnet_manager
    if sm.backend == "switch" and sm.switch is not None:
        name = sm.switch.name
        return PlannedMaster(
            name, f"{name} port 0", book.switch_guid(name), sm.switch.priority, f"{name}/{SWITCH_DEVICE}:0"
        )
    top = max(sm.instances, key=lambda i: i.priority)
    node = next(n for n in loaded.spec.nodes if n.name == top.node)
    device = top.hca or node.hcas[0].device
    guid = book.port_guid(top.node, device, top.port)
    return PlannedMaster(
        top.node, f"{top.node} {device}:{top.port}", guid, top.priority, f"{top.node}/{device}:{top.port}"
    )


def held_by_backend(loaded: LoadedSpec, book: GuidBook) -> BackendState:
    """What the back end holds after an apply from empty: the desired state rendered to its own form and
    parsed back (the rendering-equivalence path)."""
    desired, _ = desired_state(loaded, book)
    sm = loaded.spec.subnet_manager
    if sm.backend == "switch":
        return parse_commands(render_commands(desired, save=True))
    return parse_payload(render_payload(desired))


def play_backend(loaded: LoadedSpec, book: GuidBook, data: SmData) -> list[str]:
    """Turn ``data`` (the spec's SM data, no host OpenSM for these back ends) into the twin's stand-in: the
    instances the vendor SM runs on, with the back end's partitions. Returns the twin's notes."""
    sm = loaded.spec.subnet_manager
    data.common["ib_sm_partitions"] = partition_vars(held_by_backend(loaded, book))
    if sm.backend == "switch" and sm.switch is not None:
        guid = book.switch_guid(sm.switch.name)
        entry: dict[str, Any] = {"device": SWITCH_DEVICE, "port": 0, "priority": sm.switch.priority}
        if guid is not None:
            entry["port_guid"] = fmt_guid(guid)
        data.instances = {sm.switch.name: [entry]}
        return [
            f"the embedded SM of switch {sm.switch.name} is played by OpenSM 3.3.23 attached at its port 0, with the "
            "partitions the switch's CLI carries (not MLNX-OS's own SM: its election and defaults are not shown)"
        ]
    data.instances = {}
    for inst in sm.instances:
        node = next(n for n in loaded.spec.nodes if n.name == inst.node)
        device = inst.hca or node.hcas[0].device
        entry = {"device": device, "port": inst.port, "priority": inst.priority}
        guid = book.port_guid(inst.node, device, inst.port)
        if guid is not None:
            entry["port_guid"] = fmt_guid(guid)
        data.instances.setdefault(inst.node, []).append(entry)
    return [
        "UFM's SM is played by OpenSM 3.3.23 on the UFM server ports (subnet_manager.instances), with the partitions "
        "UFM's payload carries (not UFM itself: its REST API is contract-tested only)"
    ]
