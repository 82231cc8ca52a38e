"""Nothing secret on disk: a real Ansible run started by ibprov with known secret values in the environment (the
spec's SM_Key, a back end's password under a name that says nothing, and unrelated tokens) gets the key it needs,
and leaves none of them in anything written under the run directory -- ansible-runner's artifacts (command,
job events, stdout), its input files, the fact cache -- nor in the secrets directory, which is gone after the
run; what an earlier version left in a run directory is scrubbed; and the rules that decide which variables
are withheld."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ibprov.render.sm import _secret_expr
from ibprov.run import ApplyOptions, run_playbook
from ibprov.run import secrets as run_secrets
from ibprov.run.secrets import SECRETS_DIR_VAR, child_env, is_secret_name, scrub_run_dir, secret_files, withhold

SM_KEY = "0x5ec2e7c0ffee51de"  # what the spec names as env:IBPROV_TEST_SM_KEY
PASSWORD = "ufm-pa55-5ecret-zq81"  # a back end's password under a name that says nothing (env:IBPROV_TEST_UFM_CRED)
TOKEN = "ghp_un7e1ated-t0ken-x94"  # somebody's unrelated token, under a name that says so
SECRETS = (SM_KEY, PASSWORD, TOKEN)

PLAYBOOK = """\
- name: Use the SM key as the ib_sm role does
  hosts: all
  gather_facts: true
  gather_subset: [min]
  vars:
    ib_sm_sm_key: "%(expr)s"
  tasks:
    - name: The key reached Ansible (written outside the run directory, as opensm.conf would be on the node)
      ansible.builtin.copy:
        dest: "{{ out_dir }}/opensm.conf"
        content: "sm_key {{ ib_sm_sm_key }}\\n"
        mode: "0600"
      no_log: true
      diff: false
    - name: Something that changes and shows a diff
      ansible.builtin.copy:
        dest: "{{ out_dir }}/plain.txt"
        content: "plain\\n"
        mode: "0644"
"""


def files_holding(root: Path, values: tuple[str, ...]) -> list[str]:
    """Every file under ``root`` whose bytes contain one of ``values`` (names relative to ``root``)."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path.relative_to(root)}: {v}" for v in values if v.encode() in data]
    return found


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IBPROV_TEST_SM_KEY", SM_KEY)
    monkeypatch.setenv("IBPROV_TEST_UFM_CRED", PASSWORD)
    monkeypatch.setenv("SOMEONES_GITHUB_TOKEN", TOKEN)
    monkeypatch.setattr(run_secrets, "_WITHHELD", set())
    withhold({"IBPROV_TEST_SM_KEY", "IBPROV_TEST_UFM_CRED"})  # as the CLI does with the spec's references


def test_a_real_run_gets_the_key_and_writes_no_secret_under_its_run_directory(tmp_path: Path, secret_env: None) -> None:
    out = tmp_path / "node"
    out.mkdir()
    playbook = tmp_path / "project" / "site.yml"
    playbook.parent.mkdir()
    playbook.write_text(PLAYBOOK % {"expr": _secret_expr("env:IBPROV_TEST_SM_KEY").replace('"', '\\"')})
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(
        f"all:\n  vars: {{out_dir: '{out}', ansible_python_interpreter: '{sys.executable}'}}\n"
        "  hosts:\n    node01: {ansible_connection: local}\n"
    )
    run_dir = tmp_path / "run"
    # what an earlier version left: its input files and a kept run's recorded environment
    (run_dir / "env").mkdir(parents=True)
    (run_dir / "env" / "envvars").write_text(json.dumps({"IBPROV_TEST_SM_KEY": SM_KEY}))
    old = run_dir / "artifacts" / "old-run"
    old.mkdir(parents=True)
    (old / "command").write_text(json.dumps({"command": ["ansible-playbook"], "env": {"UFM_PASSWORD": PASSWORD}}))

    seen_dirs: list[str] = []
    with secret_files({"IBPROV_TEST_SM_KEY"}) as extra:
        seen_dirs.append(extra[SECRETS_DIR_VAR])
        assert oct(os.stat(extra[SECRETS_DIR_VAR]).st_mode & 0o777) == "0o700"
        result = run_playbook(
            playbook,
            inventory,
            run_dir,
            ApplyOptions(diff=True),
            roles_path=tmp_path,
            extra_env=extra,
        )
    assert (result.rc, result.failed_hosts) == (0, [])
    assert (out / "opensm.conf").read_text() == f"sm_key {SM_KEY}\n", "the key reached Ansible"
    assert result.diffs, "the run reported its diffs (the plain file's)"
    assert not Path(seen_dirs[0]).exists(), "the secrets directory is gone after the run"
    assert files_holding(run_dir, SECRETS) == []
    assert json.loads((old / "command").read_text())["env"] == {}, "the earlier run's password is scrubbed"
    command = json.loads(next(p for p in run_dir.glob("artifacts/*/command") if p.parent != old).read_text())
    assert command["env"][SECRETS_DIR_VAR] == seen_dirs[0]
    assert "IBPROV_TEST_SM_KEY" not in command["env"]
    assert "PATH" in command["env"], "the rest of the environment is kept"


