"""``verify --backend``: the SM back end's own view against the plan -- the switch's running configuration or
UFM's pkeys hold every planned partition as planned, nothing the plan does not name (an error with
``prune: true``), and the switch's SM is on with the planned priority.

Collection (:mod:`.collect`) reads the back end with the reader ``plan`` and ``apply`` use; the checks
(:mod:`.checks`) are pure. What the fabric does with it (the HCAs' PKey tables, the SM election) is
``verify --fabric``'s to judge: the back end holding the right partitions is necessary, not sufficient.
"""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import CONTRACT_TESTED
from ibprov.errors import IbprovError
from ibprov.identity.guids import GuidBook
from ibprov.report.model import SectionReport
from ibprov.verify.backend.checks import FAMILIES, as_planned, held
from ibprov.verify.backend.collect import read_backend
from ibprov.verify.backend.facts import SCHEMA, BackendFacts
from ibprov.verify.backend.observation import BackendView
from ibprov.verify.backend.plan import BackendCheckPlan, build_backend_plan
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.skeleton import Skeleton

__all__ = ["BACKEND", "SECTION", "TITLE", "check_backend", "verify_backend"]

TITLE = "SM back end"
ONLY_THE_PRODUCT = (
    "only the product proves that it accepts these commands and values on its firmware release, the SM "
    "election and handover, and that the HCAs' PKey tables follow it (verify --fabric checks the tables)"
)


def _facts(plan: BackendCheckPlan, view: BackendView) -> BackendFacts:
    have = held(plan, view)
    if have is None:
        return BackendFacts(plan.kind, plan.where, False, len(plan.desired.partitions), 0, 0, False)
    unplanned = [k for k in have.partitions if k not in plan.desired.partitions]
    # compared as the partition check compares (and apply reconciles): a limit the plan leaves unset is the
    # back end's own default, never a difference
    planned_held = all(
        (got := have.partitions.get(k)) is not None and as_planned(p, got) == p
        for k, p in plan.desired.partitions.items()
    )
    sm_held = plan.sm is None or have.sm == plan.sm
    in_sync = planned_held and sm_held and not (plan.prune and unplanned)
    return BackendFacts(
        plan.kind, plan.where, True, len(plan.desired.partitions), len(have.partitions), len(unplanned), in_sync
    )


def _notes(plan: BackendCheckPlan, _view: BackendView) -> list[str]:
    notes = [
        f"{plan.kind} back end: {CONTRACT_TESTED}",
        ONLY_THE_PRODUCT,
        f"compared: {', '.join(plan.carried)} (what the {plan.kind} carries; the spec's other partition fields "
        "are not sent to it)",
    ]
    if plan.unresolved:
        notes.append(
            f"ports of {', '.join(plan.unresolved)} are left out of the planned members until their GUIDs are "
            "known (`ibprov discover` writes the lock file)"
        )
    return notes


BACKEND: Skeleton[BackendCheckPlan, BackendView] = Skeleton("backend", TITLE, FAMILIES, SCHEMA, _facts, _notes)
check_backend = BACKEND.report  # the section report of one view against the plan (no I/O)


def verify_backend(loaded: LoadedSpec, book: GuidBook) -> SectionReport:
    """Read the spec's back end and judge it against the plan; an unanswered back end is a finding."""
    plan = build_backend_plan(loaded, book)

    def observe() -> tuple[BackendCheckPlan, BackendView]:
        return plan, read_backend(loaded)

    return BACKEND.run(observe, collected_from=plan.where)


def _run(loaded: LoadedSpec, _options: VerifyOptions, _started: Any) -> SectionReport:
    if loaded.spec.subnet_manager.backend == "opensm":
        raise IbprovError(
            f"{loaded.path or 'the spec'}: verify --backend reads a switch or UFM SM back end, and "
            "subnet_manager.backend is opensm: OpenSM's partitions are read from the fabric by verify --fabric"
        )
    return verify_backend(loaded, GuidBook.for_spec(loaded))


SECTION = BACKEND.section(_run)
