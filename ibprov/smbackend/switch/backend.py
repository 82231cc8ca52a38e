"""Plan and apply the SM embedded in a managed switch: log in, read ``show running-config`` back into the one
model first, then send only the difference from the spec's desired state (:func:`~.commands.diff_commands`),
one command per request, stopping at the first one the switch refuses or fails on (a server error, no answer,
a reset connection) -- nothing after it is sent, and the result names it with the switch's own words or what
failed. A second run against the resulting state sends nothing that
changes state."""

from __future__ import annotations

from ibprov.clusterspec.model import SwitchSm
from ibprov.smbackend.actions import BackendPlan, BackendResult
from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.http import HttpSession
from ibprov.smbackend.secrets import resolve
from ibprov.smbackend.state import BackendState, SmState
from ibprov.smbackend.switch.api import PASSWORD, URL, USERNAME, CommandRefused, SwitchApi
from ibprov.smbackend.switch.commands import CARRIED, allows_both_pkeys, diff_commands, parse_commands

__all__ = ["apply_switch", "connect", "plan_switch", "read_switch"]


def connect(cfg: SwitchSm, *, timeout: float = 30.0) -> SwitchApi:
    """Resolve the credentials from their references and log in (a located BackendError when that fails)."""
    http = HttpSession(
        base=cfg.url,
        verify_tls=cfg.verify_tls,
        ca_file=cfg.ca_file,
        timeout=timeout,
        url_path=URL,
        what=f"switch {cfg.name}",
    )
    api = SwitchApi(http)
    api.login(resolve(cfg.username, USERNAME), resolve(cfg.password, PASSWORD))
    return api


def _read(api: SwitchApi) -> tuple[BackendState, bool]:
    """The switch's state and whether it allows both pkeys. A running configuration that says nothing of the
    SM is the default: SM off, priority not shown."""
    lines = api.running_config()
    try:
        state = parse_commands(lines)
    except ValueError as exc:
        raise BackendError(
            URL, f"{api.http.what} at {api.http.base}: its running configuration cannot be read: {exc}"
        ) from None
    if state.sm is None:
        state = BackendState(SmState(False, None), state.partitions)
    return state, allows_both_pkeys(lines)


def read_switch(api: SwitchApi) -> BackendState:
    """The switch's SM state and partitions now (without Default), in the one model."""
    return _read(api)[0]


def plan_switch(api: SwitchApi, cfg: SwitchSm, desired: BackendState) -> BackendPlan:
    """Read the switch and plan the commands of the difference (nothing is changed). The plan's ``desired`` is
    what the switch carries of it (name, IPoIB flag, members; not MTU, rate or SL)."""
    current, allow_both = _read(api)
    actions, notes = diff_commands(current, desired, prune=cfg.prune, save=cfg.save, allow_both=allow_both)
    return BackendPlan("switch", desired.only(CARRIED), current, actions, notes)


def apply_switch(api: SwitchApi, cfg: SwitchSm, desired: BackendState) -> BackendResult:
    """Read the switch, then send the difference in order; the first refused command stops the run with the
    switch's words (``result.failed``, ``result.message``)."""
    result = BackendResult(plan_switch(api, cfg, desired))
    for action in result.plan.actions:
        try:
            api.run(action.text)
        except CommandRefused as refused:
            result.failed, result.message = action, refused.message
            break
        except BackendError as broken:  # a server error, no answer or a reset while it was sent
            result.failed, result.message, result.broken = action, broken.message, True
            break
        result.done.append(action)
    return result
