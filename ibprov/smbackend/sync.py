"""One entry for ``plan`` and ``apply`` whatever the back end: connect (credentials from their references),
read the back end's state, and plan or send the difference from the spec's desired state. A refusal or an
unreachable back end is located in the spec: the field that names what to fix (:func:`refusal_path`)."""

from __future__ import annotations

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import CONTRACT_TESTED
from ibprov.clusterspec.positions import Path
from ibprov.identity.guids import GuidBook
from ibprov.smbackend.actions import Action, BackendPlan, BackendResult
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.switch import backend as switch
from ibprov.smbackend.ufm import backend as ufm

__all__ = ["backend_apply", "backend_label", "backend_plan", "refusal_path"]


def backend_label(loaded: LoadedSpec) -> str:
    """How reports and the CLI name the back end: 'switch leaf01 (https://...)', with the contract-tested label."""
    sm = loaded.spec.subnet_manager
    if sm.backend == "switch" and sm.switch is not None:
        return f"switch {sm.switch.name} ({sm.switch.url}), {CONTRACT_TESTED}"
    if sm.backend == "ufm" and sm.ufm is not None:
        return f"UFM ({sm.ufm.url}), {CONTRACT_TESTED}"
    return "host OpenSM (the ib_sm role)"


def _notes(loaded: LoadedSpec, plan: BackendPlan, unresolved: list[str]) -> BackendPlan:
    if unresolved:
        plan.notes.append(
            f"ports of {', '.join(unresolved)} are left out of the partitions until their GUIDs are known "
            "(`ibprov discover` writes the lock file)"
        )
    return plan


def backend_plan(loaded: LoadedSpec, book: GuidBook) -> BackendPlan:
    """Read the back end and plan the difference (nothing is changed)."""
    sm = loaded.spec.subnet_manager
    desired, parts = desired_state(loaded, book)
    if sm.backend == "switch" and sm.switch is not None:
        plan = switch.plan_switch(switch.connect(sm.switch), sm.switch, desired)
    elif sm.backend == "ufm" and sm.ufm is not None:
        plan = ufm.plan_ufm(ufm.connect(sm.ufm), sm.ufm, desired)
    else:
        raise ValueError("backend_plan is for backend: switch or ufm")
    return _notes(loaded, plan, list(parts.unresolved))


def backend_apply(loaded: LoadedSpec, book: GuidBook) -> BackendResult:
    """Read the back end, then send the difference in order, stopping at the first refusal."""
    sm = loaded.spec.subnet_manager
    desired, parts = desired_state(loaded, book)
    if sm.backend == "switch" and sm.switch is not None:
        result = switch.apply_switch(switch.connect(sm.switch), sm.switch, desired)
    elif sm.backend == "ufm" and sm.ufm is not None:
        result = ufm.apply_ufm(ufm.connect(sm.ufm), sm.ufm, desired)
    else:
        raise ValueError("backend_apply is for backend: switch or ufm")
    _notes(loaded, result.plan, list(parts.unresolved))
    return result


def refusal_path(loaded: LoadedSpec, action: Action) -> Path:
    """Where in the spec a refused action came from: its partition, else the back end's section."""
    sm = loaded.spec.subnet_manager
    if action.pkey is not None:
        for i, part in enumerate(loaded.spec.partitions):
            if part.pkey == action.pkey:
                return ("partitions", i)
    return ("subnet_manager", sm.backend)
