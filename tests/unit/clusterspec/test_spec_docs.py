"""docs/spec.md is generated from the models and cannot drift from them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

from scriptload import load_script

from ibprov.clusterspec.model import ClusterSpec

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "gen_spec_docs.py"
DOC = REPO / "docs" / "spec.md"


def _generator() -> ModuleType:
    return load_script("gen_spec_docs")


def test_the_committed_spec_reference_equals_the_generator_output() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert _generator().render_doc(doc) == doc, "docs/spec.md is out of date: run scripts/gen_spec_docs.py"


def test_the_generator_check_mode_passes_on_the_committed_docs() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_generator_notices_a_stale_reference() -> None:
    gen = _generator()
    stale = DOC.read_text(encoding="utf-8").replace("| `ssh_user` |", "| `ssh_usr` |")
    assert gen.render_doc(stale) != stale


def test_every_field_of_every_model_is_documented() -> None:
    reference = DOC.read_text(encoding="utf-8")
    for model in _generator()._paths(ClusterSpec):
        assert f"### {model.__name__}\n" in reference
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
            assert f"| `{name}` |" in reference


def test_the_intro_explains_units_links_fat_tree_numbering_and_error_passes() -> None:
    intro = DOC.read_text(encoding="utf-8").split("<!-- BEGIN_SPEC_REFERENCE -->")[0]
    for needle in (
        "## Units",
        "bytes",
        "Gb/s",
        "## Cabling",
        "<->",
        "leaf ports 1..`hosts_per_leaf` face the hosts",
        "Leaf uplinks follow the host ports",
        "two passes",
    ):
        assert needle in intro
