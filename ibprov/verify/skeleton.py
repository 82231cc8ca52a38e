"""The one skeleton of every verify section: time the run, build the plan and collect the observation (what
the section fills in), run the section's check families over them (:func:`~ibprov.verify.judge.run_checks`)
and put its report together with its facts and notes.

A section's ``section.py`` declares its :class:`Skeleton` (name, title, check families, facts and notes) and
keeps only what is particular to it: how it reaches the hosts, builds its plan and collects::

    NODES = Skeleton("nodes", "Nodes", FAMILIES, SCHEMA, facts=nodes_facts)
    report = NODES.run(observe, collected_from=collector.where)  # observe() -> (plan, observation)
    SECTION = NODES.section(_run)  # the registry's entry point: (spec, options, prestarted) -> report
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ibprov.clusterspec import LoadedSpec, collector_paused
from ibprov.report.model import SectionFacts, SectionReport, utc_now_text
from ibprov.verify.judge import CheckFamily, run_checks
from ibprov.verify.registry import Section, VerifyOptions

__all__ = ["Skeleton"]

P = TypeVar("P")  # the section's plan
Obs = TypeVar("Obs")  # the section's observation


def _no_notes(_plan: object, _obs: object) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Skeleton(Generic[P, Obs]):
    """What every section's report is made of; the section fills in its parts."""

    name: str  # "fabric": the CLI flag --fabric, the report's section key
    title: str  # "Fabric"
    families: tuple[CheckFamily[P, Obs], ...]  # its checks, in catalogue order
    facts_schema: Mapping[str, Any]  # the JSON Schema of its facts in report.json
    facts: Callable[[P, Obs], SectionFacts]  # what the report says besides the checks
    notes: Callable[[P, Obs], Iterable[str]] = _no_notes  # what the report notes of this plan and observation

    def report(
        self,
        plan: P,
        obs: Obs,
        *,
        started: str = "",
        duration: float = 0.0,
        collected_from: str = "",
        notes: Iterable[str] = (),
    ) -> SectionReport:
        """The section report of one observation against the plan (no I/O): every check with the objects it
        examined and its findings, the facts, and the notes: ``notes`` (what the caller knows beyond the plan
        and the observation) first, then the section's own. A large fabric's judging builds millions of
        small objects that live as long as the report: no cyclic collection meanwhile."""
        with collector_paused():
            return SectionReport(
                name=self.name,
                title=self.title,
                collected_from=collected_from,
                started=started,
                duration_seconds=duration,
                checks=run_checks(self.families, plan, obs),
                facts=self.facts(plan, obs),
                notes=(*notes, *self.notes(plan, obs)),
            )

    def run(
        self, observe: Callable[[], tuple[P, Obs]], *, collected_from: str, notes: Iterable[str] = ()
    ) -> SectionReport:
        """Time ``observe`` (it builds the plan and collects the observation, in the order the section needs)
        and report what it returns; the duration is the collection's, not the checks'."""
        started, t0 = utc_now_text(), time.monotonic()
        plan, obs = observe()
        duration = time.monotonic() - t0
        return self.report(plan, obs, started=started, duration=duration, collected_from=collected_from, notes=notes)

    def section(self, run: Callable[[LoadedSpec, VerifyOptions, Any], SectionReport]) -> Section:
        """The registry's entry point of this section; ``run``: the section as the CLI runs it."""
        return Section(self.name, self.title, self.families, self.facts_schema, run)
