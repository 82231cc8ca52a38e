"""The dump_lfts / ibroute parser on the real captures (infiniband-diags 44 against ibsim) and on the forms
the source prints (-n, -a, LMC > 0), and its refusals."""

from __future__ import annotations

import pytest
from captures import read_capture
from hypothesis import given, settings
from hypothesis import strategies as st

from ibprov.probes import ParseError
from ibprov.probes.lfts import Destination, argv, ibroute_argv, parse

HEADER = "Unicast lids [0x0-0x9] of switch Lid 4 guid 0x0000000000200002 (Spine1):"
COLUMNS = "  Lid  Out   Destination\n       Port     Info "


def table(*entries: str, footer: str | None = None) -> str:
    count = footer if footer is not None else f"{len(entries)} valid lids dumped "
    return "\n".join([HEADER, COLUMNS, *entries, count]) + "\n"


def test_dump_lfts_capture_has_every_switch_and_entry() -> None:
    lfts = parse(read_capture("sim/dump_lfts-sim-v44.txt"))
    assert [(hex(s.guid), s.description) for s in lfts.switches] == [
        ("0x200001", "Leaf2"),
        ("0x200002", "Spine1"),
        ("0x200000", "Leaf1"),
    ]
    leaf2 = lfts.switch(0x200001)
    assert leaf2 is not None
    assert leaf2.address == "DR path slid 0; dlid 0; 0,1,35,2"
    assert leaf2.lid is None
    assert leaf2.lid_range == (0, 7)
    # 0x0003 000 (itself), 0x0006 001 (node03), 0x0007 002 (node04), everything else up port 35
    assert dict(leaf2.ports) == {1: 35, 2: 35, 3: 0, 4: 35, 5: 35, 6: 1, 7: 2}
    assert leaf2.destinations[6] == Destination("Channel Adapter", 0x100005, "node03 mlx5_0")
    assert leaf2.destinations[2] == Destination("Switch", 0x200000, "Leaf1")
    spine = lfts.switch(0x200002)
    assert spine is not None
    assert dict(spine.ports) == {1: 1, 2: 1, 3: 2, 4: 0, 5: 1, 6: 2, 7: 2}
    assert spine.out_port(5) == 1  # node02, on Leaf1 below port 1
    assert spine.out_port(8) is None


def test_ibroute_capture_is_the_same_table_as_in_dump_lfts() -> None:
    one = parse(read_capture("sim/ibroute-sim-v44.txt"), "ibroute")
    assert len(one.switches) == 1
    leaf1 = one.switches[0]
    assert (leaf1.guid, leaf1.description, leaf1.address, leaf1.lid) == (0x200000, "Leaf1", "Lid 2", 2)
    assert dict(leaf1.ports) == {1: 1, 2: 0, 3: 35, 4: 35, 5: 2, 6: 35, 7: 35}
    assert leaf1.destinations[5] == Destination("Channel Adapter", 0x100003, "node02 mlx5_0")
    every = parse(read_capture("sim/dump_lfts-sim-v44.txt")).switch(0x200000)
    assert every is not None
    assert every.ports == leaf1.ports
    assert every.destinations == leaf1.destinations


def test_no_dests_all_and_lmc_forms() -> None:
    text = table(
        "0x0001 001",  # -n: no destination (the trailing space is stripped)
        "0x0002 001 : (unknown node and type)",
        "0x0003 255 : (illegal port)",  # -a
        "0x0004 002 : (Channel Adapter portguid 0x0000000000100005: 'node03 mlx5_0')",
        "0x0005 002 : (path #2 out of 2: portguid 0x0000000000100005)",  # LMC 1: the port's second LID
        "0x0006 002 : (path #2 - illegal port)",
        footer="6 lids dumped ",
    )
    sw = parse(text, "ibroute").switches[0]
    assert dict(sw.ports) == {1: 1, 2: 1, 3: 255, 4: 2, 5: 2, 6: 2}
    assert set(sw.destinations) == {4}
    assert sw.lid == 4


def test_dump_lfts_warning_and_empty_tables() -> None:
    text = table(footer="0 valid lids dumped ") + "\n*** WARNING ***: this command has been replaced by dump_fts\n\n"
    assert [dict(s.ports) for s in parse(text).switches] == [{}]
    assert parse("").switches == ()


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        (table("0x0001 001", footer="2 valid lids dumped "), 5, "the table has 1 entries"),
        (table("0x0001 001", "0x0001 002"), 5, "LID 0x0001 listed twice"),
        (table("0x0010 001"), 4, "LID 0x0010 outside the announced range"),
        (table("0x0001 001 : (Martian portguid)"), 4, "unknown destination"),
        (HEADER + "\n0x0001 001\n", 2, "an entry before the column header"),
        ("\n".join([HEADER, COLUMNS, "0x0001 001"]) + "\n", 1, "the table ends without its 'lids dumped' line"),
        (HEADER + "\n" + HEADER + "\n", 2, "a new table before the last one's 'lids dumped' line"),
        ("0x0001 001\n", 1, "an entry before any 'Unicast lids' header"),
        ("ibroute: iberror: failed: dump tables: node info failed: valid addr?\n", 1, "the tool reported a failure"),
    ],
)
def test_refuses_what_it_cannot_trust(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text, "ibroute")
    assert (caught.value.tool, caught.value.line_no, caught.value.reason) == ("ibroute", line_no, reason)


def test_argv() -> None:
    assert argv() == ("dump_lfts",)
    assert ibroute_argv(2) == ("ibroute", "2")


_FRAGMENTS = [HEADER, *COLUMNS.split("\n"), "0x0001 001", "0x0004 002 : (Switch portguid 0x0000000000200002: 'S')"]
_FRAGMENTS += ["7 valid lids dumped ", "1 lids dumped", "*** WARNING ***: x", "0x0003 255 : (illegal port)"]


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(), st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=40))).map("\n".join)))
def test_any_text_gives_tables_or_a_parse_error(text: str) -> None:
    error = None
    try:
        parse(text)
    except ParseError as caught:
        error = caught
    if error is not None:
        assert error.tool == "dump_lfts"
        assert 0 <= error.line_no <= text.count("\n") + 1
