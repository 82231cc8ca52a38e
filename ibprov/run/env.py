"""The environment of every Ansible process ibprov starts (ad-hoc runs and playbooks): one policy, built per call.

Nothing here changes ``os.environ``. ansible-runner (2.4) starts ``ansible`` / ``ansible-playbook`` through
pexpect, which looks the command up on the PATH of the *child's* environment (this process's environment
updated with ``envvars``), so a PATH in ``envvars`` with the venv's bin first finds the venv's Ansible.
(``binary=`` is no way to name the executable: it switches ansible-runner to a raw command line and drops
``-m MODULE -a ARGS PATTERN`` and the playbook.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["BASE_ENV", "TUNED_ENV", "ansible_bin", "ansible_env"]

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
}


def ansible_bin() -> Path:
    """The bin directory of the interpreter running ibprov (the venv's): where its ``ansible`` commands are."""
    return Path(sys.executable).parent


def ansible_env(extra: Mapping[str, str] | None = None, *, tuned: bool = False) -> dict[str, str]:
    """``envvars`` for ansible-runner: the base policy (plus the tuning for playbooks), PATH with
    :func:`ansible_bin` first, then ``extra``."""
    env = {**BASE_ENV, **(TUNED_ENV if tuned else {})}
    env["PATH"] = f"{ansible_bin()}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    env.update(extra or {})
    return env
