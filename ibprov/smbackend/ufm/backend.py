"""Plan and apply partitions on NVIDIA UFM Enterprise: read UFM's pkeys first, then send only the difference
from the spec's desired state, in pkey order, stopping at the first call UFM refuses.

Reconcile rules, each with its reason (UFM Enterprise REST API Guide 6.12-6.22, "PKey GUIDs Rest API", and the
behaviours a mock pinned to UFM 6.19 documents):

* A planned pkey UFM lacks: ``POST …/pkeys/add`` (IPoIB flag, ``index0: false``, the QoS limits the spec sets),
  then one ``PUT …/pkeys/`` with every GUID and its membership -- ``POST …/pkeys/`` ignores a plural
  ``memberships`` array on 6.19 (members become full), PUT honours it. Without members yet (no GUID known):
  created only, with a note.
* An existing planned pkey:
  - members only added, all with one membership, nothing else changed: ``POST …/pkeys/`` with that single
    membership (the smallest call; POST keeps the members UFM has);
  - members only removed: ``DELETE …/pkeys/<pkey>/guids/<g1>,<g2>``;
  - anything else on the members (a membership changed, members added and removed, several memberships
    added) or the IPoIB flag changed: one ``PUT …/pkeys/`` with the whole member list. Removing before adding
    could empty the partition, and UFM deletes a partition with its last member;
  - the spec leaves it no member: nothing is removed (that would delete it), with a note;
  - a QoS limit the spec sets differs: ``PUT …/pkeys/qos_conf`` (a UFM client notes that UFM may need a
    restart for QoS to take effect: the plan says so). A limit the spec does not set is UFM's to keep.
* A pkey UFM holds that the spec does not name: ``DELETE …/pkeys/<pkey>`` only with ``prune: true``, else a
  note -- other tools (ib-kubernetes) create partitions in UFM too. The Default partition 0x7fff is never read
  into the state, so it is never touched.

So a second run against the resulting state plans nothing that changes state. A duplicate create (400 "exists"
or 409) counts as done: the pkey is there, which is what the call wanted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ibprov.clusterspec.model import UfmSm
from ibprov.smbackend.actions import Action, BackendPlan, BackendResult
from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.http import HttpSession
from ibprov.smbackend.secrets import resolve
from ibprov.smbackend.state import BackendState, Membership, PartitionState
from ibprov.smbackend.ufm.api import URL, Reply, UfmApi, compact, delete_pkey_suffix, remove_guids_suffix
from ibprov.smbackend.ufm.payload import (
    add_guids_body,
    create_body,
    fmt_pkey,
    members_body,
    parse_pkeys,
    qos_body,
    qos_fields,
)

__all__ = ["apply_ufm", "connect", "plan_ufm", "read_ufm"]

SECTION = ("subnet_manager", "ufm")
QOS_NOTE = (
    "UFM may need a restart before QoS limits set through pkeys/qos_conf take effect (a UFM REST client's note, "
    "fabiendupont/nvidia-ufm-api)"
)
LEFT_ALONE = "left alone (other tools such as ib-kubernetes create partitions in UFM; prune: true removes it)"


def connect(cfg: UfmSm, *, timeout: float = 30.0) -> UfmApi:
    """Resolve the credentials from their references and log in (a located BackendError when that fails)."""
    http = HttpSession(
        base=cfg.url,
        verify_tls=cfg.verify_tls,
        ca_file=cfg.ca_file,
        timeout=timeout,
        url_path=URL,
        what="UFM",
    )
    if cfg.auth == "token":
        api = UfmApi(http, "token", token=_secret(cfg.token, "token"))
    else:
        api = UfmApi(
            http, cfg.auth, username=_secret(cfg.username, "username"), password=_secret(cfg.password, "password")
        )
    api.login()
    return api


def _secret(ref: str | None, name: str) -> str:
    if ref is None:  # the model refuses a style without its credentials; a located error all the same
        raise BackendError((*SECTION, name), f"auth needs {name} (a reference, e.g. env:VARIABLE)")
    return resolve(ref, (*SECTION, name))


def read_ufm(api: UfmApi) -> BackendState:
    """UFM's partitions now (without Default), in the one model."""
    answer = api.get_pkeys()
    try:
        return parse_pkeys(answer)
    except ValueError as exc:
        raise BackendError(URL, f"UFM at {api.http.base}: its pkeys answer cannot be read: {exc}") from None


# --- the difference --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Call:
    """One planned REST call: what to send and which of UfmApi's methods sends it."""

    kind: str  # create | put | post | remove | qos | delete
    method: str
    suffix: str
    pkey: int
    body: Mapping[str, Any] | None = None
    guids: tuple[int, ...] = ()

    def action(self, api: UfmApi) -> Action:
        verb = {"create": "add", "put": "set", "post": "add", "remove": "remove", "qos": "set"}.get(self.kind)
        text = f"{self.method} {api.path(self.suffix)}"
        if self.body is not None:
            text += " " + compact(self.body)
        return Action(verb or "delete", text, self.pkey)

    def send(self, api: UfmApi) -> Reply:
        body = self.body or {}
        if self.kind == "create":
            return api.create_pkey(body)
        if self.kind == "put":
            return api.put_guids(body)
        if self.kind == "post":
            return api.post_guids(body)
        if self.kind == "remove":
            return api.remove_guids(self.pkey, self.guids)
        if self.kind == "qos":
            return api.set_qos(body)
        return api.delete_pkey(self.pkey)


