"""The OpenSM log reader on real logs (OpenSM 3.3.23 on ibsim: a ring of five switches and a two-level fat tree)
with each routing engine, its fall-backs and failures."""

from __future__ import annotations

import re

import pytest
from captures import read_capture

from ibprov.probes import ParseError
from ibprov.probes.smlog import LOG_PATTERN, parse


@pytest.mark.parametrize(
    ("capture", "engine"),
    [
        ("opensm-log-ring5-minhop.txt", "minhop"),
        ("opensm-log-ring5-updn-root-S0.txt", "updn"),
        ("opensm-log-ring5-lash-Q.txt", "lash"),
        ("opensm-log-ring5-lash-Q-D0x43.txt", "lash"),
        ("opensm-log-ring5-dfsssp-Q.txt", "dfsssp"),
        ("opensm-log-ring5-dor.txt", "dor"),
        ("opensm-log-ring5-file.txt", "file"),
        ("opensm-log-fattree-ftree.txt", "ftree"),
    ],
)
def test_the_engine_that_configured_the_tables_is_named_with_its_line(capture: str, engine: str) -> None:
    log = parse(read_capture(f"routing/{capture}"))
    assert log.version == "3.3.23"
    assert log.engine == engine
    assert log.engine_line is not None
    assert log.engine_line.text.endswith(f"osm_ucast_mgr_process: {engine} tables configured on all switches")
    assert log.failures == ()
    assert not log.fell_back
    assert log.fallback_line is None
    assert log.subnet_up
    assert log.notes == ()


def test_ftree_on_a_ring_fails_and_minhop_configures_the_tables() -> None:
    log = parse(read_capture("routing/opensm-log-ring5-ftree-fallback.txt"))
    assert log.engine == "minhop"
    assert log.fell_back
    (failure,) = log.failures
    assert failure.engine == "ftree"
    assert failure.line.line_no == 12
    assert failure.line.text.endswith("0x01 -> ucast_mgr_route: ftree: cannot build lid matrices")
    assert [c.text.split("-> ", 1)[1] for c in failure.causes] == [
        "construct_fabric: ERR AB2B: Found more than one root on fabric with maximum rank 0"
    ]
    assert log.fallback_line is not None
    assert log.fallback_line.line_no == 13
    assert log.fallback_line == log.engine_line
    assert log.subnet_up


def test_updn_without_roots_disables_itself_and_falls_back() -> None:
    log = parse(read_capture("routing/opensm-log-ring5-updn-no-roots-fallback.txt"))
    assert (log.engine, log.fell_back) == ("minhop", True)
    (failure,) = log.failures
    assert failure.engine == "updn"
    assert failure.causes[0].text.endswith("updn_lid_matrices: disabling UPDN algorithm, no root nodes were found")


def test_a_missing_lfts_file_fails_the_file_engine() -> None:
    log = parse(read_capture("routing/opensm-log-ring5-file-missing-fallback.txt"))
    assert (log.engine, log.fell_back) == ("minhop", True)
    (failure,) = log.failures
    assert failure.line.text.endswith("ucast_mgr_route: file: cannot build fwd tables")
    assert "ERR 6302: Can't open ucast dump file" in failure.causes[0].text


def test_no_fallback_leaves_no_engine_and_no_subnet_up() -> None:
    log = parse(read_capture("routing/opensm-log-ring5-ftree-no-fallback.txt"))
    assert log.engine is None
    assert log.engine_line is None
    assert not log.fell_back
    assert not log.subnet_up
    assert len(log.attempts) == 7  # one every 10 s
    last = log.last
    assert last is not None
    assert last.no_engine_line is not None
    assert last.no_engine_line.line_no == 32
    assert last.failed == ("ftree",)
    (setup,) = log.setup_failures
    assert setup.text.endswith("setup_routing_engines: Failed to setup routing engine 'no_fallback'")
    # the ERR lines logged after ibsim went away belong to no routing attempt
    assert all(a.concluded for a in log.attempts)


