"""A test that loops for ever fails (pytest-timeout) instead of hanging `make test`: every unit test carries a
timeout, and a test past its timeout is a failure with the word Timeout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_every_unit_test_has_a_timeout(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("timeout")
    assert marker is not None
    assert 0 < marker.args[0] <= 600


def test_a_test_that_loops_for_ever_fails_instead_of_hanging(tmp_path: Path) -> None:
    (tmp_path / "test_loop.py").write_text(
        "import pytest\n\n\n@pytest.mark.timeout(2)\ndef test_loop() -> None:\n    while True:\n        pass\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_loop.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    assert "Timeout" in done.stdout
