"""`ibprov render`: writing, --check drift detection, unresolved GUIDs, stale files."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from ibprov.cli import cli

ROOT = Path(__file__).resolve().parents[3]
RACK = ROOT / "examples" / "rack.yaml"
QOS = ROOT / "examples" / "qos-partitions.yaml"


def _without_node01_guids() -> str:
    planned = "{device: mlx5_0, node_guid: 0x043f720300a4b228, port_guids: {1: 0x043f720300a4b228}}"
    assert planned in QOS.read_text()
    return QOS.read_text().replace(planned, "{device: mlx5_0}")


def _render(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["render", *args])
    return result.exit_code, result.stdout, result.stderr


def test_render_writes_inventory_opensm_files_and_twin(tmp_path: Path) -> None:
    code, out, _ = _render(str(QOS), "-o", str(tmp_path))
    assert code == 0, out
    for rel in (
        "inventory/hosts.yml",
        "inventory/group_vars/ib_sm.yml",
        "opensm/partitions.conf",
        "opensm/qos-policy.conf",
        "opensm/node-name-map",
        "fabric/twin.net",
        "fabric/topology.ibnd",
    ):
        assert (tmp_path / rel).is_file(), rel
    assert "0x8030" not in (tmp_path / "opensm/partitions.conf").read_text()  # pkeys without the full bit
    assert "mgmt=0x0030" in (tmp_path / "opensm/partitions.conf").read_text()


def test_check_passes_when_up_to_date_and_fails_with_a_diff_after_a_change(tmp_path: Path) -> None:
    assert _render(str(QOS), "-o", str(tmp_path))[0] == 0
    code, _out, err = _render(str(QOS), "-o", str(tmp_path), "--check")
    assert code == 0, err
    conf = tmp_path / "opensm" / "partitions.conf"
    conf.write_text(re.sub(r"^(\s+0x[0-9a-f]{16})=full", r"\1=limited", conf.read_text(), count=1, flags=re.M))
    code, out, err = _render(str(QOS), "-o", str(tmp_path), "--check")
    assert code == 1
    assert "--- a/opensm/partitions.conf" in out
    assert "-    0x" in out
    assert "=limited" in out
    assert "out of date" in err
    assert "=limited" in conf.read_text(), "--check must not change anything"


def test_check_reports_missing_and_stale_files(tmp_path: Path) -> None:
    _render(str(QOS), "-o", str(tmp_path))
    (tmp_path / "opensm" / "node-name-map").unlink()
    code, out, _ = _render(str(QOS), "-o", str(tmp_path), "--check")
    assert code == 1
    assert "+++ b/opensm/node-name-map" in out


def test_rerender_removes_files_the_spec_no_longer_produces(tmp_path: Path) -> None:
    _render(str(QOS), "-o", str(tmp_path))
    assert (tmp_path / "opensm/qos-policy.conf").is_file()
    assert (tmp_path / "opensm/sm01/opensm.mlx5_0-1.conf").is_file()
    _render(str(ROOT / "examples" / "fat-tree.yaml"), "-o", str(tmp_path))  # no GUIDs: no per-SM files yet
    assert not (tmp_path / "opensm/sm01/opensm.mlx5_0-1.conf").exists()
    assert "stor01" not in (tmp_path / "inventory/hosts.yml").read_text()


def test_partition_member_without_guid_fails_render_naming_node_and_fix(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(_without_node01_guids())
    code, _out, err = _render(str(spec), "-o", str(tmp_path / "out"))
    assert code == 2
    problems = [line for line in err.splitlines() if "no port GUID" in line]
    assert len(problems) == 1, "one located problem per node, not one per port and partition"
    assert "no port GUID for node01 (1 port: mlx5_0:1), which partition" in problems[0]
    assert "ibprov discover" in err
    assert "for the twin: --synthetic-guids" in err
    assert err.splitlines()[0].startswith(f"{spec}:")
    assert not (tmp_path / "out" / "opensm" / "partitions.conf").exists()


def test_synthetic_guids_fill_the_gap_and_are_announced(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(_without_node01_guids())
    code, _out, err = _render(str(spec), "-o", str(tmp_path / "out"), "--synthetic-guids")
    assert code == 0, err
    assert "synthetic GUIDs for 1 devices" in err
    assert "SYNTHETIC GUIDs" in (tmp_path / "out" / "fabric" / "twin.net").read_text()
    assert "0x02" in (tmp_path / "out" / "opensm" / "partitions.conf").read_text()


def test_lock_file_beside_the_spec_supplies_missing_guids(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(_without_node01_guids())
    (tmp_path / "cluster.lock.yaml").write_text(
        "nodes:\n  node01:\n    mlx5_0:\n      node_guid: '0x043f720300a4b228'\n"
        "      port_guids: {1: '0x043f720300a4b229'}\n"
    )
    code, _out, err = _render(str(spec), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert "0x043f720300a4b229=full" in (tmp_path / "out" / "opensm" / "partitions.conf").read_text()
