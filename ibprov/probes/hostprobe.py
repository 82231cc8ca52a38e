"""Pure parsers of what the node probes return: ib_facts, ``ulimit -l``, OpenSM, ``ip -j addr``, versions."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ibprov.clusterspec.units import LANES, Speed, Width, data_rate_gbps
from ibprov.probes._text import probe_sections

__all__ = [
    "PROBE_SCRIPT",
    "DeviceFacts",
    "PortFacts",
    "parse_ib_facts",
    "parse_ip_addr",
    "parse_memlock",
    "parse_memlock_config",
    "parse_networkd",
    "parse_opensm",
    "parse_probe",
    "parse_rate",
    "parse_stack_version",
]

MARK = "@@ibprov-probe "
PROBE_SCRIPT = "\n".join(
    [
        f"echo '{MARK}memlock'; ulimit -l",
        f"echo '{MARK}opensm'; systemctl is-active 'ib-opensm@*' opensm 2>/dev/null; pgrep -a opensm",
        f"echo '{MARK}ip'; ip -j addr",
        f"echo '{MARK}limits'; cat /etc/security/limits.conf /etc/security/limits.d/*.conf 2>/dev/null",
        f"echo '{MARK}networkd'; grep -H -E '^(Name|Address)=' /etc/systemd/network/*.network 2>/dev/null",
        f"echo '{MARK}stack'; dpkg-query -W -f '${{Version}}' rdma-core 2>/dev/null"
        " || rpm -q --qf '%{VERSION}' rdma-core 2>/dev/null",
        "exit 0",
    ]
)

_RATE = re.compile(r"^\s*([0-9.]+)\s*Gb/sec(?:\s*\((\d+)X\s+([A-Z0-9]+)\))?", re.IGNORECASE)


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


def parse_rate(text: str | None, number: Any = None) -> float | None:
    """The data rate of a sysfs rate text ("200 Gb/sec (4X HDR)" -> 200.0; "56 Gb/sec (4X FDR)" -> 54.56),
    else the number itself (ib_facts' ``rate``)."""
    m = _RATE.match(text or "")
    if m and m.group(2) and m.group(3):
        width, speed = f"{m.group(2)}x", m.group(3).upper()
        if speed in Speed.__members__ and width in {w.value for w in LANES}:
            return data_rate_gbps(Speed(speed), Width(width))
    if m:
        return float(m.group(1))
    if isinstance(number, int | float) and not isinstance(number, bool):
        return float(number)
    return None


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def parse_ib_facts(facts: Mapping[str, Any]) -> dict[str, DeviceFacts]:
    """``ansible_facts`` (or its ``ib``) of the ib_facts module -> device -> facts; ports keyed by number."""
    ib = facts.get("ib", facts)
    devices = ib.get("devices") if isinstance(ib, Mapping) else None
    out: dict[str, DeviceFacts] = {}
    for name, dev in (devices or {}).items():
        if not isinstance(dev, Mapping):
            continue
        ports: dict[int, PortFacts] = {}
        for num, port in (dev.get("ports") or {}).items():
            if not isinstance(port, Mapping) or not str(num).isdigit():
                continue
            ports[int(num)] = PortFacts(
                state=_str(port.get("state")),
                phys_state=_str(port.get("phys_state")),
                rate_gbps=parse_rate(_str(port.get("rate_text")), port.get("rate")),
                rate_text=_str(port.get("rate_text")),
                port_guid=_str(port.get("port_guid")),
            )
        out[str(name)] = DeviceFacts(fw_ver=_str(dev.get("fw_ver")), node_guid=_str(dev.get("node_guid")), ports=ports)
    return out


def parse_probe(stdout: str) -> dict[str, str]:
    """Split the output of :data:`PROBE_SCRIPT` into its sections (memlock, opensm, ip, stack)."""
    return probe_sections(stdout, MARK)


def parse_memlock(text: str) -> str | None:
    """``ulimit -l`` -> "unlimited" or the number it printed; None when it printed nothing useful."""
    word = text.strip().splitlines()[0].strip() if text.strip() else ""
    return word if word == "unlimited" or word.isdigit() else None


def parse_memlock_config(text: str) -> str | None:
    """The memlock limit the PAM limits files give every user (domain ``*``): "unlimited" or a number of
    KiB when soft and hard agree (the last line of each wins, as pam_limits reads them), else None."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) == 4 and words[0] == "*" and words[2] == "memlock":
            kinds = ("soft", "hard") if words[1] == "-" else (words[1],)
            for kind in kinds:
                values[kind] = "unlimited" if words[3] in ("unlimited", "infinity", "-1") else words[3]
    soft, hard = values.get("soft"), values.get("hard")
    return soft if soft is not None and soft == hard else None


def parse_networkd(text: str) -> dict[str, tuple[str, ...]]:
    """``grep -H '^(Name|Address)=' *.network`` -> interface -> the addresses its files configure."""
    names: dict[str, str] = {}
    addresses: dict[str, list[str]] = {}
    for line in text.splitlines():
        path, _, setting = line.partition(":")
        key, _, value = setting.partition("=")
        if key == "Name":
            names[path] = value.strip()
        elif key == "Address":
            addresses.setdefault(path, []).append(value.strip())
    return {names[p]: tuple(addresses.get(p, ())) for p in names}


def parse_opensm(text: str) -> tuple[str, ...]:
    """The evidence that OpenSM runs: "active" lines of systemctl and pgrep lines naming opensm."""
    evidence = []
    for line in text.splitlines():
        line = line.strip()
        if line == "active":
            evidence.append("systemd unit active")
        elif re.match(r"^\d+\s+\S*opensm", line):
            evidence.append(line)
    return tuple(dict.fromkeys(evidence))


def parse_ip_addr(text: str) -> dict[str, tuple[str, ...]]:
    """``ip -j addr`` -> interface -> its addresses as "addr/prefix"; {} when it is not JSON."""
    try:
        data = json.loads(text) if text.strip() else []
    except json.JSONDecodeError:
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for link in data if isinstance(data, list) else []:
        if not isinstance(link, Mapping) or not isinstance(link.get("ifname"), str):
            continue
        infos = link.get("addr_info") or []
        addrs = [
            f"{a['local']}/{a['prefixlen']}"
            for a in infos
            if isinstance(a, Mapping) and "local" in a and "prefixlen" in a
        ]
        out[link["ifname"]] = tuple(addrs)
    return out


def parse_stack_version(text: str) -> str | None:
    """dpkg's or rpm's version of rdma-core; None when neither knows the package."""
    word = text.strip().splitlines()[-1].strip() if text.strip() else ""
    if not word or " " in word or "not installed" in word:
        return None
    return word
