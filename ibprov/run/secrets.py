"""Secrets never written by ibprov or by the Ansible it drives.

ansible-runner writes the whole environment of every run it starts into the run's artifacts
(``artifacts/<id>/command``), and, unless told not to, its inputs into ``env/`` (envvars, extravars, settings,
cmdline). So:

* every run is started with ``suppress_env_files`` and an environment without secrets (:func:`child_env`): no
  variable the spec names as a secret (``env:NAME``, :func:`withhold`) and no variable whose name says it holds
  one (:func:`is_secret_name`: ``*PASSWORD*``, ``*TOKEN*``, ``*SECRET*``, ``*_KEY`` ...; a name ending in
  ``_FILE``, ``_PATH``, ``_DIR`` or ``_SOCK`` names a place, not a secret, and is kept);
* the secrets Ansible itself needs (the SM_Key and M_Key the ``ib_sm`` role writes into opensm.conf) reach it as
  files in a private directory in memory (:func:`secret_files`: ``$XDG_RUNTIME_DIR`` or ``/dev/shm``, mode 0700,
  each file 0600), named by ``IBPROV_SECRETS_DIR`` and removed when the run ends; the rendered variables read them
  from there (:data:`SECRETS_DIR_VAR`), or from the environment when Ansible runs without ibprov;
* what earlier versions left in a run directory is scrubbed before the next run (:func:`scrub_run_dir`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the spec's models (pydantic) stay out of the import of every Ansible run
    from ibprov.clusterspec.model import ClusterSpec

__all__ = [
    "SECRETS_DIR_VAR",
    "ansible_secrets",
    "child_env",
    "env_secrets",
    "is_secret_name",
    "scrub_run_dir",
    "secret_files",
    "withheld",
    "withhold",
]

SECRETS_DIR_VAR = "IBPROV_SECRETS_DIR"  # a place, so never withheld itself
_SECRET = re.compile(r"PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|CREDENTIAL|APIKEY|API_KEY|(?:^|_)KEY(?:$|_)", re.I)
_PLACE = ("_FILE", "_PATH", "_DIR", "_SOCK", "_SOCKET")
_PREFIX = "ibprov-secrets-"
_WITHHELD: set[str] = set()


def _env_names(refs: Iterable[str | None]) -> set[str]:
    return {ref.removeprefix("env:") for ref in refs if ref is not None and ref.startswith("env:")}


def ansible_secrets(spec: ClusterSpec) -> set[str]:
    """The environment variables the spec names for the secrets Ansible writes (SM_Key, M_Key: ib_sm)."""
    return _env_names((spec.subnet_manager.sm_key, spec.subnet_manager.m_key))


def env_secrets(spec: ClusterSpec) -> set[str]:
    """Every environment variable the spec names for a secret: the keys, and the back ends' credentials."""
    sm = spec.subnet_manager
    refs: list[str | None] = [sm.sm_key, sm.m_key]
    if sm.switch is not None:
        refs += [sm.switch.username, sm.switch.password]
    if sm.ufm is not None:
        refs += [sm.ufm.username, sm.ufm.password, sm.ufm.token]
    return _env_names(refs)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (``UFM_PASSWORD``, ``IBPROV_SM_KEY``,
    ``GITHUB_TOKEN``); a name that ends in ``_FILE``, ``_PATH``, ``_DIR`` or ``_SOCK`` names a place
    (``ANSIBLE_VAULT_PASSWORD_FILE``, ``ANSIBLE_PRIVATE_KEY_FILE``) and is not one."""
    upper = name.upper()
    return bool(_SECRET.search(upper)) and not upper.endswith(_PLACE)


def withhold(names: Iterable[str]) -> None:
    """Add environment variables that hold secrets whatever their names (the spec's ``env:NAME`` references)
    to those no Ansible run ibprov starts in this process is given."""
    _WITHHELD.update(names)


def withheld() -> frozenset[str]:
    return frozenset(_WITHHELD)


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without its secrets: the environment an Ansible run is started with (and recorded with)."""
    return {k: v for k, v in env.items() if k not in _WITHHELD and not is_secret_name(k)}


def scrub_run_dir(private_data_dir: Path) -> None:
    """Remove what ansible-runner keeps of earlier runs that can hold secrets: its input files (``env/``:
    ibprov passes everything as arguments) and the environment recorded in each kept run's ``command``."""
    shutil.rmtree(private_data_dir / "env", ignore_errors=True)
    for command in private_data_dir.glob("artifacts/*/command"):
        try:
            data = json.loads(command.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        env = data.get("env") if isinstance(data, dict) else None
        if isinstance(env, dict) and env != child_env(env):
            data["env"] = child_env(env)
            command.write_text(json.dumps(data), encoding="utf-8")


def _memory_dir() -> Path:
    """Where secret files go: a per-user runtime directory or /dev/shm (both in memory), else the temp dir."""
    for candidate in (os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return Path(candidate)
    return Path(tempfile.gettempdir())


def _remove_stale(parent: Path) -> None:
    """Secret directories of ibprov processes that no longer run (killed before they could clean up)."""
    for old in parent.glob(f"{_PREFIX}*"):
        pid = old.name.removeprefix(_PREFIX).split("-", 1)[0]
        if not pid.isdigit() or old.stat().st_uid != os.getuid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except PermissionError:
            continue


@contextlib.contextmanager
def secret_files(names: Iterable[str], environ: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """While inside: each of ``names`` that ``environ`` (default: this process's) sets, as a file of that name
    in a private directory in memory; yields the variables that tell Ansible where (``{IBPROV_SECRETS_DIR: dir}``,
    or nothing when no secret is needed). The directory is gone afterwards, and a directory left by a killed
    ibprov is removed by the next one."""
    source = os.environ if environ is None else environ
    values = {n: source[n] for n in sorted(set(names)) if source.get(n)}
    if not values:
        yield {}
        return
    parent = _memory_dir()
    _remove_stale(parent)
    where = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=parent))
    try:
        os.chmod(where, 0o700)
        for name, value in values.items():
            fd = os.open(where / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(value)
        yield {SECRETS_DIR_VAR: str(where)}
    finally:
        shutil.rmtree(where, ignore_errors=True)
