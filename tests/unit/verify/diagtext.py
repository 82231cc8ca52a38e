"""Load diag captures for the collect tests: the shared real captures and our own ibsim captures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# /work/main/tests/unit/verify/diagtext.py -> parents[3] is the repo; the shared fixtures sit beside it.
SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures"
OWN = Path(__file__).resolve().parents[2] / "data" / "diags"

_EXIT = re.compile(r"^\[exit=(\d+)\]$")


def shared(relative: str, *, not_output: int = 0) -> str:
    """The tool output in a shared capture: without its ``# source:`` line, without the ``not_output``
    lines after it that the capture added (shell prompts, ``watch`` banners; each test says which) and
    without the capture script's trailing ``[exit=N]`` line. Skips the test when the captures are absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared fixtures not found at {SHARED}")
    return _body(SHARED / relative, 1 + not_output)


def own(relative: str) -> str:
    """The tool output in one of our captures (tests/data/diags): without the ``# source:`` and
    ``# command:`` lines and the trailing ``[exit=N]``."""
    return _body(OWN / relative, 2)


def exit_code(path: Path) -> int:
    """The exit status the capture script recorded."""
    last = path.read_text(encoding="utf-8").rstrip("\n").split("\n")[-1]
    match = _EXIT.match(last)
    assert match, f"{path} has no [exit=N] line"
    return int(match[1])


def _body(path: Path, skip: int) -> str:
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("# source:"), f"{path} does not start with '# source:'"
    body = lines[skip:]
    while body and (not body[-1].strip() or _EXIT.match(body[-1])):
        body.pop()
    return "\n".join(body) + "\n"
