"""`ibprov verify --nodes`: exit 0 clean / 1 findings, the report files, and --fabric/--nodes exclusivity."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from nodekit import RACK, healthy_host, healthy_rack

from ibprov.cli import cli
from ibprov.verify.nodes.observation import HostObservation
from ibprov.verify.registry import report_schema


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["verify", *args], catch_exceptions=False)


def fake_collector(monkeypatch: pytest.MonkeyPatch, hosts: dict[str, HostObservation]) -> list[Any]:
    made: list[Any] = []

    class Fake:
        where = "fake"

        def __init__(self, inventory: Any) -> None:
            made.append(inventory)

        def collect(self, names: Sequence[str]) -> dict[str, HostObservation]:
            return {n: hosts[n] for n in names if n in hosts}

    monkeypatch.setattr("ibprov.verify.nodes.section.AnsibleNodeCollector", Fake)
    return made


def test_a_clean_rack_exits_0_and_writes_json_and_junit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    made = fake_collector(monkeypatch, healthy_rack())
    result = run("--nodes", str(RACK), "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml"))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].startswith("PASS: no findings; 9 checks over")
    assert set(made[0]["all"]["hosts"]) == set(healthy_rack())
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (doc["command"], doc["exit_code"], doc["sections"]["nodes"]["facts"]["hosts_reached"]) == (
        "verify --nodes",
        0,
        6,
    )
    assert ET.parse(tmp_path / "r.xml").getroot().get("failures") == "0"


def test_an_unreachable_host_s_hint_names_the_inventory_given_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hosts = healthy_rack()
    hosts["node02"] = HostObservation("node02", error="unreachable: timed out")
    fake_collector(monkeypatch, hosts)
    inv = tmp_path / "inventory"
    inv.mkdir()
    result = run("--nodes", str(RACK), "--inventory", str(inv), "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    (finding,) = [f for f in doc["findings"] if f["check"] == "node.unreachable"]
    assert f"`ansible node02 -i {inv} -m ping`" in finding["fix"]


def test_findings_exit_1_with_a_table_line_each(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hosts = healthy_rack()
    hosts["node01"] = healthy_host("node01", state="DOWN", phys="Polling")
    hosts["node02"] = HostObservation("node02", error="unreachable: timed out")
    fake_collector(monkeypatch, hosts)
    inv = tmp_path / "inventory"
    inv.mkdir()
    result = run("--nodes", str(RACK), "--inventory", str(inv), "--junit", str(tmp_path / "r.xml"))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("FAIL: 2 findings (2 error)")
    assert any("node.port_state" in line and "node01 mlx5_0 port 1" in line for line in lines)
    assert any("node.unreachable" in line and "node02" in line for line in lines)
    assert ET.parse(tmp_path / "r.xml").getroot().get("failures") == "2"


def test_one_spec_only_and_a_spec_is_required() -> None:
    result = run("--fabric", str(RACK), "--nodes", str(RACK))
    assert result.exit_code == 2
    assert "unexpected extra argument" in result.stderr
    assert run().exit_code == 2
    assert run("--nodes").exit_code == 2


def test_fabric_only_options_are_refused_with_nodes() -> None:
    result = run("--nodes", str(RACK), "--soak", "0")
    assert result.exit_code == 2
    assert "--soak: only with --fabric" in result.stderr
    assert "--inventory: only with --nodes" in run("--fabric", str(RACK), "--inventory", ".").stderr
    both = run("--nodes", str(RACK), "--via", "x", "--synthetic-guids")
    assert (
        "--via: only with --fabric or --perf or --routing or --physical; "
        "--synthetic-guids: only with --fabric or --routing" in (both.stderr)
    )


def test_the_nodes_report_json_follows_the_report_schema(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    hosts = healthy_rack()
    hosts["node01"] = healthy_host("node01", fw="1.0")
    fake_collector(monkeypatch, hosts)
    assert run("--nodes", str(RACK), "--json", str(tmp_path / "r.json")).exit_code == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    jsonschema.Draft202012Validator(report_schema(), format_checker=jsonschema.FormatChecker()).validate(doc)
    assert [f["check"] for f in doc["findings"]] == ["node.firmware"]
