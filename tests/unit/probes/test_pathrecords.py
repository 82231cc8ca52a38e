"""The saquery -p parser on real captures (infiniband-diags 44 against ibsim + OpenSM 3.3.23 on a ring of five
switches) and its refusals."""

from __future__ import annotations

import pytest
from captures import read_capture

from ibprov.probes import ParseError
from ibprov.probes.pathrecords import argv, pair_argv, parse

HCA_LIDS = (1, 5, 8, 9, 10)  # H0, H1, H2, H3, H4 on the ring captures
PAIRS = {(s, d) for s in HCA_LIDS for d in HCA_LIDS if s != d}


def test_argv_asks_for_every_path_or_one_pair() -> None:
    assert argv() == ("saquery", "-p")
    assert pair_argv(1, 8) == ("saquery", "-p", "--slid", "1", "--dlid", "8")


def test_lash_gives_every_hca_pair_an_sl_of_its_two_layers() -> None:
    records = parse(read_capture("routing/saquery-p-pairs-ring5-lash-Q.txt"))
    assert records.pairs() == PAIRS
    assert records.notes == ()
    assert records.sl(1, 8) == 1  # H0 -> H2: layer 1
    assert records.sl(1, 5) == 0  # H0 -> H1: one hop, layer 0
    assert {records.sl(s, d) for s, d in PAIRS} == {0, 1}
    first = records.records[0]
    assert (first.slid, first.dlid, first.sgid, first.dgid) == (1, 5, "fe80::10:1", "fe80::10:3")
    assert (first.pkey, first.mtu_bytes, first.rate_code, first.reversible) == (0xFFFF, 2048, 3, True)


def test_dfsssp_spreads_the_pairs_over_the_sls_of_its_virtual_lanes() -> None:
    records = parse(read_capture("routing/saquery-p-pairs-ring5-dfsssp-Q.txt"))
    assert records.pairs() == PAIRS
    assert records.sl(1, 8) == 7
    assert records.sl(10, 9) == 0
    assert {r.sl for r in records.records} == {0, 1, 2, 3, 5, 6, 7}
    assert records.sls(1, 8) == frozenset({7})


def test_minhop_gives_sl_0_everywhere() -> None:
    records = parse(read_capture("routing/saquery-p-pairs-ring5-minhop.txt"))
    assert {records.sl(s, d) for s, d in PAIRS} == {0}


def test_a_pair_the_sa_cannot_route_has_no_record() -> None:
    """The file engine's LFTs hold a loop (to H3, LID 9, from S1/S2) and a hole (S4 to H1, LID 5)."""
    records = parse(read_capture("routing/saquery-p-pairs-ring5-file.txt"))
    assert PAIRS - records.pairs() == {(5, 9), (8, 9), (10, 5)}
    assert records.sl(5, 9) is None
    assert records.sls(5, 9) == frozenset()


def test_the_twins_truncated_all_paths_answer_keeps_two_records_and_notes_the_lid_0_one() -> None:
    records = parse(read_capture("routing/saquery-p-ring5-lash-Q.txt"))
    assert [(r.slid, r.dlid) for r in records.records] == [(2, 2), (1, 2)]
    (note,) = records.notes
    assert note.startswith("line 35: ")
    assert "LID 0" in note


def test_an_unknown_line_and_a_warning_inside_a_record_are_kept_as_notes() -> None:
    text = read_capture("routing/saquery-p-pairs-ring5-lash-Q.txt").split("\n")
    text.insert(5, "ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (Lid 8)")
    text.insert(8, "saquery: something the parser has never seen")
    records = parse("\n".join(text))
    assert records.pairs() == PAIRS
    assert records.notes == (
        "line 6: ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (Lid 8)",
        "line 9: saquery: something the parser has never seen",
    )


def test_a_record_cut_short_is_refused_with_its_header_line() -> None:
    text = read_capture("routing/saquery-p-pairs-ring5-lash-Q.txt")
    cut = "\n".join(text.split("\n")[:40])  # the third record stops after its 5th field
    with pytest.raises(ParseError, match=r"line 35: the record ends after 5 of 16 fields") as err:
        parse(cut)
    assert err.value.line == "PathRecord dump:"


def test_a_failed_query_is_refused() -> None:
    with pytest.raises(ParseError, match="the SA query failed: 'Query SA failed: Connection timed out'"):
        parse(read_capture("routing/saquery-p-sa-down-ring5-ftree-no-fallback.txt"))


def test_a_field_out_of_order_is_refused() -> None:
    text = read_capture("routing/saquery-p-pairs-ring5-lash-Q.txt").split("\n")
    text[4], text[5] = text[5], text[4]  # slid before dlid
    with pytest.raises(ParseError, match="line 5: expected field 'dlid'"):
        parse("\n".join(text))


def test_no_output_is_no_records() -> None:
    assert parse("").records == ()
