"""`report diff` as the user reads it, whole: every line of the text and every key of ``--json`` for two runs
that exercise each part at once (findings new, resolved and persisting in severity order; counters moved, cleared,
at their maximum, judged and not; the master lost), and runs as sparse as an older ibprov or a section left out
writes them. Fragment assertions elsewhere prove each rule; these prove nothing else slips into what is shown."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ibprov.history.diff import diff_runs, ended, findings_of, first_seen, trends

P1, P2, P3 = "leaf01 port 3", "node01 mlx5_0 port 1", "node02 mlx5_0 port 1"
SM01 = {"object": "sm01 mlx5_0 port 1", "port_guid": "0x0c42a10300d8e2a0"}


def _finding(check: str, obj: str, severity: str) -> dict[str, str]:
    return {
        "check": check,
        "severity": severity,
        "object": obj,
        "expected": f"{check} as planned",
        "observed": f"{check} otherwise",
        "fix": "fix it",
    }


def _run(
    started: str, findings: list[dict[str, str]], *, counters: dict[str, dict[str, int]], master: Any
) -> dict[str, Any]:
    return {
        "started": started,
        "duration_seconds": 1200,
        "checks": [
            {"id": "link.state", "section": "fabric", "status": "failed"},
            {"id": "perf.bandwidth", "section": "perf", "status": "failed"},
        ],
        "findings": findings,
        "sections": {
            "fabric": {
                "facts": {
                    "counters": [{"object": o, "counters": c} for o, c in counters.items()],
                    "master_sm": master,
                }
            }
        },
    }


OLD = _run(
    "2026-12-01T00:00:00Z",
    [
        _finding("link.state", P1, "error"),
        _finding("perf.bandwidth", "node01 -> node02", "warning"),
        _finding("cabling.miswire", P2, "error"),
    ],
    counters={P1: {"SymbolErrorCounter": 5, "LinkDownedCounter": 300}, P2: {"SymbolErrorCounter": 70000}},
    master=SM01,
)
NEW = _run(
    "2026-12-01T03:00:00Z",  # the runs end 3 h apart: each lasts 20 min
    [
        _finding("perf.bandwidth", "node01 -> node02", "warning"),
        _finding("link.state", P1, "error"),
        _finding("sm.rogue", "rogue01 port 1", "error"),  # a check the run's list does not name: section "sm"
        _finding("link.width", P3, "warning"),
        _finding("link.speed", P3, "error"),
    ],
    counters={
        P1: {"SymbolErrorCounter": 12, "LinkDownedCounter": 255},  # +7 in 3 h; cleared, then at its maximum
        P2: {"SymbolErrorCounter": 65535},  # read wider before, now at the 16-bit maximum: cleared and at it
        P3: {"PortXmitWait": 1, "PortRcvErrors": 0},  # judged without a limit; unmoved from 0: not listed
    },
    master="none",  # not a single master (an older report wrote a string): no master
)
LIMITS = {"SymbolErrorCounter": 2.0, "LinkDownedCounter": 0.0}


def test_the_text_of_a_diff_is_exactly_these_lines_in_this_order() -> None:
    assert diff_runs(OLD, NEW, LIMITS).lines() == [
        "3 new, 1 resolved, 2 persisting over 3.0 h (2026-12-01 00:20 -> 2026-12-01 03:20 UTC)",
        "  new        error    link.speed               node02 mlx5_0 port 1: planned link.speed as planned, "
        "found link.speed otherwise",
        "  new        error    sm.rogue                 rogue01 port 1: planned sm.rogue as planned, "
        "found sm.rogue otherwise",
        "  new        warning  link.width               node02 mlx5_0 port 1: planned link.width as planned, "
        "found link.width otherwise",
        "  resolved   error    cabling.miswire          node01 mlx5_0 port 1: planned cabling.miswire as planned, "
        "the earlier run found cabling.miswire otherwise",
        "  persisting error    link.state               leaf01 port 3: planned link.state as planned, "
        "found link.state otherwise",
        "  persisting warning  perf.bandwidth           node01 -> node02: planned perf.bandwidth as planned, "
        "found perf.bandwidth otherwise",
        "  counter    LinkDownedCounter on leaf01 port 3: 300 -> 255, +255 in 3.0 h = 85/h (limit 0/h) OVER; "
        "cleared since the earlier run (300 then): the increase is at least 255; "
        "at its maximum (255): the increase may be larger; clear the counters (ibqueryerrors -k)",
        "  counter    SymbolErrorCounter on leaf01 port 3: 5 -> 12, +7 in 3.0 h = 2.33/h (limit 2/h) OVER",
        "  counter    SymbolErrorCounter on node01 mlx5_0 port 1: 70000 -> 65535, +65535 in 3.0 h = 2.18e+04/h "
        "(limit 2/h) OVER; cleared since the earlier run (70000 then): the increase is at least 65535; "
        "at its maximum (65535): the increase may be larger; clear the counters (ibqueryerrors -k)",
        "  counter    PortXmitWait on node02 mlx5_0 port 1: 0 -> 1, +1 in 3.0 h = 0.333/h (not judged)",
        "master SM changed: sm01 mlx5_0 port 1 (0x0c42a10300d8e2a0) -> no single master",
    ]


def test_the_json_of_a_diff_is_exactly_these_keys_and_values() -> None:
    got = diff_runs(OLD, NEW, LIMITS).as_dict()
    sections = {"link.state": "fabric", "perf.bandwidth": "perf", "cabling.miswire": "cabling"}
    sections |= {"sm.rogue": "sm", "link.width": "link", "link.speed": "link"}

    def listed(*found: tuple[str, str, str]) -> list[dict[str, str]]:
        return [{**_finding(*f), "section": sections[f[0]]} for f in found]

    assert got == {
        "from": "2026-12-01T00:20:00+00:00",
        "to": "2026-12-01T03:20:00+00:00",
        "hours": 3.0,
        "new": listed(
            ("sm.rogue", "rogue01 port 1", "error"),
            ("link.width", P3, "warning"),
            ("link.speed", P3, "error"),
        ),
        "resolved": listed(("cabling.miswire", P2, "error")),
        "persisting": listed(("perf.bandwidth", "node01 -> node02", "warning"), ("link.state", P1, "error")),
        "counter_rates": [
            {
                "object": P1,
                "counter": "LinkDownedCounter",
                "before": 300,
                "after": 255,
                "hours": 3.0,
                "increase": 255,
                "rate_per_hour": 85.0,
                "limit_per_hour": 0.0,
                "over": True,
                "note": "cleared since the earlier run (300 then): the increase is at least 255; at its maximum "
                "(255): the increase may be larger; clear the counters (ibqueryerrors -k)",
            },
            {
                "object": P1,
                "counter": "SymbolErrorCounter",
                "before": 5,
                "after": 12,
                "hours": 3.0,
                "increase": 7,
                "rate_per_hour": 2.333333,
                "limit_per_hour": 2.0,
                "over": True,
                "note": "",
            },
            {
                "object": P2,
                "counter": "SymbolErrorCounter",
                "before": 70000,
                "after": 65535,
                "hours": 3.0,
                "increase": 65535,
                "rate_per_hour": 21845.0,
                "limit_per_hour": 2.0,
                "over": True,
                "note": "cleared since the earlier run (70000 then): the increase is at least 65535; at its "
                "maximum (65535): the increase may be larger; clear the counters (ibqueryerrors -k)",
            },
            {
                "object": P3,
                "counter": "PortXmitWait",
                "before": 0,
                "after": 1,
                "hours": 3.0,
                "increase": 1,
                "rate_per_hour": 0.333333,
                "limit_per_hour": None,
                "over": False,
                "note": "",
            },
        ],
        "fabric_compared": True,
        "master_sm": {"before": SM01, "after": None, "changed": True},
        "causes": {"new": None, "resolved": None},  # runs written without a cause graph
        "exit_code": 1,
    }


def test_hours_and_rates_in_the_json_keep_four_and_six_decimals() -> None:
    old = _run("2026-12-01T00:00:00Z", [], counters={P1: {"SymbolErrorCounter": 0}}, master=SM01)
    new = _run("2026-12-01T00:20:00Z", [], counters={P1: {"SymbolErrorCounter": 1}}, master=SM01)
    got = diff_runs(old, new, {}).as_dict()
    assert got["hours"] == 0.3333
    assert (got["counter_rates"][0]["hours"], got["counter_rates"][0]["rate_per_hour"]) == (0.3333, 3.0)
    new = _run("2026-12-01T07:00:00Z", [], counters={P1: {"SymbolErrorCounter": 1}}, master=SM01)
    assert diff_runs(old, new, {}).as_dict()["counter_rates"][0]["rate_per_hour"] == 0.142857
    assert diff_runs(old, new, {}).lines()[1:] == [
        "  counter    SymbolErrorCounter on leaf01 port 3: 0 -> 1, +1 in 7.0 h = 0.143/h (not judged)"
    ]


# A run as sparse as report.json can be: an older ibprov's, or one whose sections had nothing to list.
BARE = {"started": "2026-12-01T00:00:00+00:00"}
LATER = {"started": "2026-12-01T02:00:00+00:00", "duration_seconds": None}


def test_bare_runs_diff_to_nothing_and_say_counters_were_not_compared() -> None:
    got = diff_runs(BARE, LATER, {})
    assert got.lines() == [
        "0 new, 0 resolved, 0 persisting over 2.0 h (2026-12-01 00:00 -> 2026-12-01 02:00 UTC)",
        "counters: not compared (a run without the fabric section)",
    ]
    assert got.as_dict()["master_sm"] == {"before": None, "after": None, "changed": False}
    assert ended(LATER) == datetime(2026, 12, 1, 2, tzinfo=UTC)
    assert findings_of(BARE) == {}


def test_a_fabric_section_without_facts_compares_no_counters_and_finds_no_master() -> None:
    empty = {**BARE, "sections": {"fabric": {}}}
    later = {**LATER, "sections": {"fabric": {"facts": {}}}}
    got = diff_runs(empty, later, {})
    assert got.fabric_compared
    assert got.lines()[1:] == ["counters: none moved"]
    assert got.as_dict()["master_sm"] == {"before": None, "after": None, "changed": False}
    assert diff_runs({**BARE, "sections": {}}, later, {}).fabric_compared is False
    assert diff_runs(empty, {**LATER}, {}).fabric_compared is False


def test_a_master_found_after_none_reads_as_gained() -> None:
    before = {**BARE, "sections": {"fabric": {"facts": {"master_sm": None}}}}
    after = {**LATER, "sections": {"fabric": {"facts": {"master_sm": SM01}}}}
    assert diff_runs(before, after, {}).lines()[-1] == (
        "master SM changed: no single master -> sm01 mlx5_0 port 1 (0x0c42a10300d8e2a0)"
    )


def test_first_seen_reads_runs_without_checks_or_skipped_lists() -> None:
    newest = {**LATER, "findings": [_finding("link.state", P1, "error")]}
    older = [
        {
            **BARE,
            "duration_seconds": 600,
            "checks": [{"id": "link.state", "section": "fabric"}],
            "findings": [_finding("link.state", P1, "error")],
        },
        {"started": "2026-11-30T00:00:00Z"},  # judged nothing: the line goes on
        {"started": "2026-11-29T00:00:00Z", "checks": [{"id": "link.state", "section": "fabric", "status": "skipped"}]},
        {
            "started": "2026-11-28T00:00:00Z",
            "checks": [{"id": "link.state", "section": "fabric", "status": "failed"}],
            "findings": [_finding("link.state", P1, "error")],
        },
        {"started": "2026-11-27T00:00:00Z", "checks": [{"id": "link.state", "section": "fabric", "status": "passed"}]},
    ]
    assert first_seen(newest, older) == {("link.state", P1): datetime(2026, 11, 28, tzinfo=UTC)}


def test_trends_read_a_run_without_sections_as_no_values() -> None:
    (rate,) = diff_runs(
        _run("2026-12-01T00:00:00Z", [], counters={}, master=SM01),
        _run("2026-12-01T01:00:00Z", [], counters={P1: {"SymbolErrorCounter": 4}}, master=SM01),
        {},
    ).rates
    (trend,) = trends(
        [BARE, _run("2026-12-01T01:00:00Z", [], counters={P1: {"SymbolErrorCounter": 4}}, master=SM01)], [rate]
    )
    assert trend.points == (("2026-12-01T00:00:00Z", None), ("2026-12-01T01:20:00Z", 4))


def test_runs_with_a_cause_graph_say_which_causes_are_new_and_resolved_and_what_caused_each_symptom() -> None:
    rogue = _finding("sm.rogue", "node04 mlx5_0 port 1", "security")
    pkey = {
        **_finding("pkey.missing", P2, "error"),
        "caused_by": {"check": "sm.rogue", "object": rogue["object"], "rule": "sm.rogue_programs", "evidence": "..."},
    }
    cable = _finding("cabling.missing", P3, "error")
    old = {**_run("2026-12-01T00:00:00Z", [cable], counters={}, master=SM01), "causes": [cable]}
    new = {**_run("2026-12-01T01:00:00Z", [rogue, pkey], counters={}, master=SM01), "causes": [rogue]}
    got = diff_runs(old, new, {})
    assert got.lines()[:5] == [
        "2 new, 1 resolved, 0 persisting over 1.0 h (2026-12-01 00:20 -> 2026-12-01 01:20 UTC)",
        "causes: 1 new (sm.rogue node04 mlx5_0 port 1); 1 resolved (cabling.missing node02 mlx5_0 port 1)",
        "  new        security sm.rogue                 node04 mlx5_0 port 1: planned sm.rogue as planned, "
        "found sm.rogue otherwise",
        "  new        error    pkey.missing             node01 mlx5_0 port 1: planned pkey.missing as planned, "
        "found pkey.missing otherwise (caused by sm.rogue node04 mlx5_0 port 1)",
        "  resolved   error    cabling.missing          node02 mlx5_0 port 1: planned cabling.missing as planned, "
        "the earlier run found cabling.missing otherwise",
    ]
    assert got.as_dict()["causes"] == {
        "new": [{"check": "sm.rogue", "object": "node04 mlx5_0 port 1"}],
        "resolved": [{"check": "cabling.missing", "object": P3}],
    }
    three = [_finding("cabling.missing", f"node0{i} mlx5_0 port 1", "error") for i in range(5, 8)]
    new = {**_run("2026-12-01T01:00:00Z", three, counters={}, master=SM01), "causes": three}
    assert diff_runs({**old, "causes": []}, new, {}).lines()[1] == (
        "causes: 3 new (cabling.missing node05 mlx5_0 port 1, cabling.missing node06 mlx5_0 port 1, "
        "cabling.missing node07 mlx5_0 port 1); 1 resolved (cabling.missing node02 mlx5_0 port 1)"
    )
    many = [_finding("cabling.missing", f"node0{i} mlx5_0 port 1", "error") for i in range(5, 9)]
    new = {**_run("2026-12-01T01:00:00Z", many, counters={}, master=SM01), "causes": many}
    assert diff_runs({**old, "causes": []}, new, {}).lines()[1] == (
        "causes: 4 new (cabling.missing node05 mlx5_0 port 1, cabling.missing node06 mlx5_0 port 1, "
        "cabling.missing node07 mlx5_0 port 1, ...); 1 resolved (cabling.missing node02 mlx5_0 port 1)"
    )
