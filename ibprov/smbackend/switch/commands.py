"""The switch SM's configuration as MLNX-OS CLI lines (pure): the whole configuration an empty switch would get
(:func:`render_commands`), the lines read back into the one model (:func:`parse_commands`: rendered lines and
``show running-config`` alike, one grammar, so that the rendering is proven by reading it back), and the
minimal commands from what the switch holds to what the spec wants (:func:`diff_commands`).

Grammar (MLNX-OS User Manual 3.10-3.12, "SM Commands"; MLNX-GW manual, "Configuring Partition Keys"):

* ``ib sm`` / ``no ib sm``: the SM on or off (default off);
* ``ib sm allow-both-pkeys``: full and limited membership of one partition on one port (``type both``);
* ``ib partition NAME pkey 0xKEY`` (KEY in 0x1-0x7ffe), ``[no ]ib partition NAME ipoib``,
  ``ib partition NAME member GUID type full|limited|both``, ``no ib partition NAME member GUID``,
  ``no ib partition NAME``;
* ``configuration write``: the running configuration saved to the startup one.

ASSUMED, not confirmed in the manual: the priority keyword :data:`SM_PRIORITY` (``ib sm sm-priority N``, from a
public runbook that reads it back with ``show ib sm priority``; check it against the target release: it is this
one constant); a member's GUID written ``0x`` and 16 hex digits (the colon form ``00:02:c9:...`` is read back
too); a member line without ``type`` read as full. The Default partition (pkey 0x7fff, named ``management`` on
NVIDIA's switches) is the switch's own and not part of the model, as for OpenSM.

The switch carries a partition's name, IPoIB flag and members (:data:`CARRIED`); MTU, rate and SL are not sent
(the spec's validation warns about them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import cast

from ibprov.pkey import DEFAULT_BASE, MAX_PARTITION_BASE, MIN_PARTITION_BASE
from ibprov.smbackend.actions import Action
from ibprov.smbackend.state import BackendState, Membership, PartitionState, SmState, fmt_guid_hex, partition_name

__all__ = [
    "ALLOW_BOTH",
    "CARRIED",
    "DEFAULT_NAME",
    "ENABLE",
    "SAVE",
    "SM_PRIORITY",
    "allows_both_pkeys",
    "diff_commands",
    "needs_both",
    "parse_commands",
    "partition_name",
    "render_commands",
]

CARRIED = ("name", "ipoib", "members")
SM_PRIORITY = "ib sm sm-priority"  # ASSUMED (a public runbook's keyword, not seen in the manual)
ALLOW_BOTH = "ib sm allow-both-pkeys"
ENABLE = "ib sm"
DISABLE = "no ib sm"
SAVE = "configuration write"
DEFAULT_NAME = "management"  # the switch's Default partition (0x7fff)
_MEMBERSHIPS = ("full", "limited", "both")
_HEX_GUID = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
_COLON_GUID = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){7}$")


def needs_both(state: BackendState) -> bool:
    """Whether a member is ``both`` (the switch then needs ``ib sm allow-both-pkeys``)."""
    return any(m == "both" for p in state.partitions.values() for _g, m in p.members)


def _pkey_line(name: str, pkey: int) -> str:
    return f"ib partition {name} pkey 0x{pkey:04x}"


def _ipoib_line(name: str, on: bool) -> str:
    return f"{'' if on else 'no '}ib partition {name} ipoib"


def _member_line(name: str, guid: int, membership: str) -> str:
    return f"ib partition {name} member {fmt_guid_hex(guid)} type {membership}"


def _partition_lines(part: PartitionState) -> list[str]:
    name = partition_name(part)
    lines = [_pkey_line(name, part.pkey)]
    if part.ipoib:
        lines.append(_ipoib_line(name, True))
    lines += [_member_line(name, g, m) for g, m in sorted(part.members)]
    return lines


def _sm_lines(sm: SmState | None) -> list[str]:
    if sm is None:
        return []
    lines = [] if sm.priority is None else [f"{SM_PRIORITY} {sm.priority}"]
    return [*lines, ENABLE if sm.enabled else DISABLE]


def render_commands(desired: BackendState, *, save: bool) -> list[str]:
    """The whole configuration from an empty switch, in the order it is sent: allow-both first (a ``both``
    member is refused without it), the partitions in pkey order, then the priority and the SM itself, so that
    the SM's first sweep already has the partitions; ``configuration write`` last when ``save``."""
    lines = [ALLOW_BOTH] if needs_both(desired) else []
    for pkey in sorted(desired.partitions):
        lines += _partition_lines(desired.partitions[pkey])
    lines += _sm_lines(desired.sm)
    if save:
        lines.append(SAVE)
    return lines


# --- reading back ----------------------------------------------------------------------------------------


@dataclass
class _Draft:
    """A partition as the lines build it up (the pkey may come after its members in a running config)."""

    pkey: int | None = None
    ipoib: bool = False
    members: dict[int, Membership] = field(default_factory=dict)


