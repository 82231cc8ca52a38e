"""verify --nodes gathering for real: ansible-runner against localhost (ansible_connection=local)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ibprov.verify.nodes.section import AnsibleNodeCollector

pytest.importorskip("ansible_runner")


def test_localhost_is_collected_through_ansible_without_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    venv_bin = str(Path(sys.executable).parent)  # only the child's PATH (ibprov.run.env) may lead to the venv's ansible
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != venv_bin))
    path_before = os.environ["PATH"]
    inventory = {
        "all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}
    }
    obs = AnsibleNodeCollector(inventory).collect(["localhost"])["localhost"]
    assert obs.error is None, obs.error
    assert obs.memlock is not None  # "unlimited" or a number: the probe ran
    assert "lo" in obs.addresses
    assert os.environ["PATH"] == path_before
