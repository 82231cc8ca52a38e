from __future__ import annotations

import re

import pytest
from diagtext import shared

from ibprov.verify.collect import ParseError
from ibprov.verify.collect.perfquery import ALL_PORTS, parse


def test_extended_counters_of_an_edr_hca() -> None:
    (block,) = parse(shared("perfquery/edr-hca-x-extended-treydock.txt"))
    assert (block.kind, block.extended, block.lid, block.port) == ("Port extended", True, 134, 1)
    assert (block.cap_mask, block.cap_mask2) == (0x5A00, 0)
    assert (block.port_select, block.counter_select, block.counter_select2) == (1, 0, 0)
    assert block.counters["PortXmitData"] == 9049592493976
    assert block.counters["PortMulticastRcvPkts"] == 3732158589
    assert block.get("SymbolErrorCounter") == 0
    assert block.get("QP1Dropped") == 0
    assert len(block.counters) == 8 + 14
    assert "PortSelect" not in block.counters
    assert "CounterSelect2" not in block.counters


def test_two_blocks_for_two_switch_ports() -> None:
    first, second = parse(shared("perfquery/edr-switch-x-extended-2ports-treydock.txt"))
    assert (first.lid, first.port, second.lid, second.port) == (1719, 1, 1719, 2)
    assert (first.cap_mask, first.cap_mask2) == (0x5300, 0x2)
    assert first.counters["PortXmitWait"] == 22730501
    assert second.counters["PortXmitWait"] == 36510964
    assert second.counters["PortMulticastXmitPkts"] == 0


def test_receive_error_details_block() -> None:
    (block,) = parse(shared("perfquery/edr-switch-rcv-error-details-treydock.txt"))
    assert (block.kind, block.extended, block.lid, block.port, block.cap_mask) == (
        "PortRcvErrorDetails",
        False,
        1719,
        1,
        None,
    )
    assert sorted(block.counters) == sorted(
        [
            "PortLocalPhysicalErrors",
            "PortMalformedPktErrors",
            "PortBufferOverrunErrors",
            "PortDLIDMappingErrors",
            "PortVLMappingErrors",
            "PortLoopingErrors",
        ]
    )


def test_2014_fdr_port_counters_without_qp1dropped() -> None:
    # Captured under `watch`: a "#watch ..." comment and an "Every 1.0s: ..." banner precede the output.
    (block,) = parse(shared("perfquery/fdr56-mlx4-port-counters-nonextended-2014.txt", not_output=2))
    assert (block.kind, block.extended, block.lid, block.port, block.cap_mask) == (
        "Port",
        False,
        7,
        1,
        0x1400,
    )
    assert block.counter_select2 == 0
    assert block.counters["PortXmitData"] == 6465317
    assert block.counters["PortRcvPkts"] == 130792613
    assert block.counters["PortXmitWait"] == 2
    assert block.get("QP1Dropped") is None


def test_watch_banner_is_reported_with_its_line() -> None:
    with pytest.raises(ParseError) as caught:
        parse(shared("perfquery/fdr56-mlx4-port-counters-nonextended-2014.txt"))
    assert caught.value.line_no == 2
    assert caught.value.line.startswith("Every 1.0s: perfquery -l 7 1")


def test_sim_v44_port_counters_have_qp1dropped() -> None:
    (block,) = parse(shared("sim/perfquery-sim-v44.txt"))
    assert (block.lid, block.port, block.cap_mask, block.extended) == (3, 1, 0x1300, False)
    assert block.counters["QP1Dropped"] == 0
    assert block.counters["PortXmitData"] == 2664
    assert block.counters["PortRcvPkts"] == 37


def test_sim_extended_counters_lack_the_error_block() -> None:
    (block,) = parse(shared("sim/perfquery-x-sim-v44.txt"))
    assert block.extended
    assert (block.cap_mask, block.cap_mask2) == (0x1300, 0)
    assert len(block.counters) == 8
    assert block.get("SymbolErrorCounter") is None
    assert block.counters["PortUnicastXmitPkts"] == 0


def test_all_ports_sum_is_port_255() -> None:
    (block,) = parse(shared("sim/perfquery-x-a-sim-v44.txt"))
    assert (block.lid, block.port, block.port_select) == (2, ALL_PORTS, 255)
    assert block.counters["PortXmitData"] == 169848
    assert block.counters["PortRcvPkts"] == 2360


def test_warnings_and_comments_are_skipped() -> None:
    text = (
        "ibwarn: [1234] main: PerfMgt ClassPortInfo CapMask 0x1300; No extended counter support indicated\n"
        "# Port counters: Lid 3 port 1 (CapMask: 0x1300)\n"
        "# a comment\n"
        "SymbolErrorCounter:..............7\n"
    )
    (block,) = parse(text)
    assert dict(block.counters) == {"SymbolErrorCounter": 7}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SymbolErrorCounter:......7\n", "line 1: counter before any '# ... counters:' header"),
        ("# Port counters: Lid 3 port 1\nPortRcvErrors:.....x7\n", "line 2: not a number ('x7')"),
        (
            "# Port counters: Lid 3 port 1\nPortRcvErrors:...1\nPortRcvErrors:...2\n",
            "line 3: PortRcvErrors appears twice",
        ),
        ("# Port counters: Lid 3 port 1\nthis is not a counter\n", "line 2: cannot parse"),
        ("\n\n", "no '# ... counters:' block"),
    ],
)
def test_unreadable_output_is_an_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)):
        parse(text)
