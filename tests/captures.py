"""Read the real tool captures the tests parse: tests/fixtures/<tool>/<file>, each a copy (byte for byte) of a
capture whose first line says where it comes from (``# source: ...``) and, when a capture script ran the
tool, whose last line is that script's ``[exit=N]``.

Imported as ``from captures import ...``: tests/ is on sys.path because of tests/conftest.py (pytest's
default ``prepend`` import mode), like the helper modules beside the tests (``diagtext``, ``perfkit``).
A capture that is not there is an error (FileNotFoundError), never a skip: the repository holds them all.
"""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"

_EXIT = re.compile(r"^\[exit=(\d+)\]$")


def capture_path(relative: str) -> Path:
    """The file of a capture, ``relative`` to tests/fixtures (e.g. ``sim/sminfo-sim-v44.txt``)."""
    path = FIXTURES / relative
    if not path.is_file():
        raise FileNotFoundError(f"capture {relative!r} is not in the repository: {path} does not exist")
    return path


def capture_names(*patterns: str) -> list[str]:
    """The captures matching any of these globs (relative to tests/fixtures), as sorted relative paths.
    A glob that matches nothing is an error: it would leave a parametrized test with no case."""
    names: set[str] = set()
    for pattern in patterns:
        found = {str(p.relative_to(FIXTURES)) for p in FIXTURES.glob(pattern) if p.is_file()}
        if not found:
            raise FileNotFoundError(f"no capture matches {pattern!r} in {FIXTURES}")
        names |= found
    return sorted(names)


def read_capture(relative: str, *, not_output: int = 0) -> str:
    """The tool output in a capture: without its ``# source:`` line, without the ``not_output`` lines after
    it that the capture added (shell prompts, ``watch`` banners; each test says which) and without the
    capture script's trailing ``[exit=N]`` line (and trailing blank lines)."""
    return capture_body(capture_path(relative), 1 + not_output)


def capture_body(path: Path, skip: int) -> str:
    """The text of a capture file after its first ``skip`` lines (the first one is ``# source:``), without
    trailing ``[exit=N]`` and blank lines, ending in one newline."""
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("# source:"), f"{path} does not start with '# source:'"
    body = lines[skip:]
    while body and (not body[-1].strip() or _EXIT.match(body[-1])):
        body.pop()
    return "\n".join(body) + "\n"


def exit_code(path: Path) -> int:
    """The exit status the capture script recorded (its ``[exit=N]`` last line)."""
    last = path.read_text(encoding="utf-8").rstrip("\n").split("\n")[-1]
    match = _EXIT.match(last)
    assert match, f"{path} has no [exit=N] line"
    return int(match[1])
