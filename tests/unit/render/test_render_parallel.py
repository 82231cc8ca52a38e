"""Render's fabric files built in a forked child are the files built in-process, and a child that fails
changes nothing (the work is done again in the parent)."""

from __future__ import annotations

import os
from typing import Any

import pytest

import ibprov.render as render_mod
from ibprov.clusterspec import load_spec_text
from ibprov.design import design, spec_text
from ibprov.errors import SpecError
from ibprov.render import parallel, render_files

SPEC = spec_text(design(48, 16, rails=2), cluster="par") + (
    "partitions:\n  - {name: train, pkey: 0x0010, defmember: full, members: [{group: compute}]}\n"
)


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every fabric forks a child (whatever its size); the list collects the children's PIDs."""
    if not parallel.can_fork():
        pytest.skip("no fork here (one CPU, other threads, or no os.fork)")
    children: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            children.append(pid)
        return pid

    monkeypatch.setattr(render_mod, "MIN_LINKS", 0)
    monkeypatch.setattr(parallel.os, "fork", fork)
    return children


def _serial(monkeypatch: pytest.MonkeyPatch, *, synthetic: bool) -> Any:
    with monkeypatch.context() as m:
        m.setattr(parallel, "can_fork", lambda: False)
        return render_files(load_spec_text(SPEC, "par.yaml"), synthetic_guids=synthetic)


def test_forked_render_is_the_serial_render(forks: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    serial = _serial(monkeypatch, synthetic=True)
    forked = render_files(load_spec_text(SPEC, "par.yaml"), synthetic_guids=True)
    assert len(forks) == 2  # the topology file and the twin
    assert forked.files == serial.files
    assert forked.notes == serial.notes
    assert forked.synthetic == serial.synthetic
    assert "SYNTHETIC GUIDs" in forked.files["fabric/topology.ibnd"]


def test_a_render_that_fails_stops_its_child(forks: list[int]) -> None:
    with pytest.raises(SpecError, match="no port GUID"):  # no GUIDs for the partition's members
        render_files(load_spec_text(SPEC, "par.yaml"))
    assert len(forks) == 2
    for pid in forks:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped


def test_a_failing_child_changes_nothing(forks: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    serial = _serial(monkeypatch, synthetic=True)
    parent = os.getpid()
    real = render_mod._twin_files

    def fails_in_the_child(*args: Any) -> Any:
        if os.getpid() != parent:
            raise MemoryError("the child ran out of memory")
        return real(*args)

    monkeypatch.setattr(render_mod, "_twin_files", fails_in_the_child)
    forked = render_files(load_spec_text(SPEC, "par.yaml"), synthetic_guids=True)
    assert len(forks) == 2
    assert forked.files == serial.files


def test_the_work_raises_in_the_parent_when_it_fails_there_too(forks: list[int]) -> None:
    def broken() -> str:
        raise ValueError("a bug in the fabric files")

    pending = parallel.Pending(broken, fork=True)
    assert len(forks) == 1
    with pytest.raises(ValueError, match="a bug in the fabric files"):
        pending.result()
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], os.WNOHANG)
