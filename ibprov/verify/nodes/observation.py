"""What ``verify --nodes`` saw on each host (parsed from ib_facts and one shell probe)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DeviceFacts", "HostObservation", "PortFacts"]


@dataclass(frozen=True)
class PortFacts:
    state: str | None = None  # ACTIVE, DOWN, ...
    phys_state: str | None = None  # LinkUp, Polling, ...
    rate_gbps: float | None = None  # data rate, e.g. 200.0 for "200 Gb/sec (4X HDR)"
    rate_text: str | None = None
    port_guid: str | None = None


@dataclass(frozen=True)
class DeviceFacts:
    fw_ver: str | None = None
    node_guid: str | None = None
    ports: dict[int, PortFacts] = field(default_factory=dict)


@dataclass(frozen=True)
class HostObservation:
    host: str
    error: str | None = None  # why the host could not be reached; None when it was
    devices: dict[str, DeviceFacts] = field(default_factory=dict)
    memlock: str | None = None  # "unlimited" or a number of KiB, as `ulimit -l` prints it
    opensm: tuple[str, ...] = ()  # evidence that OpenSM runs (active units, pgrep lines); empty: not running
    addresses: dict[str, tuple[str, ...]] = field(default_factory=dict)  # interface -> ["10.0.0.1/24", ...]
    stack_version: str | None = None
    memlock_configured: str | None = None  # what the PAM limits files give every user (the twin judges this)
    ipoib_configured: dict[str, tuple[str, ...]] = field(default_factory=dict)  # systemd-networkd files

    @property
    def reachable(self) -> bool:
        return self.error is None
