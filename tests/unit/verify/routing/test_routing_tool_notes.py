"""The routing section notes the lines dump_lfts and smpquery sl2vl printed besides their output (warnings, log
lines: read past, issue 26), on the real infiniband-diags 44.0 captures of the sim fabric."""

from __future__ import annotations

from collections.abc import Sequence

from captures import read_capture

from ibprov.probes.runner import CommandResult
from ibprov.verify.routing.collect import collect, tool_notes
from ibprov.verify.routing.observation import EngineLog
from ibprov.verify.routing.plan import RoutingPlan
from ibprov.verify.routing.section import audit_observation

WARN = "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)"
WRAPPER = "*** WARNING ***: this command has been replaced by dump_fts"


class Canned:
    """A runner that answers each tool with a capture."""

    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        return [CommandResult(tuple(argv), 0, self.outputs[argv[0]], "") for argv in commands]


def plan() -> RoutingPlan:
    return RoutingPlan(
        cluster="c1",
        engines=("minhop",),
        qos=False,
        lmc=0,
        tiers={},
        switch_names={},
        ca_names={},
        sm_nodes=("sm01",),
        balance_limit=1.5,
    )


def test_dump_lfts_warnings_are_a_section_note_and_change_nothing_else() -> None:
    dump = read_capture("sim/dump_lfts-sim-v44.txt")
    topo = read_capture("sim/ibnetdiscover-sim-v44.txt")
    log = EngineLog(None, "not read")
    clean = collect(Canned({"ibnetdiscover": topo, "dump_lfts": dump}), plan(), lambda: log)
    noisy = collect(Canned({"ibnetdiscover": topo, "dump_lfts": WARN + "\n" + dump}), plan(), lambda: log)
    assert noisy.notes == (
        f"dump_lfts printed 2 lines besides its output (read past): line 1: {WARN}; line 36: {WRAPPER}",
    )
    assert (noisy.model.lft == clean.model.lft).all()
    section = audit_observation(plan(), noisy)
    assert noisy.notes[0] in section.notes


def test_tool_notes_quote_the_first_three_lines() -> None:
    lines = tuple(f"line {i}: x{i}" for i in range(1, 6))
    assert tool_notes("smpquery sl2vl", lines, " (on 2 of 9 switch ports)") == (
        "smpquery sl2vl (on 2 of 9 switch ports) printed 5 lines besides its output (read past): "
        "line 1: x1; line 2: x2; line 3: x3 (and 2 more)",
    )
    assert tool_notes("dump_lfts", ()) == ()
