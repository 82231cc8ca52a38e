"""The environment of every Ansible process ibprov starts (ad-hoc runs and playbooks): one policy, built per call.

Nothing here changes ``os.environ``. ansible-runner (2.4) starts ``ansible`` / ``ansible-playbook`` through
pexpect, which looks the command up on the PATH of the *child's* environment (this process's environment
updated with ``envvars``), so a PATH in ``envvars`` with the venv's bin first finds the venv's Ansible.
(``binary=`` is no way to name the executable: it switches ansible-runner to a raw command line and drops
``-m MODULE -a ARGS PATTERN`` and the playbook.)
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "BASE_ENV",
    "TUNED_CONFIG",
    "TUNED_ENV",
    "ansible_bin",
    "ansible_config_found",
    "ansible_env",
    "control_path_dir",
]

# Every run: plain output for the artifacts, and nodes are not known to ~/.ssh/known_hosts before their first run.
BASE_ENV = {"ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOST_KEY_CHECKING": "False"}

# Playbooks, tuned for scale: pipelining and SSH connection reuse, many forks, fact caching between runs.
TUNED_ENV = {
    "ANSIBLE_PIPELINING": "True",
    "ANSIBLE_SSH_ARGS": "-o ControlMaster=auto -o ControlPersist=120s -o PreferredAuthentications=publickey",
    "ANSIBLE_FORKS": "50",
    "ANSIBLE_GATHERING": "smart",
    "ANSIBLE_CACHE_PLUGIN": "ansible.builtin.jsonfile",
    "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "3600",
    "ANSIBLE_RETRY_FILES_ENABLED": "False",
    # the roles read facts only as ansible_facts[...]: without the ansible_* copies, preparing a task's variables
    # no longer cleans and copies every cached fact of the host (a no-op on bench/apply_8.py's rig: 34.1 s ->
    # 31.5 s of controller CPU, docs/benchmarks.md)
    "ANSIBLE_INJECT_FACT_VARS": "False",
    # ibprov's playbooks need a few facts (os_family, python, architecture): the cache, read back for every task
    # and host, stays small
    "ANSIBLE_GATHER_SUBSET": "min",
}

# Settings Ansible reads only from a configuration file (no environment variable): written for a tuned run when
# Ansible would find no configuration file of its own (ansible_config_found), never over the user's.
# internal_poll_interval: how often the controller polls its workers while it waits for them; Ansible's 1 ms
# default keeps the controller busy for a whole run.
TUNED_CONFIG = """[defaults]
# written by ibprov for this run (ibprov/run/env.py); a configuration file of your own is used instead of this one
internal_poll_interval = 0.02
"""


# A Unix socket's path holds at most 107 bytes (sun_path is 108 with its NUL). Ansible names each SSH master's
# socket with 10 hex characters under its control path directory, and ssh appends 17 more (a dot and 16 random
# characters) while it sets the master up: a longer directory makes every host unreachable ("too long for Unix
# domain socket").
SOCKET_PATH_MAX = 107
CONTROL_SOCKET_NAME = len("/0123456789.0123456789abcdef")


def control_path_dir(run_dir: Path, home: Path | None = None) -> Path:
    """Where the SSH masters of a tuned run in ``run_dir`` keep their sockets: ``run_dir/cp`` when the sockets' paths
    fit there, else a directory of the run's own under Ansible's default (``~/.ansible/cp/ibprov-<hash of the run
    dir>``), so that masters of one run directory are never reused by another's."""
    own = (run_dir / "cp").resolve()
    if len(os.fsencode(own)) + CONTROL_SOCKET_NAME <= SOCKET_PATH_MAX:
        return own
    key = hashlib.sha256(os.fsencode(own)).hexdigest()[:12]
    return (home or Path.home()) / ".ansible" / "cp" / f"ibprov-{key}"


def ansible_bin() -> Path:
    """The bin directory of the interpreter running ibprov (the venv's): where its ``ansible`` commands are."""
    return Path(sys.executable).parent


def ansible_config_found(environ: Mapping[str, str], cwd: Path) -> bool:
    """Whether Ansible started in ``cwd`` with ``environ`` finds a configuration file (ANSIBLE_CONFIG,
    ./ansible.cfg, ~/.ansible.cfg, /etc/ansible/ansible.cfg: Ansible's search order)."""
    if environ.get("ANSIBLE_CONFIG"):
        return True
    home = Path(environ.get("HOME") or Path.home())
    return any(p.is_file() for p in (cwd / "ansible.cfg", home / ".ansible.cfg", Path("/etc/ansible/ansible.cfg")))


def ansible_env(extra: Mapping[str, str] | None = None, *, tuned: bool = False) -> dict[str, str]:
    """``envvars`` for ansible-runner: the base policy (plus the tuning for playbooks), PATH with
    :func:`ansible_bin` first, then ``extra``."""
    env = {**BASE_ENV, **(TUNED_ENV if tuned else {})}
    env["PATH"] = f"{ansible_bin()}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    env.update(extra or {})
    return env
