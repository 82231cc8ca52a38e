"""Where a tuned run's SSH masters keep their sockets: in the run directory while their paths fit a Unix socket."""

from __future__ import annotations

import re
from pathlib import Path

from ibprov.run.env import CONTROL_SOCKET_NAME, SOCKET_PATH_MAX, control_path_dir


def test_a_short_run_directory_keeps_its_sockets_in_its_own_cp() -> None:
    assert control_path_dir(Path("/srv/ibprov/run")) == Path("/srv/ibprov/run/cp")


def test_the_longest_run_directory_whose_sockets_fit_keeps_them_and_one_byte_more_moves_them() -> None:
    fits = "/" + "r" * (SOCKET_PATH_MAX - CONTROL_SOCKET_NAME - len("/cp") - 1)
    assert control_path_dir(Path(fits)) == Path(fits) / "cp"
    too_long = fits + "x"
    moved = control_path_dir(Path(too_long), home=Path("/home/admin"))
    assert moved.parent == Path("/home/admin/.ansible/cp")
    assert re.fullmatch(r"ibprov-[0-9a-f]{12}", moved.name), moved.name
    assert len(str(moved)) + CONTROL_SOCKET_NAME <= SOCKET_PATH_MAX


def test_two_deep_run_directories_never_share_ssh_masters() -> None:
    a = control_path_dir(Path("/" + "a" * 120 + "/run"), home=Path("/root"))
    b = control_path_dir(Path("/" + "a" * 120 + "/run2"), home=Path("/root"))
    assert a != b
    assert a == control_path_dir(Path("/" + "a" * 120 + "/run"), home=Path("/root")), "the same run dir, the same place"


def test_the_socket_name_length_is_ansibles_ten_hex_and_ssh_s_seventeen() -> None:
    assert CONTROL_SOCKET_NAME == 1 + 10 + 17
