"""ansible-runner wrapper: per-host results, failures isolated, @failed retries, diffs, check mode."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ibprov.run import Progress, RunError, read_failed, run_playbook

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
        playbook, _inventory(tmp_path, bad_fails=False), run_dir, roles_path=tmp_path, limit="@failed"
    )
    assert set(result.hosts) == {"bad", "gone"}
    assert result.hosts["bad"].status == "changed"
    assert not (tmp_path / "out-good.txt").exists(), "good was not retried"
    assert read_failed(run_dir) == ["gone"]


def test_limit_failed_without_a_previous_failure_is_a_clear_error(tmp_path: Path, playbook: Path) -> None:
    with pytest.raises(RunError, match="no failed hosts recorded"):
        run_playbook(playbook, _inventory(tmp_path), tmp_path / "fresh", roles_path=tmp_path, limit="@failed")


def test_check_mode_with_diff_changes_nothing_and_reports_the_diff(tmp_path: Path, playbook: Path) -> None:
    result = run_playbook(
        playbook, _inventory(tmp_path), tmp_path / "run", roles_path=tmp_path, check=True, diff=True, limit="good"
    )
    assert not (tmp_path / "out-good.txt").exists()
    assert result.hosts["good"].changed == 1
    assert any(host == "good" and "+hello" in text for host, _task, text in result.diffs)


def test_second_run_changes_nothing(tmp_path: Path, playbook: Path) -> None:
    run_playbook(playbook, _inventory(tmp_path), tmp_path / "run", roles_path=tmp_path, limit="good")
    again = run_playbook(playbook, _inventory(tmp_path), tmp_path / "run", roles_path=tmp_path, limit="good")
    assert again.hosts["good"].changed == 0
    assert again.ok


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
    result = run_playbook(playbook, inv, tmp_path / "run", roles_path=tmp_path, skip_tags="kernel")
    assert result.hosts["good"].status == "changed"
    assert (tmp_path / "files.txt").exists()
    assert not (tmp_path / "kernel.txt").exists()
    run_playbook(playbook, inv, tmp_path / "run", roles_path=tmp_path, tags="kernel")
    assert (tmp_path / "kernel.txt").exists()
