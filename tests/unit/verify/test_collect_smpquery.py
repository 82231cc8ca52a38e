from __future__ import annotations

import pytest
from captures import read_capture
from diagtext import own

from ibprov.probes import ParseError
from ibprov.probes.smpquery import (
    parse_pkeys,
    parse_sl2vl,
    parse_vlarb,
)


def test_pkeys_keep_the_membership_bit_and_the_capacity() -> None:
    pkeys = parse_pkeys(read_capture("sim/smpquery-pkeys-sim-v44.txt"))
    assert pkeys.pkeys == (0xFFFF, 0x8010, 0x0020)  # 0x0020: limited member
    assert (len(pkeys.table), pkeys.capacity) == (64, 64)


def test_pkeys_after_sighup_show_the_new_partition() -> None:
    assert parse_pkeys(read_capture("sim/smpquery-pkeys-after-sighup-sim-v44.txt")).pkeys == (
        0xFFFF,
        0x8010,
        0x0020,
        0x8030,
    )


def test_pkey_rows_out_of_order_are_an_error() -> None:
    with pytest.raises(ParseError, match="line 2: expected the row for index 8"):
        parse_pkeys("   0: 0xffff 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n  16: 0x0000\n")


def test_sl2vl_of_a_ca_port() -> None:
    table = parse_sl2vl(own("smpquery/sl2vl-ca.txt"))
    assert table.lid == 1
    assert table.rows == ((0, 0, (0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7)),)
    assert (table.vl(9), table.vl(16)) == (1, None)


def test_sl2vl_of_a_switch_has_one_row_per_input_port() -> None:
    table = parse_sl2vl(own("smpquery/sl2vl-switch-outport1.txt"))
    assert [(row[0], row[1]) for row in table.rows] == [(i, 1) for i in range(9)]
    assert table.vl(15, in_port=8, out_port=1) == 7
    assert table.vl(0, in_port=0, out_port=0) is None


def test_sl2vl_with_vl15() -> None:
    text = "# SL2VL table: Lid 2\n#                 SL: | 0| 1|\nports: in  3, out  0: | 0|15|\n"
    assert parse_sl2vl(text).vl(1, 3, 0) == 15


def test_vlarb_low_and_high_tables() -> None:
    arb = parse_vlarb(own("smpquery/vlarb-switch-port1.txt"))
    assert (arb.lid, arb.port, arb.low_cap, arb.high_cap) == (2, 1, 8, 8)
    assert arb.low == ((0, 0), *((vl, 4) for vl in range(1, 8)))
    assert arb.high == ((0, 4), *((vl, 0) for vl in range(1, 8)))


def test_vlarb_port_without_tables() -> None:
    arb = parse_vlarb(own("smpquery/vlarb-switch-port0-none.txt"))
    assert (arb.lid, arb.port, arb.low_cap, arb.low, arb.high) == (2, 0, None, (), ())


def test_vlarb_weight_row_without_vl_row_is_an_error() -> None:
    text = (
        "# VLArbitration tables: Lid 2 port 1 LowCap 8 HighCap 8\n"
        "# Low priority VL Arbitration Table:\n"
        "WEIGHT: |0x0 |\n"
    )
    with pytest.raises(ParseError, match="line 3: WEIGHT row without a matching VL row"):
        parse_vlarb(text)


def test_smpquery_failure_message_is_an_error() -> None:
    with pytest.raises(ParseError, match="line 1: the tool reported a failure"):
        parse_sl2vl("smpquery: iberror: failed: operation sl2vl: invalid port number\n")
