"""Every parser, on any text, returns a result or raises ParseError -- never another exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibprov.probes import COLLECTORS, ParseError

# Real-looking lines of every format, so that random combinations reach the parsers' deeper branches.
FRAGMENTS = [
    "#",
    "# Initiated from node 0000000000100000 port 0000000000100001",
    "vendid=0x2c9",
    "switchguid=0x200001(200001)",
    "caguid=0x100006",
    'Switch\t36 "S-0000000000200001"\t\t# "Leaf2" base port 0 lid 3 lmc 0',
    'Ca\t1 "H-0000000000100006"\t\t# "node04 mlx5_0"',
    '[1]\t"H-0000000000100004"[1](100005) \t\t# "node03 mlx5_0" lid 6 4xEDR s=1 w=2 v=4',
    '[1](100007) \t"S-0000000000200001"[2]\t\t# lid 7 lmc 0 "Leaf2" lid 3 4xEDR',
    "CA     7  1 0x0000000000100007 4x EDR - SW     3  2 0x0000000000200001 ( 'node04 mlx5_0' - 'Leaf2' )",
    "SW     3 36 0x0000000000200001 4x SDR                                    'Leaf2'",
    'Switch\t : 0x0000000000200001 ports 36 devid 0x0 vendid 0x0 "Leaf2"',
    "CA: node04 mlx5_0:",
    "Switch: 0x0000000000200001 Leaf2:",
    "      0x0000000000100007      7    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    2[  ]"
    ' "Leaf2" (Could be 12X Could be 53.125 Gbps)',
    '           3    3[  ] ==(                Down/ Polling)==>             [  ] "" ( )',
    '0x0000000000100007 "                 node04 mlx5_0"      7    1[  ] ==( 4X      25.78125 Gbps '
    'Active/  LinkUp)==>  0x0000000000200001      3    2[  ] "Leaf2" ( )',
    "# Port extended counters: Lid 134 port 1 (CapMask: 0x5A00 CapMask2: 0x0000000)",
    "PortSelect:......................1",
    "CounterSelect2:..................0x00000000",
    "PortXmitData:....................9049592493976",
    'Errors for 0x200000 "Leaf1"',
    "   GUID 0x200000 port ALL: [PortRcvErrors == 17] [PortXmitData == 3888 (15.188KB)]",
    "       Link info:      5   1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>  0x0000000000200000"
    '      2    2[  ] "Leaf1" ( )',
    "## Summary: 7 nodes checked, 2 bad nodes found",
    "##          112 ports checked, 2 ports have errors beyond threshold",
    "## Thresholds: [SymbolErrorCounter = 10]",
    "## Suppressed: PortRcvSwitchRelayErrors",
    "sminfo: sm lid 1 sm guid 0x100001, activity count 229 priority 0 state 3 SMINFO_MASTER",
    "NodeRecord dump:",
    "PKeyTableRecord dump:",
    "MCMemberRecord group dump:",
    "PortInfoRecord dump:",
    "IsSM ports",
    "\t\tlid.....................1",
    "\t\tnode_guid...............0x0000000000100000",
    "\t\tPKey Table:",
    "\t\t0xffff 0x8010 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000",
    "\t\tMGID....................ff12:401b:8010::ffff:ffff",
    "   0: 0xffff 0x8010 0x0020 0x0000 0x0000 0x0000 0x0000 0x0000",
    "64 pkeys capacity for this port",
    "# Port info: Lid 3 port 1",
    "LinkSpeedExtActive:..............25.78125 Gbps",
    "Node Description:...........................Leaf2",
    "# SL2VL table: Lid 2",
    "ports: in  0, out  1: | 0| 1| 2| 3| 4| 5| 6| 7| 0| 1| 2| 3| 4| 5| 6| 7|",
    "# VLArbitration tables: Lid 2 port 1 LowCap 8 HighCap 8",
    "# Low priority VL Arbitration Table:",
    "VL    : |0x0 |0x1 |0x2 |",
    "WEIGHT: |0x0 |0x4 |0x4 |",
    "CA 'mlx5_0'",
    "\tNumber of ports: 1",
    "\tPort 1:",
    "\t\tRate: 10 (FDR10)",
    "\t\tPort GUID: 0xb8cef60300025b90",
    "ibwarn: [1] main: warning",
    "ibpanic: [1] main: fatal",
]

_line = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.sampled_from(FRAGMENTS).flatmap(lambda s: st.integers(0, len(s)).map(lambda i: s[:i] + s[i + 1 :])),
    st.text(max_size=80),
)
_text = st.one_of(st.text(), st.lists(_line, max_size=12).map("\n".join))


@pytest.mark.parametrize("name", sorted(COLLECTORS))
@settings(max_examples=300, deadline=None)
@given(text=_text)
def test_any_text_gives_a_result_or_a_parse_error(name: str, text: str) -> None:
    error = None
    try:
        COLLECTORS[name].parse(text)
    except ParseError as caught:
        error = caught
    if error is not None:
        assert error.tool == COLLECTORS[name].tool
        assert 0 <= error.line_no <= text.count("\n") + 1
