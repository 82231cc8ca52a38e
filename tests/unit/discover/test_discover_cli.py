"""`ibprov discover`: skeleton or lock file, exit codes, running ibnetdiscover from PATH."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from discoverdata import FAT_TREE, drop_device, example_text

from ibprov.cli import cli
from ibprov.clusterspec import load_spec
from ibprov.identity.guids import LockFile
from ibprov.render import render_files


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["discover", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    _loaded, text, _book = example_text()
    path = tmp_path / "ibnetdiscover.txt"
    path.write_text(text)
    return path


@pytest.fixture
def planned(tmp_path: Path) -> Path:
    copy = tmp_path / "ftree.yaml"
    shutil.copy(FAT_TREE, copy)
    return copy


def test_without_a_spec_a_skeleton_is_written_that_validates(tmp_path: Path, saved: Path) -> None:
    spec = tmp_path / "new.yaml"
    code, out, err = run("-o", str(spec), "--from", str(saved))
    assert code == 0, err
    assert "wrote" in out
    assert "6 switches, 34 HCAs on 34 nodes, 74 links" in out
    loaded = load_spec(spec)
    assert loaded.spec.cluster.name == "new"
    assert (len(loaded.spec.switches), len(loaded.spec.nodes), len(loaded.topology.links)) == (6, 34, 74)
    assert not LockFile.path_for(spec).exists()
    validated = CliRunner().invoke(cli, ["validate", str(spec)])
    assert validated.exit_code == 0, validated.output


def test_with_a_spec_only_the_lock_file_is_written_and_render_uses_its_guids(planned: Path, saved: Path) -> None:
    before = planned.read_bytes()
    code, out, err = run("-o", str(planned), "--from", str(saved))
    assert code == 0, err
    assert "matched 40 of 40 planned devices (40 by description)" in out
    assert "  leaf01 = 0x02" in out
    assert planned.read_bytes() == before
    lock_path = planned.with_name("ftree.lock.yaml")
    assert f"wrote {lock_path}" in out
    lock = LockFile.read(lock_path)
    assert len(lock.switches) == 6
    assert len(lock.hca_nodes) == 34
    rendered = render_files(load_spec(planned))
    assert rendered.synthetic == []
    assert f"switchguid=0x{lock.switches['spine02']:016x}" in rendered.files["fabric/topology.ibnd"]


def test_a_device_missing_exits_1_and_the_lock_file_holds_the_rest(planned: Path, saved: Path) -> None:
    _loaded, text, book = example_text()
    gone = book.hca_guid("node05", "mlx5_0")
    assert gone is not None
    saved.write_text(drop_device(text, gone))
    code, out, _err = run("-o", str(planned), "--from", str(saved))
    assert code == 1
    assert "planned but not found (1): node05/mlx5_0" in out
    lock = LockFile.read(planned.with_name("ftree.lock.yaml"))
    assert len(lock.hca_nodes) == 33
    assert ("node05", "mlx5_0") not in lock.hca_nodes


def test_an_invalid_spec_exits_2_and_writes_no_lock_file(tmp_path: Path, saved: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("version: 1\ncluster: {name: x}\nnodes: []\n")
    code, _out, err = run("-o", str(spec), "--from", str(saved))
    assert code == 2
    assert "bad.yaml:3:8: nodes: needs at least 1 entry" in err
    assert not (tmp_path / "bad.lock.yaml").exists()


def test_unreadable_output_exits_3_and_writes_nothing(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("ibwarn: mad_rpc_open_port: can't open UMAD port ((null):0)\nsomething else\n")
    spec = tmp_path / "new.yaml"
    code, _out, err = run("-o", str(spec), "--from", str(junk))
    assert code == 3
    assert "ibnetdiscover: line 2: cannot parse: 'something else'" in err
    assert not spec.exists()


def _fake_tool(bin_dir: Path, body: str) -> dict[str, str]:
    bin_dir.mkdir()
    tool = bin_dir / "ibnetdiscover"
    tool.write_text(f"#!/bin/sh\n{body}\n")
    tool.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


def test_without_from_ibnetdiscover_runs_here_with_this_environment(tmp_path: Path, saved: Path) -> None:
    env = _fake_tool(tmp_path / "bin", f'[ "$IBPROV_TEST_MARK" = yes ] && exec cat {saved}\nexit 9')
    spec = tmp_path / "live.yaml"
    code, out, err = run("-o", str(spec), env={**env, "IBPROV_TEST_MARK": "yes"})
    assert code == 0, err
    assert "34 HCAs on 34 nodes" in out
    assert "from ibnetdiscover:" in spec.read_text().splitlines()[0]


def test_ibnetdiscover_failing_exits_3_with_its_message(tmp_path: Path) -> None:
    env = _fake_tool(tmp_path / "bin", 'echo "ibwarn: umad_init: cannot open /dev/infiniband" >&2\nexit 255')
    code, _out, err = run("-o", str(tmp_path / "x.yaml"), env=env)
    assert code == 3
    assert "ibnetdiscover failed (exit 255): ibwarn: umad_init: cannot open /dev/infiniband" in err


def test_ibnetdiscover_not_installed_exits_3(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _out, err = run("-o", str(tmp_path / "x.yaml"), env={"PATH": str(tmp_path / "empty")})
    assert code == 3
    assert "ibnetdiscover is not installed" in err


def test_a_spec_in_a_missing_directory_is_an_error_not_a_crash(tmp_path: Path, saved: Path) -> None:
    code, _out, err = run("-o", str(tmp_path / "nowhere" / "new.yaml"), "--from", str(saved))
    assert code == 2
    assert "cannot write" in err
    assert "No such file or directory" in err
