"""The checks of ``verify --backend``: pure functions of (plan, the back end's view) -> findings.

The view is compared on the fields the back end carries only (``plan.carried``: the switch's CLI holds no MTU,
rate or SL; UFM keeps no name before 6.22), with the same comparison ``plan`` and ``apply`` use
(:func:`ibprov.smbackend.state.differences`). A back end that did not answer is one ``backend.reachable``
finding; every other check then examines nothing (it cannot judge what it did not see).
"""

from __future__ import annotations

from collections.abc import Sequence

from ibprov.pkey import DEFAULT_BASE
from ibprov.report.model import Finding, Severity
from ibprov.smbackend.state import BackendState, PartitionState, differences
from ibprov.verify.backend.observation import BackendView
from ibprov.verify.backend.plan import BackendCheckPlan
from ibprov.verify.judge import Check, CheckFamily

__all__ = ["FAMILIES", "as_planned", "held", "partition_object", "unplanned_object"]

MEMBER_LINES = 3  # member differences spelt out per partition; the rest are counted


def held(plan: BackendCheckPlan, view: BackendView) -> BackendState | None:
    """The back end's state reduced to what it carries (None: it did not answer), Default left out: every
    back end keeps its own and ibprov never touches it."""
    if view.error is not None or view.state is None:
        return None
    reduced = view.state.only(plan.carried)
    return BackendState(reduced.sm, {k: p for k, p in reduced.partitions.items() if k != DEFAULT_BASE})


def partition_object(plan: BackendCheckPlan, pkey: int) -> str:
    return f"{plan.names.get(pkey, 'unnamed')} (0x{pkey:04x})"


def unplanned_object(part: PartitionState) -> str:
    return f"0x{part.pkey:04x} ({part.name or 'unnamed'})"


def _backend(plan: BackendCheckPlan, _view: BackendView) -> Sequence[str]:
    return [plan.backend]


def _planned(plan: BackendCheckPlan, view: BackendView) -> Sequence[str]:
    if held(plan, view) is None:
        return []
    return [partition_object(plan, k) for k in sorted(plan.desired.partitions)]


def _unplanned_objects(plan: BackendCheckPlan, view: BackendView) -> Sequence[str]:
    if held(plan, view) is None or view.state is None:
        return []
    return [unplanned_object(p) for k, p in sorted(view.state.partitions.items()) if k != DEFAULT_BASE]


def _switch_sm(plan: BackendCheckPlan, view: BackendView) -> Sequence[str]:
    return [plan.backend] if plan.sm is not None and held(plan, view) is not None else []


REACHABLE = Check(
    "backend.reachable",
    "The SM back end answers: login with the spec's credentials and its state read",
    Severity.ERROR,
    "check the located field: the URL (address, HTTPS on, the CA in ca_file), the credential references "
    "(env:/vault: set where ibprov runs) or auth; `ibprov plan SPEC` reads the back end the same way",
    _backend,
    object_kind="the back end (switch NAME or UFM URL)",
)
PARTITION = Check(
    "backend.partition",
    "The back end holds every planned partition as planned (members and their membership, the IPoIB flag and "
    "the limits it carries)",
    Severity.ERROR,
    "run `ibprov apply SPEC` (it sends only the difference)",
    _planned,
    object_kind="the planned partition (name and P_Key)",
)
UNPLANNED = Check(
    "backend.unplanned",
    "The back end holds no partition the plan does not name",
    Severity.WARNING,
    "add the partition to the spec, or set prune: true (subnet_manager.switch or .ufm) and `ibprov apply SPEC` "
    "removes it; leave it when another tool (ib-kubernetes) owns it",
    _unplanned_objects,
    object_kind="the partition the back end holds (P_Key and its name there)",
    severity_note="error when the spec sets prune: true (apply would remove it, so it should be gone)",
)
SM = Check(
    "backend.sm",
    "The switch's embedded SM is enabled with the planned priority (backend: switch)",
    Severity.ERROR,
    "run `ibprov apply SPEC` (it sends `ib sm` and `ib sm sm-priority N`); `verify --fabric` shows whether it "
    "won the election",
    _switch_sm,
    object_kind="the back end (switch NAME)",
)


