"""The lines the fabric diags print besides their output (ibwarn, libibumad, kernel lines merged from stderr)
are read past by each reader and reach the fabric section's notes: one note per diag, naming it, with the
first few lines quoted and the rest counted."""

from __future__ import annotations

from test_observe_collect import IBLINKINFO, IBNETDISCOVER, IBQUERYERRORS, SMINFO, FakeRunner

from ibprov.verify.fabric.collect import Clock, collect
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.section import diag_notes

WARN = "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)"
UMAD = "src/query_smp.c:228; umad (DR path slid 0; dlid 0; 0,1,3) Attribute (NodeInfo) bad status 110"
KERNEL = "[  123.456] some log line"


def test_each_diag_s_extra_lines_are_kept_under_its_name() -> None:
    runner = FakeRunner(
        ibnetdiscover=f"{WARN}\n{IBNETDISCOVER}{UMAD}\n",
        iblinkinfo=f"{KERNEL}\n{IBLINKINFO}",
        ibqueryerrors=f"Query SA failed: Connection timed out\n{IBQUERYERRORS}",
        sminfo=f"{SMINFO}{KERNEL}\n",
        sminfo_3=f"{WARN}\n{SMINFO}",
    )
    obs = collect(runner)
    assert obs.diag_notes == {
        "ibnetdiscover": [f"line 1: {WARN}", f"line {IBNETDISCOVER.count(chr(10)) + 2}: {UMAD}"],
        "iblinkinfo": [f"line 1: {KERNEL}"],
        "ibqueryerrors": ["line 1: Query SA failed: Connection timed out"],
        "sminfo": [f"line 2: {KERNEL}", f"lid 3: line 1: {WARN}"],
    }
    assert obs.nodes == collect(FakeRunner()).nodes  # read past: the same fabric
    assert diag_notes(obs)[2] == (
        "ibqueryerrors printed 1 line besides its output (read past): line 1: Query SA failed: Connection timed out"
    )


def test_the_soak_s_second_read_has_its_own_name() -> None:
    runner = FakeRunner(ibqueryerrors=f"{KERNEL}\n{IBQUERYERRORS}")
    obs = collect(runner, soak=5.0, clock=Clock(now=iter([0.0, 5.0, 5.0]).__next__, sleep=lambda _s: None))
    assert list(obs.diag_notes) == ["ibqueryerrors", "ibqueryerrors (soak)"]


def test_a_clean_collection_has_no_diag_note() -> None:
    assert diag_notes(collect(FakeRunner())) == []


def test_notes_are_capped_at_three_lines_per_diag() -> None:
    obs = Observation(diag_notes={"smpquery pkeys": [f"lid {n} port 1: line 1: {WARN}" for n in range(5)]})
    (only,) = diag_notes(obs)
    assert only == (
        f"smpquery pkeys printed 5 lines besides its output (read past): lid 0 port 1: line 1: {WARN}; "
        f"lid 1 port 1: line 1: {WARN}; lid 2 port 1: line 1: {WARN} (and 2 more)"
    )


def test_a_result_without_notes_adds_nothing() -> None:
    obs = Observation()
    obs.keep_notes("smpquery vlarb", object(), "lid 2 port 1")  # a reader not giving notes (yet)
    obs.keep_notes("sminfo", type("Parsed", (), {"notes": ()})())
    assert obs.diag_notes == {}
