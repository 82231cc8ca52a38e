"""The one check runner of every verify section.

A section declares its checks (:class:`Check`: a stable dotted id, title, default severity, fix hint, and
the objects it examines) and groups them in families (:class:`CheckFamily`: one pure function of
``(plan, observation) -> findings`` and the checks it may report). :func:`run_checks` runs every family,
refuses a finding whose check id the family did not declare, and returns one
:class:`~ibprov.report.model.CheckResult` per check: the objects it examined and its findings. An object
examined without a finding passed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ibprov.report.model import CheckResult, Finding, Severity

__all__ = ["Check", "CheckFamily", "catalogue", "run_checks"]

P = TypeVar("P")  # the section's plan
Obs = TypeVar("Obs")  # the section's observation


@dataclass(frozen=True)
class Check(Generic[P, Obs]):
    id: str  # stable dotted id, e.g. "cabling.miswire"
    title: str  # what passes, e.g. "Each cable ends at the planned port"
    severity: Severity
    fix: str
    objects: Callable[[P, Obs], Sequence[str]]  # what the check examines (each passes unless it has a finding)
    object_kind: str = ""  # for the catalogue: what an object is ("the cable (its CA / lower-tier end)")
    severity_note: str = ""  # for the catalogue: when a finding gets another severity
    # objects judged against something other than the plan (the twin's stand-in rate), with why
    caveats: Callable[[P, Obs], Mapping[str, str]] | None = None
    # objects the check could not judge here, with why ("skipped: no RDMA device on node03")
    skips: Callable[[P, Obs], Mapping[str, str]] | None = None

    def finding(
        self, obj: str, expected: str, observed: str, *, severity: Severity | None = None, fix: str | None = None
    ) -> Finding:
        return Finding(self.id, severity or self.severity, obj, expected, observed, fix or self.fix)


@dataclass(frozen=True)
class CheckFamily(Generic[P, Obs]):
    """One pure check function and the checks whose findings it may return."""

    run: Callable[[P, Obs], list[Finding]]
    checks: tuple[Check[P, Obs], ...]


def catalogue(families: Iterable[CheckFamily[P, Obs]]) -> tuple[Check[P, Obs], ...]:
    """Every declared check, in catalogue order; an id declared twice is refused."""
    checks = tuple(c for family in families for c in family.checks)
    ids = [c.id for c in checks]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(f"check ids declared twice: {twice}")
    return checks


def run_checks(families: Iterable[CheckFamily[P, Obs]], plan: P, obs: Obs) -> tuple[CheckResult, ...]:
    """Every check, in catalogue order, with the objects it examined and its findings (sorted by object)."""
    results = []
    for family in families:
        findings = family.run(plan, obs)
        known = {c.id for c in family.checks}
        stray = {f.check for f in findings} - known
        if stray:
            name = getattr(family.run, "__qualname__", repr(family.run))
            raise AssertionError(f"{family.run.__module__}.{name} reported undeclared check ids {sorted(stray)}")
        for c in family.checks:
            mine = tuple(sorted((f for f in findings if f.check == c.id), key=lambda f: f.object))
            caveats = tuple(sorted(c.caveats(plan, obs).items())) if c.caveats is not None else ()
            skips = tuple(c.skips(plan, obs).items()) if c.skips is not None else ()
            results.append(CheckResult(c.id, c.title, tuple(c.objects(plan, obs)), mine, caveats, skips))
    return tuple(results)
