"""iperf3: the command lines of the TCP probe and a pure reader of the client's ``-J`` (JSON) report.

The JSON report (iperf3 3.x) is one object: ``start`` (``connecting_to``, ``version``), ``intervals`` and
``end``: ``sum_sent`` / ``sum_received`` with ``bits_per_second`` (decimal bits) for a TCP test. Across versions
the members around them change (3.1 indents with spaces where 3.9 and later use tabs, 3.9 adds ``"sender"`` to
each sum and the TCP congestion algorithms, 3.12 ``target_bitrate`` ...), not those read here. A run that failed
still prints the object, with ``error`` (``unable to connect to server: Connection refused``) and an empty
``end``; the exit status is not to be trusted for that (3.12 exits 0 after a refused connection). An object with
only ``error`` is read the same way.

Lines before or after the JSON document (a shell or loader warning, a log line merged from stderr) are kept as
notes on the result (``line N: TEXT``). Output with no JSON object is not ``iperf3 -J``'s, a document that does
not end was cut short, and an object without ``start``/``end`` or ``error`` is not iperf3's report: each is a
ParseError that says what was expected and quotes the line.

Proven on (tests/fixtures/iperf3, one real capture each): iperf3 3.1.3 (CentOS 6), 3.1.6 (Ubuntu 14.04), 3.9
(Ubuntu 18.04, a -n 10K run whose receiver reports 0 bytes) and 3.12 (Debian 12: a loopback run and a refused
connection).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ibprov.probes._text import ParseError, note

__all__ = ["IperfResult", "client_argv", "parse", "server_argv"]

TOOL = "iperf3"


@dataclass(frozen=True)
class IperfResult:
    sent_gbps: float | None = None  # decimal Gb/s
    received_gbps: float | None = None
    retransmits: int | None = None
    error: str | None = None
    version: str | None = None
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line before or after the JSON report

    @property
    def ok(self) -> bool:
        return self.error is None and self.received_gbps is not None


def server_argv(port: int) -> tuple[str, ...]:
    """One test, then exit (``-1``): nothing is left listening after the probe."""
    return ("iperf3", "-s", "-1", "-p", str(port))


def client_argv(server: str, port: int, seconds: int) -> tuple[str, ...]:
    return ("iperf3", "-c", server, "-p", str(port), "-t", str(seconds), "-J")


_END = re.compile(r'^\s*"end":\s*\{')  # the report's end object (an interval's "end" is a number)
_EXPECTED = "an iperf3 -J report (a JSON object with start and end, or error)"


def _document(text: str) -> tuple[dict[str, Any], int, int]:
    """The report, the number of its first line and of its last line: the first line that opens a JSON object
    starts it (raw_decode reads it to its end); a later ``{`` line is tried when one does not decode."""
    rows = text.split("\n")
    offsets = [0]
    for row in rows:
        offsets.append(offsets[-1] + len(row) + 1)
    starts = [n for n, row in enumerate(rows) if row.lstrip().startswith("{")]
    if not starts:
        first = next(((n, row) for n, row in enumerate(rows, start=1) if row.strip()), None)
        if first is None:
            raise ParseError(TOOL, 0, "", f"no output: expected {_EXPECTED}")
        raise ParseError(TOOL, first[0], first[1], f"not iperf3 -J output: expected {_EXPECTED}, got")
    decoder = json.JSONDecoder()
    failure: tuple[int, str] | None = None
    for n in starts:
        begin = offsets[n] + len(rows[n]) - len(rows[n].lstrip())
        try:
            data, end = decoder.raw_decode(text, begin)
        except json.JSONDecodeError as err:
            failure = failure or (n + 1, err.msg)
            continue
        if isinstance(data, dict):
            last = text.count("\n", 0, max(end - 1, begin)) + 1
            return data, n + 1, last
    assert failure is not None  # every start failed to decode
    line_no, why = failure
    raise ParseError(
        TOOL, line_no, rows[line_no - 1], f"cut short: the JSON report from this line does not end ({why})"
    )


def parse(text: str) -> IperfResult:
    """The client's ``-J`` output. Raises ParseError when it is not an iperf3 JSON report."""
    data, first, last = _document(text)
    notes = tuple(
        note(n, row) for n, row in enumerate(text.split("\n"), start=1) if row.strip() and not first <= n <= last
    )
    error = data.get("error")
    if error is None and ("start" not in data or "end" not in data):
        raise ParseError(
            TOOL,
            first,
            text.split("\n")[first - 1],
            f"not an iperf3 report (no start/end, no error): expected {_EXPECTED}",
        )
    start = data.get("start")
    version = start.get("version") if isinstance(start, dict) else None
    end = data["end"] if isinstance(data.get("end"), dict) else {}
    sent, received = end.get("sum_sent"), end.get("sum_received")
    if error is None and not (isinstance(sent, dict) and isinstance(received, dict)):
        line_no = next((n for n, row in enumerate(text.split("\n"), start=1) if _END.match(row)), first)
        raise ParseError(
            TOOL,
            line_no,
            text.split("\n")[line_no - 1],
            "an iperf3 report without error and without sum_sent/sum_received (a UDP test?)",
        )
    return IperfResult(
        sent_gbps=_gbps(sent),
        received_gbps=_gbps(received),
        retransmits=sent.get("retransmits") if isinstance(sent, dict) else None,
        error=str(error) if error is not None else None,
        version=str(version) if version is not None else None,
        notes=notes,
    )


def _gbps(part: object) -> float | None:
    if not isinstance(part, dict) or not isinstance(part.get("bits_per_second"), int | float):
        return None
    return round(float(part["bits_per_second"]) / 1e9, 3)
