from __future__ import annotations

import re

import pytest
from captures import capture_path, exit_code, read_capture
from diagtext import OWN, own

from ibprov.probes import COLLECTORS, ParseError
from ibprov.probes.ibqueryerrors import parse


def test_default_output_lists_ports_above_threshold() -> None:
    result = parse(read_capture("sim/ibqueryerrors-sim-v44.txt"))
    host, switch_all, switch_port = result.ports
    assert (host.node_description, host.switch_guid, host.guid, host.port) == (
        "node02 mlx5_0",
        None,
        0x100003,
        1,
    )
    assert dict(host.counters) == {"SymbolErrorCounter": 42, "LinkDownedCounter": 3}
    assert (switch_all.node_description, switch_all.switch_guid, switch_all.port) == ("Leaf1", 0x200000, None)
    assert dict(switch_port.counters) == {"PortRcvErrors": 17, "PortXmitDiscards": 5, "PortXmitWait": 123456}
    assert switch_port.port == 2
    assert switch_port.link is None
    assert result.summary is not None
    assert (result.summary.nodes_checked, result.summary.bad_nodes) == (7, 2)
    assert (result.summary.ports_checked, result.summary.bad_ports) == (112, 2)
    assert (result.summary.suppressed, dict(result.summary.thresholds)) == ((), {})


def test_suppress_common_is_reported_in_the_summary() -> None:
    result = parse(read_capture("sim/ibqueryerrors-c-details-sim-v44.txt"))
    assert len(result.ports) == 3
    assert result.summary is not None
    assert result.summary.suppressed == ("PortRcvSwitchRelayErrors",)


def test_report_port_and_data_add_link_info_and_data_counters() -> None:
    host, switch_all, switch_port = parse(read_capture("sim/ibqueryerrors-r-data-sim-v44.txt")).ports
    assert host.counters["PortXmitData"] == 3888
    assert host.counters["PortRcvPkts"] == 55
    assert switch_all.counters["PortXmitPkts"] == 3193
    assert switch_all.link is None
    assert host.link is not None
    assert host.link.remote is not None
    assert (host.link.lid, host.link.port, host.link.width, host.link.lane_gbps) == (5, 1, "4X", 25.78125)
    assert (host.link.remote.guid, host.link.remote.lid, host.link.remote.port) == (0x200000, 2, 2)
    assert host.link.could_be is not None
    assert host.link.could_be.lane_gbps == 53.125
    assert switch_port.link is not None
    assert switch_port.link.remote is not None
    assert (switch_port.link.node_type, switch_port.link.remote.description) == ("SW", "node02 mlx5_0")


def test_exit_status_one_means_findings_not_failure() -> None:
    assert exit_code(capture_path("sim/ibqueryerrors-sim-v44.txt")) == 1
    assert exit_code(OWN / "ibqueryerrors/clean-c-details.txt") == 0
    collector = COLLECTORS["ibqueryerrors"]
    assert collector.succeeded(1)
    assert collector.succeeded(0)
    assert not collector.succeeded(255)
    assert not COLLECTORS["sminfo"].succeeded(1)


def test_clean_fabric_has_a_summary_and_no_ports() -> None:
    result = parse(own("ibqueryerrors/clean-c-details.txt"))
    assert result.ports == ()
    assert result.summary is not None
    assert (result.summary.nodes_checked, result.summary.ports_checked, result.summary.bad_ports) == (
        3,
        10,
        0,
    )


def test_thresholds_pma_failures_and_data_counters_only() -> None:
    text = """\
Data Counters for 0x200000 "Leaf1"
   GUID 0x200000 port 3: [PortXmitData == 10 (40.000B)] [PortRcvData == 0 (0.000B)]

## Summary: 3 nodes checked, 0 bad nodes found
##          10 ports checked, 0 ports have errors beyond threshold
## Thresholds: [SymbolErrorCounter = 10][PortXmitWait = 1000]
##          2 PMA query failures
## Suppressed: PortRcvSwitchRelayErrors PortXmitWait
"""
    result = parse(text)
    (port,) = result.ports
    assert (port.data_only, port.port, dict(port.counters)) == (
        True,
        3,
        {"PortXmitData": 10, "PortRcvData": 0},
    )
    assert result.summary is not None
    assert dict(result.summary.thresholds) == {"SymbolErrorCounter": 10, "PortXmitWait": 1000}
    assert result.summary.pma_query_failures == 2
    assert result.summary.suppressed == ("PortRcvSwitchRelayErrors", "PortXmitWait")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   GUID 0x1 port 1: [A == 1]\n", "line 1: port line before any 'Errors for' header"),
        ('Errors for "h"\n   GUID 0x1 port 1: [A == x]\n', "line 2: cannot parse"),
        ('Errors for "h"\n   GUID 0x1 port 1: [A == 1] [B]\n', "line 2: cannot parse the counters"),
        (
            '       Link info:      5   1[  ] ==(  Down/ Polling)==>  [  ] "" ( )\n',
            "line 1: 'Link info' without",
        ),
        ("## Summary: lots\n", "line 1: cannot parse"),
    ],
)
def test_unreadable_output_is_an_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)):
        parse(text)