@dataclass
class _Reader:
    enabled: bool | None = None
    priority: int | None = None
    allow_both: bool = False
    parts: dict[str, _Draft] = field(default_factory=dict)

    def line(self, raw: str) -> None:
        words = raw.split()
        negated = bool(words) and words[0] == "no"
        if negated:
            words = words[1:]
        if words[:2] != ["ib", "sm"] and words[:2] != ["ib", "partition"]:
            return  # comments, interfaces, users, ...: not the SM's
        if words[1] == "sm":
            self._sm(words[2:], negated, raw)
        elif len(words) >= 3:
            self._partition(words[2], words[3:], negated, raw)

    def _sm(self, rest: list[str], negated: bool, raw: str) -> None:
        if not rest:
            self.enabled = not negated
        elif negated and SM_PRIORITY in (" ".join(["ib", "sm", *rest]), " ".join(["ib", "sm", *rest[:-1]])):
            self.priority = None  # `no ib sm sm-priority [N]`: back to the switch's default
        elif " ".join(["ib", "sm", *rest[:-1]]) == SM_PRIORITY:
            if not rest[-1].isdigit():
                raise ValueError(f"{raw.strip()!r}: the priority is not a number")
            self.priority = int(rest[-1])
        elif rest == ["allow-both-pkeys"]:
            self.allow_both = not negated
        # other SM options (virt, babbling-policy, ...) are not part of the model

    def _partition(self, name: str, rest: list[str], negated: bool, raw: str) -> None:
        if negated and not rest:
            self.parts.pop(name, None)
            return
        draft = self.parts.setdefault(name, _Draft())
        if rest[:1] == ["pkey"] and len(rest) == 2 and not negated:
            draft.pkey = _pkey(rest[1], raw)
        elif rest == ["ipoib"]:
            draft.ipoib = not negated
        elif rest[:1] == ["member"] and len(rest) >= 2:
            self._member(name, draft, rest[1:], negated, raw)
        # other partition options (defmember, mtu, ...) are not part of the model

    def _member(self, name: str, draft: _Draft, rest: list[str], negated: bool, raw: str) -> None:
        default = draft.pkey == DEFAULT_BASE or (name == DEFAULT_NAME and draft.pkey is None)
        if default and not (_HEX_GUID.match(rest[0]) or _COLON_GUID.match(rest[0])):
            return  # the Default partition's group members (ALL) are the switch's own
        guid = _guid(rest[0], raw)
        if negated:
            draft.members.pop(guid, None)
            return
        membership = rest[2] if len(rest) == 3 and rest[1] == "type" else "full" if len(rest) == 1 else ""
        if membership not in _MEMBERSHIPS:
            raise ValueError(f"{raw.strip()!r}: the membership is not full, limited or both")
        draft.members[guid] = cast(Membership, membership)

    def state(self) -> BackendState:
        sm = None
        if self.enabled is not None or self.priority is not None:
            sm = SmState(bool(self.enabled), self.priority)
        parts: dict[int, PartitionState] = {}
        for name, draft in self.parts.items():
            if draft.pkey is None:
                if name == DEFAULT_NAME:
                    continue
                raise ValueError(f"partition {name} has no pkey line")
            if draft.pkey == DEFAULT_BASE:
                continue
            if draft.pkey in parts:
                raise ValueError(f"partitions {parts[draft.pkey].name} and {name} both hold pkey 0x{draft.pkey:04x}")
            parts[draft.pkey] = PartitionState(draft.pkey, name, draft.ipoib, frozenset(draft.members.items()))
        return BackendState(sm, parts)


def _pkey(text: str, raw: str) -> int:
    try:
        pkey = int(text, 16)
    except ValueError:
        raise ValueError(f"{raw.strip()!r}: the pkey is not hexadecimal") from None
    if pkey != DEFAULT_BASE and not MIN_PARTITION_BASE <= pkey <= MAX_PARTITION_BASE:
        raise ValueError(f"{raw.strip()!r}: the pkey is outside 0x1-0x7ffe")
    return pkey


def _guid(text: str, raw: str) -> int:
    if _HEX_GUID.match(text):
        return int(text, 16)
    if _COLON_GUID.match(text):
        return int(text.replace(":", ""), 16)
    raise ValueError(f"{raw.strip()!r}: the member names no port GUID (the model holds members by GUID)")


def _read(lines: Iterable[str]) -> _Reader:
    reader = _Reader()
    for raw in lines:
        text = raw.strip()
        if text and not text.startswith(("#", "!")):
            reader.line(text)
    return reader


def parse_commands(lines: Iterable[str]) -> BackendState:
    """Rendered commands or ``show running-config`` text (indented lines, ``##`` comments, lines of other
    features) as the one model: the SM's state (``None`` when no line speaks of it) and the partitions by pkey.
    Lines are applied in order, as the switch would (``no ib partition N`` removes ``N``). Raises ValueError
    naming the line it cannot read."""
    return _read(lines).state()


def allows_both_pkeys(lines: Iterable[str]) -> bool:
    """Whether the lines leave ``ib sm allow-both-pkeys`` set (not part of the model: a switch setting)."""
    return _read(lines).allow_both


# --- the difference --------------------------------------------------------------------------------------


