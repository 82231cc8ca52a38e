"""UFM's side of the one model, pure: the desired partitions as the bodies of UFM's ``/resources/pkeys``
endpoints (UFM Enterprise REST API Guide 6.12-6.22, "PKey GUIDs Rest API"), and UFM's answers read back into
:class:`BackendState`.

What UFM carries (:data:`CARRIED`): the IPoIB flag, the members by port GUID with their membership (full or
limited: UFM has no "both", which spec validation already refuses), and the QoS limits ``mtu_limit`` (ASSUMED to be
the IBTA code, as OpenSM's ``mtu=``: no public source says; docs/sm-backends.md has the evidence both ways),
``service_level`` and ``rate_limit`` (Gb/s). UFM keeps no partition name before
6.22 (6.22 adds ``partition_name`` to ``pkeys/add``), so the name is not compared.

Reading is lenient where the sources disagree and strict where a misreading would change the fabric: GUIDs
come back upper case without separators (ib-kubernetes normalises them), but "0x" or colons are accepted too;
the answer may be a map keyed by pkey (``guids_data=true``) or a list of entries; the Default partition 0x7fff
is left out (never managed, never pruned). Anything else malformed is a ValueError saying what was wrong, so
that ibprov never plans from a half-read state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ibprov.pkey import DEFAULT_BASE
from ibprov.smbackend.state import BackendState, Member, Membership, PartitionState

__all__ = [
    "CARRIED",
    "add_guids_body",
    "create_body",
    "fmt_pkey",
    "fmt_ufm_guid",
    "members_body",
    "parse_payload",
    "parse_pkeys",
    "qos_body",
    "qos_fields",
    "render_payload",
]

CARRIED = ("ipoib", "members", "mtu", "rate", "sl")
_UFM_MEMBERSHIPS = ("full", "limited")
_GUID_SEPARATORS = re.compile(r"[:\-.]")
_HEX = re.compile(r"^[0-9a-fA-F]{1,20}$")


def fmt_pkey(pkey: int) -> str:
    """A pkey as UFM's bodies take it: ``0x0010``."""
    return f"0x{pkey:04x}"


def fmt_ufm_guid(guid: int) -> str:
    """A port GUID as UFM's bodies take it: 16 hex digits, no separators (the guide's examples)."""
    return f"{guid:016x}"


# --- rendering -------------------------------------------------------------------------------------------


def qos_fields(part: PartitionState) -> dict[str, Any]:
    """The QoS limits the spec sets (an unset one is UFM's default, so it is not sent)."""
    out: dict[str, Any] = {}
    if part.mtu is not None:
        out["mtu_limit"] = part.mtu
    if part.sl is not None:
        out["service_level"] = part.sl
    if part.rate is not None:
        out["rate_limit"] = part.rate
    return out


def _ufm_membership(part: PartitionState, guid: int, membership: Membership) -> str:
    if membership not in _UFM_MEMBERSHIPS:
        raise ValueError(
            f"partition {fmt_pkey(part.pkey)}: member {fmt_ufm_guid(guid)} is {membership!r}; UFM holds a GUID "
            "as full or limited only"
        )
    return membership


def members_body(part: PartitionState) -> dict[str, Any]:
    """The ``PUT /resources/pkeys/`` body that sets ``part`` whole: every member with its membership (PUT
    honours per-GUID ``memberships`` and replaces the member list), the IPoIB flag, the QoS limits set."""
    members = sorted(part.members)
    return {
        "pkey": fmt_pkey(part.pkey),
        "guids": [fmt_ufm_guid(g) for g, _m in members],
        "memberships": [_ufm_membership(part, g, m) for g, m in members],
        "ip_over_ib": part.ipoib,
        "index0": False,
        **qos_fields(part),
    }


def create_body(part: PartitionState) -> dict[str, Any]:
    """The ``POST /resources/pkeys/add`` body: an empty pkey with its IPoIB flag and QoS limits."""
    return {"pkey": fmt_pkey(part.pkey), "index0": False, "ip_over_ib": part.ipoib, **qos_fields(part)}


def add_guids_body(part: PartitionState, guids: Iterable[int], membership: Membership) -> dict[str, Any]:
    """The ``POST /resources/pkeys/`` body adding ``guids`` with one membership: POST honours only the single
    ``membership`` (a plural ``memberships`` array is ignored on 6.19), so one call carries one membership."""
    listed = sorted(guids)
    return {
        "pkey": fmt_pkey(part.pkey),
        "guids": [fmt_ufm_guid(g) for g in listed],
        "membership": _ufm_membership(part, listed[0] if listed else 0, membership),
        "ip_over_ib": part.ipoib,
        "index0": False,
    }


def qos_body(part: PartitionState) -> dict[str, Any]:
    """The ``PUT /resources/pkeys/qos_conf`` body: the pkey and the limits the spec sets."""
    return {"pkey": fmt_pkey(part.pkey), **qos_fields(part)}


def render_payload(desired: BackendState) -> list[dict[str, Any]]:
    """One ``PUT /resources/pkeys/`` body per partition, in pkey order (the whole desired state in UFM's
    form). A ``both`` member raises ValueError: UFM cannot express it."""
    return [members_body(desired.partitions[k]) for k in sorted(desired.partitions)]


# --- reading ---------------------------------------------------------------------------------------------


