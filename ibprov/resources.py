"""Where ibprov's Ansible content lives: the repository checkout, or the copy shipped in the wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PACKAGE / "_ansible" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find ibprov's {name} directory")


def roles_dir() -> Path:
    return _find("roles")


def playbooks_dir() -> Path:
    return _find("playbooks")


def images_dir() -> Path:
    """The container images' build scripts (images/ensure-images.sh, containers.conf)."""
    return _find("images")