def test_the_latest_sweep_wins_in_a_log_that_accumulates_several_runs() -> None:
    """OpenSM appends to its log (accum_log_file TRUE): a fall-back run followed by a clean restart."""
    first = read_capture("routing/opensm-log-ring5-ftree-fallback.txt")
    second = read_capture("routing/opensm-log-ring5-updn-root-S0.txt")
    log = parse(first + second)
    assert [a.configured for a in log.attempts] == ["minhop", "updn"]
    assert log.engine == "updn"
    assert log.failures == ()
    assert not log.fell_back
    assert log.engine_line is not None
    assert log.engine_line.line_no == len(first.splitlines()) + 11


def test_a_failure_of_an_earlier_run_does_not_count_for_the_next_one() -> None:
    """A run cut off before it concluded (its error lines), then a restart: the restart starts afresh."""
    cut = "\n".join(read_capture("routing/opensm-log-ring5-ftree-fallback.txt").split("\n")[:12])
    log = parse(cut + "\n" + read_capture("routing/opensm-log-ring5-minhop.txt"))
    assert log.engine == "minhop"
    assert log.failures == ()
    assert not log.fell_back


def test_a_foreign_line_in_the_middle_is_kept_as_a_note() -> None:
    lines = read_capture("routing/opensm-log-ring5-ftree-fallback.txt").split("\n")
    lines.insert(11, "ibwarn: [1234] something else wrote here")
    lines.insert(12, "Dec 04 13:51:59 438945 [F03D6C0] 0x01 -> ucast_mgr_rou")  # a line cut by a crash
    log = parse("\n".join(lines))
    assert log.engine == "minhop"
    assert log.fell_back
    assert [n.line_no for n in log.notes] == [12]
    assert log.failures[0].line.line_no == 14


def test_a_log_cut_mid_sweep_has_no_concluded_attempt() -> None:
    cut = "\n".join(read_capture("routing/opensm-log-ring5-ftree-fallback.txt").split("\n")[:12])
    log = parse(cut + "\nDec 04 13:51:59 438977 [F03D6C0] 0x02 -> osm_ucast_mgr_pro")
    assert log.engine is None
    assert log.last is None
    assert log.attempts[-1].failed == ("ftree",)
    assert not log.attempts[-1].concluded
    assert not log.subnet_up
    assert log.notes == ()  # the cut line still has OpenSM's prefix: an unknown message, not a note


def test_text_that_is_no_opensm_log_is_refused() -> None:
    with pytest.raises(ParseError, match="opensm log: no OpenSM log line"):
        parse(read_capture("routing/saquery-p-ring5-lash-Q.txt"))
    with pytest.raises(ParseError):
        parse("Dec 04 13:50:44 1999")  # a log truncated within its first line


@pytest.mark.parametrize(
    "capture",
    [
        "opensm-log-ring5-ftree-fallback.txt",
        "opensm-log-ring5-updn-no-roots-fallback.txt",
        "opensm-log-ring5-file-missing-fallback.txt",
        "opensm-log-ring5-ftree-no-fallback.txt",
        "opensm-log-ring5-dfsssp-Q.txt",
    ],
)
def test_the_lines_log_pattern_keeps_give_the_same_answer(capture: str) -> None:
    text = read_capture(f"routing/{capture}")
    kept = "\n".join(line for line in text.split("\n") if re.search(LOG_PATTERN, line))
    full, filtered = parse(text), parse(kept)
    assert (filtered.engine, filtered.fell_back, filtered.subnet_up, filtered.version) == (
        full.engine,
        full.fell_back,
        full.subnet_up,
        full.version,
    )
    assert [f.line.text for f in filtered.failures] == [f.line.text for f in full.failures]
    assert [[c.text for c in f.causes] for f in filtered.failures] == [
        [c.text for c in f.causes] for f in full.failures
    ]
