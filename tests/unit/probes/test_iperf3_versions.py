"""iperf3 -J of several iperf3 versions on real captures (tests/fixtures/iperf3, each with its source and
version): the rates, retransmits, version and error of each; lines before or after the JSON report become
notes, whatever they are; output cut short or not iperf3's report is an error quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpinoise import MPI_NOISE
from noiselines import noted, shown

from ibprov.probes import iperf3
from ibprov.probes._text import ParseError
from ibprov.probes.iperf3 import IperfResult

CAPTURES = capture_names("iperf3/*.txt")


def parsed(name: str) -> IperfResult:
    return iperf3.parse(read_capture(f"iperf3/{name}"))


@pytest.mark.parametrize(
    ("name", "version", "sent", "received", "retransmits"),
    [
        # perfsonar/pscheduler's test outputs: 3.1.3 indented with spaces (CentOS 6), 3.1.6 (Ubuntu 14.04)
        ("iperf3.1.3-tcp-centos6-pscheduler.txt", "iperf 3.1.3", 0.389, 0.389, 159),
        ("iperf3.1.6-tcp-ubuntu14.04-pscheduler.txt", "iperf 3.1.6", 0.094, 0.089, 686),
        # kfirtoledo/CloudPilot_Project: 3.9 with -n 10K, the receiver counted 0 bytes
        ("iperf3.9-tcp-10k-bytes-ubuntu.txt", "iperf 3.9", 0.008, 0.0, 0),
        # produced here: Debian 12's 3.12 on loopback
        ("iperf3.12-tcp-loopback-debian12.txt", "iperf 3.12", 22.292, 22.287, 20),
    ],
)
def test_tcp_reports_of_each_version(name: str, version: str, sent: float, received: float, retransmits: int) -> None:
    result = parsed(name)
    assert (result.version, result.sent_gbps, result.received_gbps, result.retransmits) == (
        version,
        sent,
        received,
        retransmits,
    )
    assert result.ok
    assert (result.error, result.notes) == (None, ())


def test_a_refused_connection_is_a_report_with_its_error() -> None:
    """iperf3 3.12 (Debian 12) with no server: exit 0, an empty end and the error."""
    result = parsed("iperf3.12-refused-debian12.txt")
    assert (result.version, result.error) == ("iperf 3.12", "unable to connect to server: Connection refused")
    assert (result.received_gbps, result.ok) == (None, False)


def test_every_capture_is_tested_above() -> None:
    assert [n.removeprefix("iperf3/") for n in CAPTURES] == [
        "iperf3.1.3-tcp-centos6-pscheduler.txt",
        "iperf3.1.6-tcp-ubuntu14.04-pscheduler.txt",
        "iperf3.12-refused-debian12.txt",
        "iperf3.12-tcp-loopback-debian12.txt",
        "iperf3.9-tcp-10k-bytes-ubuntu.txt",
    ]


def test_an_object_with_only_an_error_is_a_failed_run() -> None:
    result = iperf3.parse('{\n\t"error":\t"unable to send control message: Bad file descriptor"\n}\n')
    assert (result.error, result.version, result.ok) == (
        "unable to send control message: Bad file descriptor",
        None,
        False,
    )


REPORT = read_capture("iperf3/iperf3.12-tcp-loopback-debian12.txt")


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("iperf3: error - unable to connect to server: Connection refused", 1, "not iperf3 -J output: expected"),
        ("", 0, "no output: expected an iperf3 -J report"),
        ("warning: x\n" + REPORT[: len(REPORT) // 2], 2, "cut short: the JSON report from this line does not end"),
        ('{"title": "Not iperf3", "end": {}}', 1, "not an iperf3 report"),
        (
            REPORT.replace('"sum_received"', '"sum_receiver"'),
            REPORT.split("\n").index('\t"end":\t{') + 1,
            "without sum_",
        ),
    ],
)
def test_what_is_not_a_whole_iperf3_report_is_an_error_quoting_its_line(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        iperf3.parse(text)
    assert caught.value.line_no == line_no


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(CAPTURES),
    before=st.lists(MPI_NOISE, max_size=4),
    after=st.lists(MPI_NOISE, max_size=4),
)
def test_lines_before_and_after_the_json_change_only_the_notes(name: str, before: list[str], after: list[str]) -> None:
    lines = read_capture(name).rstrip("\n").split("\n")
    clean = iperf3.parse("\n".join(lines))
    result = iperf3.parse("\n".join([*before, *lines, *after]))
    assert replace(result, notes=()) == clean
    assert noted(result.notes) == shown([(0, t) for t in [*before, *after]])
    first = len(before) + 1  # the report's first line
    assert noted(tuple(n for n in result.notes if int(n.split(":")[0].removeprefix("line ")) < first)) == shown(
        [(0, t) for t in before]
    )
