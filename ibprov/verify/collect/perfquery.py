"""``perfquery`` (PortCounters), ``perfquery -x`` (PortCountersExtended), ``-a`` (all ports, port 255),
``-E``/``-D`` (error and discard details), and ``-l`` loops: one block per ``# ... counters:`` header.

Every counter is optional: which ones appear depends on the tool version, CapMask and CapMask2.
``PortXmitData``/``PortRcvData`` are in units of 4 octets; the 32-bit counters saturate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ibprov.verify.collect._text import ParseError, field_dump, frozen, hex_int, lines, num

__all__ = ["ALL_PORTS", "PortCounters", "argv", "parse"]

TOOL = "perfquery"
ALL_PORTS = 255  # the port number -a reports (summed over all ports)

_HEADER = re.compile(
    r"^# (.+?) counters: Lid (\d+) port (\d+)"
    r"(?: \(CapMask: 0x([0-9a-fA-F]+)(?: CapMask2: 0x([0-9a-fA-F]+))?\))?$",
    re.ASCII,
)
_SELECTORS = ("PortSelect", "CounterSelect", "CounterSelect2")


@dataclass(frozen=True)
class PortCounters:
    kind: str  # "Port", "Port extended", "PortRcvErrorDetails", "PortXmitDiscardDetails", ...
    lid: int
    port: int  # 255 (ALL_PORTS) for -a
    cap_mask: int | None
    cap_mask2: int | None
    port_select: int | None
    counter_select: int | None
    counter_select2: int | None
    counters: Mapping[str, int] = field(hash=False)

    @property
    def extended(self) -> bool:
        return self.kind == "Port extended"

    def get(self, name: str) -> int | None:
        return self.counters.get(name)


def argv(
    lid: int | None = None, port: int | None = None, *, extended: bool = False, all_ports: bool = False
) -> tuple[str, ...]:
    args = ["perfquery", *(["-x"] if extended else []), *(["-a"] if all_ports else [])]
    if lid is not None:
        args.append(str(lid))
        if port is not None:
            args.append(str(port))
    return tuple(args)


def parse(text: str) -> tuple[PortCounters, ...]:
    blocks: list[PortCounters] = []
    header: re.Match[str] | None = None
    values: dict[str, int] = {}
    for line_no, line in lines(TOOL, text):
        if match := _HEADER.match(line):
            if header is not None:
                blocks.append(_block(header, values))
            header, values = match, {}
            continue
        if line.startswith("#"):
            continue
        pair = field_dump(line)
        if pair is None:
            raise ParseError(TOOL, line_no, line)
        if header is None:
            raise ParseError(TOOL, line_no, line, "counter before any '# ... counters:' header")
        name, value = pair
        if name in values:
            raise ParseError(TOOL, line_no, line, f"{name} appears twice in one block")
        values[name] = num(TOOL, line_no, line, value)
    if header is not None:
        blocks.append(_block(header, values))
    if not blocks:
        raise ParseError(TOOL, 0, "", "no '# ... counters:' block in the output")
    return tuple(blocks)


def _block(header: re.Match[str], values: dict[str, int]) -> PortCounters:
    selectors = {name: values.pop(name, None) for name in _SELECTORS}
    return PortCounters(
        kind=header[1],
        lid=int(header[2]),
        port=int(header[3]),
        cap_mask=hex_int(header[4]) if header[4] else None,
        cap_mask2=hex_int(header[5]) if header[5] else None,
        port_select=selectors["PortSelect"],
        counter_select=selectors["CounterSelect"],
        counter_select2=selectors["CounterSelect2"],
        counters=frozen(values),
    )
