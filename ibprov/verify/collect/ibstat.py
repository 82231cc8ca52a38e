"""``ibstat`` (all CAs) and ``ibstat <ca> <port>`` (``CA: '<ca>'`` + one port).

ibstat reads sysfs, so it names states its own way (``Initializing``, ``No state change``) and prints
``Rate`` as an integer Gb/s that cannot tell EDR from HDR100 or HDR from NDR200.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ibprov.verify.collect._text import ParseError, lines, num

__all__ = ["Ca", "CaPort", "argv", "parse"]

TOOL = "ibstat"

_CA = re.compile(r"^(CA|Switch|Router):? '(.*)'$")
_PORT = re.compile(r"^Port (\d+):$", re.ASCII)
_KEY_VALUE = re.compile(r"^([A-Za-z][A-Za-z ]*?):\s*(.*)$")
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)( \(FDR10\))?$", re.ASCII)

_CA_KEYS = {
    "CA type",
    "Number of ports",
    "Firmware version",
    "Hardware version",
    "Node GUID",
    "System image GUID",
}
_PORT_KEYS = {
    "State",
    "Physical state",
    "Rate",
    "Base lid",
    "LMC",
    "SM lid",
    "Capability mask",
    "Port GUID",
    "Link layer",
}


@dataclass(frozen=True)
class CaPort:
    number: int
    state: str | None = None  # Down, Initializing, Armed, Active
    phys_state: str | None = None  # LinkUp, Polling, Disabled, ...
    rate: float | None = None  # Gb/s: 2.5, 10, 40, 56, 100, 200, 400
    fdr10: bool = False
    base_lid: int | None = None
    lmc: int | None = None
    sm_lid: int | None = None
    cap_mask: int | None = None
    port_guid: int | None = None
    link_layer: str | None = None  # InfiniBand (IB under ibsim) or Ethernet


@dataclass(frozen=True)
class Ca:
    name: str
    node_type: str = "CA"
    ca_type: str | None = None
    num_ports: int | None = None
    firmware: str | None = None
    hardware: str | None = None
    node_guid: int | None = None
    system_guid: int | None = None
    ports: tuple[CaPort, ...] = field(default=())

    def port(self, number: int) -> CaPort | None:
        return next((p for p in self.ports if p.number == number), None)


def argv(ca: str | None = None, port: int | None = None) -> tuple[str, ...]:
    return ("ibstat", *([] if ca is None else [ca]), *([] if ca is None or port is None else [str(port)]))


class _Draft:
    """``Key: value`` lines of one CA (or one port), each kept with where it came from."""

    def __init__(self, line_no: int, line: str) -> None:
        self.line_no, self.line = line_no, line
        self.values: dict[str, tuple[int, str, str]] = {}

    def text(self, key: str) -> str | None:
        return self.values[key][2] if key in self.values else None

    def number(self, key: str) -> int | None:
        return num(TOOL, *self.values[key]) if key in self.values else None


def parse(text: str) -> tuple[Ca, ...]:
    drafts: list[tuple[_Draft, list[tuple[int, _Draft]]]] = []  # (CA, [(port number, port)])
    for line_no, raw in lines(TOOL, text):
        line = raw.strip()
        if match := _CA.match(line):
            ca = _Draft(line_no, raw)
            ca.values["name"], ca.values["type"] = (line_no, raw, match[2]), (line_no, raw, match[1])
            drafts.append((ca, []))
        elif not drafts:
            raise ParseError(TOOL, line_no, raw, "expected a \"CA '<name>'\" line first")
        elif match := _PORT.match(line):
            drafts[-1][1].append((int(match[1]), _Draft(line_no, raw)))
        elif match := _KEY_VALUE.match(line):
            key, value = match[1], match[2]
            if key in _PORT_KEYS:
                if not drafts[-1][1]:
                    raise ParseError(TOOL, line_no, raw, "port field before any 'Port N:' line")
                drafts[-1][1][-1][1].values[key] = (line_no, raw, value)
            elif key in _CA_KEYS:
                drafts[-1][0].values[key] = (line_no, raw, value)
        else:
            raise ParseError(TOOL, line_no, raw)
    if not drafts:
        raise ParseError(TOOL, 0, "", "no CA in the output")
    return tuple(_ca(ca, ports) for ca, ports in drafts)


def _ca(d: _Draft, ports: list[tuple[int, _Draft]]) -> Ca:
    return Ca(
        name=d.text("name") or "",
        node_type=d.text("type") or "CA",
        ca_type=d.text("CA type"),
        num_ports=d.number("Number of ports"),
        firmware=d.text("Firmware version"),
        hardware=d.text("Hardware version"),
        node_guid=d.number("Node GUID"),
        system_guid=d.number("System image GUID"),
        ports=tuple(_port(number, p) for number, p in ports),
    )


def _port(number: int, d: _Draft) -> CaPort:
    rate, fdr10 = None, False
    if "Rate" in d.values:
        match = _RATE.match(d.values["Rate"][2])
        if match is None:
            raise ParseError(TOOL, d.values["Rate"][0], d.values["Rate"][1], "cannot parse the rate")
        rate, fdr10 = float(match[1]), match[2] is not None
    return CaPort(
        number=number,
        state=d.text("State"),
        phys_state=d.text("Physical state"),
        rate=rate,
        fdr10=fdr10,
        base_lid=d.number("Base lid"),
        lmc=d.number("LMC"),
        sm_lid=d.number("SM lid"),
        cap_mask=d.number("Capability mask"),
        port_guid=d.number("Port GUID"),
        link_layer=d.text("Link layer"),
    )
