"""``ibqueryerrors`` (default, ``-c``, ``--details``, ``-r``, ``--data``, ``--counters``).

Only ports whose counters exceed the thresholds are printed (the default threshold is 0). The tool
exits 1 when it printed any such port: that is a finding, not a failure (see ``OK_RETURNCODES``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ibprov.probes._text import ParseError, frozen, hex_int, lines
from ibprov.probes.iblinkinfo import PortLink, parse_port

__all__ = ["OK_RETURNCODES", "ErrorSummary", "PortErrors", "QueryErrors", "argv", "parse"]

TOOL = "ibqueryerrors"
OK_RETURNCODES = frozenset({0, 1})

_NODE = re.compile(r'^(Errors|Data Counters) for (?:0x([0-9a-fA-F]+) )?"(.*)"$')
_PORT = re.compile(r"^\s+GUID 0x([0-9a-fA-F]+) port (ALL|\d+):((?: \[[^\]]*\])*)$", re.ASCII)
_COUNTER = re.compile(r"\[(\w+) == (\d+)(?: \([^)]*\))?\]", re.ASCII)
_LINK = re.compile(r"^\s+Link info:(.*)$")
_SUMMARY_NODES = re.compile(r"^## Summary: (\d+) nodes checked, (\d+) bad nodes found$", re.ASCII)
_SUMMARY_PORTS = re.compile(r"^##\s+(\d+) ports checked, (\d+) ports have errors beyond threshold$", re.ASCII)
_SUMMARY_PMA = re.compile(r"^##\s+(\d+) PMA query failures$", re.ASCII)
_THRESHOLD = re.compile(r"\[(\w+) = (\d+)\]", re.ASCII)


@dataclass(frozen=True)
class PortErrors:
    node_description: str
    switch_guid: int | None  # the switch's port-0 GUID for "Errors for 0x<guid> ..."; None for CAs
    guid: int  # the GUID printed on the port line (port GUID; switch port-0 GUID for switches)
    port: int | None  # None for "port ALL" (a switch's summed counters)
    counters: Mapping[str, int] = field(hash=False)
    link: PortLink | None = None  # with -r
    data_only: bool = False  # from --counters ("Data Counters for ...")


@dataclass(frozen=True)
class ErrorSummary:
    nodes_checked: int
    bad_nodes: int
    ports_checked: int
    bad_ports: int
    pma_query_failures: int
    thresholds: Mapping[str, int] = field(hash=False)  # non-default thresholds in effect
    suppressed: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueryErrors:
    ports: tuple[PortErrors, ...]
    summary: ErrorSummary | None


def argv(
    *,
    suppress_common: bool = True,
    details: bool = False,
    report_port: bool = False,
    data: bool = False,
    threshold_file: str | None = None,
) -> tuple[str, ...]:
    flags = [("-c", suppress_common), ("--details", details), ("-r", report_port), ("--data", data)]
    args = ["ibqueryerrors", *(flag for flag, on in flags if on)]
    if threshold_file is not None:
        args += ["--threshold-file", threshold_file]
    return tuple(args)


def parse(text: str) -> QueryErrors:
    ports: list[PortErrors] = []
    node: re.Match[str] | None = None
    summary: dict[str, int] = {}
    thresholds: dict[str, int] = {}
    suppressed: tuple[str, ...] = ()
    for line_no, line in lines(TOOL, text):
        if match := _NODE.match(line):
            node = match
        elif match := _PORT.match(line):
            if node is None:
                raise ParseError(TOOL, line_no, line, "port line before any 'Errors for' header")
            found = _COUNTER.findall(match[3])
            counters = {name: int(value) for name, value in found}
            if len(found) != match[3].count("["):
                raise ParseError(TOOL, line_no, line, "cannot parse the counters")
            port = None if match[2] == "ALL" else int(match[2])
            switch_guid = hex_int(node[2]) if node[2] else None
            data_only = node[1] == "Data Counters"
            ports.append(PortErrors(node[3], switch_guid, hex_int(match[1]), port, frozen(counters), None, data_only))
        elif match := _LINK.match(line):
            if not ports or ports[-1].port is None or ports[-1].link is not None:
                raise ParseError(TOOL, line_no, line, "'Link info' without a port line before it")
            last = ports[-1]
            node_type = "SW" if last.switch_guid is not None else "CA"
            link = parse_port(match[1], node_type=node_type, guid=last.guid, description=last.node_description)
            if link is None:
                raise ParseError(TOOL, line_no, line, "cannot parse the link info")
            ports[-1] = PortErrors(
                last.node_description,
                last.switch_guid,
                last.guid,
                last.port,
                last.counters,
                link,
                last.data_only,
            )
        elif line.startswith("##"):
            suppressed = _summary_line(line_no, line, summary, thresholds) or suppressed
        else:
            raise ParseError(TOOL, line_no, line)
    return QueryErrors(tuple(ports), _summary(summary, thresholds, suppressed))


def _summary_line(
    line_no: int, line: str, summary: dict[str, int], thresholds: dict[str, int]
) -> tuple[str, ...] | None:
    if match := _SUMMARY_NODES.match(line):
        summary["nodes"], summary["bad_nodes"] = int(match[1]), int(match[2])
    elif match := _SUMMARY_PORTS.match(line):
        summary["ports"], summary["bad_ports"] = int(match[1]), int(match[2])
    elif match := _SUMMARY_PMA.match(line):
        summary["pma"] = int(match[1])
    elif line.startswith("## Thresholds:") or line == "## (null)":
        thresholds.update((name, int(value)) for name, value in _THRESHOLD.findall(line))
    elif line.startswith("## Suppressed:"):
        return tuple(line.removeprefix("## Suppressed:").split())
    else:
        raise ParseError(TOOL, line_no, line)
    return None


def _summary(summary: dict[str, int], thresholds: dict[str, int], suppressed: tuple[str, ...]) -> ErrorSummary | None:
    if "nodes" not in summary or "ports" not in summary:
        return None
    return ErrorSummary(
        summary["nodes"],
        summary["bad_nodes"],
        summary["ports"],
        summary["bad_ports"],
        summary.get("pma", 0),
        frozen(thresholds),
        suppressed,
    )
