"""What ``verify --nodes`` saw on each host (parsed from ib_facts and one shell probe)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ibprov.probes.hostprobe import DeviceFacts, PortFacts

__all__ = ["DeviceFacts", "HostObservation", "PortFacts"]


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
    notes: tuple[str, ...] = ()  # "SECTION: line N: TEXT" for each probe line that is not its tool's (read past)

    @property
    def reachable(self) -> bool:
        return self.error is None
