"""Load our own ibsim diag captures (tests/data/diags) for the collect tests; the real captures are read with
``captures.read_capture`` (tests/fixtures)."""

from __future__ import annotations

from pathlib import Path

from captures import capture_body

OWN = Path(__file__).resolve().parents[2] / "data" / "diags"


def own(relative: str) -> str:
    """The tool output in one of our captures (tests/data/diags): without the ``# source:`` and
    ``# command:`` lines and the trailing ``[exit=N]``."""
    return capture_body(OWN / relative, 2)
