"""The lines a perftest or iperf3 client printed besides its tool's report (a CPU frequency warning between the
table header and its row in a real DeepOps RoCE capture, lines around iperf3's JSON) are read past, kept on
the run and quoted in the perf section's notes."""

from __future__ import annotations

from captures import read_capture
from test_perf_collect import SPEC, ScriptedRemote

from ibprov.clusterspec import load_spec_text
from ibprov.verify.perf.collect import collect
from ibprov.verify.perf.observation import PerfObservation, TcpRun
from ibprov.verify.perf.plan import PerfPlan, build_perf_plan, schedule_for
from ibprov.verify.perf.section import output_notes, perf_notes

CPU = "Conflicting CPU frequency values detected: 1200.535000 != 1251.336000. CPU Frequency is not max."


def _plan() -> PerfPlan:
    loaded = load_spec_text(SPEC, "orch.yaml")
    schedule, routing = schedule_for(loaded, "all-pairs")
    return build_perf_plan(loaded, schedule, routing=routing)


def test_a_warning_inside_the_perftest_table_is_a_note_of_the_run_and_of_the_section() -> None:
    plan = _plan()
    obs = collect(plan, ScriptedRemote(read_capture("perftest/roce100-cx5-ib_write_bw-client-rdmacm-deepops.txt")))
    (run,) = obs.runs
    assert (run.status, run.value) == ("ok", 92.40)  # the row after the warning, in Gb/s (--report_gbits)
    assert run.notes == (f"line 20: {CPU}",)
    [note] = output_notes(obs)
    assert note.endswith(f": the client printed 1 line besides the report (read past): line 20: {CPU}")
    assert note in perf_notes(plan, obs)


def test_a_clean_run_adds_no_note() -> None:
    obs = collect(_plan(), ScriptedRemote(read_capture("perftest/ndr200-ib_send_bw-a-gbits-client-cx7.txt")))
    assert obs.runs[0].notes == ()
    assert output_notes(obs) == []


def test_lines_around_iperf3_json_are_notes_of_the_tcp_run() -> None:
    plan = _plan()
    pair = collect(plan, ScriptedRemote(read_capture("perftest/ndr200-ib_send_bw-a-gbits-client-cx7.txt"))).runs[0].pair
    lines = tuple(f"line {n}: warning {n}" for n in range(1, 6))
    obs = PerfObservation(tcp=(TcpRun(pair, "ok", gbps=22.3, notes=lines),))
    [note] = output_notes(obs)
    assert "iperf3: the client printed 5 lines besides the report (read past): line 1: warning 1; " in note
    assert note.endswith("line 3: warning 3 (and 2 more)")
