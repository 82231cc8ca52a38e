"""verify --nodes gathering for real: ansible-runner against localhost (ansible_connection=local)."""

from __future__ import annotations

import sys

import pytest

from ibprov.verify.nodes import AnsibleNodeCollector

pytest.importorskip("ansible_runner")


def test_localhost_is_collected_through_ansible_without_an_exception() -> None:
    inventory = {
        "all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}
    }
    obs = AnsibleNodeCollector(inventory).collect(["localhost"])["localhost"]
    assert obs.error is None, obs.error
    assert obs.memlock is not None  # "unlimited" or a number: the probe ran
    assert "lo" in obs.addresses
