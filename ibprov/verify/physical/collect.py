"""Gathering for ``verify --physical``: the physical probe on every host through Ansible (one ad-hoc shell
task: sysfs, mstlink per HCA port, nvidia-smi), and the switch ports in-band from the --via host (or this
host): ``ibnetdiscover`` for the switches' LIDs, then ``mstlink -d lid-0xLID -p PORT -m -c`` per port.

A host that does not answer is a :attr:`PhysicalObservation.unreachable` entry, never an exception: the
others go on. A switch port mstlink cannot read is a :class:`PortReading` with why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ibprov.clusterspec import collector_paused
from ibprov.errors import CollectError
from ibprov.probes import ibnetdiscover
from ibprov.probes._text import ParseError
from ibprov.probes.mstlink import parse_mstlink
from ibprov.probes.phyprobe import PHY_PROBE_SCRIPT, HostPhysical, parse_phy_probe
from ibprov.probes.runner import Runner
from ibprov.run.adhoc import AdHoc, AnsibleRun, ansible_runner_run, failure
from ibprov.verify.physical.observation import MSTFLINT, PhysicalObservation, PortReading
from ibprov.verify.physical.plan import PhysicalPlan

__all__ = ["collect_hosts", "collect_switch_ports", "parse_hosts", "switch_port_argv"]


def collect_hosts(
    inventory: Mapping[str, Any] | str, hosts: Sequence[str], *, run: AnsibleRun = ansible_runner_run, forks: int = 20
) -> tuple[dict[str, HostPhysical], dict[str, str]]:
    """The probe on every host: (host -> what it saw, host -> why it did not answer)."""
    outcomes = AdHoc(inventory, run, forks).module(hosts, "ansible.builtin.shell", {"cmd": PHY_PROBE_SCRIPT})
    printed: dict[str, str] = {}
    unreachable: dict[str, str] = {}
    for host in hosts:
        done = outcomes.get(host)
        why = failure(done, "the physical probe")
        if why is not None or done is None:
            unreachable[host] = why or "not collected"
            continue
        printed[host] = str(done.res.get("stdout", ""))
    return parse_hosts(printed), unreachable


@collector_paused()
def parse_hosts(outputs: Mapping[str, str]) -> dict[str, HostPhysical]:
    """Every host's probe output read (:func:`parse_phy_probe`), in the order given: a fabric's worth builds
    millions of small objects that live as long as the report, so the cyclic collector is paused meanwhile.

    (Forked worker processes were measured too: on 10,000 hosts they saved 1 s of 12 on this 2-core machine,
    the unpickling and the workers' exit taking back most of what they parsed beside each other; not worth a
    fork beside whatever threads the caller runs.)"""
    return {host: parse_phy_probe(text) for host, text in outputs.items()}


def switch_port_argv(tool: str, lid: int, port: int) -> tuple[str, ...]:
    return (tool, "-d", f"lid-0x{lid:x}", "-p", str(port), "-m", "-c")


def collect_switch_ports(plan: PhysicalPlan, runner: Runner) -> PhysicalObservation:
    """Every planned switch port read in-band (the observation's switch part)."""
    ports = [(p.end.device, p.end.port) for p in plan.switch_ports]
    if not ports:
        return PhysicalObservation()
    found = runner.run_batch([("sh", "-c", "command -v mstlink || command -v mlxlink"), ibnetdiscover.argv()])
    tool = found[0].stdout.strip().split("\n")[0] if found[0].returncode == 0 else ""
    if not tool:
        return PhysicalObservation(switches_not_read=f"no mstlink or mlxlink on {runner.where}: {MSTFLINT}")
    if found[1].returncode != 0:
        return PhysicalObservation(switches_not_read=f"cannot discover the switches' LIDs: {found[1].reason()}")
    try:
        fabric = ibnetdiscover.parse(found[1].stdout)
    except (ParseError, CollectError) as exc:
        return PhysicalObservation(switches_not_read=f"cannot read ibnetdiscover: {exc}")
    lids = {n.description: n.lid for n in fabric.nodes if n.type == "SW" and n.lid is not None}
    wanted: list[tuple[str, int, int]] = []
    readings: dict[tuple[str, int], PortReading] = {}
    for switch, port in ports:
        lid = lids.get(plan.switch_descriptions.get(switch, switch))
        if lid is None:
            readings[(switch, port)] = PortReading(None, f"{switch} not found on the fabric (no LID)")
        else:
            wanted.append((switch, port, lid))
    results = runner.run_batch([switch_port_argv(tool, lid, port) for _s, port, lid in wanted], parallel=True)
    firmware: dict[str, str] = {}
    for (switch, port, _lid), result in zip(wanted, results, strict=True):
        try:
            reading = parse_mstlink(result.stdout)
        except ParseError:
            readings[(switch, port)] = PortReading(None, result.reason())
            continue
        readings[(switch, port)] = PortReading(reading)
        if reading.firmware:
            firmware.setdefault(switch, reading.firmware)
    return PhysicalObservation(switch_ports=readings, switch_firmware=firmware)
