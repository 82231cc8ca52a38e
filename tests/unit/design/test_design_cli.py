"""`ibprov design` on the command line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.clusterspec import load_spec


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["design", *args])
    return result.exit_code, result.stdout, result.stderr


def test_design_prints_the_plan() -> None:
    code, out, err = run("--nodes", "100", "--radix", "40")
    assert code == 0, err
    assert out.splitlines() == [
        "fat tree for 100 hosts with 40-port switches, blocking 1:1 requested",
        "levels:    2",
        "switches:  9 (5 leaf, 4 spine)",
        "leaf:      20 host ports + 20 uplinks (5 to each of 4 spines), 0 free; 0 host ports spare in all",
        "spine:     25 down, 15 free",
        "cables:    100 host-leaf, 100 leaf-spine (200 in all)",
        "blocking:  1:1 at the leaves",
        "bill of materials:",
        "  switches:     9 x 40-port (5 leaf, 4 spine)",
        "  host-leaf:    100 copper cables",
        "  leaf-spine:   100 optical cables, 200 transceivers",
        "  transceivers: 200 (2 per optical cable)",
        "  free ports:   0 on the leaf switches, 60 on the spine switches",
        "  cost:         no prices given (--prices FILE): counts only",
    ]


def test_design_writes_a_spec_that_validate_accepts(tmp_path: Path) -> None:
    spec = tmp_path / "big-hall.yaml"
    code, _out, err = run("--nodes", "900", "--radix", "40", "--blocking", "2:1", "--speed", "ndr", "-o", str(spec))
    assert code == 0, err
    assert f"wrote {spec}" in err
    loaded = load_spec(spec)
    assert loaded.spec.cluster.name == "big-hall"
    assert loaded.spec.fabric.speed == "NDR"
    assert len(loaded.spec.nodes) == 900
    assert spec.read_text().startswith("# Fat tree designed by `ibprov design --nodes 900 --radix 40 --blocking 2:1`")
    validated = CliRunner().invoke(cli, ["validate", str(spec)])
    assert validated.exit_code == 0
    assert "900 nodes" in validated.output


def test_design_does_not_overwrite_without_force(tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text("keep me\n")
    code, _out, err = run("--nodes", "10", "--radix", "8", "-o", str(spec))
    assert code == 2
    assert "exists; use --force" in err
    assert spec.read_text() == "keep me\n"
    code, _out, _err = run("--nodes", "10", "--radix", "8", "-o", str(spec), "--force")
    assert code == 0
    assert len(load_spec(spec).spec.nodes) == 10


def test_an_impossible_fabric_exits_2_with_the_reason() -> None:
    code, out, err = run("--nodes", "129", "--radix", "8")
    assert code == 2
    assert out == ""
    assert "error: 129 hosts do not fit a three-level fat tree of 8-port switches at blocking 1:1" in err


def test_a_bad_blocking_ratio_exits_2() -> None:
    code, _out, err = run("--nodes", "10", "--radix", "8", "--blocking", "1:3")
    assert code == 2
    assert "blocking 1:3" in err
