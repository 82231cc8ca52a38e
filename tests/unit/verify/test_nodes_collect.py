"""verify --nodes gathering: ansible-runner events per host become observations; failures never raise."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from nodekit import ib_facts, probe_stdout

from ibprov.errors import AnsibleError, ExitCode
from ibprov.run.adhoc import HostOutcome
from ibprov.verify.nodes.collect import AnsibleNodeCollector, observe_host


def event(kind: str, host: str, res: dict[str, Any]) -> dict[str, Any]:
    return {"event": kind, "event_data": {"host": host, "res": res}}


def test_the_collector_runs_ib_facts_and_one_probe_with_the_role_library_and_keeps_going_past_failures() -> None:
    calls: list[dict[str, Any]] = []

    def run(**kwargs: Any) -> Any:
        calls.append(kwargs)
        if kwargs["module"] == "ib_facts":
            events = [
                event("runner_on_ok", "node01", ib_facts()),
                event("runner_on_unreachable", "node02", {"msg": "Failed to connect to the host via ssh"}),
                event("runner_on_failed", "node03", {"msg": "no /sys/class/infiniband"}),
            ]
        else:
            events = [event("runner_on_ok", h, {"stdout": probe_stdout(), "rc": 0}) for h in ("node01", "node03")]
        return SimpleNamespace(events=events, status="failed")

    hosts = AnsibleNodeCollector({"all": {"hosts": {}}}, run=run).collect(["node01", "node02", "node03", "node04"])
    assert [c["module"] for c in calls] == ["ib_facts", "ansible.builtin.shell"]
    assert calls[0]["host_pattern"] == "node01:node02:node03:node04"
    assert calls[0]["envvars"]["ANSIBLE_LIBRARY"].endswith("roles/ib_facts/library")
    assert calls[0]["forks"] == 20
    assert "ulimit -l" in json.loads(calls[1]["module_args"])["cmd"]
    assert hosts["node01"].reachable
    assert hosts["node01"].memlock == "unlimited"
    assert hosts["node01"].devices["mlx5_0"].ports[1].state == "ACTIVE"
    assert hosts["node02"].error == "unreachable: Failed to connect to the host via ssh"
    assert hosts["node03"].error == "ib_facts failed: no /sys/class/infiniband"
    assert hosts["node04"].error == "no answer to ib_facts"


def test_a_failed_probe_makes_the_host_an_error() -> None:
    obs = observe_host("n", HostOutcome("ok", ib_facts()), HostOutcome("failed", {"stderr": "sh: boom\nmore"}))
    assert obs.error == "the probe failed: sh: boom"


def test_ansible_answering_for_no_host_is_an_exit_3_error() -> None:
    def run(**kwargs: Any) -> Any:
        return SimpleNamespace(events=[], status="failed", rc=127)

    with pytest.raises(
        AnsibleError, match=r"ansible could not run ib_facts on any of 2 hosts \(status failed, rc 127\)"
    ):
        AnsibleNodeCollector({}, run=run).collect(["node01", "node02"])


def test_an_exception_from_ansible_runner_is_an_exit_3_error() -> None:
    def run(**kwargs: Any) -> Any:
        raise RuntimeError("Invalid inventory")

    with pytest.raises(AnsibleError, match="could not start ansible: Invalid inventory") as caught:
        AnsibleNodeCollector({}, run=run).collect(["node01"])
    assert caught.value.exit_code == ExitCode.COLLECT_ERROR