def _reachable_findings(plan: BackendCheckPlan, view: BackendView) -> list[Finding]:
    if view.error is not None:
        return [REACHABLE.finding(plan.backend, "answers (login and read)", view.error)]
    if view.state is None:
        return [REACHABLE.finding(plan.backend, "answers (login and read)", "nothing was read")]
    return []


def _describe(part: PartitionState, carried: Sequence[str]) -> str:
    words = [f"{len(part.members)} member(s)"]
    if "ipoib" in carried:
        words.append("ipoib" if part.ipoib else "no ipoib")
    for name in ("mtu", "rate", "sl"):
        value = getattr(part, name)
        if name in carried and value is not None:
            words.append(f"{name} {value}")
    return ", ".join(words)


def _summary(pkey: int, lines: Sequence[str]) -> str:
    """``differences`` lines of one partition, without their P_Key, member lines past MEMBER_LINES counted."""
    prefix = f"0x{pkey:04x}: "
    text = [line.removeprefix(prefix) for line in lines]
    if text == ["missing"]:
        return "not held: the back end has no partition with this P_Key"
    fields = [t for t in text if not t.startswith("member ")]
    members = [t for t in text if t.startswith("member ")]
    more = [f"+{len(members) - MEMBER_LINES} more member difference(s)"] if len(members) > MEMBER_LINES else []
    return "; ".join([*fields, *members[:MEMBER_LINES], *more])


LIMITS = ("mtu", "rate", "sl")


def as_planned(want: PartitionState, got: PartitionState) -> PartitionState:
    """``got`` with the limits the plan leaves unset cleared: there the back end keeps its own default (UFM's
    mtu_limit 2, rate_limit 2.5) and apply sends nothing, so verify compares nothing (as apply's reconcile)."""
    return got.without(name for name in LIMITS if getattr(want, name) is None)


def _partition_findings(plan: BackendCheckPlan, view: BackendView) -> list[Finding]:
    have = held(plan, view)
    if have is None:
        return []
    out = []
    for pkey, want in sorted(plan.desired.partitions.items()):
        got = have.partitions.get(pkey)
        got = None if got is None else as_planned(want, got)
        lines = differences({pkey: want}, {pkey: got} if got is not None else {})
        if lines:
            expected = f"held as planned: {_describe(want, plan.carried)}"
            out.append(PARTITION.finding(partition_object(plan, pkey), expected, _summary(pkey, lines)))
    return out


def _unplanned_findings(plan: BackendCheckPlan, view: BackendView) -> list[Finding]:
    if held(plan, view) is None or view.state is None:
        return []
    severity = Severity.ERROR if plan.prune else Severity.WARNING
    expected = "not held (prune: true: apply removes it)" if plan.prune else "not held (the plan does not name it)"
    fix = (
        "`ibprov apply SPEC` removes it (prune: true); if another tool (ib-kubernetes) owns it, set prune: false "
        "or add it to the spec"
        if plan.prune
        else None
    )
    return [
        UNPLANNED.finding(
            unplanned_object(part),
            expected,
            f"held, {_describe(part, plan.carried)}",
            severity=severity,
            fix=fix,
        )
        for pkey, part in sorted(view.state.partitions.items())
        if pkey != DEFAULT_BASE and pkey not in plan.desired.partitions
    ]


def _sm_text(enabled: bool, priority: int | None) -> str:
    shown = "not set (the switch's default)" if priority is None else str(priority)
    return f"SM {'enabled' if enabled else 'disabled'}, priority {shown}"


def _sm_findings(plan: BackendCheckPlan, view: BackendView) -> list[Finding]:
    have = held(plan, view)
    want = plan.sm
    if have is None or want is None:
        return []
    expected = _sm_text(want.enabled, want.priority)
    if have.sm is None:
        return [SM.finding(plan.backend, expected, "the SM's state was not in what the switch answered")]
    if have.sm != want:
        return [SM.finding(plan.backend, expected, _sm_text(have.sm.enabled, have.sm.priority))]
    return []


FAMILIES: tuple[CheckFamily[BackendCheckPlan, BackendView], ...] = (
    CheckFamily(_reachable_findings, (REACHABLE,)),
    CheckFamily(_partition_findings, (PARTITION,)),
    CheckFamily(_unplanned_findings, (UNPLANNED,)),
    CheckFamily(_sm_findings, (SM,)),
)
