"""The rendered OpenSM configuration, proven on the twin with the real OpenSM 3.3.23."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gridkit import grid_spec

from ibprov.clusterspec import load_spec
from ibprov.twin.prove import log_failures, prove

pytestmark = pytest.mark.sim
EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_comes_up_on_the_twin_exactly_as_planned(example: Path, tmp_path: Path) -> None:
    result = prove(load_spec(example), tmp_path)
    assert result.problems == []
    text = "\n".join(result.lines)
    assert "SUBNET UP" in text
    assert re.search(r"PKey tables: (\d+) of \1 ports exactly as planned", text)
    assert "master SM is" in text


def test_a_partition_parse_error_is_caught_although_opensm_keeps_running(tmp_path: Path) -> None:
    def break_partitions(opensm_dir: Path) -> None:
        conf = opensm_dir / "partitions.conf"
        text = conf.read_text()
        guid = re.search(r"^\s+(0x[0-9a-f]{16})=", text, re.MULTILINE)
        assert guid is not None
        conf.write_text(text.replace(guid.group(1), guid.group(1)[:10] + "0x" + guid.group(1)[12:], 1))

    result = prove(
        load_spec(EXAMPLES[[p.stem for p in EXAMPLES].index("qos-partitions")]),
        tmp_path,
        before_start=break_partitions,
    )
    assert any("partitions.conf parse error: PARSE ERROR: line" in p for p in result.problems)
    assert any("fell back to the default partition" in p for p in result.problems)
    assert any("PKeys: planned" in p for p in result.problems)


def test_a_qos_table_that_differs_from_the_plan_is_reported(tmp_path: Path) -> None:
    def change_sl2vl(opensm_dir: Path) -> None:
        for conf in opensm_dir.glob("*/opensm.*.conf"):
            conf.write_text(conf.read_text().replace("qos_sl2vl 0,1,2,3,4,5,6,7", "qos_sl2vl 1,0,2,3,4,5,6,7"))

    spec = load_spec(Path(__file__).resolve().parents[2] / "examples" / "qos-partitions.yaml")
    result = prove(spec, tmp_path, before_start=change_sl2vl)
    assert any("SL2VL: planned [0, 1, 2" in p and "found [1, 0, 2" in p for p in result.problems)


def test_a_missing_member_port_is_reported_by_node_device_and_guid(tmp_path: Path) -> None:
    spec = load_spec(Path(__file__).resolve().parents[2] / "examples" / "qos-partitions.yaml")

    def drop_first_member(opensm_dir: Path) -> None:
        conf = opensm_dir / "partitions.conf"
        lines = conf.read_text().splitlines(keepends=True)
        idx = next(i for i, line in enumerate(lines) if re.match(r"\s+0x[0-9a-f]+=\w+,$", line))
        del lines[idx]
        conf.write_text("".join(lines))

    result = prove(spec, tmp_path, before_start=drop_first_member)
    pattern = r"\w+ mlx5_0 port 1 \(0x[0-9a-f]{16}, lid \d+\) PKeys: planned"
    assert any(re.match(pattern, p) for p in result.problems), result.problems


def test_log_failures_recognises_opensm_fallback_lines() -> None:
    log = (
        "Dec 02 08:41:31 020369 [708A56C0] 0x01 -> PARSE ERROR: line 5: bad PortGUID\n"
        "Dec 02 08:41:31 020369 [708A56C0] 0x01 -> Partition configuration in error; retrying with default config\n"
        "Dec 02 08:41:31 020369 [708A56C0] 0x02 -> SUBNET UP\n"
    )
    found = log_failures(log)
    assert len(found) == 2, found
    assert found[0].startswith("partitions.conf parse error: PARSE ERROR: line 5")


def test_twin_verify_runs_verify_fabric_against_the_running_twin(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ibprov.cli import cli

    example = Path(__file__).resolve().parents[2] / "examples" / "rack.yaml"
    report = tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["twin", str(example), "--verify", "--synthetic-guids", "--json", str(report)])
    assert result.exit_code == 0, result.output
    assert "PASS: no findings" in result.stdout
    assert '"result": "pass"' in report.read_text()


FAT_TREE = """version: 1
cluster: {name: ft}
nodes:
NODES
fabric:
  speed: EDR
  fat_tree: {radix: 8, leaves: 3, spines: 2, hosts_per_leaf: 2, uplinks_per_leaf: 2}
subnet_manager:
  routing_engine: ftree
  instances: [{node: n01, priority: 15}]
""".replace("NODES", "\n".join(f"  - {{name: n{i:02d}, hcas: [{{device: mlx5_0}}]}}" for i in range(1, 7)))


@pytest.mark.parametrize(
    ("name", "text", "loops"),
    [
        ("ring of 5 under minhop", grid_spec((5,), wrap=True, engine="minhop"), True),
        ("5x3 torus under dor", grid_spec((5, 3), wrap=True, engine="dor"), True),
        ("fat tree under ftree", FAT_TREE, False),
    ],
    ids=["ring-minhop", "torus-dor", "fat-tree-ftree"],
)
def test_the_one_shot_twin_runs_the_routing_audit_before_any_hardware_exists(
    name: str, text: str, loops: bool, tmp_path: Path
) -> None:
    import json

    from click.testing import CliRunner

    from ibprov.cli import cli

    spec = tmp_path / "cluster.yaml"
    spec.write_text(text)
    report = tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["twin", str(spec), "--verify", "--routing", "--json", str(report)])
    data = json.loads(report.read_text())
    assert set(data["sections"]) == {"fabric", "routing"}, name
    routing = data["sections"]["routing"]["facts"]
    checks = {c["id"]: c["status"] for c in data["checks"] if c["section"] == "routing"}
    assert routing["pairs"] == routing["delivered"], "every route delivered"
    if loops:
        assert routing["credit_loops"] > 0, name
        assert checks["routing.credit_loops"] == "fail"
        assert result.exit_code == 1, result.output
    else:
        assert routing["credit_loops"] == 0
        assert data["result"] == "pass", [f["check"] + " " + f["object"] for f in data["findings"]]
        assert result.exit_code == 0, result.output


def test_routing_without_verify_is_refused_saying_why() -> None:
    from click.testing import CliRunner

    from ibprov.cli import cli

    example = Path(__file__).resolve().parents[2] / "examples" / "rack.yaml"
    result = CliRunner().invoke(cli, ["twin", str(example), "--routing"])
    assert result.exit_code == 2
    assert "--routing: only with --verify" in result.output


def test_design_proves_the_tree_it_plans_on_the_twin_with_its_routing(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ibprov.cli import cli

    spec = tmp_path / "planned.yaml"
    result = CliRunner().invoke(cli, ["design", "--nodes", "12", "--radix", "8", "-o", str(spec), "--prove"])
    assert result.exit_code == 0, result.output
    assert spec.exists()
    assert "engine ftree (planned ftree); 132 of 132 CA pairs delivered" in result.output
    assert "0 credit loops" in result.output
    assert "PASS: no findings" in result.stdout


def test_design_prove_without_output_is_refused() -> None:
    from click.testing import CliRunner

    from ibprov.cli import cli

    result = CliRunner().invoke(cli, ["design", "--nodes", "12", "--radix", "8", "--prove"])
    assert result.exit_code == 2
    assert "--prove: only with -o" in result.output
