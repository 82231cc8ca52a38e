"""report.html with a run history (first-seen column, counter trends) and the fabric facts' error counters."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser

import jsonschema
from historykit import RACK, fabric_section, finding, report_of

from ibprov.clusterspec import load_spec
from ibprov.identity.guids import GuidBook
from ibprov.report import to_html
from ibprov.report.model import CounterTrend
from ibprov.verify.fabric.facts import SCHEMA, fabric_facts
from ibprov.verify.fabric.observation import Observation, ObservedNode, PortRef
from ibprov.verify.fabric.plan import Plan, build_plan

P1 = "node01 mlx5_0 port 1"
P2 = "leaf01 port 2"


class Page(HTMLParser):
    """The elements of a page as (tag, attributes, text inside), and each svg.trend's circles."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str], list[str]]] = []
        self.open: list[tuple[str, dict[str, str], list[str]]] = []
        self.trends: list[int] = []  # circles per svg.trend
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = (tag, {k: v or "" for k, v in attrs}, [])
        if tag == "svg" and "trend" in element[1].get("class", "").split():
            self.trends.append(0)
        if tag == "circle" and self.trends and any(t == "svg" for t, _a, _x in self.open):
            self.trends[-1] += 1
        self.elements.append(element)
        if tag not in ("meta", "br", "img", "link"):
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if any(t == tag for t, _a, _x in self.open):
            while self.open.pop()[0] != tag:
                pass

    def handle_data(self, data: str) -> None:
        for _tag, _attrs, text in self.open:
            text.append(data)

    def texts(self, tag: str, cls: str | None = None) -> list[str]:
        return [
            "".join(text).strip()
            for t, attrs, text in self.elements
            if t == tag and (cls is None or cls in attrs.get("class", "").split())
        ]


def test_with_first_seen_times_the_findings_have_a_first_seen_column() -> None:
    report = report_of(fabric_section(0, [finding("link.down", P1), finding("cabling.miswire", P2)]))
    shown = replace(report, first_seen={("link.down", P1): "2026-11-20T06:00:00Z"})
    page = Page(to_html(shown))
    assert "First seen" in page.texts("th")
    # the summary table and the fabric section's: each finding has its cell, one without a time a dash
    assert sorted(page.texts("td", "first-seen")) == sorted(["2026-11-20T06:00:00Z", "—"] * 2)


def test_without_a_history_there_is_no_first_seen_column() -> None:
    page = Page(to_html(report_of(fabric_section(0, [finding("link.down", P1)]))))
    assert "First seen" not in page.texts("th")
    assert page.texts("td", "first-seen") == []


def test_each_trend_is_an_svg_with_a_point_per_run_that_read_counters() -> None:
    trends = (
        CounterTrend(P1, "SymbolErrorCounter", (("t1", 2), ("t2", None), ("t3", 0), ("t4", 9))),
        CounterTrend(P2, "LinkDownedCounter", (("t1", None), ("t2", 1))),
    )
    page = Page(to_html(replace(report_of(fabric_section(0)), trends=trends)))
    assert page.trends == [3, 1]
    rows = [attrs for tag, attrs, _text in page.elements if tag == "tr" and attrs.get("class") == "trend"]
    assert [(r["data-object"], r["data-counter"]) for r in rows] == [
        (P1, "SymbolErrorCounter"),
        (P2, "LinkDownedCounter"),
    ]
    assert page.texts("section")[1].startswith("Counters that moved since the previous run")


def test_without_trends_there_is_no_trend_section() -> None:
    page = Page(to_html(report_of(fabric_section(0))))
    assert page.trends == []
    assert "Counters that moved" not in to_html(report_of(fabric_section(0)))


# ------------------------------------------------------------------------------------------------ fabric facts
def _plan_and_obs() -> tuple[Plan, Observation]:
    loaded = load_spec(RACK)
    plan = build_plan(loaded, GuidBook.for_spec(loaded))
    obs = Observation()
    leaf = 0xB8599F0300F1C2A0
    obs.nodes[leaf] = ObservedNode(leaf, "SW", "leaf01", {}, 1, leaf)
    for node, guid in (("node01", 0x0C42A10300D8E3C8), ("node02", 0x0C42A10300D8E3DC)):
        obs.nodes[guid] = ObservedNode(guid, "CA", f"{node} mlx5_0", {1: (guid, 2)})
    stray = 0x1111222233334444
    obs.nodes[stray] = ObservedNode(stray, "CA", "stray mlx5_0", {1: (stray, 9)})
    obs.counters = {
        PortRef(0x0C42A10300D8E3C8, 1): {"SymbolErrorCounter": 7, "LinkDownedCounter": 1},
        PortRef(leaf, 2): {"PortRcvErrors": 3},
        PortRef(0x0C42A10300D8E3DC, 1): {"SymbolErrorCounter": 0},
        PortRef(stray, 1): {"LinkDownedCounter": 2},
    }
    return plan, obs


def test_fabric_facts_list_the_ports_with_a_non_zero_counter_by_name_sorted() -> None:
    plan, obs = _plan_and_obs()
    facts = fabric_facts(plan, obs)
    assert facts.counters == (
        ('0x1111222233334444 "stray mlx5_0" port 1', (("LinkDownedCounter", 2),)),
        ("leaf01 port 2", (("PortRcvErrors", 3),)),
        ("node01 mlx5_0 port 1", (("LinkDownedCounter", 1), ("SymbolErrorCounter", 7))),
    )


def test_fabric_facts_with_counters_validate_against_their_schema() -> None:
    plan, obs = _plan_and_obs()
    data = fabric_facts(plan, obs).as_dict()
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert data["counters"][2] == {
        "object": "node01 mlx5_0 port 1",
        "counters": {"LinkDownedCounter": 1, "SymbolErrorCounter": 7},
    }
    bad = {**data, "counters": [{"object": "x", "counters": {"SymbolErrorCounter": -1}}]}
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(bad)
