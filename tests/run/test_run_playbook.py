"""ansible-runner wrapper: per-host results, failures isolated, @failed retries, diffs, check mode."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ibprov.errors import AnsibleError, ExitCode, IbprovError
from ibprov.run import ApplyOptions, Progress, read_failed, run_playbook

PLAYBOOK = """\
- name: Test play
  hosts: all
  gather_facts: false
  tasks:
    - name: Fail where told to
      ansible.builtin.fail:
        msg: boom
      when: fail_here | default(false)
    - name: Write a file
      ansible.builtin.copy:
        dest: "{{ out_dir }}/out-{{ inventory_hostname }}.txt"
        content: "hello\\n"
        mode: "0644"
"""


def _inventory(tmp_path: Path, *, bad_fails: bool = True) -> Path:
    py = sys.executable
    inv = tmp_path / "inventory.yml"
    inv.write_text(
        "all:\n"
        f"  vars: {{out_dir: '{tmp_path}', ansible_python_interpreter: '{py}'}}\n"
        "  hosts:\n"
        "    good: {ansible_connection: local}\n"
        f"    bad: {{ansible_connection: local, fail_here: {str(bad_fails).lower()}}}\n"
        "    gone: {ansible_host: 127.0.0.1, ansible_port: 1, ansible_connection: ssh, ansible_user: nobody}\n"
    )
    return inv


@pytest.fixture
def playbook(tmp_path: Path) -> Path:
    path = tmp_path / "play" / "site.yml"
    path.parent.mkdir()
    path.write_text(PLAYBOOK)
    return path


def test_failing_and_unreachable_hosts_do_not_stop_the_others(tmp_path: Path, playbook: Path) -> None:
    seen: list[Progress] = []
    result = run_playbook(
        playbook,
        _inventory(tmp_path),
        tmp_path / "run",
        roles_path=tmp_path,
        hosts_total=3,
        on_progress=lambda p: seen.append(Progress(**vars(p))),
    )
    assert result.hosts["good"].status == "changed"
    assert result.hosts["bad"].status == "failed"
    assert result.hosts["gone"].status == "unreachable"
    assert result.failed_hosts == ["bad", "gone"]
    assert (tmp_path / "out-good.txt").read_text() == "hello\n"
    assert not (tmp_path / "out-bad.txt").exists()
    assert read_failed(tmp_path / "run") == ["bad", "gone"]
    assert any(p.task == "Write a file" for p in seen)


def test_limit_failed_retries_only_the_hosts_that_failed(tmp_path: Path, playbook: Path) -> None:
    run_dir = tmp_path / "run"
    run_playbook(playbook, _inventory(tmp_path), run_dir, roles_path=tmp_path)
    (tmp_path / "out-good.txt").unlink()
    result = run_playbook(
        playbook, _inventory(tmp_path, bad_fails=False), run_dir, ApplyOptions(limit="@failed"), roles_path=tmp_path
    )
    assert set(result.hosts) == {"bad", "gone"}
    assert result.hosts["bad"].status == "changed"
    assert not (tmp_path / "out-good.txt").exists(), "good was not retried"
    assert read_failed(run_dir) == ["gone"]


def test_limit_failed_without_a_previous_failure_is_a_usage_error_not_an_ansible_one(
    tmp_path: Path, playbook: Path
) -> None:
    with pytest.raises(IbprovError, match="no failed hosts recorded") as caught:
        run_playbook(
            playbook, _inventory(tmp_path), tmp_path / "fresh", ApplyOptions(limit="@failed"), roles_path=tmp_path
        )
    assert not isinstance(caught.value, AnsibleError)
    assert caught.value.exit_code == ExitCode.SPEC_ERROR


def test_ansible_playbook_that_cannot_start_is_an_exit_3_error_and_keeps_the_failed_hosts(
    tmp_path: Path, playbook: Path
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "failed-hosts").write_text("bad\n")
    with pytest.raises(AnsibleError, match=r"could not run site\.yml \(status failed, rc 127: .*ansible-playbook") as e:
        run_playbook(playbook, _inventory(tmp_path), run_dir, roles_path=tmp_path, extra_env={"PATH": "/nonexistent"})
    assert e.value.exit_code == ExitCode.COLLECT_ERROR
    assert read_failed(run_dir) == ["bad"], "a run that never started does not forget the hosts to retry"


def test_an_exception_from_ansible_runner_is_an_exit_3_error(tmp_path: Path, playbook: Path) -> None:
    def run(**kwargs: Any) -> Any:
        raise RuntimeError("private_data_dir is not writable")

    with pytest.raises(AnsibleError, match="could not start ansible-playbook: private_data_dir is not writable"):
        run_playbook(playbook, _inventory(tmp_path), tmp_path / "run", roles_path=tmp_path, run=run)


def test_a_playbook_run_finds_the_venvs_ansible_playbook_without_touching_os_environ(
    tmp_path: Path, playbook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    before = dict(os.environ)
    seen: list[dict[str, Any]] = []

    def run(**kwargs: Any) -> Any:
        seen.append({"environ": dict(os.environ), **kwargs})
        config = SimpleNamespace(artifact_dir=str(tmp_path / "artifacts"))
        return SimpleNamespace(stats={"ok": {"good": 1}}, rc=0, status="successful", events=[], config=config)

    result = run_playbook(playbook, _inventory(tmp_path), tmp_path / "run", roles_path=tmp_path, run=run)
    assert result.hosts["good"].status == "ok"
    (call,) = seen
    assert call["environ"] == before, "os.environ is the same while ansible-runner runs"
    assert os.environ == before
    venv_bin = str(Path(sys.executable).parent)
    assert call["envvars"]["PATH"] == f"{venv_bin}:/usr/bin:/bin"
    assert call["envvars"]["ANSIBLE_ROLES_PATH"] == str(tmp_path)
    assert "binary" not in call, "binary= would turn the playbook run into a raw command without the playbook"


def test_check_mode_with_diff_changes_nothing_and_reports_the_diff(tmp_path: Path, playbook: Path) -> None:
    plan = ApplyOptions(check=True, diff=True, limit="good")
    result = run_playbook(playbook, _inventory(tmp_path), tmp_path / "run", plan, roles_path=tmp_path)
    assert not (tmp_path / "out-good.txt").exists()
    assert result.hosts["good"].changed == 1
    assert any(host == "good" and "+hello" in text for host, _task, text in result.diffs)


def test_second_run_changes_nothing(tmp_path: Path, playbook: Path) -> None:
    good = ApplyOptions(limit="good")
    run_playbook(playbook, _inventory(tmp_path), tmp_path / "run", good, roles_path=tmp_path)
    again = run_playbook(playbook, _inventory(tmp_path), tmp_path / "run", good, roles_path=tmp_path)
    assert again.hosts["good"].changed == 0
    assert (again.rc, again.failed_hosts) == (0, [])


def test_skip_tags_leaves_out_the_tagged_tasks_and_tags_selects_them(tmp_path: Path) -> None:
    playbook = tmp_path / "play" / "site.yml"
    playbook.parent.mkdir()
    playbook.write_text(
        "- name: Tagged play\n  hosts: all\n  gather_facts: false\n  tasks:\n"
        + "".join(
            f"    - name: Write {tag}\n"
            f"      ansible.builtin.copy: {{dest: '{{{{ out_dir }}}}/{tag}.txt', content: x, mode: '0644'}}\n"
            f"      tags: [{tag}]\n"
            for tag in ("kernel", "files")
        )
    )
    inv = tmp_path / "inventory.yml"
    inv.write_text(
        f"all:\n  vars: {{out_dir: '{tmp_path}', ansible_python_interpreter: '{sys.executable}'}}\n"
        "  hosts:\n    good: {ansible_connection: local}\n"
    )
    result = run_playbook(playbook, inv, tmp_path / "run", ApplyOptions(skip_tags="kernel"), roles_path=tmp_path)
    assert result.hosts["good"].status == "changed"
    assert (tmp_path / "files.txt").exists()
    assert not (tmp_path / "kernel.txt").exists()
    run_playbook(playbook, inv, tmp_path / "run", ApplyOptions(tags="kernel"), roles_path=tmp_path)
    assert (tmp_path / "kernel.txt").exists()


def test_the_tuned_run_writes_its_ansible_cfg_only_where_ansible_would_find_none(tmp_path: Path) -> None:
    from ibprov.run.env import ansible_config_found

    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    system = Path("/etc/ansible/ansible.cfg").is_file()
    assert ansible_config_found({"HOME": str(home)}, work) is system
    assert ansible_config_found({"HOME": str(home), "ANSIBLE_CONFIG": "/x/ansible.cfg"}, work)
    (home / ".ansible.cfg").write_text("[defaults]\n")
    assert ansible_config_found({"HOME": str(home)}, work)
    (home / ".ansible.cfg").unlink()
    (work / "ansible.cfg").write_text("[defaults]\n")
    assert ansible_config_found({"HOME": str(home)}, work)


def test_a_run_directory_too_deep_for_ssh_sockets_still_reaches_its_hosts(tmp_path: Path, playbook: Path) -> None:
    """A deep run directory (a CI's pytest-1885 tmp dir is one) must not make every host unreachable with ssh's
    "too long for Unix domain socket": the masters' sockets go where they fit. The host on port 1 is refused."""
    import json

    deep = tmp_path / ("d" * max(1, 100 - len(str(tmp_path))))
    result = run_playbook(playbook, _inventory(tmp_path), deep / "run", roles_path=tmp_path)
    assert result.hosts["gone"].status == "unreachable"
    said = [
        json.loads(event.read_text())["event_data"]["res"]["msg"]
        for event in (deep / "run").rglob("job_events/*.json")
        if '"runner_on_unreachable"' in event.read_text()
    ]
    assert said
    assert all("refused" in msg for msg in said), said
