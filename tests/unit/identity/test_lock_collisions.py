"""A lock file whose GUIDs collide -- two HCAs' ports, a port and a switch, two switches, or a GUID the spec
gives another device -- is refused with each collision located at its line in the lock file (exit 2 from the
CLI), never rendered; an HCA's node GUID beside its own port GUIDs is no collision."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.clusterspec import load_spec
from ibprov.errors import SpecError
from ibprov.identity.guids import GuidBook, LockFile

RACK = Path(__file__).resolve().parents[3] / "examples" / "rack.yaml"


def spec_with_lock(tmp_path: Path, lock: LockFile) -> Path:
    spec = tmp_path / "rack.yaml"
    shutil.copy(RACK, spec)
    LockFile.path_for(spec).write_text(lock.to_yaml())
    return spec


def line_of(path: Path, digits: str, nth: int) -> int:
    return [i for i, line in enumerate(path.read_text().splitlines(), start=1) if digits in line][nth]


@pytest.mark.parametrize(
    ("lock", "message"),
    [
        (
            LockFile(
                {}, {}, {("node01", "mlx5_0", 1): 0x0C42A1030000AA01, ("node02", "mlx5_0", 1): 0x0C42A1030000AA01}
            ),
            "GUID 0x0c42a1030000aa01 is given to node01/mlx5_0:1 and to node02/mlx5_0:1",
        ),
        (
            LockFile({"leaf01": 0x0C42A1030000BB00}, {}, {("node03", "mlx5_0", 1): 0x0C42A1030000BB00}),
            "GUID 0x0c42a1030000bb00 is given to switch leaf01 and to node03/mlx5_0:1",
        ),
        (
            LockFile({"leaf01": 0x0C42A1030000CC00, "spine01": 0x0C42A1030000CC00}, {}, {}),
            "GUID 0x0c42a1030000cc00 is given to switch leaf01 and to switch spine01",
        ),
    ],
)
def test_colliding_guids_in_the_lock_file_are_located_at_their_second_use(
    tmp_path: Path, lock: LockFile, message: str
) -> None:
    spec = spec_with_lock(tmp_path, lock)
    lock_path = LockFile.path_for(spec)
    digits = message.split()[1].removeprefix("0x").lstrip("0")
    with pytest.raises(SpecError) as refused:
        GuidBook.for_spec(load_spec(spec))
    (problem,) = refused.value.problems
    assert (problem.file, problem.line) == (str(lock_path), line_of(lock_path, digits, 1))
    assert message in problem.message
    result = CliRunner().invoke(cli, ["render", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert re.search(rf"{re.escape(str(lock_path))}:\d+:\d+: .*{re.escape(message)}", result.output)
    assert not (tmp_path / "out").exists(), "nothing rendered"


def test_a_lock_guid_the_spec_gives_another_port_is_located_in_the_lock_file(tmp_path: Path) -> None:
    assert "port_guids: {1: 0x0c42a10300d8e3c8}" in RACK.read_text(), "the example gives node01's port GUID"
    lock = LockFile({}, {}, {("node02", "mlx5_0", 1): 0x0C42A10300D8E3C8})
    spec = spec_with_lock(tmp_path, lock)
    with pytest.raises(SpecError) as refused:
        GuidBook.for_spec(load_spec(spec))
    (problem,) = refused.value.problems
    assert (problem.file, problem.line) == (str(LockFile.path_for(spec)), line_of(LockFile.path_for(spec), "d8e3c8", 0))
    assert "is given to node02/mlx5_0:1 here and to node01/mlx5_0:1 in the spec" in problem.message


def test_an_hca_s_node_guid_beside_its_own_port_guids_is_no_collision(tmp_path: Path) -> None:
    lock = LockFile(
        {"leaf01": 0x0C42A1030000EE00},
        {("node01", "mlx5_0"): 0x0C42A1030000EE10},
        {("node01", "mlx5_0", 1): 0x0C42A1030000EE10, ("node02", "mlx5_0", 1): 0x0C42A1030000EE21},
    )
    spec = spec_with_lock(tmp_path, lock)
    book = GuidBook.for_spec(load_spec(spec))
    assert book.lock.hca_ports[("node01", "mlx5_0", 1)] == 0x0C42A1030000EE10
