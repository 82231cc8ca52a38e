"""Two runs compared (ibprov.history.diff): findings new, resolved and persisting by (check, object); error
counters as increases per hour between the runs' ends, judged against their limits; the master SM; and, over
a history, when each finding was first seen."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from historykit import SM01, SM02, fabric_run, finding, perf_section, run, valid, when

from ibprov.history.diff import COUNTER_MAX, diff_runs, ended, first_seen, trends

P1 = "node01 mlx5_0 port 1"
P2 = "leaf01 port 2"


def rates_of(old: Mapping[str, Any], new: Mapping[str, Any], limits: Mapping[str, float] | None = None) -> dict:
    diff = diff_runs(old, new, limits or {})
    return {(r.object, r.counter): r for r in diff.rates}


# ------------------------------------------------------------------------------------------------ findings
def test_findings_are_new_resolved_or_persisting_by_check_and_object() -> None:
    old = fabric_run(0, [finding("link.down", P1), finding("link.down", P2), finding("cabling.miswire", P1)])
    new = fabric_run(6, [finding("link.down", P1, "warning"), finding("counters.threshold", P1)])
    diff = diff_runs(valid(old), valid(new), {})
    assert [(f["check"], f["object"]) for f in diff.new] == [("counters.threshold", P1)]
    assert sorted((f["check"], f["object"]) for f in diff.resolved) == [("cabling.miswire", P1), ("link.down", P2)]
    assert [(f["check"], f["object"], f["severity"]) for f in diff.persisting] == [("link.down", P1, "warning")]
    assert diff.new[0]["section"] == "fabric"


def test_a_run_ends_at_its_start_plus_its_duration() -> None:
    assert ended(fabric_run(4, duration=7200)) == when(6)


def test_the_lines_name_each_new_and_resolved_finding() -> None:
    diff = diff_runs(fabric_run(0, [finding("link.down", P2)]), fabric_run(6, [finding("cabling.miswire", P1)]), {})
    lines = diff.lines()
    assert lines[0].startswith("1 new, 1 resolved, 0 persisting over 6.0 h")
    assert any(line.split()[:3] == ["new", "error", "cabling.miswire"] and P1 in line for line in lines)
    assert any(line.split()[:3] == ["resolved", "error", "link.down"] and P2 in line for line in lines)


def test_the_dict_is_json_with_the_counts_and_the_exit_code() -> None:
    old = fabric_run(0, counters={P1: {"LinkDownedCounter": 1}})
    new = fabric_run(1, [finding("link.down", P2)], counters={P1: {"LinkDownedCounter": 2}})
    data = json.loads(json.dumps(diff_runs(old, new, {"LinkDownedCounter": 0}).as_dict()))
    assert ([f["object"] for f in data["new"]], data["resolved"], data["exit_code"]) == ([P2], [], 1)
    assert data["counter_rates"][0] | {"note": ""} == {
        "object": P1,
        "counter": "LinkDownedCounter",
        "before": 1,
        "after": 2,
        "hours": 1.0,
        "increase": 1,
        "rate_per_hour": 1.0,
        "limit_per_hour": 0,
        "over": True,
        "note": "",
    }
    assert data["master_sm"]["changed"] is False


# ------------------------------------------------------------------------------------------------ counters
def test_a_counter_rate_is_its_increase_per_hour_between_the_run_ends() -> None:
    old = fabric_run(0, counters={P1: {"SymbolErrorCounter": 10}}, duration=3600)  # ends at 1 h
    new = fabric_run(4, counters={P1: {"SymbolErrorCounter": 20}}, duration=7200)  # ends at 6 h
    rate = rates_of(old, new)[(P1, "SymbolErrorCounter")]
    assert (rate.before, rate.after, rate.increase, rate.hours) == (10, 20, 10, 5.0)
    assert rate.rate == 2.0
    assert rate.note == ""


def test_a_port_the_earlier_run_did_not_list_counts_from_zero() -> None:
    old = fabric_run(0, counters={P2: {"SymbolErrorCounter": 3}})
    new = fabric_run(2, counters={P1: {"PortRcvErrors": 4}, P2: {"SymbolErrorCounter": 3}})
    rates = rates_of(old, new)
    assert list(rates) == [(P1, "PortRcvErrors")], "an unchanged counter is not a rate"
    assert (rates[(P1, "PortRcvErrors")].before, rates[(P1, "PortRcvErrors")].increase) == (0, 4)
    assert rates[(P1, "PortRcvErrors")].rate == 2.0


def test_a_counter_lower_than_before_was_cleared_and_counts_its_value_now() -> None:
    old = fabric_run(0, counters={P1: {"SymbolErrorCounter": 500}})
    new = fabric_run(2, counters={P1: {"SymbolErrorCounter": 8}})
    rate = rates_of(old, new)[(P1, "SymbolErrorCounter")]
    assert (rate.before, rate.after, rate.increase, rate.rate) == (500, 8, 8, 4.0)
    assert "cleared" in rate.note
    assert "cleared" in rate.line()


@pytest.mark.parametrize(("counter", "top"), [("LinkDownedCounter", 255), ("LocalLinkIntegrityErrors", 15)])
def test_a_counter_at_its_maximum_says_its_increase_is_a_lower_bound(counter: str, top: int) -> None:
    assert COUNTER_MAX[counter] == top
    old = fabric_run(0, counters={P1: {counter: 1}, P2: {counter: 1}})
    new = fabric_run(1, counters={P1: {counter: top}, P2: {counter: top - 1}})
    rates = rates_of(old, new)
    assert "at its maximum" in rates[(P1, counter)].note
    assert rates[(P1, counter)].increase == top - 1
    assert rates[(P2, counter)].note == "", "one below the maximum is an exact increase"


def test_a_rate_is_over_only_when_it_exceeds_its_limit() -> None:
    old = fabric_run(0, counters={P1: {"SymbolErrorCounter": 1}, P2: {"SymbolErrorCounter": 1}})
    new = fabric_run(2, counters={P1: {"SymbolErrorCounter": 5}, P2: {"SymbolErrorCounter": 6}})
    rates = rates_of(old, new, {"SymbolErrorCounter": 2.0})
    assert (rates[(P1, "SymbolErrorCounter")].rate, rates[(P1, "SymbolErrorCounter")].over) == (2.0, False)
    assert (rates[(P2, "SymbolErrorCounter")].rate, rates[(P2, "SymbolErrorCounter")].over) == (2.5, True)
    assert "OVER" in rates[(P2, "SymbolErrorCounter")].line()
    assert "OVER" not in rates[(P1, "SymbolErrorCounter")].line()


def test_a_limit_of_zero_flags_any_increase() -> None:
    old = fabric_run(0, counters={P1: {"LinkDownedCounter": 3}})
    new = fabric_run(1000, counters={P1: {"LinkDownedCounter": 4}})
    assert rates_of(old, new, {"LinkDownedCounter": 0.0})[(P1, "LinkDownedCounter")].over


def test_a_counter_without_a_limit_is_never_over() -> None:
    old = fabric_run(0)
    new = fabric_run(1, counters={P1: {"PortXmitWait": 10**9}})
    rate = rates_of(old, new, {"SymbolErrorCounter": 0.0})[(P1, "PortXmitWait")]
    assert (rate.limit, rate.over) == (None, False)
    assert "not judged" in rate.line()


# ------------------------------------------------------------------------------------------------ exit code
def test_a_new_failing_finding_exits_1() -> None:
    assert diff_runs(fabric_run(0), fabric_run(1, [finding("link.down", P1, "error")]), {}).exit_code == 1
    assert diff_runs(fabric_run(0), fabric_run(1, [finding("sm.standby_missing", P1, "critical")]), {}).exit_code == 1


def test_only_new_warnings_exit_0() -> None:
    assert diff_runs(fabric_run(0), fabric_run(1, [finding("link.down", P1, "warning")]), {}).exit_code == 0


def test_a_persisting_failing_finding_alone_exits_0() -> None:
    run_with = [finding("link.down", P1, "error")]
    assert diff_runs(fabric_run(0, run_with), fabric_run(1, run_with), {}).exit_code == 0


def test_a_rate_over_its_limit_exits_1_and_one_within_exits_0() -> None:
    old = fabric_run(0, counters={P1: {"SymbolErrorCounter": 1}})
    new = fabric_run(1, counters={P1: {"SymbolErrorCounter": 3}})
    assert diff_runs(old, new, {"SymbolErrorCounter": 1.0}).exit_code == 1
    assert diff_runs(old, new, {"SymbolErrorCounter": 2.0}).exit_code == 0


# ------------------------------------------------------------------------------------------------ master SM
def test_the_master_changed_when_its_port_guid_differs() -> None:
    diff = diff_runs(fabric_run(0, master=SM01), fabric_run(1, master=SM02), {})
    assert diff.master_changed
    assert any(line.startswith("master SM changed: sm01 mlx5_0 port 1") for line in diff.lines())


def test_the_master_did_not_change_when_its_port_guid_is_the_same() -> None:
    renamed = ("sm01 mlx5_0 port 1 (renamed)", SM01[1])
    diff = diff_runs(fabric_run(0, master=SM01), fabric_run(1, master=renamed), {})
    assert not diff.master_changed
    assert not any("master SM changed" in line for line in diff.lines())


def test_losing_the_single_master_is_a_change() -> None:
    assert diff_runs(fabric_run(0, master=SM01), fabric_run(1, master=None), {}).master_changed


@pytest.mark.parametrize("which", ["old", "new", "both"])
def test_runs_without_the_fabric_section_compare_no_counters_and_no_master(which: str) -> None:
    fabric = {"old": fabric_run(0, counters={P1: {"SymbolErrorCounter": 1}}), "new": fabric_run(1)}
    perf = {"old": run(perf_section(0)), "new": run(perf_section(1, [finding("perf.bandwidth", "a1 -> a2")]))}
    old = perf["old"] if which in ("old", "both") else fabric["old"]
    new = perf["new"] if which in ("new", "both") else fabric_run(1, counters={P1: {"SymbolErrorCounter": 9}})
    diff = diff_runs(valid(old), valid(new), {"SymbolErrorCounter": 0.0})
    assert (diff.fabric_compared, diff.rates, diff.master_changed) == (False, (), False)
    assert "counters: not compared (a run without the fabric section)" in diff.lines()
    assert diff.as_dict()["master_sm"]["changed"] is False


def test_two_fabric_runs_with_no_counter_moved_say_so() -> None:
    same = {P1: {"SymbolErrorCounter": 4}}
    diff = diff_runs(fabric_run(0, counters=same), fabric_run(1, counters=same), {})
    assert (diff.fabric_compared, diff.rates) == (True, ())
    assert "counters: none moved" in diff.lines()


# ------------------------------------------------------------------------------------------------ first seen
F = ("link.down", P1)


def _with(hours: float) -> dict[str, Any]:
    return fabric_run(hours, [finding(*F)])


def _without(hours: float) -> dict[str, Any]:
    return fabric_run(hours)


def test_a_finding_in_the_last_three_runs_was_first_seen_at_the_end_of_the_earliest() -> None:
    seen = first_seen(_with(10), [_with(8), _with(6), _without(4)])
    assert seen == {F: ended(_with(6))}


def test_a_finding_only_in_the_newest_run_was_first_seen_then() -> None:
    assert first_seen(_with(10), [_without(8), _with(6)]) == {F: ended(_with(10))}
    assert first_seen(_with(10), []) == {F: ended(_with(10))}


def test_a_run_without_the_finding_that_judged_its_check_breaks_the_line() -> None:
    assert first_seen(_with(10), [_with(8), _without(6), _with(4)]) == {F: ended(_with(8))}


def test_a_run_that_did_not_judge_the_check_does_not_break_the_line() -> None:
    other = fabric_run(6, checks=("cabling.miswire",))  # the fabric ran, but not link.down
    perf_only = run(perf_section(5))
    assert "link.down" not in {c["id"] for c in other["checks"]}
    assert first_seen(_with(10), [_with(8), other, perf_only, _with(4), _without(2)]) == {F: ended(_with(4))}


def test_each_finding_has_its_own_line() -> None:
    g = ("cabling.miswire", P2)
    newest = fabric_run(10, [finding(*F), finding(*g)])
    older = [fabric_run(8, [finding(*F), finding(*g)]), fabric_run(6, [finding(*g)]), fabric_run(4, [finding(*g)])]
    assert first_seen(newest, older) == {F: ended(older[0]), g: ended(older[2])}


def _runs_then_fail(*runs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from runs
    raise AssertionError("the walk read a run older than it needed")


def test_the_walk_stops_reading_older_runs_soon_after_every_line_broke() -> None:
    extra = _with(2)  # at most one run past the break may be read
    seen = first_seen(_with(10), _runs_then_fail(_with(8), _without(6), extra))
    assert seen == {F: ended(_with(8))}


def test_the_walk_reads_no_run_past_the_one_that_broke_every_line() -> None:
    seen = first_seen(_with(10), _runs_then_fail(_with(8), _without(6)))
    assert seen == {F: ended(_with(8))}


# ------------------------------------------------------------------------------------------------ trends
def test_trends_give_each_moved_counter_per_run_with_none_for_runs_without_counters() -> None:
    runs = [
        fabric_run(0, counters={P1: {"SymbolErrorCounter": 2}}),
        run(perf_section(1)),
        fabric_run(2),
        fabric_run(3, counters={P1: {"SymbolErrorCounter": 9}}),
    ]
    moved = diff_runs(runs[2], runs[3], {}).rates
    (trend,) = trends(runs, moved)
    assert (trend.object, trend.counter) == (P1, "SymbolErrorCounter")
    assert [v for _t, v in trend.points] == [2, None, 0, 9]
    assert trend.points[0][0] == "2026-12-01T00:01:00Z"


def test_a_run_that_skipped_the_finding_s_object_does_not_break_its_line() -> None:
    skipped = _without(6)  # link.down judged, but not on P1: its host did not answer
    for check in skipped["checks"]:
        if check["id"] == "link.down":
            check["skipped"] = [{"object": P1, "why": "node01 did not answer"}]
    assert first_seen(_with(10), [_with(8), skipped, _with(4), _without(2)]) == {F: ended(_with(4))}


def test_two_runs_ending_at_the_same_time_still_flag_a_counter_over_its_limit() -> None:
    old = fabric_run(5, counters={P1: {"SymbolErrorCounter": 0}})
    new = fabric_run(5, counters={P1: {"SymbolErrorCounter": 40}})
    (rate,) = diff_runs(old, new, {"SymbolErrorCounter": 10}).rates
    assert rate.hours == 0
    assert rate.over, rate.line()


def test_report_diff_json_gives_the_rate_per_hour_not_the_increase() -> None:
    old = fabric_run(0, counters={P1: {"SymbolErrorCounter": 0}})
    new = fabric_run(4, counters={P1: {"SymbolErrorCounter": 20}})
    (rate,) = diff_runs(old, new, {}).as_dict()["counter_rates"]
    assert (rate["increase"], rate["rate_per_hour"]) == (20, 5.0)


def test_a_counter_the_maximum_table_does_not_name_is_never_said_to_be_at_its_maximum() -> None:
    name = "PortXmitData"  # a data counter: 32 or 64 bits, not in the error counters' table
    assert name not in COUNTER_MAX
    old = fabric_run(0, counters={P1: {name: 1}})
    new = fabric_run(1, counters={P1: {name: 70_000}})
    (rate,) = diff_runs(old, new, {}).rates
    assert "maximum" not in rate.note


@pytest.mark.parametrize(
    ("hours", "said"),
    [(12 / 3600, "12 s"), (59 / 3600, "59 s"), (1 / 60, "1.0 min"), (0.5, "30.0 min"), (1.0, "1.0 h"), (6, "6.0 h")],
)
def test_the_time_between_two_runs_is_said_in_seconds_minutes_or_hours_never_0_0_h(hours: float, said: str) -> None:
    from ibprov.history.diff import span

    assert span(hours) == said


def test_two_runs_12_seconds_apart_are_over_12_s_and_a_resolved_finding_is_what_the_earlier_run_found() -> None:
    old = fabric_run(0, [finding("link.width", P1)])
    new = fabric_run(12 / 3600)
    lines = diff_runs(old, new, {}).lines()
    assert lines[0].startswith("0 new, 1 resolved, 0 persisting over 12 s (")
    (resolved,) = [line for line in lines if line.lstrip().startswith("resolved")]
    assert resolved.endswith("planned as planned, the earlier run found something else")