def test_secret_files_are_private_and_a_killed_runs_directory_is_removed_by_the_next(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    stale = tmp_path / "ibprov-secrets-999999999-x"  # a pid no process has
    stale.mkdir()
    (stale / "IBPROV_SM_KEY").write_text(SM_KEY)
    alive = tmp_path / f"ibprov-secrets-{os.getpid()}-y"  # this process: still running, kept
    alive.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_RUNTIME_DIR", env["XDG_RUNTIME_DIR"])
        with secret_files({"A_KEY", "UNSET_KEY"}, {"A_KEY": "v1"}) as extra:
            where = Path(extra[SECRETS_DIR_VAR])
            assert where.parent == tmp_path
            assert sorted(p.name for p in where.iterdir()) == ["A_KEY"]
            assert oct((where / "A_KEY").stat().st_mode & 0o777) == "0o600"
            assert (where / "A_KEY").read_text() == "v1"
        with secret_files({"UNSET_KEY"}, {}) as none:
            assert none == {}
    assert not where.exists()
    assert not stale.exists()
    assert alive.exists()


def test_scrubbing_a_run_directory_keeps_what_is_not_secret(tmp_path: Path) -> None:
    cmd = tmp_path / "artifacts" / "a" / "command"
    cmd.parent.mkdir(parents=True)
    cmd.write_text(json.dumps({"command": ["x"], "cwd": "/", "env": {"PATH": "/bin", "UFM_TOKEN": TOKEN}}))
    (tmp_path / "artifacts" / "b").mkdir()
    (tmp_path / "artifacts" / "b" / "command").write_text("not json")
    scrub_run_dir(tmp_path)
    assert json.loads(cmd.read_text()) == {"command": ["x"], "cwd": "/", "env": {"PATH": "/bin"}}
    assert (tmp_path / "artifacts" / "b" / "command").read_text() == "not json"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("IBPROV_SM_KEY", True),
        ("UFM_PASSWORD", True),
        ("SWITCH_PASSWD", True),
        ("GITHUB_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("AWS_ACCESS_KEY_ID", True),
        ("SSH_KEY", True),
        ("GPG_PASSPHRASE", True),
        ("MY_API_KEY", True),
        ("KEY", True),
        ("ANSIBLE_VAULT_PASSWORD_FILE", False),
        ("ANSIBLE_PRIVATE_KEY_FILE", False),
        ("IBPROV_SECRETS_DIR", False),
        ("SSH_AUTH_SOCK", False),
        ("PATH", False),
        ("MONKEY", False),
        ("KEYBOARD_LAYOUT", False),
        ("HOME", False),
    ],
)
def test_which_names_say_they_hold_a_secret(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_a_spec_named_secret_is_withheld_whatever_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_secrets, "_WITHHELD", set())
    env = {"PATH": "/bin", "UFM_CRED": PASSWORD, "HOME": "/root"}
    assert child_env(env) == env
    withhold({"UFM_CRED"})
    assert child_env(env) == {"PATH": "/bin", "HOME": "/root"}


def test_render_and_run_agree_on_the_secrets_directory_variable() -> None:
    assert SECRETS_DIR_VAR in _secret_expr("env:X")
    assert "lookup('ansible.builtin.env', 'X')" in _secret_expr("env:X"), "Ansible without ibprov: the environment"
