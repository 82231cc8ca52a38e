"""OpenSM's own dump of the forwarding tables (opensm-lfts.dump, written while log flag 0x40 is set) reads as
the same tables as dump_lfts: the twin's captures of one ring under lash."""

from __future__ import annotations

import pytest
from captures import read_capture

from ibprov.probes import ParseError, lfts


def test_the_opensm_dump_gives_every_switch_by_lid_with_its_entries() -> None:
    tables = lfts.parse_any(read_capture("routing/opensm-lfts-ring5-lash.txt"))
    assert [t.description for t in tables.switches] == ["S0", "S1", "S2", "S3", "S4"]
    s0 = tables.switches[0]
    assert (s0.lid, s0.guid, s0.lid_range) == (2, 0x200000, (0, 10))
    assert dict(s0.ports) == {1: 1, 2: 0, 3: 3, 4: 3, 5: 3, 6: 4, 7: 4, 8: 3, 9: 4, 10: 4}
    assert s0.destinations[1].kind == "Channel Adapter"
    assert s0.destinations[1].description == "H0"


def test_dump_lfts_output_still_reads_through_the_same_entry_point() -> None:
    text = read_capture("routing/dump_lfts-ring5-minhop.txt")
    assert lfts.parse_any(text) == lfts.parse(text)


def test_a_dump_cut_short_says_which_table_lost_its_end() -> None:
    text = read_capture("routing/opensm-lfts-ring5-lash.txt")
    cut = "\n".join(text.splitlines()[:15]) + "\n"
    with pytest.raises(ParseError, match="ends without its 'lids dumped' line"):
        lfts.parse_any(cut)


def test_a_footer_that_is_not_the_header_s_top_lid_is_refused() -> None:
    text = read_capture("routing/opensm-lfts-ring5-lash.txt").replace("10 lids dumped", "11 lids dumped", 1)
    with pytest.raises(ParseError, match=r"line 12: .*the footer does not repeat the header's top LID 10"):
        lfts.parse_any(text)


def test_a_table_with_lids_left_out_reads_with_its_gaps() -> None:
    text = read_capture("routing/opensm-lfts-ring5-lash.txt")
    kept = [ln for ln in text.splitlines() if not ln.startswith(("0x0004 ", "0x0009 "))]
    tables = lfts.parse_any("\n".join(kept) + "\n")
    assert [sorted(t.ports) for t in tables.switches] == [[1, 2, 3, 5, 6, 7, 8, 10]] * 5


def test_an_entry_outside_the_header_s_range_is_refused() -> None:
    text = read_capture("routing/opensm-lfts-ring5-lash.txt").replace(
        "10 lids dumped", "0x000b 001 # unknown node and type\n10 lids dumped", 1
    )
    with pytest.raises(ParseError, match="LID 0x000b is outside the header's 0-10"):
        lfts.parse_any(text)


HEAD = "Unicast lids [0-3] of switch Lid 2 guid 0x0000000000200000 ('S0'):"
ENTRY = "0x0001 001 # Channel Adapter portguid 0x0000000000100001: 'H0'"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            f"{HEAD}\n{ENTRY}\n{HEAD}\n3 lids dumped\n",
            f"line 3: a new table before the last one's 'lids dumped' line: {HEAD!r}",
        ),
        (f"{HEAD}\n{ENTRY}\n{ENTRY}\n3 lids dumped\n", f"line 3: LID 0x0001 listed twice: {ENTRY!r}"),
        (f"{HEAD}\n0x0001 256 # x\n3 lids dumped\n", "line 2: out port above 255: '0x0001 256 # x'"),
        (
            f"{HEAD}\n{ENTRY}\n2 lids dumped\n",
            "line 3: the footer does not repeat the header's top LID 3: '2 lids dumped'",
        ),
        (f"{HEAD}\n0x0004 001\n3 lids dumped\n", "line 3: LID 0x0004 is outside the header's 0-3: '3 lids dumped'"),
        (
            f"{HEAD.replace('[0-3]', '[1-3]')}\n0x0000 001\n3 lids dumped\n",
            "line 3: LID 0x0000 is outside the header's 1-3: '3 lids dumped'",
        ),
        (
            f"noise\n{HEAD}\n{ENTRY}\n",
            f"line 2: cut short: the last table ends without its 'lids dumped' line: {HEAD!r}",
        ),
        (
            "cat: opensm-lfts.dump: No such file\n",
            "line 1: not opensm-lfts.dump output: expected 'Unicast lids [N-N] of switch Lid N guid 0x... ('...'):', "
            "got: 'cat: opensm-lfts.dump: No such file'",
        ),
    ],
    ids=["table-in-table", "twice", "port-256", "footer", "above-top", "below-low", "cut-short", "not-output"],
)
def test_a_dump_opensm_did_not_write_is_refused_saying_where_and_why_in_full(text: str, message: str) -> None:
    with pytest.raises(ParseError) as refused:
        lfts.parse_opensm_dump(text)
    assert str(refused.value) == f"opensm-lfts.dump: {message}"


def test_out_port_255_is_read_and_a_foreign_line_is_a_note_with_its_number() -> None:
    tables = lfts.parse_opensm_dump(f"{HEAD}\n0x0001 255\nibwarn: x\nstray line\n3 lids dumped\n")
    assert dict(tables.switches[0].ports) == {1: 255}
    assert tables.notes[-1] == "line 4: stray line"
    assert tables.switch(0x200000) is tables.switches[0]
    assert tables.switch(0x999) is None


def test_parse_any_tells_the_two_layouts_apart_by_the_first_header() -> None:
    dump_lfts = read_capture("routing/dump_lfts-ring5-minhop.txt")
    assert lfts.parse_any(dump_lfts) == lfts.parse(dump_lfts)
    assert lfts.parse_any("note\n" + f"{HEAD}\n{ENTRY}\n3 lids dumped\n").switches[0].lid == 2
