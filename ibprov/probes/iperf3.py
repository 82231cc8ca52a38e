"""iperf3: the command lines of the TCP probe and a pure reader of the client's ``-J`` (JSON) report.

The JSON report (iperf3 3.x) is one object: ``start`` (``connecting_to``, ``version``), ``intervals`` and
``end``: ``sum_sent`` / ``sum_received`` with ``bits_per_second`` (decimal bits) for a TCP test. A run that
failed still prints the object, with ``error`` (``unable to connect to server: Connection refused``) and an
empty ``end``; the exit status is not to be trusted for that (3.12 exits 0 after a refused connection).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ibprov.probes._text import ParseError

__all__ = ["IperfResult", "client_argv", "parse", "server_argv"]

TOOL = "iperf3"


@dataclass(frozen=True)
class IperfResult:
    sent_gbps: float | None = None  # decimal Gb/s
    received_gbps: float | None = None
    retransmits: int | None = None
    error: str | None = None
    version: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.received_gbps is not None


def server_argv(port: int) -> tuple[str, ...]:
    """One test, then exit (``-1``): nothing is left listening after the probe."""
    return ("iperf3", "-s", "-1", "-p", str(port))


def client_argv(server: str, port: int, seconds: int) -> tuple[str, ...]:
    return ("iperf3", "-c", server, "-p", str(port), "-t", str(seconds), "-J")


def parse(text: str) -> IperfResult:
    """The client's ``-J`` output. Raises ParseError when it is not an iperf3 JSON report."""
    start = text.find("{")
    if start < 0:
        raise ParseError(TOOL, 0, "", "no JSON object in the output")
    try:
        data: Any = json.loads(text[start:])
    except json.JSONDecodeError as err:
        raise ParseError(TOOL, err.lineno, err.doc.splitlines()[err.lineno - 1] if err.doc else "", err.msg) from err
    if not isinstance(data, dict) or "start" not in data or "end" not in data:
        raise ParseError(TOOL, 0, "", "not an iperf3 JSON report (no start/end)")
    version = data["start"].get("version") if isinstance(data["start"], dict) else None
    error = data.get("error")
    end = data["end"] if isinstance(data["end"], dict) else {}
    sent, received = end.get("sum_sent"), end.get("sum_received")
    if error is None and not (isinstance(sent, dict) and isinstance(received, dict)):
        raise ParseError(TOOL, 0, "", "an iperf3 report without error and without sum_sent/sum_received")
    return IperfResult(
        sent_gbps=_gbps(sent),
        received_gbps=_gbps(received),
        retransmits=sent.get("retransmits") if isinstance(sent, dict) else None,
        error=str(error) if error is not None else None,
        version=str(version) if version is not None else None,
    )


def _gbps(part: object) -> float | None:
    if not isinstance(part, dict) or not isinstance(part.get("bits_per_second"), int | float):
        return None
    return round(float(part["bits_per_second"]) / 1e9, 3)
