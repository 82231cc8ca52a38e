"""The checks of ``verify --fabric``: pure functions of (plan, observation) -> findings.

Each module holds one family (cabling, link, counters, sm, pkey, qos, collect) and declares its check
ids in ``CHECKS``; :func:`run_checks` runs them all and groups the findings per check id.
"""

from __future__ import annotations

from ibprov.report.model import CheckResult
from ibprov.verify.checks import cabling, collection, counters, links, pkeys, qos, sm
from ibprov.verify.checks.base import Check, CheckFn
from ibprov.verify.observation import Observation
from ibprov.verify.plan import Plan

__all__ = ["ALL_CHECKS", "FAMILIES", "run_checks"]

FAMILIES: tuple[tuple[CheckFn, tuple[Check, ...]], ...] = (
    (cabling.check, cabling.CHECKS),
    (links.check, links.CHECKS),
    (counters.check, counters.CHECKS),
    (sm.check, sm.CHECKS),
    (pkeys.check, pkeys.CHECKS),
    (qos.check, qos.CHECKS),
    (collection.check, collection.CHECKS),
)
ALL_CHECKS: tuple[Check, ...] = tuple(c for _fn, checks in FAMILIES for c in checks)


def run_checks(plan: Plan, obs: Observation) -> list[CheckResult]:
    """Every check, in catalogue order, with the objects it examined and its findings."""
    results = []
    for fn, checks in FAMILIES:
        findings = fn(plan, obs)
        known = {c.id for c in checks}
        stray = {f.check for f in findings} - known
        if stray:
            raise AssertionError(f"{fn.__module__} reported undeclared check ids {sorted(stray)}")
        for c in checks:
            mine = tuple(sorted((f for f in findings if f.check == c.id), key=lambda f: f.object))
            results.append(CheckResult(c.id, c.title, tuple(c.objects(plan, obs)), mine))
    return results