def _put(want: PartitionState) -> _Call:
    return _Call("put", "PUT", "/resources/pkeys/", want.pkey, members_body(want))


def _create(want: PartitionState, notes: list[str]) -> list[_Call]:
    calls = [_Call("create", "POST", "/resources/pkeys/add", want.pkey, create_body(want))]
    if want.members:
        calls.append(_put(want))
    else:
        notes.append(f"{fmt_pkey(want.pkey)}: created without members (no port GUID of its members is known yet)")
    return calls


def _member_calls(want: PartitionState, have: PartitionState, notes: list[str]) -> list[_Call]:
    wm, hm = want.member_map, have.member_map
    pk = fmt_pkey(want.pkey)
    if not wm:
        if hm:
            notes.append(
                f"{pk}: the spec leaves it no member, but UFM deletes a partition with its last member: its "
                f"{len(hm)} member(s) stay (remove the partition from the spec and set prune: true to delete it)"
            )
        if want.ipoib != have.ipoib:
            notes.append(f"{pk}: ip_over_ib is {have.ipoib}, planned {want.ipoib}: UFM sets it with members")
        return []
    added = {g: m for g, m in wm.items() if g not in hm}
    removed = sorted(g for g in hm if g not in wm)
    changed = any(hm[g] != m for g, m in wm.items() if g in hm)
    # a PUT carries every planned member; an add and a remove carry the changed ones only (a node replaced in a
    # 10,000-node partition: two GUIDs, not 220 kB again): the one carrying fewer GUIDs, one PUT on a tie
    put_smaller = len(wm) <= len(added) + len(removed)
    if changed or want.ipoib != have.ipoib or len(set(added.values())) > 1 or (added and removed and put_smaller):
        return [_put(want)]
    calls = []
    if added:  # added before removed: the partition never loses its last member on the way (UFM deletes it then)
        membership: Membership = next(iter(added.values()))
        calls.append(_Call("post", "POST", "/resources/pkeys/", want.pkey, add_guids_body(want, added, membership)))
    if removed:
        calls.append(
            _Call("remove", "DELETE", remove_guids_suffix(want.pkey, removed), want.pkey, guids=tuple(removed))
        )
    return calls


def _qos_differs(want: PartitionState, have: PartitionState) -> bool:
    return any(
        value is not None and value != getattr(have, name)
        for name, value in (("mtu", want.mtu), ("rate", want.rate), ("sl", want.sl))
    )


def _update(want: PartitionState, have: PartitionState, notes: list[str]) -> list[_Call]:
    calls = _member_calls(want, have, notes)
    if qos_fields(want) and _qos_differs(want, have):
        calls.append(_Call("qos", "PUT", "/resources/pkeys/qos_conf", want.pkey, qos_body(want)))
        if QOS_NOTE not in notes:
            notes.append(QOS_NOTE)
    return calls


def _unplanned(have: PartitionState, prune: bool, notes: list[str]) -> list[_Call]:
    if prune:
        return [_Call("delete", "DELETE", delete_pkey_suffix(have.pkey), have.pkey)]
    notes.append(f"{fmt_pkey(have.pkey)} ({len(have.members)} member(s)) is in UFM, not in the spec: {LEFT_ALONE}")
    return []


def reconcile(desired: BackendState, current: BackendState, prune: bool) -> tuple[list[_Call], list[str]]:
    """The calls that bring ``current`` to ``desired`` (pure), and the notes on what is left as it is."""
    calls: list[_Call] = []
    notes: list[str] = []
    for pkey in sorted(desired.partitions):
        want, have = desired.partitions[pkey], current.partitions.get(pkey)
        calls += _create(want, notes) if have is None else _update(want, have, notes)
    for pkey in sorted(set(current.partitions) - set(desired.partitions)):
        calls += _unplanned(current.partitions[pkey], prune, notes)
    return calls, notes


# --- plan and apply --------------------------------------------------------------------------------------


def _planned(api: UfmApi, cfg: UfmSm, desired: BackendState) -> tuple[BackendPlan, list[_Call]]:
    current = read_ufm(api)
    calls, notes = reconcile(desired, current, cfg.prune)
    plan = BackendPlan("ufm", desired, current, [c.action(api) for c in calls], notes)
    return plan, calls


def plan_ufm(api: UfmApi, cfg: UfmSm, desired: BackendState) -> BackendPlan:
    """Read UFM and plan the difference (nothing is changed)."""
    return _planned(api, cfg, desired)[0]


def apply_ufm(api: UfmApi, cfg: UfmSm, desired: BackendState) -> BackendResult:
    """Read UFM, then send the difference in order; the first refused call stops the run with UFM's words, the
    first UFM fails on (a server error, no answer, a reset) with what failed."""
    plan, calls = _planned(api, cfg, desired)
    result = BackendResult(plan)
    for action, call in zip(plan.actions, calls, strict=True):
        try:
            reply = call.send(api)
        except BackendError as broken:  # a server error, no answer or a reset while it was sent
            result.failed, result.message, result.broken = action, broken.message, True
            break
        if not reply.ok:
            result.failed, result.message = action, reply.message
            break
        result.done.append(action)
        if reply.note:
            plan.notes.append(reply.note)
    return result
