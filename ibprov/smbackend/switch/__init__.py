"""The SM embedded in a managed NVIDIA/Mellanox switch (MLNX-OS) as the SM back end
(``subnet_manager.backend: switch``): the switch's SM runs the subnet and holds the partitions, which ibprov
configures through the switch's JSON API.

* :mod:`.commands`: the model to and from CLI lines, and the minimal commands of a difference (pure);
* :mod:`.api`: the JSON login and one command per request over ibprov's own HTTP client, located errors;
* :mod:`.backend`: connect, read the running configuration, plan and apply.

Contract-tested (tests/contracts/mlnxos.py), not run against the product; the priority keyword and the JSON
shape of ``show running-config`` are assumed (see :mod:`.commands` and :mod:`.api`).
"""

from __future__ import annotations

from ibprov.smbackend.switch.api import CommandRefused, SwitchApi
from ibprov.smbackend.switch.backend import apply_switch, connect, plan_switch, read_switch
from ibprov.smbackend.switch.commands import CARRIED, diff_commands, parse_commands, render_commands

__all__ = [
    "CARRIED",
    "CommandRefused",
    "SwitchApi",
    "apply_switch",
    "connect",
    "diff_commands",
    "parse_commands",
    "plan_switch",
    "read_switch",
    "render_commands",
]
