"""The manifests of the performance and MPI readers (tests/fixtures/proven/{perftest,osu,iperf3,mpi4py_bench,
mpiconf}.yaml) name real files: the reader module, the test that proves it, and each capture, with a version;
every capture of the reader's fixture folder is listed."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml
from captures import FIXTURES, capture_names

ROOT = FIXTURES.parents[1]
FOLDERS = {
    "perftest": ("perftest/*.txt", "perftest-errors/*.txt"),
    "osu": ("osu/*.txt",),
    "iperf3": ("iperf3/*.txt",),
    "mpi4py_bench": ("mpi4py/*.txt",),
    "mpiconf": ("mpiconf/*.txt",),
}


@pytest.mark.parametrize("reader", sorted(FOLDERS))
def test_the_manifest_names_the_reader_its_test_and_every_capture(reader: str) -> None:
    manifest = yaml.safe_load((FIXTURES / "proven" / f"{reader}.yaml").read_text(encoding="utf-8"))
    assert manifest["reader"] == f"ibprov.probes.{reader}"
    importlib.import_module(manifest["reader"])
    assert (ROOT / manifest["test"]).is_file()
    listed = [c["file"] for c in manifest["captures"]]
    assert all(isinstance(c["version"], str) and c["version"] for c in manifest["captures"])
    assert sorted(listed) == capture_names(*FOLDERS[reader])
    assert all(Path(FIXTURES / f).read_text(encoding="utf-8").startswith("# source: ") for f in listed)
