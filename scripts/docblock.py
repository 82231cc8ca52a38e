"""Rewrite the generated block between two HTML-comment markers in a Markdown file.

Used by the docs generators (scripts/gen_*_docs.py) and the benchmarks (bench/*.py --update-docs):
everything outside the markers is hand-written and kept as it is.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable
from pathlib import Path


def replace_block(text: str, begin: str, end: str, body: str, *, where: object) -> str:
    """``text`` with what lies between ``begin`` and ``end`` replaced by ``body`` (which should end with a
    newline). Exits with a message naming ``where`` when a marker is missing."""
    if begin not in text or end not in text:
        raise SystemExit(f"{where}: markers {begin} / {end} missing")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}{end}{tail}"


def update_doc(path: Path, render: Callable[[str], str], *, check: bool, script: str) -> int:
    """Rewrite ``path`` with ``render(old text)``. With ``check``, write nothing: print a unified diff and
    return 1 when it is out of date (``script`` is named as the way to update it)."""
    old = path.read_text(encoding="utf-8")
    new = render(old)
    if new == old:
        return 0
    if check:
        sys.stdout.writelines(
            difflib.unified_diff(old.splitlines(True), new.splitlines(True), str(path), "(generated)")
        )
        print(f"{path} is out of date: run {script}", file=sys.stderr)
        return 1
    path.write_text(new, encoding="utf-8")
    print(f"updated {path}")
    return 0
