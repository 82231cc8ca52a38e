"""The twin plays a switch or UFM SM with the real OpenSM 3.3.23: what the back end would hold after an apply
(the spec rendered to the switch's CLI or UFM's payload, then parsed back: :mod:`ibprov.smbackend`) becomes
the partitions.conf of an OpenSM attached where the vendor's SM runs -- the switch's port 0 (ibsim lets an SM
bind there: measured, see docs/sm-backends.md) or the UFM server's port. So the twin proves that the partitions
a back end carries give every port the planned P_Key table, and a host OpenSM started beside it is a second SM
that verify must find. It cannot show the vendor SM's own behaviour (its election, its defaults, its options)."""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.identity.guids import GuidBook, fmt_guid
from ibprov.identity.smports import planned_sms
from ibprov.render.sm import SmData
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.opensm import partition_vars
from ibprov.smbackend.state import BackendState
from ibprov.smbackend.switch.commands import parse_commands, render_commands
from ibprov.smbackend.ufm.payload import parse_payload, render_payload

__all__ = ["SWITCH_DEVICE", "held_by_backend", "play_backend"]

SWITCH_DEVICE = "sw"  # the twin's file name for a switch SM's "device" (opensm.sw-0.conf)


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
    data.instances = {}
    for planned in planned_sms(loaded, book):
        entry: dict[str, Any] = {
            "device": planned.device or SWITCH_DEVICE,
            "port": planned.port,
            "priority": planned.priority,
        }
        if planned.port_guid is not None:
            entry["port_guid"] = fmt_guid(planned.port_guid)
        data.instances.setdefault(planned.node, []).append(entry)
    if sm.backend == "switch" and sm.switch is not None:
        return [
            f"the embedded SM of switch {sm.switch.name} is played by OpenSM 3.3.23 attached at its port 0, with the "
            "partitions the switch's CLI carries (not MLNX-OS's own SM: its election and defaults are not shown)"
        ]
    return [
        "UFM's SM is played by OpenSM 3.3.23 on the UFM server ports (subnet_manager.instances), with the partitions "
        "UFM's payload carries (not UFM itself: its REST API is contract-tested only)"
    ]
