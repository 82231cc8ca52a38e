"""The checks of ``verify --fabric``: pure functions of (plan, observation) -> findings.

Each module holds one family (cabling, link, counters, sm, pkey, qos, collect) and declares its check
ids in ``CHECKS``; :data:`FAMILIES` is the section's catalogue, run by :func:`ibprov.verify.judge.run_checks`.
"""

from __future__ import annotations

from ibprov.verify.fabric.checks import cabling, counters, incomplete, links, pkeys, qos, rails, sm
from ibprov.verify.fabric.observation import Observation
from ibprov.verify.fabric.plan import Plan
from ibprov.verify.judge import CheckFamily

__all__ = ["FAMILIES"]

FAMILIES: tuple[CheckFamily[Plan, Observation], ...] = tuple(
    CheckFamily(module.check, module.CHECKS) for module in (cabling, rails, links, counters, sm, pkeys, qos, incomplete)
)
