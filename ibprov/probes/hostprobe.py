"""Pure parsers of what the node probes return: ib_facts, ``ulimit -l``, OpenSM, ``ip -j addr``, versions.

Port rates are the kernel's sysfs text (``/sys/class/infiniband/<dev>/ports/<n>/rate``, which ``ibstatus``
prints too): ``"%d%s Gb/sec (%dX%s)"`` with the signalling rate (2.5/5/10 Gb/s a lane up to QDR, 14 FDR, 10
FDR10, 25 EDR, 50 HDR, 100 NDR, 200 XDR) and the width 1X/2X/4X/8X/12X. Kernels before the HDR names printed
SDR as a bare width (``"10 Gb/sec (4X)"``): read as SDR when the number is 2.5 Gb/s a lane.

The probe merges stderr into stdout, so a warning (a shell's locale complaint, a login banner) may come before
or after what ``ulimit -l``, ``ip -j addr`` and dpkg/rpm print: :func:`parse_memlock`, :func:`parse_ip_addr`
and :func:`parse_stack_version` read past such lines and, given a ``notes`` list, keep each as ``line N: TEXT``.

Proven on (tests/fixtures/proven/hostprobe.yaml): the rate lines of real ibstatus captures (old-kernel SDR
``(4X)`` and DDR 2014, FDR 2014, NDR 2X 2024), ibstat's ``Rate:`` numbers (HDR, NDR), ``ip --json address show``
of iproute2 (cloud-init's test data, and iproute2 6.1 here), ``ulimit -l`` of bash 5.2 and dpkg-query of
Debian 12.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ibprov.clusterspec.units import LANES, Speed, Width, data_rate_gbps
from ibprov.probes._text import note, probe_sections

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

_RATE = re.compile(r"^\s*([0-9.]+)\s*Gb/sec(?:\s*\((\d+)X(?:\s+([A-Z0-9]+))?\))?", re.IGNORECASE)
_SDR_LANE = 2.5  # Gb/s a lane an old kernel printed without a speed name


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
    else the number itself (ib_facts' ``rate``; ``ibstat``'s ``Rate: 200``). ``"10 Gb/sec (4X)"`` (old kernels'
    SDR) -> 8.0."""
    m = _RATE.match(text or "")
    if m and m.group(2):
        lanes, speed = int(m.group(2)), (m.group(3) or "").upper()
        if not speed and lanes and float(m.group(1)) == _SDR_LANE * lanes:
            speed = "SDR"  # "10 Gb/sec (4X)": SDR as kernels before the HDR names printed it
        width = f"{lanes}x"
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


def _others(text: str, keep: int | None, notes: list[str] | None) -> None:
    """Append to ``notes`` every non-blank line of ``text`` but the ``keep``-th (1-based)."""
    if notes is None:
        return
    for line_no, line in enumerate(text.split("\n"), start=1):
        if line.strip() and line_no != keep:
            notes.append(note(line_no, line))


def parse_memlock(text: str, notes: list[str] | None = None) -> str | None:
    """``ulimit -l`` -> "unlimited" or the number it printed; None when it printed neither. Other lines (a
    shell warning before it) are read past, kept in ``notes`` when a list is given."""
    for line_no, line in enumerate(text.split("\n"), start=1):
        word = line.strip()
        if word == "unlimited" or word.isdigit():
            _others(text, line_no, notes)
            return word
    _others(text, None, notes)
    return None


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


def parse_ip_addr(text: str, notes: list[str] | None = None) -> dict[str, tuple[str, ...]]:
    """``ip -j addr`` -> interface -> its addresses as "addr/prefix"; {} when it printed no JSON array (an
    iproute2 without ``-j``: ``Option "-j" is unknown``). Lines before and after the array (warnings) are
    read past, kept in ``notes`` when a list is given."""
    lines = text.split("\n")
    data: Any = None
    span: tuple[int, int] | None = None  # the array's first and last line (1-based)
    for index, line in enumerate(lines):
        if line.lstrip().startswith("["):
            rest = "\n".join(lines[index:])
            try:
                data, end = json.JSONDecoder().raw_decode(rest.lstrip())
            except json.JSONDecodeError:
                continue
            if not isinstance(data, list) or not all(isinstance(link, dict) for link in data):
                data = None  # "[1700000000.123456] [node01:1234] ..." (a log line) reads as an array too
                continue
            consumed = rest[: len(rest) - len(rest.lstrip()) + end]
            span = (index + 1, index + 1 + consumed.count("\n"))
            break
    if notes is not None:
        for line_no, line in enumerate(lines, start=1):
            if line.strip() and not (span and span[0] <= line_no <= span[1]):
                notes.append(note(line_no, line))
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


_VERSION = re.compile(r"^[0-9][0-9A-Za-z.:+~_-]*$")  # dpkg's "44.0-2", rpm's "48.0", MLNX_OFED's "2307mlnx47-1.2310036"


def parse_stack_version(text: str, notes: list[str] | None = None) -> str | None:
    """dpkg's or rpm's version of rdma-core (the last line that reads as one); None when neither knows the
    package. Other lines (warnings, "package rdma-core is not installed") are read past, kept in ``notes``."""
    found: tuple[int, str] | None = None
    for line_no, line in enumerate(text.split("\n"), start=1):
        if _VERSION.match(line.strip()):
            found = (line_no, line.strip())
    _others(text, found[0] if found else None, notes)
    return found[1] if found else None
