"""Load a role's Python code (a filter plugin, a module) by path, as Ansible does, so tests can call it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROLES = Path(__file__).resolve().parents[2] / "roles"


def load(role: str, relpath: str, name: str) -> ModuleType:
    """roles/<role>/<relpath> as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, ROLES / role / relpath)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
