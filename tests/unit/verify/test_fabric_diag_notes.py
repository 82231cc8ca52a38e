"""The lines the fabric diags print besides their output (ibwarn, libibumad, kernel lines merged from stderr)
are read past by each reader and reach the fabric section's notes: one note per diag, naming it, with the
first few lines quoted and the rest counted.

The fabric is the ibsim one of tests/fixtures/sim (infiniband-diags 44.0): its captures answer the diags,
with lines put in front of or behind them."""

from __future__ import annotations

from collections.abc import Sequence

from captures import read_capture

from ibprov.probes.runner import CommandResult
from ibprov.verify.fabric.collect import Clock, collect
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.section import diag_notes

WARN = "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)"
UMAD = "src/query_smp.c:228; umad (DR path slid 0; dlid 0; 0,1,3) Attribute (NodeInfo) bad status 110"
KERNEL = "[  123.456] some log line"
QUERY_SA = "Query SA failed: Connection timed out"

SIM = {
    "ibnetdiscover": read_capture("sim/ibnetdiscover-sim-v44.txt"),
    "iblinkinfo": read_capture("sim/iblinkinfo-l-sim-v44.txt"),
    "ibqueryerrors": read_capture("sim/ibqueryerrors-sim-v44.txt"),
    "sminfo": read_capture("sim/sminfo-sim-v44.txt"),
}


class Runner:
    """Answers the whole-fabric diags and ``sminfo`` (bare, and for the master's LID 1) from ``answers``; every
    other command (the cache, the PKey probe, other SMs, smpquery) fails, as on a host without them."""

    where = "here"

    def __init__(self, **answers: str) -> None:
        self.answers = {**SIM, **{k.replace("_", " "): v for k, v in answers.items()}}

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        out = []
        for argv in commands:
            answer = self.answers.get(" ".join(argv) if argv[0] == "sminfo" else argv[0])
            ok = answer is not None
            out.append(CommandResult(tuple(argv), 0 if ok else 255, answer or "", "" if ok else "iberror: failed"))
        return out

    def close(self) -> None:
        pass


def test_each_diag_s_extra_lines_are_kept_under_its_name() -> None:
    discover = SIM["ibnetdiscover"]
    runner = Runner(
        ibnetdiscover=f"{WARN}\n{discover}{UMAD}\n",
        iblinkinfo=f"{KERNEL}\n{SIM['iblinkinfo']}",
        ibqueryerrors=f"{QUERY_SA}\n{SIM['ibqueryerrors']}",
        sminfo=f"{SIM['sminfo']}{KERNEL}\n",
        sminfo_1=f"{WARN}\n{SIM['sminfo']}",
    )
    obs = collect(runner)
    assert obs.diag_notes == {
        "ibnetdiscover": [f"line 1: {WARN}", f"line {discover.count(chr(10)) + 2}: {UMAD}"],
        "iblinkinfo": [f"line 1: {KERNEL}"],
        "ibqueryerrors": [f"line 1: {QUERY_SA}"],
        "sminfo": [f"line 2: {KERNEL}", f"lid 1: line 1: {WARN}"],
    }
    clean = collect(Runner(sminfo_1=SIM["sminfo"]))
    assert (obs.nodes, obs.states, obs.counters, obs.sms) == (clean.nodes, clean.states, clean.counters, clean.sms)
    assert len(obs.sms) == 1
    assert diag_notes(obs)[2] == f"ibqueryerrors printed 1 line besides its output (read past): line 1: {QUERY_SA}"
    assert diag_notes(clean) == []


def test_the_soak_s_second_read_has_its_own_name() -> None:
    runner = Runner(ibqueryerrors=f"{KERNEL}\n{SIM['ibqueryerrors']}")
    obs = collect(runner, soak=5.0, clock=Clock(now=iter([0.0, 5.0, 5.0]).__next__, sleep=lambda _s: None))
    assert list(obs.diag_notes) == ["ibqueryerrors", "ibqueryerrors (soak)"]


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
