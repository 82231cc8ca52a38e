"""What the back end should hold, from the spec: the desired state (:func:`ibprov.smbackend.desired.desired_state`,
the one computation ``plan`` and ``apply`` send from) reduced to the fields this back end carries, the switch SM's
planned state, and what the check texts need (where the back end is, the partitions' names, ``prune``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ibprov.clusterspec import LoadedSpec
from ibprov.identity.guids import GuidBook
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.state import BackendState, SmState
from ibprov.smbackend.switch.commands import CARRIED as SWITCH_CARRIED
from ibprov.smbackend.ufm.payload import CARRIED as UFM_CARRIED

__all__ = ["BackendCheckPlan", "BackendKind", "backend_place", "build_backend_plan"]

BackendKind = Literal["switch", "ufm"]


@dataclass(frozen=True)
class BackendCheckPlan:
    kind: BackendKind
    backend: str  # the object of backend.reachable and backend.sm: "switch leaf01", "UFM https://ufm.example.org"
    where: str  # "switch leaf01 (https://...)", "UFM (https://...)": where the section collected
    carried: tuple[str, ...]  # the partition fields this back end holds (the others are not compared)
    desired: BackendState  # reduced to ``carried``; its sm is the planned SM (switch), None for UFM
    prune: bool  # apply removes what the plan does not name: an unplanned partition is then an error
    names: Mapping[int, str] = field(default_factory=dict)  # pkey -> the spec's partition name
    unresolved: tuple[str, ...] = ()  # nodes whose partition ports have no GUID yet (left out of the members)

    @property
    def sm(self) -> SmState | None:
        """The switch SM as planned (on, with the spec's priority); None: the back end has no SM switch (UFM)."""
        return self.desired.sm


def backend_place(loaded: LoadedSpec) -> tuple[BackendKind, str, str]:
    """(kind, object, where) of the spec's back end; ValueError for host OpenSM (it has no back end to read)."""
    sm = loaded.spec.subnet_manager
    if sm.backend == "switch" and sm.switch is not None:
        name = f"switch {sm.switch.name}"
        return "switch", name, f"{name} ({sm.switch.url})"
    if sm.backend == "ufm" and sm.ufm is not None:
        return "ufm", f"UFM {sm.ufm.url}", f"UFM ({sm.ufm.url})"
    raise ValueError("a back-end plan is for subnet_manager.backend switch or ufm")


def build_backend_plan(loaded: LoadedSpec, book: GuidBook) -> BackendCheckPlan:
    kind, backend, where = backend_place(loaded)
    sm = loaded.spec.subnet_manager
    carried = SWITCH_CARRIED if kind == "switch" else UFM_CARRIED
    prune = sm.switch.prune if kind == "switch" and sm.switch is not None else bool(sm.ufm and sm.ufm.prune)
    desired, parts = desired_state(loaded, book)
    return BackendCheckPlan(
        kind=kind,
        backend=backend,
        where=where,
        carried=tuple(carried),
        desired=desired.only(carried),
        prune=prune,
        names={p.pkey.base: p.name for p in parts.partitions},
        unresolved=tuple(parts.unresolved),
    )
