"""report.html, tested the way people look at it: opened in headless Chromium (Debian's chromium), its
rendered DOM checked for the summary, every finding with its fix, each section's facts, notes and caveats;
a screenshot is kept as a test artifact (out/test-artifacts/report.png)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from nodekit import healthy_rack, rack_plan
from reportkit import fabric_with_findings
from routingkit import fat_tree

from ibprov.clusterspec import load_spec_text
from ibprov.probes.perfprobe import NodeProbe
from ibprov.report import Report, to_html
from ibprov.report.model import NodeAction
from ibprov.routing.model import RoutingModel
from ibprov.routing.offline import compute_lft
from ibprov.verify.nodes.section import check_nodes
from ibprov.verify.perf.observation import NodeState, PerfObservation, PerfRun
from ibprov.verify.perf.plan import build_perf_plan, schedule_for
from ibprov.verify.perf.section import check_perf
from ibprov.verify.routing.observation import EngineLog, RoutingObservation
from ibprov.verify.routing.plan import RoutingPlan
from ibprov.verify.routing.section import audit_observation

REPO = Path(__file__).resolve().parents[3]
ARTIFACTS = REPO / "out" / "test-artifacts"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def report() -> Report:
    hosts = healthy_rack()
    nodes = check_nodes(rack_plan(), hosts, collected_from="each host (ansible)", notes=["a <b>note</b> & more"])
    return Report.from_sections(cluster="rack1", spec="examples/rack.yaml", sections=[fabric_with_findings(), nodes])


PERF_SPEC = """\
version: 1
cluster: {name: rack1}
nodes: [%s]
switches: [{name: leaf01, role: leaf, ports: 36}]
fabric: {speed: HDR, links: [%s]}
subnet_manager: {instances: [{node: n1}]}
acceptance: {latency_tests: [ib_write_lat], bandwidth_sizes: [8388608], tcp_probe: false}
"""


def perf_report() -> Report:
    """Five nodes all-pairs: n3 slow (the culprit), n5 without an RDMA device (skipped)."""
    names = [f"n{i}" for i in range(1, 6)]
    nodes = ", ".join(f"{{name: {n}, hcas: [{{device: mlx5_0}}]}}" for n in names)
    links = ", ".join(f"'leaf01:{i} <-> {n}/mlx5_0:1'" for i, n in enumerate(names, start=1))
    loaded = load_spec_text(PERF_SPEC % (nodes, links), "rack1.yaml")
    schedule, routing = schedule_for(loaded, "all-pairs")
    plan = build_perf_plan(loaded, schedule, routing=routing)
    tools = {"ib_write_lat": "/usr/bin/ib_write_lat", "ib_write_bw": "/usr/bin/ib_write_bw"}
    probe = NodeProbe(("mlx5_0",), None, ("mlx5_0",), tools, {})
    states = {n: NodeState(True, probe=probe) for n in names}
    states["n5"] = NodeState(True, probe=NodeProbe((), None, (), tools, {}))
    runs = []
    for r, pairs in enumerate(schedule.rounds, start=1):
        for pair in pairs:
            ends = {pair.client.device, pair.server.device}
            if "n5" in ends:
                runs += [PerfRun(pair, t.name, r, "skipped", reason="no RDMA device on n5") for t in plan.tests]
                continue
            bw = 120.5 if "n3" in ends else 196.6
            runs += [PerfRun(pair, "ib_write_lat 2B", r, "ok", 1.05), PerfRun(pair, "ib_write_bw 8MiB", r, "ok", bw)]
    perf = check_perf(plan, PerfObservation(states, tuple(runs)))
    return Report.from_sections(cluster="rack1", spec="rack1.yaml", sections=[perf])


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def test_the_page_is_self_contained_and_escapes_what_it_shows() -> None:
    html = to_html(report())
    parser = _Text()
    parser.feed(html)
    assert not {"script", "link", "img", "iframe"} & set(parser.tags), "no script, no external asset"
    assert "a &lt;b&gt;note&lt;/b&gt; &amp; more" in html
    text = " ".join(parser.parts)
    assert "FAIL: 3 findings (3 error); 33 checks over" in text
    assert "node01 mlx5_0 port 1" in text
    assert "leaf01 port 9" in text


def _chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    return path


def open_in_chromium(page: Path, screenshot: str, size: str) -> tuple[str, str, Path]:
    """The DOM headless Chromium renders from ``page``, its text as shown (whitespace folded), and a screenshot
    kept in out/test-artifacts/."""
    chromium = _chromium()
    with tempfile.TemporaryDirectory(prefix="ibprov-chromium-") as profile:
        flags = [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
        dom = subprocess.run(
            [chromium, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True
        ).stdout
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / screenshot
        shot.unlink(missing_ok=True)
        subprocess.run(
            [chromium, *flags, f"--screenshot={shot}", f"--window-size={size}", page.as_uri()],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
    parser = _Text()
    parser.feed(dom)
    return dom, " ".join(" ".join(parser.parts).split()), shot


def test_chromium_shows_the_summary_findings_facts_and_notes(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(to_html(report()))
    dom, shown, shot = open_in_chromium(page, "report.png", "1400,1800")
    assert "FAIL: 3 findings (3 error); 33 checks over" in shown
    assert shown.count("cabling.miswire") >= 2, "in the findings of the report and of its section"
    assert "planned leaf01 port 1, found leaf01 port 9" in shown
    assert "move the cable from the found port to the planned one" in shown
    assert "1 switch, 6 channel adapters, 6 links; master SM sm01 mlx5_0 port 1 (priority 15)" in shown
    assert "6 of 6 hosts answered" in shown
    assert "a <b>note</b> & more" in shown, "notes shown as text, never as markup"
    assert dom.count('class="check"') == 33
    assert shot.stat().st_size > 20_000, "a real screenshot of the page"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_chromium_shows_the_perf_heatmaps_the_worst_pairs_the_culprit_and_the_skips(tmp_path: Path) -> None:
    page = tmp_path / "report-perf.html"
    page.write_text(to_html(perf_report()))
    dom, shown, shot = open_in_chromium(page, "report-perf.png", "1400,2200")
    assert 'data-matrix="ib_write_bw 8MiB"' in dom
    assert 'data-matrix="ib_write_lat 2B"' in dom
    assert dom.count('data-status="fail"') == 3, "n3's three pairs with a device, in the bandwidth heatmap"
    assert dom.count('data-status="skipped"') == 2 * 4, "n5's four pairs in both heatmaps"
    worst = shown[shown.index("Worst pairs first") :]
    assert worst.index("120.5 Gb/s") < worst.index("196.6 Gb/s"), "failures first"
    assert "n3 mlx5_0 port 1" in shown
    assert "3/3 pairs failed (below threshold or no result): suspect its HCA or cable" in shown
    assert "n1/mlx5_0:1 -> n5/mlx5_0:1 ib_write_bw 8MiB: skipped: no RDMA device on n5" in shown
    assert "all-pairs schedule: 5 rounds, 10 pairs" in shown
    assert shot.stat().st_size > 20_000


def routing_report() -> Report:
    """A fat tree of 3 leaves and 2 spines whose leaf01 lost an uplink: a balance finding, and the charts."""
    model, tiers = fat_tree(3, 2, 2)
    leaf01, spine01 = model.names.index("leaf01"), model.names.index("spine01")
    model.peer[leaf01, 3] = model.peer_port[leaf01, 3] = model.peer[spine01, 1] = model.peer_port[spine01, 1] = -1
    model = RoutingModel(model.names, model.guids, model.lids, model.ports, model.peer, model.peer_port, model.cas,
                         model.lft)  # fmt: skip
    model.lft = compute_lft(model, tiers)
    plan = RoutingPlan("ft", ("ftree",), False, 0, dict(zip(model.names, tiers, strict=True)), {}, {}, ("n01",), 1.5)
    log = EngineLog(None, "the SM's log on n01 could not be read (unreachable)")
    section = audit_observation(plan, RoutingObservation(model, log))
    return Report.from_sections(cluster="ft", spec="ft.yaml", sections=[section])


def test_chromium_draws_the_routing_switches_per_route_and_the_balance_per_tier(tmp_path: Path) -> None:
    page = tmp_path / "report-routing.html"
    page.write_text(to_html(routing_report()))
    dom, shown, shot = open_in_chromium(page, "report-routing.png", "1400,1600")
    assert 'data-chart="CA pairs by switches on the route"' in dom
    assert 'data-label="3 switches" data-value="24"' in dom
    assert 'data-chart="Destination LIDs per switch-facing port, by tier (most loaded port)"' in dom
    assert 'data-label="leaf ↑" data-value="4"' in dom
    assert "leaf01:4 → spine02:1 carries 4 destination LIDs (1.67 x the mean)" in shown
    assert "skipped: the SM's log on n01 could not be read (unreachable)" in shown
    assert shot.stat().st_size > 20_000


def test_chromium_shows_what_drain_and_resume_did_to_each_slurm_node(tmp_path: Path) -> None:
    actions = (
        NodeAction("node01", "drain", "ibprov: cabling.miswire node01 mlx5_0 port 1", "error cabling.miswire", "done"),
        NodeAction("node03", "keep", "admin: <BIOS> update", "drained by root, not by ibprov: never resumed"),
        NodeAction(
            "node04", "resume", "ibprov: link.state leaf01:4", "link.state passes now", "failed: slurm_update error"
        ),
    )
    page = tmp_path / "report-scheduler.html"
    page.write_text(to_html(replace(report(), actions=actions)))
    dom, shown, shot = open_in_chromium(page, "report-scheduler.png", "1400,1800")
    assert "Slurm: drains and resumes" in shown
    assert "ibprov: cabling.miswire node01 mlx5_0 port 1" in shown
    assert "admin: <BIOS> update" in shown, "a reason is shown as text, never as markup"
    assert "failed: slurm_update error" in shown
    assert dom.count('class="action ') == 3
    assert shot.stat().st_size > 20_000


def test_chromium_shows_when_each_finding_was_first_seen_and_the_counters_that_moved(tmp_path: Path) -> None:
    from ibprov.report.model import CounterTrend

    base = report()
    seen = {(f.check, f.object): "2026-12-01T06:00:00Z" for f in base.findings[:1]}
    points = (("2026-12-05T00:00:00Z", 0), ("2026-12-05T06:00:00Z", None), ("2026-12-05T12:00:00Z", 42))
    trend = CounterTrend("node02 mlx5_0 port 1", "SymbolErrorCounter", points)
    page = tmp_path / "report-history.html"
    page.write_text(to_html(replace(base, first_seen=seen, trends=(trend,))))
    dom, shown, shot = open_in_chromium(page, "report-history.png", "1600,1800")
    assert "First seen" in shown
    assert shown.count("2026-12-01T06:00:00Z") == 2, "in the report's findings and in its section's"
    assert shown.count("—") >= 2, "findings the history has not seen before show a dash"
    assert "Counters that moved since the previous run" in shown
    assert 'data-counter="SymbolErrorCounter"' in dom
    assert "node02 mlx5_0 port 1" in shown
    assert dom.count("<circle") == 2, "a point per run that read the counters"
    assert dom.count("<polyline") == 2, "the run that did not read them breaks the line"
    assert shot.stat().st_size > 20_000

    plain = tmp_path / "report-plain.html"
    plain.write_text(to_html(base))
    dom, shown, _shot = open_in_chromium(plain, "report-plain.png", "1400,1000")
    assert "First seen" not in shown, "no history, no first-seen column"
    assert "Counters that moved" not in shown, "no history, no trends"


def test_chromium_shows_the_causes_first_with_their_symptoms_folded_under_them(tmp_path: Path) -> None:
    from causekit import demo_findings, fabric, report_of

    from ibprov.verify.causes import explain_report

    page = tmp_path / "report-causes.html"
    page.write_text(to_html(explain_report(report_of(demo_findings()), fabric())))
    dom, shown, shot = open_in_chromium(page, "report-causes.png", "1400,1400")
    assert "FAIL: 2 causes explain 8 findings" in shown
    causes = shown[shown.index("Causes, worst first") : shown.index("Findings, worst first")]
    assert causes.index("sm.rogue node04 mlx5_0 port 1") < causes.index("cabling.missing node03 mlx5_0 port 1")
    assert "explains 6 findings" in causes
    assert "explains no other finding" in causes
    assert dom.count('<details class="symptoms">') == 1, "folded: no open attribute"
    assert "the unplanned SM node04 mlx5_0 port 1 is a MASTER" in causes
    assert shot.stat().st_size > 20_000
