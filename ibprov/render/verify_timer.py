"""The ib_verify_timer role's variables (issue 27): verify on a systemd timer on the spec's
``monitoring.verify_timer.host``, with history and metrics, reading a copy of the spec (and its GUID lock
file) that render puts beside the inventory (``verify/``), so that the host verifies against the plan this
apply installed."""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.identity.guids import LockFile

__all__ = ["SPEC_DIR", "verify_timer_files", "verify_timer_vars"]

SPEC_DIR = "verify"  # beside inventory/: the spec the timer's host reads


def verify_timer_files(loaded: LoadedSpec) -> dict[str, str]:
    """verify/<spec> and verify/<spec stem>.lock.yaml (when the spec has one): what the host gets."""
    timer = loaded.spec.monitoring.verify_timer
    if timer is None or loaded.path is None:
        return {}
    files = {f"{SPEC_DIR}/cluster.yaml": loaded.path.read_text()}
    lock = LockFile.path_for(loaded.path)
    if lock.is_file():
        files[f"{SPEC_DIR}/cluster.lock.yaml"] = lock.read_text()
    return files


def verify_timer_vars(loaded: LoadedSpec) -> dict[str, Any] | None:
    """group_vars/ib_verify_timer.yml (None without a verify timer in the spec)."""
    timer = loaded.spec.monitoring.verify_timer
    if timer is None:
        return None
    spec_dir = "{{ inventory_dir }}/../" + SPEC_DIR
    has_lock = loaded.path is not None and LockFile.path_for(loaded.path).is_file()
    out: dict[str, Any] = {
        "ib_verify_timer_spec_src": f"{spec_dir}/cluster.yaml" if loaded.path is not None else None,
        "ib_verify_timer_guid_lock_src": f"{spec_dir}/cluster.lock.yaml" if has_lock else None,
        "ib_verify_timer_sections": list(timer.sections),
        "ib_verify_timer_on_calendar": timer.on_calendar,
        "ib_verify_timer_history_dir": timer.history_dir,
        "ib_verify_timer_keep": timer.keep,
        "ib_verify_timer_textfile_dir": timer.textfile_dir,
        "ib_verify_timer_install": timer.install,
    }
    if timer.wheelhouse is not None:
        out["ib_verify_timer_wheelhouse"] = timer.wheelhouse
    return out
