"""ibqueryerrors of every layout in the field, on real captures (tests/fixtures/ibqueryerrors and
tests/fixtures/sim, each with its source and version on its first line): the ports, counters and summary read
from each; lines that are not ibqueryerrors' become notes, whatever they are and wherever they come; a line
of its own that does not read, output cut short or not ibqueryerrors' is an error quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, insert, noted, shown

from ibprov.probes import ibqueryerrors
from ibprov.probes._text import ParseError
from ibprov.probes.ibqueryerrors import QueryErrors

CAPTURES = capture_names("ibqueryerrors/*.txt", "sim/ibqueryerrors*.txt")
FDR = "ibqueryerrors/fdr-sx6036-mlx4-linux-rdma-2021.txt"
CLEAN = "ibqueryerrors/clean-node-threshold-file-infiniband-exporter-issue48.txt"


def parsed(name: str) -> QueryErrors:
    return ibqueryerrors.parse(read_capture(name))


def test_fdr_sx6036_and_connectx3_hosts_linux_rdma_2021() -> None:
    # linux-rdma list, 2021 (version not posted): a switch's 'port ALL' and 'port 0' lines, 32-bit
    # counters saturated (PortXmitWait 4294967295, SymbolErrorCounter 65535), the typed prompt a note
    result = parsed(FDR)
    assert result.notes == ("line 1: # ibqueryerrors",)
    assert len(result.ports) == 15
    host = result.ports[0]
    assert (host.node_description, host.switch_guid, host.guid, host.port) == (
        "dl380g7 mlx4_0",
        None,
        0x7CFE900300179B31,
        1,
    )
    assert dict(host.counters) == {"VL15Dropped": 14, "PortXmitWait": 4294967295}
    switch = [p for p in result.ports if p.node_description == "MF0;ys23ib4:SX6036/U1"]
    assert {p.switch_guid for p in switch} == {0x2C903006E29B0}
    assert [p.port for p in switch] == [None, *range(9)]
    assert switch[0].counters["LinkDownedCounter"] == 48
    assert dict(switch[1].counters) == {"PortXmitWait": 76959324}
    assert switch[6].counters["SymbolErrorCounter"] == 65535
    assert switch[6].counters["PortXmitDiscards"] == 649
    assert result.summary is not None
    assert (
        result.summary.nodes_checked,
        result.summary.bad_nodes,
        result.summary.ports_checked,
        result.summary.bad_ports,
    ) == (4, 4, 43, 14)
    assert (result.summary.suppressed, dict(result.summary.thresholds)) == ((), {})


THRESHOLDS = [
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "VL15Dropped",
    "PortXmitWait",
]


def test_clean_node_with_a_threshold_file_infiniband_exporter_2022() -> None:
    # rdma-core era (2022, version not posted), --threshold-file -G of one clean HCA: no port, every
    # threshold named in '## Thresholds:' (at 0), the typed command line a note
    result = parsed(CLEAN)
    assert result.ports == ()
    assert result.notes == (
        "line 1: # ibqueryerrors --verbose --details --data --report-port --switch --ca --threshold-file "
        "./error_thresholds -G 0xb8cef60300a1d92a",
    )
    assert result.summary is not None
    assert (
        result.summary.nodes_checked,
        result.summary.bad_nodes,
        result.summary.ports_checked,
        result.summary.bad_ports,
    ) == (1, 0, 1, 0)
    assert list(result.summary.thresholds) == THRESHOLDS
    assert set(result.summary.thresholds.values()) == {0}


@pytest.mark.parametrize(
    ("name", "suppressed", "linked"),
    [
        # infiniband-diags 44.0 (rdma-core 44, Debian 12), ibsim: default, -c --details, -r --data
        ("sim/ibqueryerrors-sim-v44.txt", (), 0),
        ("sim/ibqueryerrors-c-details-sim-v44.txt", ("PortRcvSwitchRelayErrors",), 0),
        ("sim/ibqueryerrors-r-data-sim-v44.txt", (), 2),
    ],
)
def test_rdma_core_44_modes(name: str, suppressed: tuple[str, ...], linked: int) -> None:
    result = parsed(name)
    host, switch_all, switch_port = result.ports
    assert (host.guid, host.counters["SymbolErrorCounter"], host.counters["LinkDownedCounter"]) == (0x100003, 42, 3)
    assert (switch_all.port, switch_port.port, switch_port.counters["PortXmitWait"]) == (None, 2, 123456)
    assert sum(p.link is not None for p in result.ports) == linked
    assert result.summary is not None
    assert (result.summary.nodes_checked, result.summary.ports_checked, result.summary.suppressed) == (
        7,
        112,
        suppressed,
    )
    assert result.notes == ()


def test_every_capture_is_tested_above() -> None:
    assert CAPTURES == [
        CLEAN,
        FDR,
        "sim/ibqueryerrors-c-details-sim-v44.txt",
        "sim/ibqueryerrors-r-data-sim-v44.txt",
        "sim/ibqueryerrors-sim-v44.txt",
    ]


# infiniband-diags 1.5.8's layout (src/ibqueryerrors.c: report_suppressed first, "Errors for 0x<node GUID>"
# for every node, no summary): not a capture, the source's printf's filled in
OLD = """\
Suppressing: RcvSwRelayErrors
Errors for 0x2c90300001dd0 "skoll HCA-1"
   GUID 0x2c90300001dd0 port 1: [SymbolErrors == 12] [RcvErrors == 3]
       Link info:      8   1[  ] ==( 4X 5.0 Gbps Active/  LinkUp)==>       1    5[  ] "Voltaire 4036 # v4036" ( )