def _by_name(parts: Mapping[int, PartitionState]) -> dict[str, PartitionState]:
    return {partition_name(p): p for p in parts.values()}


def _conflicts(current: BackendState, desired: BackendState) -> tuple[list[PartitionState], list[str]]:
    """The switch's partitions that a planned partition cannot be reached from in place: its pkey held under
    another name, or its name holding another pkey. They are removed and the planned one created afresh."""
    have_names = _by_name(current.partitions)
    gone: dict[str, PartitionState] = {}
    notes: list[str] = []
    for pkey in sorted(desired.partitions):
        want = desired.partitions[pkey]
        name = partition_name(want)
        by_pkey, by_name = current.partitions.get(pkey), have_names.get(name)
        for have in (by_pkey, by_name):
            if have is None or (partition_name(have) == name and have.pkey == pkey):
                continue
            if partition_name(have) not in gone:
                gone[partition_name(have)] = have
                notes.append(
                    f"0x{pkey:04x} ({name}): the switch holds {partition_name(have)} with pkey 0x{have.pkey:04x}; "
                    f"removed and created again as planned (a partition's name and pkey are not changed in place)"
                )
    return list(gone.values()), notes


def _create(want: PartitionState) -> list[Action]:
    name = partition_name(want)
    actions = [Action("add", _pkey_line(name, want.pkey), want.pkey)]
    if want.ipoib:
        actions.append(Action("set", _ipoib_line(name, True), want.pkey))
    return actions + [Action("add", _member_line(name, g, m), want.pkey) for g, m in sorted(want.members)]


def _update(want: PartitionState, have: PartitionState) -> list[Action]:
    """Changes and additions first, removals after: a run stopped at a refusal has removed nothing yet."""
    name, pkey = partition_name(want), want.pkey
    actions: list[Action] = []
    if want.ipoib != have.ipoib:
        actions.append(Action("set", _ipoib_line(name, want.ipoib), pkey))
    wm, hm = want.member_map, have.member_map
    for guid in sorted(wm):
        if hm.get(guid) != wm[guid]:
            actions.append(Action("add" if guid not in hm else "set", _member_line(name, guid, wm[guid]), pkey))
    for guid in sorted(set(hm) - set(wm)):
        actions.append(Action("remove", f"no ib partition {name} member {fmt_guid_hex(guid)}", pkey))
    return actions


def _delete(have: PartitionState) -> Action:
    return Action("delete", f"no ib partition {partition_name(have)}", have.pkey)


def _unplanned(
    current: BackendState, desired: BackendState, gone: list[PartitionState], prune: bool
) -> tuple[list[Action], list[str]]:
    removed = {partition_name(p) for p in gone}
    actions: list[Action] = []
    notes: list[str] = []
    for pkey in sorted(set(current.partitions) - set(desired.partitions)):
        have = current.partitions[pkey]
        if partition_name(have) in removed:
            continue  # removed already, to be created again under its planned name and pkey
        if prune:
            actions.append(_delete(have))
        else:
            notes.append(
                f"0x{pkey:04x} ({partition_name(have)}, {len(have.members)} member(s)) is on the switch, not in the "
                "spec: left alone (prune: true removes it)"
            )
    return actions, notes


def _sm_actions(current: SmState | None, desired: SmState | None) -> list[Action]:
    if desired is None:
        return []
    have = current or SmState(False, None)
    actions: list[Action] = []
    if desired.priority is not None and desired.priority != have.priority:
        actions.append(Action("priority", f"{SM_PRIORITY} {desired.priority}"))
    if desired.enabled != have.enabled:
        actions.append(Action("enable", ENABLE) if desired.enabled else Action("disable", DISABLE))
    return actions


def diff_commands(
    current: BackendState,
    desired: BackendState,
    *,
    prune: bool,
    save: bool,
    allow_both: bool | None = None,
) -> tuple[list[Action], list[str]]:
    """The minimal commands that bring the switch from ``current`` to ``desired`` (what it carries), in the
    order they are sent, and notes on what is left as it is. ``allow_both``: whether the switch has
    ``ib sm allow-both-pkeys`` (None: inferred from a ``both`` member it holds). Order: allow-both, the
    partitions to recreate removed, the planned partitions in pkey order, pruned ones, priority, the SM,
    ``configuration write`` (only after another command and with ``save``). Equal states give no action."""
    has_both = needs_both(current) if allow_both is None else allow_both
    actions = [Action("set", ALLOW_BOTH)] if needs_both(desired) and not has_both else []
    gone, notes = _conflicts(current, desired)
    actions += [_delete(p) for p in gone]
    held = {p.pkey: p for p in current.partitions.values() if p not in gone}
    for pkey in sorted(desired.partitions):
        want, have = desired.partitions[pkey], held.get(pkey)
        actions += _create(want) if have is None else _update(want, have)
    pruned, left = _unplanned(current, desired, gone, prune)
    actions += pruned + _sm_actions(current.sm, desired.sm)
    notes += left
    if actions and save:
        actions.append(Action("save", SAVE))
    elif actions:
        notes.append("save: false: the change stays in the running configuration until `configuration write`")
    return actions, notes
