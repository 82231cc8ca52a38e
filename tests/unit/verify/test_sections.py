"""The verify framework: the section registry, the one check runner, the combined report."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from nodekit import healthy_rack, rack_plan
from reportkit import clean_fabric, fabric_with_findings

from ibprov.cli import cli
from ibprov.report import Report, to_dict, to_junit
from ibprov.report.console import facts_lines
from ibprov.report.model import Finding, Severity
from ibprov.verify.judge import Check, CheckFamily, catalogue, run_checks
from ibprov.verify.nodes.section import check_nodes
from ibprov.verify.registry import (
    SECTIONS,
    VerifyOptions,
    load_section,
    misplaced_options,
    report_schema,
    section_info,
)

REPO = Path(__file__).resolve().parents[3]


def _objects(_plan: object, _obs: object) -> list[str]:
    return ["a", "b"]


A = Check("t.a", "A holds", Severity.ERROR, "fix a", _objects)
B = Check("t.b", "B holds", Severity.WARNING, "fix b", _objects)


def test_the_runner_gives_every_declared_check_its_objects_and_its_own_findings() -> None:
    family = CheckFamily(lambda _p, _o: [B.finding("b", "x", "y"), A.finding("b", "1", "2")], (A, B))
    a, b = run_checks([family], None, None)
    assert (a.id, a.objects, [f.object for f in a.findings]) == ("t.a", ("a", "b"), ["b"])
    assert (b.id, b.passed, b.findings[0].severity) == ("t.b", False, Severity.WARNING)


def test_the_runner_refuses_a_finding_of_an_undeclared_check() -> None:
    stray = Finding("t.zzz", Severity.ERROR, "a", "x", "y", "f")
    with pytest.raises(AssertionError, match=r"undeclared check ids \['t.zzz'\]"):
        run_checks([CheckFamily(lambda _p, _o: [stray], (A,))], None, None)


def test_a_check_id_declared_twice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"declared twice: \['t.a'\]"):
        catalogue([CheckFamily(lambda _p, _o: [], (A,)), CheckFamily(lambda _p, _o: [], (A, B))])


def test_every_registered_section_loads_with_unique_check_ids_and_a_facts_schema() -> None:
    ids: list[str] = []
    for info in SECTIONS:
        section = load_section(info)
        assert section.name == info.name
        assert section.checks, info.name
        assert all(c.object_kind for c in section.checks), "the catalogue names what each check examines"
        assert section.facts_schema["type"] == "object"
        ids += [c.id for c in section.checks]
    assert len(ids) == len(set(ids))
    assert set(report_schema()["oneOf"][0]["properties"]["sections"]["properties"]) == {i.name for i in SECTIONS}


def test_the_registry_is_import_light_so_the_discovery_starts_before_the_spec_loads() -> None:
    code = (
        "import sys; import ibprov.verify.registry, ibprov.verify.fabric.commands; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'yaml', 'ansible_runner')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def test_options_belong_to_the_sections_that_read_them() -> None:
    fabric, nodes = section_info("fabric"), section_info("nodes")
    given = VerifyOptions(via="sm01", inventory=Path("inv")).given()
    assert misplaced_options([fabric, nodes], given) == {}
    assert misplaced_options([nodes], given) == {"via": ["fabric", "perf", "routing", "physical"]}
    assert misplaced_options([fabric], given) == {"inventory": ["nodes", "mpi", "routing", "scheduler", "physical"]}
    assert misplaced_options([fabric], ["target"]) == {}, "every section runs on the target"
    assert VerifyOptions().given() == []


def test_a_report_of_two_sections_counts_both_and_keeps_each_sections_facts_apart() -> None:
    nodes = check_nodes(rack_plan(), healthy_rack(), collected_from="each host (ansible)")
    report = Report.from_sections(cluster="rack", spec="rack.yaml", sections=[fabric_with_findings(), nodes])
    assert report.command == "verify --fabric --nodes"
    assert report.exit_code == 1
    assert len(report.checks) == 24 + 9
    data = to_dict(report)
    assert data["sections"]["nodes"]["facts"] == {"hosts": 6, "hosts_reached": 6}
    assert (data["sections"]["fabric"]["result"], data["sections"]["nodes"]["result"]) == ("fail", "pass")
    assert {c["section"] for c in data["checks"]} == {"fabric", "nodes"}
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(report_schema(), format_checker=jsonschema.FormatChecker()).validate(data)
    suites = ET.fromstring(to_junit(report)).findall("testsuite")
    assert [s.get("name") for s in suites] == ["ibprov verify --fabric rack", "ibprov verify --nodes rack"]
    assert [s.get("hostname") for s in suites] == ["this host", "each host (ansible)"]
    assert [int(s.get("failures") or 0) for s in suites] == [3, 0]
    lines = facts_lines(report)
    assert lines[0].startswith("fabric (this host): 1 switch, 6 channel adapters, 6 links; master SM sm01")
    assert lines[1] == "nodes (each host (ansible)): 6 of 6 hosts answered"


def test_verify_with_two_section_flags_runs_both_into_one_report(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran: list[str] = []

    def fake_fabric(loaded: object, runner: object, **_kw: object) -> object:
        ran.append("fabric")
        return clean_fabric()

    class FakeCollector:
        where = "fake"

        def __init__(self, _inventory: object) -> None:
            pass

        def collect(self, names: list[str]) -> dict[str, object]:
            ran.append("nodes")
            return dict(healthy_rack())

    monkeypatch.setattr("ibprov.verify.fabric.section.verify_fabric", fake_fabric)
    monkeypatch.setattr("ibprov.verify.nodes.section.AnsibleNodeCollector", FakeCollector)
    monkeypatch.setattr("ibprov.probes.runner.LocalRunner.prefetch", lambda runner, argv: None)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["verify", "--nodes", "--fabric", str(REPO / "examples" / "rack.yaml"), "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert ran == ["fabric", "nodes"], "sections run in registry order"
    doc = json.loads(out.read_text())
    assert (doc["command"], list(doc["sections"])) == ("verify --fabric --nodes", ["fabric", "nodes"])
    assert result.stdout.splitlines()[-1].startswith("PASS: no findings; 33 checks over")
