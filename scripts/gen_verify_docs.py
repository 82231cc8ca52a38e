#!/usr/bin/env python3
"""Regenerate the checks catalogue and the report.json schema in docs/verify.md from the section registry.

For every section in ``ibprov.verify.registry.SECTIONS`` the table of its declared checks is written
between ``<!-- checks:<section>:begin -->`` and ``<!-- checks:<section>:end -->``; the JSON Schema of
report.json between ``<!-- schema:begin -->`` and ``<!-- schema:end -->``; the cause graph's rules between
``<!-- causes:begin -->`` and ``<!-- causes:end -->``. Everything outside the
markers is hand-written prose and is never touched.

Usage:
    scripts/gen_verify_docs.py [--check]

--check writes nothing and exits 1 when docs/verify.md is out of date (for CI/lint).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from docblock import replace_block, update_doc  # noqa: E402

from ibprov.verify.causes import RULES  # noqa: E402
from ibprov.verify.registry import SECTIONS, load_section, report_schema  # noqa: E402

DOC = REPO / "docs" / "verify.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def checks_table(name: str) -> str:
    """The catalogue of one section: a row per declared check, in the order the section runs them."""
    section = load_section(next(i for i in SECTIONS if i.name == name))
    rows = ["| Check | Severity | Passes when | Object | Fix hint |", "|---|---|---|---|---|"]
    for check in section.checks:
        severity = str(check.severity) + (f"; {check.severity_note}" if check.severity_note else "")
        cells = (f"`{check.id}`", severity, check.title, check.object_kind or "—", check.fix)
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def rules_table() -> str:
    """The cause graph's rules, in the order they are tried."""
    rows = ["| Rule | Says | Causes | Symptoms |", "|---|---|---|---|"]
    for rule in RULES:
        causes = ", ".join(f"`{c}*`" if c.endswith(".") else f"`{c}`" for c in rule.causes)
        symptoms = ", ".join(f"`{c}*`" if c.endswith(".") else f"`{c}`" for c in rule.symptoms)
        rows.append("| " + " | ".join(_cell(c) for c in (f"`{rule.id}`", rule.says, causes, symptoms)) + " |")
    return "\n".join(rows) + "\n"


def render_doc(text: str) -> str:
    text = replace_block(text, "<!-- causes:begin -->", "<!-- causes:end -->", rules_table(), where=DOC)
    for info in SECTIONS:
        begin, end = f"<!-- checks:{info.name}:begin -->", f"<!-- checks:{info.name}:end -->"
        text = replace_block(text, begin, end, checks_table(info.name), where=DOC)
    schema = "```json\n" + json.dumps(report_schema(), indent=2) + "\n```\n"
    return replace_block(text, "<!-- schema:begin -->", "<!-- schema:end -->", schema, where=DOC)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if docs/verify.md is out of date")
    args = ap.parse_args(argv)
    return update_doc(DOC, render_doc, check=args.check, script="scripts/gen_verify_docs.py")


if __name__ == "__main__":
    sys.exit(main())
