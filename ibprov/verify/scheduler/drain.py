"""Drain and resume Slurm nodes after a verification, the way NHC does it and never more.

* ``--drain``: every scheduler node named by a finding of ``scheduler.drain_severity`` or worse is drained with
  a reason ``ibprov: <check> <object>`` (``(+N)`` more findings), cut to :data:`REASON_MAX` characters; the
  report lists every finding. When another finding explains the node's worst one (the report's cause graph),
  the reason names that cause and what it did here: ``ibprov: sm.rogue node04 mlx5_0 port 1 (pkey.missing
  here)``, so that ``sinfo -R`` sends an admin to the rogue SM, not to the node.
* ``--resume``: a node is resumed only when its reason starts with ``ibprov:``, the check that reason names (the
  cause's, when it named one) was judged by this run (a node drained for a cable is not resumed by a run of
  ``--nodes`` alone), and the node has no such finding now.
* A node drained or downed by someone else (a reason without the prefix) keeps its reason and is never
  resumed; a DOWN node is left alone (Slurm's own state); a node Slurm does not know is only reported.

A finding names a node when a word of its object is the node's name (``leaf01:1 <-> cn01/mlx5_0:1`` names
cn01; a perf pair names both ends); a finding that names no Slurm node (a switch-to-switch cable) drains
nobody, and the notes say how many there were. :func:`plan_actions` is pure; :func:`carry_out` runs the
``scontrol update`` commands on the controller (or, dry, says what it would run).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence

from ibprov.probes.slurm import REASON_PREFIX as PREFIX
from ibprov.probes.slurm import SlurmView, update_argv
from ibprov.report.model import Finding, NodeAction, Report, Severity
from ibprov.verify.scheduler.collect import Slurm

__all__ = ["REASON_MAX", "carry_out", "nodes_named", "plan_actions", "reason_for"]

# Slurm 22.05 took a 5,000-character reason whole (measured), so the limit is what people read: `sinfo -R` shows
# 20 characters (its default %20E: "ibprov: link.state l"), `sinfo -R -o '%64E %N'` and `scontrol show node` more;
# 64 as the ib_healthcheck role's, so that a cause and the symptom here fit ("ibprov: sm.rogue node04 mlx5_0 port 1
# (pkey.missing here)" is 57)
REASON_MAX = 64
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def nodes_named(text: str, nodes: Iterable[str]) -> list[str]:
    """The nodes of ``nodes`` that a word of ``text`` names, in the order they appear."""
    wanted = nodes if isinstance(nodes, (set, frozenset)) else set(nodes)
    found: dict[str, None] = {}
    for word in _WORD.findall(text):
        word = word.rstrip(".-")
        if word in wanted:
            found.setdefault(word)
    return list(found)


def reason_for(findings: Sequence[Finding], cause: Finding | None = None) -> str:
    """``ibprov: <check> <object>`` of the worst finding, or of ``cause`` (what explains it) with ``(<check>
    here)``; ``(+N)`` for the others; at most REASON_MAX long (the object is cut, never the check)."""
    first = findings[0]
    more = f" (+{len(findings) - 1})" if len(findings) > 1 else ""
    named, here = (cause, f" ({first.check} here)") if cause is not None else (first, "")
    head = f"{PREFIX} {named.check} "
    tail = here + more
    room = REASON_MAX - len(head) - len(tail)
    obj = " ".join(named.object.split())
    if len(obj) > room:
        obj = obj[: max(room - 3, 0)] + "..."
    return (head + obj).rstrip() + tail


def _why(report: Report, finding: Finding) -> str:
    cause = report.cause_of(finding)
    by = f" (caused by {cause.check} {cause.object})" if cause is not None else ""
    return f"{finding.severity} {finding.check} {finding.object}{by}"


def _reason_check(reason: str) -> str:
    words = reason.removeprefix(PREFIX).split()
    return words[0] if words else ""


def _failing(report: Report, nodes: Sequence[str], severity: Severity) -> tuple[dict[str, list[Finding]], int]:
    """Node -> its findings at ``severity`` or worse (worst first), and how many such findings named no node."""
    per_node: dict[str, list[Finding]] = {}
    orphans = 0
    wanted = frozenset(nodes)
    for finding in report.findings:  # worst first
        if finding.severity.rank > severity.rank:
            continue
        named = nodes_named(finding.object, wanted)
        orphans += not named
        for node in named:
            per_node.setdefault(node, []).append(finding)
    return per_node, orphans


def plan_actions(
    report: Report,
    nodes: Sequence[str],
    view: SlurmView,
    *,
    drain: bool,
    resume: bool,
    severity: Severity = Severity.ERROR,
) -> tuple[list[NodeAction], list[str]]:
    """What to do to each scheduler node after ``report`` (pure), and notes on what was left alone."""
    failing, orphans = _failing(report, nodes, severity)
    judged = {c.id for c in report.checks}
    actions: list[NodeAction] = []
    notes: list[str] = []
    if orphans:
        notes.append(
            f"{orphans} finding(s) of {severity} or worse name no Slurm node (e.g. a switch-to-switch cable): "
            "no node is drained for them"
        )
    unknown = [n for n in nodes if n in failing and n not in view.nodes]
    if unknown:
        notes.append(f"not drained, unknown to Slurm: {', '.join(unknown)}")
    for node in nodes:
        slurm = view.nodes.get(node)
        if slurm is None:
            continue
        mine = slurm.reason.startswith(PREFIX)
        found = failing.get(node, [])
        if found and drain:
            why = "; ".join(_why(report, f) for f in found)
            if slurm.down and not slurm.drained:
                actions.append(NodeAction(node, "keep", slurm.reason, f"{slurm.state}: left to Slurm; {why}"))
            elif slurm.drained and not mine:
                who = f" by {slurm.user}" if slurm.user else ""
                actions.append(NodeAction(node, "keep", slurm.reason, f"drained{who}: their reason kept; {why}"))
            elif slurm.drained:
                actions.append(NodeAction(node, "keep", slurm.reason, f"already drained by ibprov; {why}"))
            else:
                actions.append(NodeAction(node, "drain", reason_for(found, report.cause_of(found[0])), why))
        elif not found and resume and slurm.drained and mine:
            check = _reason_check(slurm.reason)
            if check in judged:
                actions.append(NodeAction(node, "resume", slurm.reason, f"{check} passes now"))
            else:
                why = f"drained for {check or 'an unnamed check'}, which this run did not judge"
                actions.append(NodeAction(node, "keep", slurm.reason, why))
        elif not found and resume and slurm.drained:
            who = f" by {slurm.user}" if slurm.user else ""
            actions.append(NodeAction(node, "keep", slurm.reason, f"drained{who}, not by ibprov: never resumed"))
    return actions, notes


def _command(action: NodeAction) -> list[str]:
    if action.action == "drain":
        return update_argv(action.node, "DRAIN", action.reason)
    return update_argv(action.node, "RESUME")


def carry_out(actions: Sequence[NodeAction], slurm: Slurm, *, dry_run: bool) -> list[NodeAction]:
    """Run the drain and resume commands on the controller (dry: only say them); ``keep`` stays as it is."""
    todo = [a for a in actions if a.action in ("drain", "resume")]
    commands = [_command(a) for a in todo]
    if dry_run:
        said: Mapping[str, str] = {a.node: "dry run: " + shlex.join(c) for a, c in zip(todo, commands, strict=True)}
    else:
        results = slurm.run(commands)
        said = {
            a.node: "done" if r.ok else f"failed: {r.output or 'scontrol failed'}"
            for a, r in zip(todo, results, strict=True)
        }
    return [NodeAction(a.node, a.action, a.reason, a.why, said.get(a.node, "")) for a in actions]