def _pkey(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{where}: pkey {value!r} is not a hex string")
    try:
        pkey = value if isinstance(value, int) else int(value, 16)
    except ValueError:
        raise ValueError(f"{where}: pkey {value!r} is not hex") from None
    if not 0 < pkey <= DEFAULT_BASE:
        raise ValueError(f"{where}: pkey {value!r} is outside 0x0001-0x7fff")
    return pkey


def _guid(value: Any, where: str) -> int:
    """A port GUID as UFM (or an older client) may write it: upper or lower case, with or without "0x",
    colons, dashes or dots."""
    if not isinstance(value, str):
        raise ValueError(f"{where}: GUID {value!r} is not a string")
    text = _GUID_SEPARATORS.sub("", value.strip())
    if text[:2].lower() == "0x":
        text = text[2:]
    if not _HEX.match(text) or int(text, 16) >= 1 << 64:
        raise ValueError(f"{where}: {value!r} is not a 64-bit port GUID")
    return int(text, 16)


def _membership(value: Any, where: str) -> Membership:
    if value == "full":
        return "full"
    if value == "limited":
        return "limited"
    raise ValueError(f"{where}: membership {value!r} is neither full nor limited")


def _number(entry: Mapping[str, Any], key: str, where: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{where}: {key} {value!r} is not a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {key} {value!r} is not a number") from None


def _integer(entry: Mapping[str, Any], key: str, where: str) -> int | None:
    value = _number(entry, key, where)
    if value is not None and value != int(value):
        raise ValueError(f"{where}: {key} {entry[key]!r} is not an integer")
    return None if value is None else int(value)


def _ipoib(entry: Mapping[str, Any], where: str) -> bool:
    value = entry.get("ip_over_ib", True)  # UFM's default for a pkey
    if not isinstance(value, bool):
        raise ValueError(f"{where}: ip_over_ib {value!r} is not true or false")
    return value


def _partition(pkey: int, entry: Mapping[str, Any], members: Iterable[Member], where: str) -> PartitionState:
    return PartitionState(
        pkey=pkey,
        name=None,
        ipoib=_ipoib(entry, where),
        members=frozenset(members),
        mtu=_integer(entry, "mtu_limit", where),
        rate=_number(entry, "rate_limit", where),
        sl=_integer(entry, "service_level", where),
    )


def _body_members(body: Mapping[str, Any], where: str) -> list[Member]:
    guids = body.get("guids", [])
    if not isinstance(guids, list):
        raise ValueError(f"{where}: guids is not a list")
    memberships = body.get("memberships")
    if memberships is None:
        memberships = [body.get("membership", "full")] * len(guids)
    if not isinstance(memberships, list) or len(memberships) != len(guids):
        raise ValueError(f"{where}: memberships does not give one membership per GUID")
    return [(_guid(g, where), _membership(m, where)) for g, m in zip(guids, memberships, strict=True)]


def parse_payload(bodies: Iterable[Mapping[str, Any]]) -> BackendState:
    """The inverse of :func:`render_payload`: ``PUT /resources/pkeys/`` bodies back into the model."""
    parts: dict[int, PartitionState] = {}
    for i, body in enumerate(bodies):
        where = f"body {i}"
        if not isinstance(body, Mapping):
            raise ValueError(f"{where} is not an object")
        pkey = _pkey(body.get("pkey"), where)
        parts[pkey] = _partition(pkey, body, _body_members(body, where), f"{where} ({fmt_pkey(pkey)})")
    return BackendState(None, parts)


def _answer_members(entry: Mapping[str, Any], where: str) -> list[Member]:
    guids = entry.get("guids")
    if guids is None:  # no key, or null: no members
        return []
    if not isinstance(guids, list):
        raise ValueError(f"{where}: guids is not a list")
    out: list[Member] = []
    for item in guids:
        if isinstance(item, str):  # a bare GUID: UFM's default membership
            out.append((_guid(item, where), "full"))
        elif isinstance(item, Mapping):
            out.append((_guid(item.get("guid"), where), _membership(item.get("membership", "full"), where)))
        else:
            raise ValueError(f"{where}: a guids entry {item!r} is neither a GUID nor an object with one")
    return out


def _entries(answer: Any) -> Iterable[tuple[Any, Any]]:
    """(pkey, entry) pairs of either shape: a map keyed by pkey, or a list of entries naming their pkey."""
    if isinstance(answer, Mapping):
        return answer.items()
    if isinstance(answer, list):
        if any(isinstance(item, str) for item in answer):
            raise ValueError("the answer lists pkeys only (asked without guids_data=true?)")
        if not all(isinstance(item, Mapping) for item in answer):
            raise ValueError("the answer is a list whose entries are not objects")
        return [(item.get("pkey"), item) for item in answer]
    raise ValueError(f"the answer is {type(answer).__name__}, not a map keyed by pkey or a list of pkeys")


def parse_pkeys(answer: Any) -> BackendState:
    """UFM's ``GET /resources/pkeys?guids_data=true&qos_conf=true`` into the model, without the Default
    partition. Raises ValueError naming what it cannot read."""
    parts: dict[int, PartitionState] = {}
    for key, entry in _entries(answer):
        pkey = _pkey(key, "pkey entry")
        where = f"pkey {fmt_pkey(pkey)}"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: its entry is not an object")
        if pkey == DEFAULT_BASE:
            continue
        parts[pkey] = _partition(pkey, entry, _answer_members(entry, where), where)
    return BackendState(None, parts)
