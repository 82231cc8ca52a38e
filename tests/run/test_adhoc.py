"""Ad-hoc module runs: one outcome per host, exit-3 errors only when Ansible cannot start or answers for no
host, the venv's ansible found through the child's PATH (os.environ untouched); once for real on localhost."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.errors import AnsibleError, ExitCode
from ibprov.run.adhoc import HostOutcome, run_module

RACK = Path(__file__).resolve().parents[2] / "examples" / "rack.yaml"
VENV_BIN = str(Path(sys.executable).parent)


def event(kind: str, host: str, res: dict[str, Any]) -> dict[str, Any]:
    return {"event": kind, "event_data": {"host": host, "res": res}}


def test_each_host_gets_its_last_outcome_with_the_modules_res() -> None:
    calls: list[dict[str, Any]] = []

    def run(**kwargs: Any) -> Any:
        calls.append({**kwargs, "pdd_existed": Path(kwargs["private_data_dir"]).is_dir()})
        events = [
            event("runner_on_start", "a", {}),
            event("runner_on_failed", "a", {"msg": "first try"}),
            event("runner_on_ok", "a", {"stdout": "hello", "rc": 0}),
            event("runner_on_failed", "b", {"stderr": "sh: boom\nmore", "rc": 2}),
            event("runner_on_unreachable", "c", {"msg": "Failed to connect to the host via ssh"}),
            {"event": "verbose", "stdout": "noise"},
        ]
        return SimpleNamespace(events=events, status="failed", rc=2)

    outcomes = run_module(
        "inv.yml", ["a", "b", "c", "d"], "ansible.builtin.command", {"argv": ["echo"]}, forks=7, run=run
    )
    assert outcomes == {
        "a": HostOutcome("ok", {"stdout": "hello", "rc": 0}),
        "b": HostOutcome("failed", {"stderr": "sh: boom\nmore", "rc": 2}),
        "c": HostOutcome("unreachable", {"msg": "Failed to connect to the host via ssh"}),
    }
    assert [o.reason() for o in outcomes.values()] == [
        "no reason given",
        "sh: boom",
        "Failed to connect to the host via ssh",
    ]
    (call,) = calls
    assert (call["host_pattern"], call["module"], call["forks"], call["quiet"]) == (
        "a:b:c:d",
        "ansible.builtin.command",
        7,
        True,
    )
    assert json.loads(call["module_args"]) == {"argv": ["echo"]}
    assert call["pdd_existed"]
    assert not Path(call["private_data_dir"]).exists(), "the temporary artifacts are gone"


def test_ansible_answering_for_no_host_is_an_exit_3_error_with_its_last_words() -> None:
    def run(**kwargs: Any) -> Any:
        said = {"event": "verbose", "stdout": "The command was not found or was not executable: ansible."}
        return SimpleNamespace(events=[said], status="failed", rc=127)

    with pytest.raises(AnsibleError) as caught:
        run_module({}, ["a", "b"], "ping", run=run)
    assert str(caught.value) == (
        "ansible could not run ping on any of 2 hosts "
        "(status failed, rc 127: The command was not found or was not executable: ansible.)"
    )
    assert caught.value.exit_code == ExitCode.COLLECT_ERROR


def test_an_exception_from_ansible_runner_is_an_exit_3_error() -> None:
    def run(**kwargs: Any) -> Any:
        raise ValueError("Invalid inventory")

    with pytest.raises(AnsibleError, match="could not start ansible: Invalid inventory") as caught:
        run_module({}, "node01", "ping", run=run)
    assert caught.value.exit_code == ExitCode.COLLECT_ERROR


def test_a_run_finds_the_venvs_ansible_through_the_childs_path_without_touching_os_environ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("ANSIBLE_HOST_KEY_CHECKING", "True")
    before = dict(os.environ)
    seen: list[dict[str, Any]] = []

    def run(**kwargs: Any) -> Any:
        seen.append({"environ": dict(os.environ), **kwargs})
        return SimpleNamespace(events=[event("runner_on_ok", "node01", {})])

    run_module({}, ["node01"], "ping", env={"ANSIBLE_LIBRARY": "/lib"}, run=run)
    (call,) = seen
    assert call["environ"] == before, "os.environ is the same while ansible-runner runs"
    assert os.environ == before
    envvars = call["envvars"]
    assert envvars["PATH"] == f"{VENV_BIN}:/usr/bin:/bin"
    assert shutil.which("ansible", path=envvars["PATH"]) == f"{VENV_BIN}/ansible"
    assert (envvars["ANSIBLE_HOST_KEY_CHECKING"], envvars["ANSIBLE_NOCOLOR"]) == ("False", "1")
    assert envvars["ANSIBLE_LIBRARY"] == "/lib"
    assert "binary" not in call, "binary= would drop -m MODULE and the host pattern"


def _without_venv_bin(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's PATH without the venv's bin: only the child's PATH can find the venv's ansible."""
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p and p != VENV_BIN)
    monkeypatch.setenv("PATH", path)
    assert shutil.which("ansible") is None, "an ansible outside the venv would make this test prove nothing"


def test_real_ansible_on_localhost_reports_ok_failed_and_unreachable_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ansible_runner")
    _without_venv_bin(monkeypatch)
    py = sys.executable
    inventory = {
        "all": {
            "vars": {"ansible_python_interpreter": py},
            "hosts": {
                "good": {"ansible_connection": "local"},
                "bad": {"ansible_connection": "local"},
                "gone": {"ansible_host": "127.0.0.1", "ansible_port": 1, "ansible_user": "nobody"},
            },
        }
    }
    argv = ["sh", "-c", "echo {{ inventory_hostname }}; test {{ inventory_hostname }} != bad"]
    outcomes = run_module(inventory, ["good", "bad", "gone"], "ansible.builtin.command", {"argv": argv})
    assert {h: o.status for h, o in outcomes.items()} == {"good": "ok", "bad": "failed", "gone": "unreachable"}
    assert (outcomes["good"].res["stdout"], outcomes["bad"].res["rc"]) == ("good", 1)


def test_real_ansible_that_cannot_start_is_an_exit_3_error() -> None:
    pytest.importorskip("ansible_runner")
    with pytest.raises(AnsibleError, match=r"on localhost \(status failed, rc 127: .*not found"):
        run_module("localhost,", "localhost", "ping", env={"PATH": "/nonexistent"})


def test_verify_via_a_host_when_ansible_cannot_start_exits_3_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    interface = pytest.importorskip("ansible_runner.interface")

    def init_runner(**kwargs: Any) -> Any:
        raise RuntimeError("the private data dir is gone")

    monkeypatch.setattr(interface, "init_runner", init_runner)
    monkeypatch.chdir(tmp_path)  # an internal error would leave ibprov-debug.log here
    result = CliRunner().invoke(cli, ["verify", "--fabric", str(RACK), "--via", "somehost"])
    assert result.exit_code == ExitCode.COLLECT_ERROR, result.output
    assert result.stderr == "error: could not start ansible: the private data dir is gone\n"
    assert "internal error" not in result.output
    assert not (tmp_path / "ibprov-debug.log").exists()
