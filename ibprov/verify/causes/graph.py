"""The cause graph of one report: for each finding, the finding that explains it (if any), by the first rule of
:data:`~ibprov.verify.causes.rules.RULES` that ties them.

Findings are taken worst first, and so are the candidate causes, so the graph is the same for the same report.
An edge that would close a cycle (a finding explaining, through others, its own cause) is not added: the
finding keeps looking for another cause, and a finding nothing explains is a cause. Each finding has at
most one direct cause, so every chain ends at a cause (:meth:`~ibprov.report.model.Report.root_of`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ibprov.report.model import Explanation, Finding, FindingKey, Report
from ibprov.verify.causes.rules import RULES, Rule
from ibprov.verify.causes.subjects import Fabric, Subjects

__all__ = ["explain", "explain_report"]


def _key(f: Finding) -> FindingKey:
    return (f.check, f.object)


def _subjects(fabric: Fabric, finding: Finding) -> Subjects:
    # a finding about the fabric as a whole (perf.suspect, sm.master) names what it is about in its words
    text = finding.object if finding.object != "fabric" else f"{finding.observed} {finding.expected}"
    return fabric.subjects(text)


def _closes_a_cycle(explained: Mapping[FindingKey, Explanation], symptom: FindingKey, cause: FindingKey) -> bool:
    """Whether ``cause`` is ``symptom`` or explained, through others, by it (``explained`` has no cycle: each
    edge was added only when this said no)."""
    key: FindingKey | None = cause
    while key is not None:
        if key == symptom:
            return True
        why = explained.get(key)
        key = why.cause if why is not None else None
    return False


def _candidates(rule: Rule, findings: Sequence[Finding]) -> list[Finding]:
    return sorted((f for f in findings if rule.may_cause(f.check)), key=lambda f: rule.rank(f.check))


def explain(
    findings: Sequence[Finding], fabric: Fabric, rules: Sequence[Rule] = RULES
) -> dict[FindingKey, Explanation]:
    """Symptom -> its explanation, over ``findings`` (worst first, as :attr:`Report.findings` gives them)."""
    subjects = {_key(f): _subjects(fabric, f) for f in findings}
    # a rule's causes in the order it lists their checks (node.unreachable before perf.reach), then worst first
    candidates = {rule.id: _candidates(rule, findings) for rule in rules}
    explained: dict[FindingKey, Explanation] = {}
    for symptom in findings:
        me = _key(symptom)
        for rule in rules:
            if not rule.may_suffer(symptom.check):
                continue
            found = None
            for cause in candidates[rule.id]:
                other = _key(cause)
                if other == me or _closes_a_cycle(explained, me, other):
                    continue
                evidence = rule.tie(cause, subjects[other], symptom, subjects[me], fabric)
                if evidence:
                    found = Explanation(other, rule.id, evidence)
                    break
            if found is not None:
                explained[me] = found
                break
    return explained


def explain_report(report: Report, fabric: Fabric) -> Report:
    """``report`` with its cause graph."""
    return replace(report, explained=explain(report.findings, fabric))
