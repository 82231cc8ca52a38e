"""One entry for ``plan`` and ``apply`` whatever the back end: connect (credentials from their references),
read the back end's state, and plan or send the difference from the spec's desired state. A refusal or an
unreachable back end is located in the spec: the field that names what to fix (:func:`refusal_path`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import CONTRACT_TESTED
from ibprov.clusterspec.positions import Path
from ibprov.identity.guids import GuidBook
from ibprov.smbackend.actions import Action, BackendPlan, BackendResult
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.state import BackendState
from ibprov.smbackend.switch import backend as switch
from ibprov.smbackend.ufm import backend as ufm

__all__ = ["backend_apply", "backend_label", "backend_plan", "backend_state", "refusal_path"]


def backend_label(loaded: LoadedSpec) -> str:
    """How reports and the CLI name the back end: 'switch leaf01 (https://...)', with the contract-tested label."""
    sm = loaded.spec.subnet_manager
    if sm.backend == "switch" and sm.switch is not None:
        return f"switch {sm.switch.name} ({sm.switch.url}), {CONTRACT_TESTED}"
    if sm.backend == "ufm" and sm.ufm is not None:
        return f"UFM ({sm.ufm.url}), {CONTRACT_TESTED}"
    return "host OpenSM (the ib_sm role)"


def _notes(plan: BackendPlan, unresolved: list[str]) -> BackendPlan:
    if unresolved:
        plan.notes.append(
            f"ports of {', '.join(unresolved)} are left out of the partitions until their GUIDs are known "
            "(`ibprov discover` writes the lock file)"
        )
    return plan


class _Connected(NamedTuple):
    """A logged-in back end's three operations (the one place that tells the back ends apart)."""

    read: Callable[[], BackendState]
    plan: Callable[[BackendState], BackendPlan]
    apply: Callable[[BackendState], BackendResult]


def _connect(loaded: LoadedSpec) -> _Connected:
    """Log in to the spec's back end (credentials from their references); a located BackendError if it fails."""
    sm = loaded.spec.subnet_manager
    if sm.backend == "switch" and sm.switch is not None:
        sw_cfg, sw_api = sm.switch, switch.connect(sm.switch)
        return _Connected(
            lambda: switch.read_switch(sw_api),
            lambda want: switch.plan_switch(sw_api, sw_cfg, want),
            lambda want: switch.apply_switch(sw_api, sw_cfg, want),
        )
    if sm.backend == "ufm" and sm.ufm is not None:
        ufm_cfg, ufm_api = sm.ufm, ufm.connect(sm.ufm)
        return _Connected(
            lambda: ufm.read_ufm(ufm_api),
            lambda want: ufm.plan_ufm(ufm_api, ufm_cfg, want),
            lambda want: ufm.apply_ufm(ufm_api, ufm_cfg, want),
        )
    raise ValueError("an SM back end is subnet_manager.backend switch or ufm")


def backend_state(loaded: LoadedSpec) -> BackendState:
    """What the back end holds now (verify's view; nothing is changed)."""
    return _connect(loaded).read()


def backend_plan(loaded: LoadedSpec, book: GuidBook) -> BackendPlan:
    """Read the back end and plan the difference (nothing is changed)."""
    desired, parts = desired_state(loaded, book)
    return _notes(_connect(loaded).plan(desired), list(parts.unresolved))


def backend_apply(loaded: LoadedSpec, book: GuidBook) -> BackendResult:
    """Read the back end, then send the difference in order, stopping at the first refusal."""
    desired, parts = desired_state(loaded, book)
    result = _connect(loaded).apply(desired)
    _notes(result.plan, list(parts.unresolved))
    return result


def refusal_path(loaded: LoadedSpec, action: Action) -> Path:
    """Where in the spec a refused action came from: its partition, else the back end's section."""
    sm = loaded.spec.subnet_manager
    if action.pkey is not None:
        for i, part in enumerate(loaded.spec.partitions):
            if part.pkey == action.pkey:
                return ("partitions", i)
    return ("subnet_manager", sm.backend)
