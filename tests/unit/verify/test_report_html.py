"""report.html, tested the way people look at it: opened in headless Chromium (Debian's chromium), its
rendered DOM checked for the summary, every finding with its fix, each section's facts, notes and caveats;
a screenshot is kept as a test artifact (out/test-artifacts/report.png)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from nodekit import healthy_rack, rack_plan
from test_report_json import fabric_with_findings

from ibprov.report import Report, to_html
from ibprov.verify.nodes.section import check_nodes

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
    assert "FAIL: 3 findings (3 error); 29 checks over" in text
    assert "node01 mlx5_0 port 1" in text
    assert "leaf01 port 9" in text


def _chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    return path


def test_chromium_shows_the_summary_findings_facts_and_notes(tmp_path: Path) -> None:
    chromium = _chromium()
    page = tmp_path / "report.html"
    page.write_text(to_html(report()))
    with tempfile.TemporaryDirectory(prefix="ibprov-chromium-") as profile:
        flags = [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
        dom = subprocess.run(
            [chromium, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True
        ).stdout
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "report.png"
        shot.unlink(missing_ok=True)
        subprocess.run(
            [chromium, *flags, f"--screenshot={shot}", "--window-size=1400,1800", page.as_uri()],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
    parser = _Text()
    parser.feed(dom)
    shown = " ".join(" ".join(parser.parts).split())
    assert "FAIL: 3 findings (3 error); 29 checks over" in shown
    assert shown.count("cabling.miswire") >= 2, "in the findings of the report and of its section"
    assert "planned leaf01 port 1, found leaf01 port 9" in shown
    assert "move the cable from the found port to the planned one" in shown
    assert "1 switch, 6 channel adapters, 6 links; master SM sm01 mlx5_0 port 1 (priority 15)" in shown
    assert "6 of 6 hosts answered" in shown
    assert "a <b>note</b> & more" in shown, "notes shown as text, never as markup"
    assert dom.count('class="check"') == 29
    assert shot.stat().st_size > 20_000, "a real screenshot of the page"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
