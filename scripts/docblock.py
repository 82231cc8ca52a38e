"""Rewrite the generated block between two HTML-comment markers in a Markdown file.

Used by the docs generators (scripts/gen_*_docs.py) and the benchmarks (bench/*.py --update-docs):
everything outside the markers is hand-written and kept as it is.
"""

from __future__ import annotations


def replace_block(text: str, begin: str, end: str, body: str, *, where: object) -> str:
    """``text`` with what lies between ``begin`` and ``end`` replaced by ``body`` (which should end with a
    newline). Exits with a message naming ``where`` when a marker is missing."""
    if begin not in text or end not in text:
        raise SystemExit(f"{where}: markers {begin} / {end} missing")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}{end}{tail}"
