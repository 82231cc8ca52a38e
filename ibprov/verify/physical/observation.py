"""What ``verify --physical`` saw: per host what its physical probe printed (parsed), per switch port what
``mstlink`` read in-band from the --via host, and why anything was not read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ibprov.probes.mstlink import MstlinkReading
from ibprov.probes.phyprobe import DevicePhysical, HostPhysical

__all__ = ["DevicePhysical", "HostPhysical", "PhysicalObservation", "PortReading"]

MSTFLINT = "apt install mstflint (Debian/Ubuntu) or dnf install mstflint (RHEL family)"


@dataclass(frozen=True)
class PortReading:
    """What one port's physical layer read gave: a reading, or why there is none."""

    reading: MstlinkReading | None
    why: str = ""  # "no mstlink or mlxlink on node01: apt install mstflint ...", "node01 unreachable: ..."


@dataclass(frozen=True)
class PhysicalObservation:
    hosts: Mapping[str, HostPhysical] = field(default_factory=dict)  # hosts that answered
    unreachable: Mapping[str, str] = field(default_factory=dict)  # host -> why it did not answer
    switch_ports: Mapping[tuple[str, int], PortReading] = field(default_factory=dict)  # (switch, port) -> read
    switches_not_read: str = ""  # why no switch port was read at all ("" when they were)
    switch_firmware: Mapping[str, str] = field(default_factory=dict)  # switch -> firmware (Tool Information)

    def host_port(self, host: str, device: str, port: int) -> PortReading:
        """The reading of an HCA port, or why there is none."""
        if host in self.unreachable:
            return PortReading(None, f"{host} did not answer: {self.unreachable[host]}")
        seen = self.hosts.get(host)
        if seen is None:
            return PortReading(None, f"{host} not collected")
        dev = seen.devices.get(device)
        if dev is None:
            names = ", ".join(sorted(seen.devices)) or "no RDMA device"
            return PortReading(None, f"no {device} on {host} ({names})")
        reading = dev.links.get(port)
        if reading is not None:
            return PortReading(reading)
        if seen.link_tool is None:
            return PortReading(None, f"no mstlink or mlxlink on {host}: {MSTFLINT}")
        return PortReading(None, dev.link_errors.get(port) or f"{device} has no port {port}")

    def switch_port(self, switch: str, port: int) -> PortReading:
        if self.switches_not_read:
            return PortReading(None, self.switches_not_read)
        return self.switch_ports.get((switch, port)) or PortReading(None, f"{switch} port {port} not read")

    def device(self, host: str, device: str) -> tuple[DevicePhysical | None, str]:
        """An HCA as its host's probe saw it, or why there is none."""
        if host in self.unreachable:
            return None, f"{host} did not answer: {self.unreachable[host]}"
        seen = self.hosts.get(host)
        if seen is None:
            return None, f"{host} not collected"
        dev = seen.devices.get(device)
        if dev is None:
            return None, f"no {device} on {host} ({', '.join(sorted(seen.devices)) or 'no RDMA device'})"
        return dev, ""
