"""dump_lfts / dump_fts / ibroute and OpenSM's opensm-lfts.dump on real captures (infiniband-diags 44.0 and
OpenSM 3.3.23 under ibsim: tests/fixtures/sim, routing and lfts, each with its source and version on its first
line; ``ibroute.c``'s layout is unchanged since infiniband-diags 1.2): the out ports and destinations read
from each; lines that are not the tool's become notes wherever they come; output cut short or not the tool's
is an error quoting the line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, insert, noted, shown

from ibprov.probes import lfts
from ibprov.probes._text import ParseError
from ibprov.probes.lfts import Destination, Lfts

WRAPPER = "*** WARNING ***: this command has been replaced by dump_fts"
DUMPS = [
    *capture_names("routing/dump_lfts-*.txt", "lfts/*.txt"),
    "sim/dump_lfts-sim-v44.txt",
    "sim/ibroute-sim-v44.txt",
]
READERS: dict[str, Callable[[str], Lfts]] = {
    **dict.fromkeys(DUMPS, lfts.parse),
    "routing/opensm-lfts-ring5-lash.txt": lfts.parse_opensm_dump,
    "routing/opensm-lfts-fattree-ftree.txt": lfts.parse_opensm_dump,
}


def test_ibroute_of_one_switch_by_lid() -> None:
    # infiniband-diags 44.0 under ibsim (2 leaves, 1 spine): ibroute 2
    (leaf,) = lfts.parse(read_capture("sim/ibroute-sim-v44.txt")).switches
    assert (leaf.guid, leaf.description, leaf.lid, leaf.lid_range) == (0x200000, "Leaf1", 2, (0, 7))
    assert dict(leaf.ports) == {1: 1, 2: 0, 3: 35, 4: 35, 5: 2, 6: 35, 7: 35}
    assert leaf.destinations[5] == Destination("Channel Adapter", 0x100003, "node02 mlx5_0")


def test_dump_lfts_of_every_switch_by_directed_path_and_its_wrapper_warning() -> None:
    # infiniband-diags 44.0, Debian's dump_lfts wrapper: its WARNING line after the tables is a note
    tables = lfts.parse(read_capture("sim/dump_lfts-sim-v44.txt"))
    assert [s.description for s in tables.switches] == ["Leaf2", "Spine1", "Leaf1"]
    leaf2 = tables.switch(0x200001)
    assert leaf2 is not None
    assert leaf2.address == "DR path slid 0; dlid 0; 0,1,35,2"
    assert leaf2.lid is None
    assert (leaf2.out_port(6), leaf2.out_port(7), leaf2.out_port(1)) == (1, 2, 35)
    assert tables.notes == (f"line 35: {WRAPPER}",)


def test_dump_lfts_with_stderr_merged() -> None:
    # infiniband-diags 44.0, 2>&1: the simulator's ibwarn line first, the wrapper's WARNING last
    tables = lfts.parse(read_capture("lfts/dump_lfts-stderr-merged-sim-v44.txt"))
    assert len(tables.switches) == 5
    s3 = tables.switch(0x200003)
    assert s3 is not None
    assert s3.address == "DR path slid 0; dlid 0; 0,4,4"
    assert (s3.out_port(6), s3.out_port(9), s3.out_port(8)) == (0, 1, 4)
    assert tables.notes[0] == 'line 1: ibwarn: [20181] sim_connect: attached as client 0 at node "S0"'
    assert tables.notes[-1].endswith(WRAPPER)


def test_ibroute_without_destinations_and_with_all_lids_of_a_range() -> None:
    # infiniband-diags 44.0: ibroute -n (no destination resolved), ibroute -a 1 0x1 0x4 ("4 lids dumped")
    (plain,) = lfts.parse(read_capture("lfts/ibroute-n-sim-v44.txt")).switches
    assert dict(plain.ports) == {1: 0, 2: 1, 3: 3, 4: 3, 5: 3, 6: 4, 7: 4, 8: 3, 9: 4, 10: 4}
    assert dict(plain.destinations) == {}
    (ranged,) = lfts.parse(read_capture("lfts/ibroute-a-range-sim-v44.txt")).switches
    assert (ranged.lid, ranged.lid_range, dict(ranged.ports)) == (1, (1, 4), {1: 0, 2: 1, 3: 3, 4: 3})
    assert ranged.destinations[2] == Destination("Channel Adapter", 0x100001, "H0")


@pytest.mark.parametrize(
    ("name", "h2_from_s0"),
    [
        ("routing/dump_lfts-ring5-minhop.txt", 3),
        ("routing/dump_lfts-ring5-updn-root-S0.txt", 3),
        ("routing/dump_lfts-ring5-file.txt", 4),  # the loaded file sends S0's H2 traffic the other way round
    ],
)
def test_ring_routings(name: str, h2_from_s0: int) -> None:
    # infiniband-diags 44.0 under ibsim, OpenSM 3.3.23 -R minhop / updn / file
    tables = lfts.parse(read_capture(name))
    assert len(tables.switches) == 5
    s0 = tables.switch(0x200000)
    assert s0 is not None
    assert s0.out_port(8) == h2_from_s0
    assert len(tables.notes) == 1
    assert tables.notes[0].endswith(WRAPPER)


def test_fat_tree_and_opensm_own_dump() -> None:
    assert len(lfts.parse(read_capture("routing/dump_lfts-fattree-ftree.txt")).switches) == 5
    # OpenSM 3.3.23 opensm-lfts.dump (-D 0x43): decimal range, '#' before the destination
    dump = lfts.parse_opensm_dump(read_capture("routing/opensm-lfts-ring5-lash.txt"))
    s0 = dump.switch(0x200000)
    assert s0 is not None
    assert (s0.lid, s0.lid_range, s0.out_port(2), s0.out_port(8)) == (2, (0, 10), 0, 3)
    assert s0.destinations[8] == Destination("Channel Adapter", 0x100005, "H2")


def test_opensm_s_dump_of_a_fat_tree_with_gaps_is_the_tables_dump_lfts_read_from_the_switches() -> None:
    # the spines have no route to each other's LID: OpenSM leaves those LIDs out and its footer still says 11
    dumped = lfts.parse_opensm_dump(read_capture("routing/opensm-lfts-fattree-ftree.txt"))
    live = lfts.parse(read_capture("routing/dump_lfts-fattree-ftree.txt"))
    assert sorted((t.guid, len(t.ports)) for t in dumped.switches) == [
        (0x200000, 11),
        (0x200001, 11),
        (0x200002, 11),
        (0x200100, 10),
        (0x200101, 10),
    ]
    for table in live.switches:
        same = dumped.switch(table.guid)
        assert same is not None
        assert (dict(same.ports), dict(same.destinations), same.lid_range) == (
            dict(table.ports),
            dict(table.destinations),
            table.lid_range,
        )


def test_every_capture_is_tested_above() -> None:
    assert sorted(READERS) == [
        "lfts/dump_lfts-stderr-merged-sim-v44.txt",
        "lfts/ibroute-a-range-sim-v44.txt",
        "lfts/ibroute-n-sim-v44.txt",
        "routing/dump_lfts-fattree-ftree.txt",
        "routing/dump_lfts-ring5-file.txt",
        "routing/dump_lfts-ring5-minhop.txt",
        "routing/dump_lfts-ring5-updn-root-S0.txt",
        "routing/opensm-lfts-fattree-ftree.txt",
        "routing/opensm-lfts-ring5-lash.txt",
        "sim/dump_lfts-sim-v44.txt",
        "sim/ibroute-sim-v44.txt",
    ]


def test_old_diags_cut_a_long_description_without_its_closing_quote() -> None:
    # infiniband-diags before 1.6.2 printed the description with mad_dump_string into 64 bytes: "'" + 62 chars
    desc = "x" * 62
    text = (
        "Unicast lids [0x1-0x1] of switch Lid 3 guid 0x0008f10400412824 (ISR9024D Voltaire):\n"
        "  Lid  Out   Destination\n       Port     Info \n"
        f"0x0001 007 : (Channel Adapter portguid 0x0002c9020024d26d: '{desc})\n"
        "1 valid lids dumped \n"
    )
    (sw,) = lfts.parse(text, "ibroute").switches
    assert sw.destinations[1] == Destination("Channel Adapter", 0x0002C9020024D26D, desc)


@pytest.mark.parametrize(
    ("parse", "text", "line_no", "reason"),
    [
        (lfts.parse, "bash: dump_lfts: command not found\n", 1, "not dump_lfts output: expected 'Unicast lids"),
        (lfts.parse, "ibwarn: [1] x: y\nsrc/query_smp.c:228; umad bad status 110\n", 2, "not dump_lfts output"),
        (lfts.parse, "0x0001 001\n", 1, "an entry before any 'Unicast lids' header"),
        (lfts.parse, "dump_fts: iberror: failed: discover failed\n", 1, "the tool reported a failure"),
        (lfts.parse_opensm_dump, "cat: opensm-lfts.dump: No such file\n", 1, "not opensm-lfts.dump output"),
        (
            lfts.parse_opensm_dump,
            "Unicast lids [0-10] of switch Lid 2 guid 0x0000000000200000 ('S0'):\n0x0001 001\n",
            1,
            "cut short: the last table ends without its 'lids dumped' line",
        ),
    ],
)
def test_what_is_not_whole_output_is_an_error_quoting_its_line(
    parse: Callable[[str], Lfts], text: str, line_no: int, reason: str
) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        parse(text)
    assert caught.value.line_no == line_no


def test_the_wrapper_warning_alone_is_an_empty_fabric() -> None:
    assert lfts.parse(f"\n{WRAPPER}\n\n") == Lfts((), (f"line 2: {WRAPPER}",))


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
