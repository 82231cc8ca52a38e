"""Rendered output of every example equals its golden tree (``make golden`` rewrites them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ibprov.clusterspec import load_spec
from ibprov.render import render_files, write_tree

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
EXPECTED = ROOT / "tests" / "data" / "expected"


def _tree(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): p.read_text()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".ibprov-render"
    }


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_render_of_example_matches_golden_files(example: Path, update_golden: bool) -> None:
    files = render_files(load_spec(example)).files
    golden = EXPECTED / example.stem
    if update_golden:
        write_tree(golden, files)
        (golden / ".ibprov-render").unlink()
    expected = _tree(golden)
    missing = sorted(set(expected) - set(files))
    extra = sorted(set(files) - set(expected))
    assert not missing, f"golden files missing from the render: {missing} (run `make golden`)"
    assert not extra, f"new files without golden copies: {extra} (run `make golden`)"
    for rel, text in files.items():
        assert text == expected[rel], f"{rel} differs from {golden / rel}; run `make golden` and review the diff"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_render_is_byte_identical_across_runs_and_hash_seeds(example: Path, tmp_path: Path) -> None:
    outputs = []
    for seed in ("0", "12345"):
        out = tmp_path / seed
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [sys.executable, "-m", "ibprov", "render", str(example), "-o", str(out)],
            env=env,
            check=True,
            capture_output=True,
        )
        outputs.append(_tree(out))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) > 5
