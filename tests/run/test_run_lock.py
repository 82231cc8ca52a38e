"""One apply or plan of a cluster at a time: a second one is refused at once (exit 3), naming the first and
running nothing; an apply killed with SIGKILL leaves no stale lock (the kernel drops it with the process), so the
next apply starts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.errors import ExitCode
from ibprov.run.lock import LOCK, RunLockHeld, run_lock

RACK = Path(__file__).resolve().parents[2] / "examples" / "rack.yaml"


@pytest.mark.parametrize("command", ["apply", "plan"])
def test_a_second_apply_while_one_runs_is_refused_at_once_naming_the_first(tmp_path: Path, command: str) -> None:
    run_dir = tmp_path / "run"
    with run_lock(run_dir, "apply of cluster rack1"):
        started = time.monotonic()
        result = CliRunner().invoke(cli, [command, str(RACK), "--run-dir", str(run_dir)])
        assert time.monotonic() - started < 30, "refused at once, not after waiting"
    assert result.exit_code == ExitCode.COLLECT_ERROR, result.output
    assert f"{run_dir / LOCK} is held by apply of cluster rack1 (pid {os.getpid()} on " in result.output
    assert "this one did not start" in result.output
    assert not (run_dir / "rendered").exists(), "nothing ran"
    with run_lock(run_dir, "the next apply"):  # released when the holder let go
        pass


def test_an_apply_killed_half_way_leaves_no_stale_lock(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    holder = subprocess.Popen(  # an apply that holds the lock, then is killed with SIGKILL
        [
            sys.executable, "-c",
            "import sys, time; from pathlib import Path; from ibprov.run.lock import run_lock\n"
            "with run_lock(Path(sys.argv[1]), 'apply of cluster rack1'):\n"
            "    print('held', flush=True); time.sleep(60)",
            str(run_dir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(RunLockHeld, match=rf"held by apply of cluster rack1 \(pid {holder.pid} on "),
            run_lock(run_dir, "a second apply"),
        ):
            pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.communicate(timeout=30)  # reaped, its pipe closed
    with run_lock(run_dir, "the next apply"):
        assert "the next apply" in (run_dir / LOCK).read_text()
    assert (run_dir / LOCK).read_text() == "", "the lock says nothing once released"


PLAY = """\
- name: A play that outlives the ibprov that started it
  hosts: all
  gather_facts: false
  tasks:
    - name: Take a while
      ansible.builtin.command: sleep 60
      changed_when: false
"""


def test_the_playbook_of_a_killed_apply_still_holds_the_cluster_until_it_ends(tmp_path: Path) -> None:
    """ansible-runner starts ansible-playbook with SIGHUP ignored: it outlives an ibprov killed with SIGKILL and
    goes on changing the nodes. The next apply is refused while it runs, naming it; once it is gone, it starts."""
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "site.yml").write_text(PLAY)
    (tmp_path / "inventory.yml").write_text(
        f"all: {{hosts: {{h1: {{ansible_connection: local, ansible_python_interpreter: '{sys.executable}'}}}}}}\n"
    )
    run_dir = tmp_path / "run"
    script = (
        "import sys; from pathlib import Path; from ibprov.run import run_playbook\n"
        "from ibprov.run.lock import run_lock\n"
        "t = Path(sys.argv[1]); r = Path(sys.argv[2])\n"
        "with run_lock(r, 'apply of cluster lab'):\n"
        "    run_playbook(t / 'project' / 'site.yml', t / 'inventory.yml', r / 'runner', roles_path=t)\n"
    )
    pid_file = run_dir / "runner" / "playbook.pid"
    orphan = 0
    with subprocess.Popen([sys.executable, "-c", script, str(tmp_path), str(run_dir)]) as ibprov:
        try:
            deadline = time.monotonic() + 120
            while not pid_file.is_file() and time.monotonic() < deadline and ibprov.poll() is None:
                time.sleep(0.2)
            orphan = int(pid_file.read_text())
            ibprov.send_signal(signal.SIGKILL)
        finally:
            if ibprov.poll() is None:
                ibprov.kill()
    try:
        assert b"ansible-playbook" in Path(f"/proc/{orphan}/cmdline").read_bytes(), "the play goes on"
        with (
            pytest.raises(
                RunLockHeld, match=rf"the ansible-playbook of an earlier apply .* still runs \(pid {orphan};"
            ),
            run_lock(run_dir, "the next apply"),
        ):
            pass
    finally:
        os.kill(orphan, signal.SIGKILL)  # the test's own grandchild
        deadline = time.monotonic() + 30
        while Path(f"/proc/{orphan}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
    with run_lock(run_dir, "the next apply"):  # the play is gone: the next apply starts
        pass
