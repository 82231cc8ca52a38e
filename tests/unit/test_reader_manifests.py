"""The manifests in tests/fixtures/proven/ say which tool versions each reader is proven on (docs/readers.md is
generated from them): each names a reader that exists, a test that exists and reads every capture named, and
captures that exist and say where they come from. Every reader of tool output the issue names has one."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from captures import capture_names

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
MANIFESTS = sorted((FIXTURES / "proven").glob("*.yaml"))
# the readers of tool output whose proven versions are published (issue 26's list)
READERS = {
    "ucx_info",
    "ibnetdiscover",
    "iblinkinfo",
    "ibqueryerrors",
    "sminfo",
    "smpquery",
    "lfts",
    "perftest",
    "osu",
    "iperf3",
    "mpi4py_bench",
    "hostprobe",
    "mstlink",
    "pcie",
    "gputopo",
}


def load(path: Path) -> dict[str, Any]:
    manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(manifest, dict), path
    return manifest


def test_every_reader_of_tool_output_has_a_manifest() -> None:
    named = {load(path)["reader"].rsplit(".", 1)[-1] for path in MANIFESTS}
    assert READERS - named == set()


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.stem)
def test_a_manifest_names_a_real_reader_a_real_test_and_sourced_captures_that_test_reads(path: Path) -> None:
    manifest = load(path)
    assert set(manifest) == {"reader", "tool", "test", "captures"}, "keys"
    importlib.import_module(manifest["reader"])
    tests = [manifest["test"]] if isinstance(manifest["test"], str) else manifest["test"]
    missing = [t for t in tests if not (REPO / t).is_file()]
    assert missing == [], "tests named that do not exist"
    test_text = "\n".join((REPO / t).read_text(encoding="utf-8") for t in tests)
    assert manifest["captures"], "no captures"
    problems = []
    for capture in manifest["captures"]:
        assert set(capture) == {"file", "version"}, capture
        assert str(capture["version"]).strip(), capture
        file = FIXTURES / capture["file"]
        if not file.is_file():
            problems.append(f"{capture['file']}: no such capture")
        elif not file.read_bytes().startswith(b"# source:"):
            problems.append(f"{capture['file']}: no '# source:' line")
        if Path(capture["file"]).name not in test_text:
            problems.append(f"{capture['file']}: not read by {', '.join(tests)}")
    assert problems == []


# readers whose fixture folders hold only captures that prove them: each capture there is in the manifest
FOLDERS = {
    "perftest": ("perftest/*.txt", "perftest-errors/*.txt"),
    "osu": ("osu/*.txt",),
    "iperf3": ("iperf3/*.txt",),
    "mpi4py_bench": ("mpi4py/*.txt",),
    "mpiconf": ("mpiconf/*.txt",),
    "ucx_info": ("ucx_info/*.txt",),
}


@pytest.mark.parametrize("reader", sorted(FOLDERS))
def test_every_capture_in_a_readers_own_folder_is_in_its_manifest(reader: str) -> None:
    listed = sorted(c["file"] for c in load(FIXTURES / "proven" / f"{reader}.yaml")["captures"])
    assert listed == capture_names(*FOLDERS[reader])


def test_a_capture_is_named_once_per_manifest() -> None:
    for path in MANIFESTS:
        files = [c["file"] for c in load(path)["captures"]]
        assert len(files) == len(set(files)), path.name
