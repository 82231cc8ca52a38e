"""smpquery pkeys / sl2vl / vlarb on real captures of infiniband-diags 44.0 under ibsim (tests/fixtures/smpquery,
sim and routing, each with its source and version on its first line; the layouts' code is unchanged since
infiniband-diags 1.2): the values read from each; lines that are not smpquery's become notes wherever they
come; output cut short or not smpquery's is an error quoting the line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, insert, noted, shown

from ibprov.probes import smpquery
from ibprov.probes._text import ParseError

PKEYS = [
    "sim/smpquery-pkeys-after-sighup-sim-v44.txt",
    "sim/smpquery-pkeys-sim-v44.txt",
    "smpquery/pkeys-ca-64-sim-v44.txt",
]
SL2VL = capture_names("routing/smpquery-sl2vl-*.txt")
VLARB = capture_names("smpquery/vlarb-*.txt")
READERS: dict[str, Callable[[str], Any]] = {
    **dict.fromkeys(PKEYS, smpquery.parse_pkeys),
    **dict.fromkeys(SL2VL, smpquery.parse_sl2vl),
    **dict.fromkeys(VLARB, smpquery.parse_vlarb),
}
IBWARN = 'ibwarn: [{}] sim_connect: attached as client 0 at node "S0"'


def test_pkeys_of_two_partition_layouts_and_the_default_table() -> None:
    # infiniband-diags 44.0 under ibsim, partitions.conf of the sim fixtures, before and after a SIGHUP
    assert smpquery.parse_pkeys(read_capture(PKEYS[1])).pkeys == (0xFFFF, 0x8010, 0x0020)
    after = smpquery.parse_pkeys(read_capture(PKEYS[0]))
    assert (after.pkeys, len(after.table), after.capacity) == ((0xFFFF, 0x8010, 0x0020, 0x8030), 64, 64)
    # infiniband-diags 44.0: the simulator's ibwarn line (stderr merged) is a note
    default = smpquery.parse_pkeys(read_capture(PKEYS[2]))
    assert (default.pkeys, len(default.table), default.capacity) == ((0xFFFF,), 64, 64)
    assert default.notes == ("line 1: " + IBWARN.format(19676),)


@pytest.mark.parametrize(
    ("name", "lid", "rows", "sl15"),
    [
        ("routing/smpquery-sl2vl-S0-out3-ring5-dfsssp-Q.txt", 2, [(i, 3) for i in range(9)], 7),
        ("routing/smpquery-sl2vl-S0-out3-ring5-lash-Q.txt", 2, [(i, 3) for i in range(9)], 7),
        ("routing/smpquery-sl2vl-S0-out3-ring5-minhop.txt", 2, [(i, 3) for i in range(9)], 7),
        ("routing/smpquery-sl2vl-ca-H2-ring5-lash-Q.txt", 8, [(0, 0)], 7),
        ("routing/smpquery-sl2vl-ca-H2-ring5-minhop.txt", 8, [(0, 0)], 7),
    ],
)
def test_sl2vl_of_switch_out_ports_and_cas(name: str, lid: int, rows: list[tuple[int, int]], sl15: int) -> None:
    # infiniband-diags 44.0 under ibsim, OpenSM 3.3.23 with QoS (-Q: SL 8 -> VL 0) and without (SL 8 -> VL 8)
    table = smpquery.parse_sl2vl(read_capture(name))
    assert table.lid == lid
    assert [(r[0], r[1]) for r in table.rows] == rows
    assert table.vl(15, *rows[-1]) == sl15
    assert table.vl(8, *rows[0]) == (0 if name.endswith("-Q.txt") else 8)
    assert table.notes == ()


@pytest.mark.parametrize(
    ("name", "head", "pid"),
    [
        ("smpquery/vlarb-ca-sim-v44.txt", (8, 0, 8, 8), 19673),
        ("smpquery/vlarb-switch-port3-sim-v44.txt", (1, 3, 8, 8), 19667),
    ],
)
def test_vlarb_of_a_ca_and_a_switch_port(name: str, head: tuple[int, int, int, int], pid: int) -> None:
    # infiniband-diags 44.0 under ibsim, OpenSM 3.3.23 -Q defaults: low VL1-7 weight 4, high VL0 weight 4
    arb = smpquery.parse_vlarb(read_capture(name))
    assert (arb.lid, arb.port, arb.low_cap, arb.high_cap) == head
    assert arb.low == ((0, 0), *((vl, 4) for vl in range(1, 8)))
    assert arb.high == ((0, 4), *((vl, 0) for vl in range(1, 8)))
    assert arb.notes == ("line 1: " + IBWARN.format(pid),)


def test_vlarb_of_a_base_switch_port_0_has_no_tables() -> None:
    arb = smpquery.parse_vlarb(read_capture("smpquery/vlarb-switch-bsp0-sim-v44.txt"))
    assert (arb.lid, arb.port, arb.low_cap, arb.high_cap, arb.low, arb.high) == (1, 0, None, None, (), ())


def test_every_capture_is_tested_above() -> None:
    assert sorted(READERS) == sorted(
        [
            *PKEYS,
            *SL2VL,
            "smpquery/vlarb-ca-sim-v44.txt",
            "smpquery/vlarb-switch-bsp0-sim-v44.txt",
            "smpquery/vlarb-switch-port3-sim-v44.txt",
        ]
    )
    assert capture_names("smpquery/*.txt") == sorted(["smpquery/pkeys-ca-64-sim-v44.txt", *VLARB])


def test_a_short_last_pkey_row_reads() -> None:
    # a Python reimplementation of smpquery (python-rdma) ends the table with a row of fewer than 8 entries
    pkeys = smpquery.parse_pkeys(
        "   0: 0xffff 0x8001 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 \n"
        "   8: 0x0000 0x7fff \n"
        "10 pkeys capacity for this port\n"
    )
    assert (pkeys.pkeys, pkeys.capacity) == ((0xFFFF, 0x8001, 0x7FFF), 10)


@pytest.mark.parametrize(
    ("parse", "text", "line_no", "reason"),
    [
        (smpquery.parse_pkeys, "bash: smpquery: command not found\n", 1, "not smpquery output: expected '   0: 0xffff"),
        (smpquery.parse_pkeys, "", 0, "no pkey rows in the output"),
        (
            smpquery.parse_pkeys,
            "   0: 0xffff 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n64 pkeys capacity for this port\n",
            0,
            "cut short: 8 pkey entries listed",
        ),
        (
            smpquery.parse_pkeys,
            "8 pkeys capacity for this port\n   0: 0xffff 0x0000\n",
            2,
            "a pkey row after the capacity line",
        ),
        (
            smpquery.parse_sl2vl,
            "ibwarn: [1] x: y\nsmpquery: sl2vl: unknown\n",
            2,
            "not smpquery output: expected '# SL2VL table",
        ),
        (smpquery.parse_sl2vl, "ports: in  0, out  0: | 0| 1|\n", 1, "a row before the '# SL2VL table' header"),
        (
            smpquery.parse_sl2vl,
            "# SL2VL table: Lid 2\n#                 SL: | 0| 1| 2|\nports: in  0, out  0: | 0| 1|\n",
            3,
            "the row has 2 VLs, the SL header 3",
        ),
        (
            smpquery.parse_sl2vl,
            "smpquery: iberror: failed: operation sl2vl: invalid port number\n",
            1,
            "the tool reported a failure",
        ),
        (smpquery.parse_vlarb, "Segmentation fault\n", 1, "not smpquery output: expected '# VLArbitration tables"),
        (
            smpquery.parse_vlarb,
            "# VLArbitration tables: Lid 8 port 0 LowCap 8 HighCap 8\n"
            "# Low priority VL Arbitration Table:\n"
            "VL    : |0x0 |0x1 |\n",
            3,
            "cut short: the output ends before this VL row's WEIGHT row",
        ),
        (
            smpquery.parse_vlarb,
            "# VLArbitration tables: Lid 8 port 0 LowCap 8 HighCap 8\n# Low priority VL Arbitration Table:\n",
            0,
            "cut short: the output ends before the Low priority table's rows",
        ),
        (
            smpquery.parse_vlarb,
            "# Low priority VL Arbitration Table:\n",
            1,
            "a table before the '# VLArbitration tables' header",
        ),
    ],
)
def test_what_is_not_whole_smpquery_output_is_an_error_quoting_its_line(
    parse: Callable[[str], Any], text: str, line_no: int, reason: str
) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        parse(text)
    assert caught.value.line_no == line_no


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(READERS)), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    parse = READERS[name]
    lines = read_capture(name).split("\n")
    clean = parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), NOISE), max_size=8), label="inserts")
    result = parse("\n".join(insert(lines, inserts)))
    assert replace(result, notes=()) == replace(clean, notes=())
    assert noted(result.notes) == sorted(shown(inserts) + noted(clean.notes))
