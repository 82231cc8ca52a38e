"""`ibprov discover --slurm-topology FILE`: Slurm's topology of a live fabric, from the same core as the plan's;
with a spec, a host under another leaf than planned is a cabling finding (exit 1), not a new topology."""

from __future__ import annotations

import shutil
from pathlib import Path

from captures import read_capture
from click.testing import CliRunner
from discoverdata import FAT_TREE, example_text, redescribe

from ibprov.cli import cli
from ibprov.clusterspec import load_spec
from ibprov.render.slurm import topology_text


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["discover", *args])
    return result.exit_code, result.output


def body(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("#")]


def test_the_fabric_as_planned_gives_the_planned_file_and_no_finding(tmp_path: Path) -> None:
    spec = tmp_path / "ftree.yaml"
    shutil.copy(FAT_TREE, spec)
    _loaded, text, _book = example_text()
    (tmp_path / "fabric.txt").write_text(text)
    out = tmp_path / "topology.conf"
    code, output = run("-o", str(spec), "--from", str(tmp_path / "fabric.txt"), "--slurm-topology", str(out))
    assert code == 0, output
    assert "4 Slurm leaves, 34 hosts" in output
    _name, planned = topology_text(load_spec(spec))
    assert body(out.read_text()) == body(planned)
    assert "SwitchName=leaf01 Nodes=node[01-09],sm01" in out.read_text()


def test_two_hosts_cabled_to_each_others_ports_are_cabling_findings(tmp_path: Path) -> None:
    spec = tmp_path / "ftree.yaml"
    shutil.copy(FAT_TREE, spec)
    _loaded, text, _book = example_text()
    swapped = redescribe(
        redescribe(redescribe(text, "node01 mlx5_0", "TMP"), "node15 mlx5_0", "node01 mlx5_0"), "TMP", "node15 mlx5_0"
    )
    (tmp_path / "fabric.txt").write_text(swapped)
    out = tmp_path / "topology.conf"
    code, output = run("-o", str(spec), "--from", str(tmp_path / "fabric.txt"), "--slurm-topology", str(out))
    assert code == 1, output
    assert "cabling: node01 is cabled to leaf02 on the fabric; the plan has it on leaf01" in output
    assert "cabling: node15 is cabled to leaf01 on the fabric; the plan has it on leaf02" in output


def test_without_a_spec_a_real_capture_gives_leaves_named_from_the_descriptions(tmp_path: Path) -> None:
    capture = tmp_path / "fabric.txt"
    capture.write_text(read_capture("ibnetdiscover/hdr-full-f-faked-superbench.txt"))
    out = tmp_path / "topology.conf"
    code, output = run("-o", str(tmp_path / "new.yaml"), "--from", str(capture), "--slurm-topology", str(out))
    assert code == 0, output
    lines = body(out.read_text())
    assert lines[0] == "SwitchName=MF0-rmd70-0101-0919-01ib0-MQM8700-U1 Nodes=RMD[701091901003,701091901019]"
    assert all(line.startswith("SwitchName=") for line in lines)
    assert lines[-1].startswith("SwitchName=top Switches=MF0-rmd70-")  # one top switch over every leaf
