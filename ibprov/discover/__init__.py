"""``ibprov discover``: read the fabric with ``ibnetdiscover`` and turn it into a spec or a lock file.

* No spec yet: :func:`write_skeleton` writes a spec skeleton (every switch, HCA and cable, with GUIDs;
  the HCAs of one host grouped under it, see :mod:`.hosts`; on a live fabric also the subnet managers
  found running, see :mod:`.sms`).
* A spec: :func:`write_lock` matches the fabric to it and writes only ``<spec>.lock.yaml``;
  the spec itself is never changed.
"""

from __future__ import annotations

from pathlib import Path

from ibprov.clusterspec import load_spec
from ibprov.discover.found import Cable, Device, Found, found_from_text, read_saved, run_ibnetdiscover
from ibprov.discover.hosts import PLACEHOLDER_DEVICE, CaRole, HostGroup, classify, group_hosts
from ibprov.discover.match import Conflict, Matched, MatchResult, match_fabric
from ibprov.discover.skeleton import Skeleton, build_skeleton, sanitize
from ibprov.discover.sms import FoundSm, SmSurvey, read_live, survey_sms
from ibprov.errors import IbprovError
from ibprov.identity.guids import LockFile

__all__ = [
    "PLACEHOLDER_DEVICE",
    "CaRole",
    "Cable",
    "Conflict",
    "Device",
    "Found",
    "FoundSm",
    "HostGroup",
    "MatchResult",
    "Matched",
    "Skeleton",
    "SmSurvey",
    "build_skeleton",
    "classify",
    "found_from_text",
    "group_hosts",
    "match_fabric",
    "read_live",
    "read_saved",
    "run_ibnetdiscover",
    "sanitize",
    "survey_sms",
    "write_lock",
    "write_skeleton",
]


def write_skeleton(spec_path: Path, found: Found, source: str, sms: SmSurvey | None = None) -> Skeleton:
    """Write the skeleton spec of ``found`` to ``spec_path`` (which must not exist yet); ``sms``: the
    subnet managers found running (None: nothing live was asked)."""
    skeleton = build_skeleton(found, cluster=sanitize(spec_path.stem) or "discovered", source=source, sms=sms)
    try:
        with spec_path.open("x", encoding="utf-8") as out:  # never overwrite a spec
            out.write(skeleton.text)
    except FileExistsError:
        raise IbprovError(f"{spec_path} appeared while discovering; it was not overwritten") from None
    except OSError as exc:
        raise IbprovError(f"cannot write {spec_path}: {exc.strerror or exc}") from None
    return skeleton


def write_lock(spec_path: Path, found: Found) -> tuple[Path, MatchResult]:
    """Match ``found`` to the spec at ``spec_path`` and write its lock file; the spec is not touched."""
    loaded = load_spec(spec_path)
    lock_path = LockFile.path_for(spec_path)
    previous = LockFile.read(lock_path) if lock_path.exists() else None
    result = match_fabric(loaded, found, previous)
    tmp = lock_path.with_name(lock_path.name + ".tmp")
    try:
        tmp.write_text(result.lock.to_yaml(), encoding="utf-8")
        tmp.replace(lock_path)
    except OSError as exc:
        raise IbprovError(f"cannot write {lock_path}: {exc.strerror or exc}") from None
    return lock_path, result
