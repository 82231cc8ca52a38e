"""Credentials from the spec's references, resolved only when a back end is contacted: ``env:NAME`` from the
environment of the process that runs ibprov, ``vault:name`` from an Ansible-vault encrypted YAML file
(``IBPROV_VAULT_FILE``; its password from ``ANSIBLE_VAULT_PASSWORD_FILE``, Ansible's own variable), decrypted
with ansible-core's vault library. A value is never printed or logged."""

from __future__ import annotations

import os
from pathlib import Path as FsPath

import yaml

from ibprov.clusterspec.positions import Path
from ibprov.smbackend.errors import BackendError

__all__ = ["resolve"]


def resolve(ref: str, path: Path) -> str:
    """The secret ``ref`` (env:X or vault:x) names; a located error when it cannot be had."""
    kind, _, name = ref.partition(":")
    if kind == "env":
        value = os.environ.get(name)
        if not value:
            raise BackendError(path, f"{ref}: the environment variable {name} is not set (or empty)")
        return value
    return _from_vault(name, ref, path)


def _from_vault(name: str, ref: str, path: Path) -> str:
    vault_file = os.environ.get("IBPROV_VAULT_FILE")
    password_file = os.environ.get("ANSIBLE_VAULT_PASSWORD_FILE")
    if not vault_file or not password_file:
        raise BackendError(
            path,
            f"{ref}: set IBPROV_VAULT_FILE (an ansible-vault encrypted YAML file) and ANSIBLE_VAULT_PASSWORD_FILE "
            "to resolve vault: references, or use env:VARIABLE",
        )
    # lazy: ansible's vault library only for a vault: reference
    from ansible.parsing.vault import VaultLib, VaultSecret

    try:
        password = FsPath(password_file).read_bytes().strip()
        text = VaultLib([("default", VaultSecret(password))]).decrypt(FsPath(vault_file).read_bytes())
        data = yaml.safe_load(text)
    except Exception as exc:  # AnsibleError, OSError, YAMLError: one message naming the file
        raise BackendError(path, f"{ref}: cannot read {vault_file} with the vault password: {exc}") from None
    if not isinstance(data, dict) or name not in data or data[name] in (None, ""):
        raise BackendError(path, f"{ref}: {vault_file} has no variable {name}")
    return str(data[name])
