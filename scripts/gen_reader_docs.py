#!/usr/bin/env python3
"""Regenerate docs/readers.md's table of the tool versions each reader of tool output is proven on.

The facts are the manifests in ``tests/fixtures/proven/<reader>.yaml`` (the reader's module, its tool, the
test that reads each capture and checks the values, and per capture its file and the tool version it shows)
and each capture's own ``# source:`` line. The table is written between ``<!-- readers:begin -->`` and
``<!-- readers:end -->``; everything outside the markers is hand-written prose and is never touched.

Usage:
    scripts/gen_reader_docs.py [--check]

--check writes nothing and exits 1 when docs/readers.md is out of date (for CI/lint).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

from docblock import replace_block, update_doc  # noqa: E402

DOC = REPO / "docs" / "readers.md"
FIXTURES = REPO / "tests" / "fixtures"
MANIFESTS = FIXTURES / "proven"
SOURCE_CHARS = 160  # a source line is cut here in the table (the capture keeps it whole)


def manifests() -> list[dict[str, Any]]:
    """Every manifest, in reader order."""
    found = [yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted(MANIFESTS.glob("*.yaml"))]
    return sorted(found, key=lambda m: str(m["reader"]))


def source_line(file: str) -> str:
    """A capture's ``# source:`` line, without the marker, cut to :data:`SOURCE_CHARS`."""
    first = (FIXTURES / file).read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
    text = first.removeprefix("# source:").strip()
    return text if len(text) <= SOURCE_CHARS else text[: SOURCE_CHARS - 1].rstrip() + "…"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def readers_block() -> str:
    """A section per reader: its tool, its test, and a row per capture (version, file, source)."""
    out: list[str] = []
    for manifest in manifests():
        tests = [manifest["test"]] if isinstance(manifest["test"], str) else manifest["test"]
        out += [
            f"### `{manifest['reader']}`",
            "",
            f"Reads `{_cell(manifest['tool'])}`; proven in " + ", ".join(f"`{t}`" for t in tests) + " "
            f"on {len(manifest['captures'])} captures.",
            "",
            "| Version | Capture (`tests/fixtures/`) | Source |",
            "|---|---|---|",
        ]
        out += [
            f"| {_cell(c['version'])} | `{c['file']}` | {_cell(source_line(c['file']))} |" for c in manifest["captures"]
        ]
        out.append("")
    return "\n".join(out)


def render_doc(text: str) -> str:
    return replace_block(text, "<!-- readers:begin -->", "<!-- readers:end -->", readers_block(), where=DOC)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if docs/readers.md is out of date")
    args = ap.parse_args(argv)
    return update_doc(DOC, render_doc, check=args.check, script="scripts/gen_reader_docs.py")


if __name__ == "__main__":
    sys.exit(main())
