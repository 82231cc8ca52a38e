"""``ibqueryerrors`` (default, ``-c``, ``--details``, ``-r``, ``--data``, ``--counters``).

Only ports whose counters exceed the thresholds are printed (the default threshold is 0). The tool
exits 1 when it printed any such port: that is a finding, not a failure (see ``OK_RETURNCODES``).

The layouts in the field, all read alike: infiniband-diags 1.5 (a ``Suppressing: NAME ...`` line first,
``Errors for 0x<node GUID> "desc"`` for every node type, the node GUID on the port lines, no summary: a clean
fabric prints nothing), 1.6 and later (``Errors for "desc"`` for a CA, ``Errors for 0x<port-0 GUID> "desc"``
for a switch, ``port ALL`` sums, a ``## Summary`` block with ``## Thresholds:`` and ``## Suppressed:``, and
``##          N PMA query failures`` when some port did not answer), ``--details`` (the PortXmitDiscardDetails
and PortRcvErrorDetails counters in the same brackets), ``--data``/extended counters (``[PortXmitData ==
3888 (15.188KB)]``), ``-r`` (a ``Link info:`` line in iblinkinfo's layout under each port) and ``--counters``
(``Data Counters for ...``).

What is ibqueryerrors' own and what is not. A node header (``Errors for``/``Data Counters for``), a port
line (``   GUID 0x...``), a ``Link info:`` line, a ``##`` summary line and the 1.5 ``Suppressing:`` line are
its own: one that does not read (a counter garbled, a port before any header, a summary line cut) is a
ParseError quoting it, and so is a header with no port line under it (the tool prints a header only with its
first port) and a summary that stops after its first line. Every other line (``ibwarn: [1203]
query_and_dump: PortXmitDiscardDetails query failed on ...``, ``Query SA failed``, a kernel or syslog line,
a shell prompt) is kept as a note on the result (``QueryErrors.notes``, "line N: TEXT"), never the end of the
output. Output with only such lines is not ibqueryerrors' (a missing binary, an error message): a ParseError
saying what was expected and quoting its first line. Empty output is a clean fabric (1.5 prints nothing).

Proven on (tests/fixtures/ibqueryerrors and tests/fixtures/sim, see tests/fixtures/proven/ibqueryerrors.yaml):
an FDR fabric of ConnectX-3 hosts and an SX6036 switch (linux-rdma list, 2021: ``port 0`` and ``port ALL``
lines, 32-bit counters saturated at 4294967295), a clean node read with a threshold file (infiniband-exporter
issue 48, 2022: every threshold in ``## Thresholds:``) and infiniband-diags 44.0 (rdma-core 44, Debian 12;
ibsim) with ``-c --details`` and ``-r --data``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ibprov.probes._text import ParseError, frozen, hex_int, lines, note
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
# How each kind of ibqueryerrors line starts: a line that starts so must read as one (else ParseError).
_OWN = re.compile(r"^(?:(?:Errors|Data Counters) for |\s+GUID 0x|\s+Link info:|##|Suppressing:)", re.ASCII)
_SUMMARY_LINES = "'## Summary: N nodes checked, ...', '##   N ports checked, ...', '## Thresholds:', '## Suppressed:'"
_EXPECTED = "'Errors for ...' headers, '   GUID 0x... port N: [Counter == N]' lines and a '## Summary' block"


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
    summary: ErrorSummary | None  # None before infiniband-diags 1.6 (no summary printed)
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not ibqueryerrors' (warnings, log lines)


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


class _Reader:
    """The state of one parse: the node header the next port line belongs to, the summary so far."""

    def __init__(self) -> None:
        self.ports: list[PortErrors] = []
        self.node: re.Match[str] | None = None
        self.bare: tuple[int, str] | None = None  # the last node header while no port line has followed it
        self.summary: dict[str, int] = {}
        self.thresholds: dict[str, int] = {}
        self.suppressed: tuple[str, ...] = ()
        self.notes: list[str] = []
        self.first_foreign: tuple[int, str] | None = None
        self.summary_at: tuple[int, str] | None = None  # the '## Summary:' line
        self.own = 0  # lines of ibqueryerrors' own read

    def read(self, line_no: int, line: str) -> None:
        if not _OWN.match(line):
            self.notes.append(note(line_no, line))
            self.first_foreign = self.first_foreign or (line_no, line)
            return
        self.own += 1
        if match := _NODE.match(line):
            if self.bare is not None:
                raise ParseError(TOOL, *self.bare, "a node header with no port line under it (the next header follows)")
            self.node, self.bare = match, (line_no, line)
        elif match := _PORT.match(line):
            self.port(line_no, line, match)
        elif match := _LINK.match(line):
            self.link(line_no, line, match)
        elif line.startswith("Suppressing:"):  # infiniband-diags 1.5
            self.suppressed = tuple(line.removeprefix("Suppressing:").split())
        elif line.startswith("##"):
            if self.summary_at is None and _SUMMARY_NODES.match(line):
                self.summary_at = (line_no, line)
            self.suppressed = _summary_line(line_no, line, self.summary, self.thresholds) or self.suppressed
        else:
            raise ParseError(TOOL, line_no, line, f"expected {_EXPECTED}, got")

    def port(self, line_no: int, line: str, match: re.Match[str]) -> None:
        node = self.node
        if node is None:
            raise ParseError(TOOL, line_no, line, "port line before any 'Errors for' header")
        found = _COUNTER.findall(match[3])
        counters = {name: int(value) for name, value in found}
        if len(found) != match[3].count("["):
            raise ParseError(TOOL, line_no, line, "cannot parse the counters")
        port = None if match[2] == "ALL" else int(match[2])
        switch_guid = hex_int(node[2]) if node[2] else None
        data_only = node[1] == "Data Counters"
        self.ports.append(PortErrors(node[3], switch_guid, hex_int(match[1]), port, frozen(counters), None, data_only))
        self.bare = None

    def link(self, line_no: int, line: str, match: re.Match[str]) -> None:
        if not self.ports or self.ports[-1].port is None or self.ports[-1].link is not None:
            raise ParseError(TOOL, line_no, line, "'Link info' without a port line before it")
        last = self.ports[-1]
        node_type = "SW" if last.switch_guid is not None else "CA"
        link = parse_port(match[1], node_type=node_type, guid=last.guid, description=last.node_description)
        if link is None:
            raise ParseError(TOOL, line_no, line, "cannot parse the link info")
        self.ports[-1] = replace(last, link=link)

    def result(self) -> QueryErrors:
        if self.bare is not None:
            raise ParseError(TOOL, *self.bare, "cut short: the output ends before this node's port lines")
        if self.summary_at is not None and "ports" not in self.summary:
            raise ParseError(TOOL, *self.summary_at, "cut short: the summary ends before its 'N ports checked' line")
        if not self.own and self.first_foreign is not None:
            error = ParseError(TOOL, *self.first_foreign)
            error.args = (f"{error}; not ibqueryerrors output: expected {_EXPECTED}",)
            raise error
        summary = _summary(self.summary, self.thresholds, self.suppressed)
        return QueryErrors(tuple(self.ports), summary, tuple(self.notes))


def parse(text: str) -> QueryErrors:
    reader = _Reader()
    for line_no, line in lines(TOOL, text, reader.notes):
        reader.read(line_no, line)
    return reader.result()


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
        raise ParseError(TOOL, line_no, line, f"cannot parse this summary line: expected {_SUMMARY_LINES}, got")
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