"""


def test_infiniband_diags_1_5_layout() -> None:
    result = ibqueryerrors.parse(OLD)
    (port,) = result.ports
    assert (port.switch_guid, port.guid, port.port, dict(port.counters)) == (
        0x2C90300001DD0,
        0x2C90300001DD0,
        1,
        {"SymbolErrors": 12, "RcvErrors": 3},
    )
    assert port.link is not None
    assert (port.link.lane_gbps, port.link.remote.lid if port.link.remote else None) == (5.0, 1)
    assert result.summary is None
    assert ibqueryerrors.parse("") == QueryErrors((), None)  # 1.5 on a clean fabric prints nothing


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("bash: ibqueryerrors: command not found", 1, "cannot parse: 'bash: ibqueryerrors: command not found'; not"),
        ('Errors for "h"\nErrors for "i"\n   GUID 0x1 port 1: [A == 1]\n', 1, "a node header with no port line"),
        ('Errors for "h"\n', 1, "cut short: the output ends before this node's port lines"),
        ("## Summary: 7 nodes checked, 2 bad nodes found\n", 1, "cut short: the summary ends before"),
        ("##  112 ports checked", 1, "cannot parse this summary line: expected"),
        ('Errors for "h"\n   GUID 0x1 port 1: [A == 1] [B', 2, "expected 'Errors for ...' headers"),
        ('Errors for 0x<redacted> "sw"\n', 1, "expected 'Errors for ...' headers"),
    ],
)
def test_what_is_not_whole_ibqueryerrors_output_is_an_error_quoting_its_line(
    text: str, line_no: int, reason: str
) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        ibqueryerrors.parse(text)
    assert caught.value.line_no == line_no


def test_a_failed_details_query_is_a_note() -> None:
    # what ibqueryerrors --details prints on stderr when a port does not answer (rdma-core's IBWARN)
    warning = "ibwarn: [1203] query_and_dump: PortXmitDiscardDetails query failed on HOSTXXX, Lid 1051 port 1"
    body = read_capture("sim/ibqueryerrors-c-details-sim-v44.txt")
    result = ibqueryerrors.parse(warning + "\nQuery SA failed: Connection timed out\n" + body)
    assert result.notes == (f"line 1: {warning}", "line 2: Query SA failed: Connection timed out")
    assert replace(result, notes=()) == parsed("sim/ibqueryerrors-c-details-sim-v44.txt")


# ------------------------------------------------------------------ any warning anywhere changes only the notes --

KERNEL = st.sampled_from(
    [
        "[  123.456] some log line",
        "[ 8812.003311] mlx5_core 0000:3b:00.0: mlx5_port_module_event: Port module event: module 0, Cable unplugged",
        "...",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(CAPTURES), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = ibqueryerrors.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), st.one_of(NOISE, KERNEL)), max_size=8))
    result = ibqueryerrors.parse("\n".join(insert(lines, inserts)))
    assert replace(result, notes=()) == replace(clean, notes=())
    assert noted(result.notes) == sorted(shown(inserts) + noted(clean.notes))
