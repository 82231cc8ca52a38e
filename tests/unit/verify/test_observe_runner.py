"""Runners: the local one, and the Ansible one (its batch script framing, with a fake ansible-runner and
once with the real one on localhost)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ibprov.errors import AnsibleError, CollectError, ExitCode
from ibprov.probes.runner import AnsibleRunner, LocalRunner, batch_script, parse_batch

COMMANDS = [
    ("printf", "two\nlines\n"),
    ("printf", "no newline at the end"),
    ("sh", "-c", "echo to stderr >&2; exit 3"),
    ("printf", "%s|%s", 'it\'s "quoted" $HOME', "{scratch}/x"),
    ("true",),
    ("no-such-command-ibprov",),
]


def run_script(script: str) -> str:
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout.rstrip("\n")


def test_a_batch_script_returns_each_commands_status_stdout_and_stderr(tmp_path: Path) -> None:
    scratch = str(tmp_path / "scratch")
    results = parse_batch(run_script(batch_script(COMMANDS, scratch, "tok")), COMMANDS, "tok")
    assert [r.returncode for r in results] == [0, 0, 3, 0, 0, 127]
    assert results[0].stdout == "two\nlines\n"
    assert results[1].stdout == "no newline at the end\n"
    assert (results[2].stdout, results[2].stderr) == ("", "to stderr\n")
    assert results[3].stdout == f'it\'s "quoted" $HOME|{scratch}/x\n'
    assert "not found" in results[5].stderr
    assert results[5].argv == ("no-such-command-ibprov",)


def test_a_batch_exports_its_environment_first(tmp_path: Path) -> None:
    commands = [("sh", "-c", 'echo "$SIM_HOST"')]
    script = batch_script(commands, str(tmp_path), "t", {"SIM_HOST": "H-node01 mlx5_0"})
    assert parse_batch(run_script(script), commands, "t")[0].stdout == "H-node01 mlx5_0\n"


def test_a_batch_that_stops_early_is_a_collect_error() -> None:
    with pytest.raises(CollectError, match="the batch of 2 diag commands stopped after 0"):
        parse_batch("@@t 0 0\n|out\n@@t stderr\n", [("a",), ("b",)], "t")


class FakeAnsible:
    """Stands in for ansible_runner.run: runs the command module's argv here and reports it as Ansible
    does (stdout without its final newline)."""

    def __init__(self, unreachable: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.unreachable = unreachable

    def __call__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        host = kwargs["host_pattern"]
        if self.unreachable:
            res = {"msg": "Failed to connect to the host via ssh: timeout", "unreachable": True}
            return _Result([{"event": "runner_on_unreachable", "event_data": {"host": host, "res": res}}])
        argv = json.loads(kwargs["module_args"])["argv"]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        res = {"stdout": done.stdout.removesuffix("\n"), "stderr": done.stderr, "rc": done.returncode}
        kind = "runner_on_ok" if done.returncode == 0 else "runner_on_failed"
        return _Result([{"event": kind, "event_data": {"host": host, "res": res}}])


class _Result:
    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.status = "successful"


def test_the_ansible_runner_runs_a_batch_as_one_command_task_and_cleans_up() -> None:
    fake = FakeAnsible()
    runner = AnsibleRunner("node01", {"all": {"hosts": {"node01": {}}}}, run=fake)
    first = runner.run_batch([("sh", "-c", "echo cached > {scratch}/f")])
    second = runner.run_batch([("cat", "{scratch}/f"), ("sh", "-c", "exit 2")])
    runner.close()
    assert first[0].returncode == 0
    assert [(r.returncode, r.stdout) for r in second] == [(0, "cached\n"), (2, "")]
    assert len(fake.calls) == 3
    call = fake.calls[0]
    assert (call["module"], call["host_pattern"]) == ("ansible.builtin.command", "node01")
    assert json.loads(call["module_args"])["argv"][:2] == ["sh", "-c"]
    assert json.loads(fake.calls[-1]["module_args"])["argv"] == ["rm", "-rf", runner.scratch]
    assert not Path(runner.scratch).exists()
    assert runner.where == "node01 (ansible)"


def test_a_long_batch_is_split_into_several_ansible_calls_in_order() -> None:
    fake = FakeAnsible()
    runner = AnsibleRunner("node01", "node01,", run=fake, max_script=2_000)
    try:
        results = runner.run_batch([("echo", str(i)) for i in range(60)])
    finally:
        runner.close()
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(60)]
    assert len(fake.calls) > 3


def test_an_unreachable_host_is_a_collect_error() -> None:
    fake = FakeAnsible(unreachable=True)
    runner = AnsibleRunner("node01", "node01,", run=fake)
    with pytest.raises(CollectError, match="node01 is unreachable: Failed to connect"):
        runner.run_batch([("true",)])
    runner.close()
    assert len(fake.calls) == 1  # nothing ran there, so there is nothing to clean up


def test_ansible_that_cannot_start_is_an_exit_3_error_and_nothing_is_cleaned_up() -> None:
    calls: list[dict[str, Any]] = []

    def run(**kwargs: Any) -> Any:  # as ansible_runner.run does for a bad private_data_dir or inventory
        calls.append(kwargs)
        raise RuntimeError("Invalid inventory")

    runner = AnsibleRunner("node01", "node01,", run=run)
    with pytest.raises(AnsibleError, match="could not start ansible: Invalid inventory") as caught:
        runner.run_batch([("ibstat",)])
    runner.close()
    assert caught.value.exit_code == ExitCode.COLLECT_ERROR
    assert len(calls) == 1


def test_ansible_answering_for_no_host_is_an_exit_3_error() -> None:
    runner = AnsibleRunner("node01", "node01,", run=lambda **kwargs: _Result([]))
    with pytest.raises(AnsibleError, match=r"ansible could not run ansible.builtin.command on node01 \(status"):
        runner.run_batch([("ibstat",)])


def test_the_ansible_runner_works_with_the_real_ansible_on_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    venv_bin = str(Path(sys.executable).parent)  # only the child's PATH (ibprov.run.env) may lead to the venv's ansible
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != venv_bin))
    inventory = {
        "all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}
    }
    runner = AnsibleRunner("localhost", inventory, env={"IBPROV_TEST": "yes"})
    try:
        results = runner.run_batch([("sh", "-c", 'echo "$IBPROV_TEST" > {scratch}/f; cat {scratch}/f'), ("false",)])
    finally:
        runner.close()
    assert [(r.returncode, r.stdout) for r in results] == [(0, "yes\n"), (1, "")]
    assert not Path(runner.scratch).exists()


def test_the_local_runner_keeps_order_in_parallel_and_reports_missing_tools() -> None:
    runner = LocalRunner(env={"IBPROV_TEST": "x"}, workers=4)
    try:
        results = runner.run_batch(
            [("sh", "-c", f"sleep 0.0{9 - i}; echo {i}$IBPROV_TEST") for i in range(8)], parallel=True
        )
        assert [r.stdout for r in results] == [f"{i}x\n" for i in range(8)]
        (missing,) = runner.run_batch([("no-such-command-ibprov", "{scratch}")])
        assert missing.returncode == 127
        assert (
            missing.reason()
            == "no-such-command-ibprov exited 127: no-such-command-ibprov: command not found (install infiniband-diags)"
        )
        scratch = runner.scratch
        assert scratch.is_dir()
    finally:
        runner.close()
    assert not scratch.exists()


def test_a_prefetched_command_runs_once_and_its_result_goes_to_the_batch_that_asks(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    command = ("sh", "-c", f"echo run >> {runs}; seq 1 30000; echo warn >&2")  # more than a pipe holds
    runner = LocalRunner()
    try:
        runner.prefetch(command)
        (result,) = runner.run_batch([command])
        (again,) = runner.run_batch([command])
    finally:
        runner.close()
    assert (result.returncode, result.stdout.split()[-1], result.stderr) == (0, "30000", "warn\n")
    assert again.stdout == result.stdout
    assert runs.read_text() == "run\nrun\n", "the prefetched run served the first batch, the second ran anew"


def test_closing_the_runner_stops_a_prefetched_command_nobody_asked_for(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    runner = LocalRunner()
    runner.prefetch(("sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"))
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    runner.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
