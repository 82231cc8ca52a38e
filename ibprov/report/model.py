"""What a verification produces: findings, the checks they belong to, and the report around them.

A *finding* is one thing that differs from the plan, on one object ("node07 mlx5_0 port 1"). A *check*
is a stable dotted id (``cabling.miswire``) with the objects it examined; an object it examined without a
finding passed. A :class:`Report` holds one :class:`SectionReport` per verify section (fabric, nodes, ...):
its checks and its typed facts, which the views see only through :class:`SectionFacts`. The console table,
report.json and junit.xml are views of one :class:`Report`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

from ibprov.errors import ExitCode

__all__ = [
    "FABRIC",
    "BarChart",
    "Cause",
    "Cell",
    "CheckResult",
    "CounterTrend",
    "Explanation",
    "Finding",
    "HasCharts",
    "HasMatrices",
    "HasTables",
    "Matrix",
    "NodeAction",
    "PortIds",
    "Report",
    "SectionFacts",
    "SectionReport",
    "Severity",
    "Table",
    "utc_now_text",
    "utc_text",
]

FABRIC = "fabric"  # the object of a check that looks at the fabric as a whole


class Severity(StrEnum):
    CRITICAL = "critical"  # the fabric does not work as planned (no or the wrong master SM)
    SECURITY = "security"  # isolation is broken (rogue SM, a partition a port must not hold)
    ERROR = "error"  # a planned property is wrong (cable, width, counters, PKey table)
    WARNING = "warning"  # works, but weaker than planned (an SM after failover); does not fail verify

    @property
    def rank(self) -> int:
        """0 is the worst."""
        return _RANK[self]

    @property
    def fails(self) -> bool:
        """Whether a finding of this severity makes verify exit 1."""
        return self is not Severity.WARNING


_RANK = {Severity.CRITICAL: 0, Severity.SECURITY: 1, Severity.ERROR: 2, Severity.WARNING: 3}


@dataclass(frozen=True)
class Finding:
    check: str  # stable dotted id, e.g. "cabling.miswire"
    severity: Severity
    object: str  # e.g. "node07 mlx5_0 port 1"
    expected: str  # what the plan says, e.g. "leaf03 port 7"
    observed: str  # what the fabric shows, e.g. "leaf03 port 8"
    fix: str  # what to do about it

    def sort_key(self) -> tuple[int, str, str]:
        return (self.severity.rank, self.check, self.object)

    @property
    def text(self) -> str:
        """One line: ``node07 mlx5_0 port 1: planned leaf03 port 7, found leaf03 port 8``."""
        return f"{self.object}: planned {self.expected}, found {self.observed}"

    def as_dict(self) -> dict[str, str]:
        return {
            "check": self.check,
            "severity": str(self.severity),
            "object": self.object,
            "expected": self.expected,
            "observed": self.observed,
            "fix": self.fix,
        }


FindingKey = tuple[str, str]  # (check, object): a finding's identity within a report


def _hex_guid(guid: int | None) -> str | None:
    return None if guid is None else f"0x{guid:016x}"


@dataclass(frozen=True)
class PortIds:
    """A planned port as the per-port exporters label it: the node GUID of its device (a switch, or the HCA)
    and its port number, and the same of the port at the other end of its planned cable. A GUID is None where
    the plan does not know it yet (no lock file); the remote is None for a port without a planned cable."""

    guid: int | None
    port: int
    remote_guid: int | None = None
    remote_port: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "guid": _hex_guid(self.guid),
            "port": self.port,
            "remote_guid": _hex_guid(self.remote_guid),
            "remote_port": self.remote_port,
        }


@dataclass(frozen=True)
class Explanation:
    """Why a finding is a symptom: the finding that caused it (its direct cause; that one may have a cause of
    its own), the rule that ties them, and the evidence, in words."""

    cause: FindingKey
    rule: str  # the rule's id, e.g. "link.lost"
    evidence: str  # "node03 mlx5_0 port 1 has no cable: cabling.missing on that cable"

    def as_dict(self) -> dict[str, str]:
        return {"check": self.cause[0], "object": self.cause[1], "rule": self.rule, "evidence": self.evidence}


@dataclass(frozen=True)
class Cause:
    """A finding nothing explains, with every finding it explains (directly or through others), worst first."""

    finding: Finding
    symptoms: tuple[Finding, ...]


@dataclass(frozen=True)
class CheckResult:
    """One check id: what it looked at and what it found. Objects without a finding passed."""

    id: str
    title: str
    objects: tuple[str, ...]  # every object the check examined, in a stable order
    findings: tuple[Finding, ...] = ()
    # (object, why): objects judged against something other than the plan, e.g. a link the twin runs at
    # another rate; passing such an object does not verify the planned property
    caveats: tuple[tuple[str, str], ...] = ()
    # (object, why): objects the check could not judge here (a perftest pair on a node with no RDMA device);
    # neither passed nor failed
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def passed(self) -> bool:
        return not self.findings

    @property
    def status(self) -> str:
        """``fail`` with a finding; ``skipped`` when every object examined was skipped; else ``pass``."""
        if self.findings:
            return "fail"
        return "skipped" if self.objects and len(dict(self.skipped)) >= len(set(self.objects)) else "pass"

    def cases(self) -> list[tuple[str, tuple[Finding, ...]]]:
        """(object, its findings) for every object examined or found, each once; passes have no findings.

        A check over the whole fabric (object ``fabric``) that found something lists only the findings."""
        found: dict[str, list[Finding]] = {}
        for finding in self.findings:
            found.setdefault(finding.object, []).append(finding)
        objects = [o for o in self.objects if not (o == FABRIC and found and FABRIC not in found)]
        out = [(o, tuple(found.pop(o, ()))) for o in dict.fromkeys(objects)]
        out += [(o, tuple(fs)) for o, fs in found.items()]
        return out


@dataclass(frozen=True)
class Cell:
    """One cell of a :class:`Matrix`: a measured value (None: none) and its verdict."""

    value: float | None
    status: str  # "pass", "fail" or "skipped"
    text: str  # what a reader sees on hover: the object and the verdict in words


@dataclass(frozen=True)
class Matrix:
    """Results between two sets of objects (client nodes x server nodes), as the HTML report shows them:
    a heatmap. ``limit`` is the pass threshold in ``unit`` (the colour scale is relative to it)."""

    title: str  # "ib_write_bw 8MiB"
    unit: str  # "Gb/s", "us"
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: Mapping[tuple[str, str], Cell]
    higher_is_better: bool
    limit: float | None = None


@runtime_checkable
class HasMatrices(Protocol):
    """Facts with results between pairs of objects (perf): the HTML report draws them as heatmaps and adds
    each detail block (per node) below."""

    def matrices(self) -> list[Matrix]: ...

    def details(self) -> list[tuple[str, list[str]]]: ...


@dataclass(frozen=True)
class BarChart:
    """Counts by label (the switches-per-route histogram, destinations per port by tier), as the HTML report draws them:
    a bar per label, its length ``value``; ``low`` (optional, one per bar) marks the low end of a range."""

    title: str
    unit: str
    bars: tuple[tuple[str, float], ...]
    low: tuple[float, ...] = ()


@runtime_checkable
class HasCharts(Protocol):
    """Facts with distributions to draw (routing): the HTML report draws each chart."""

    def charts(self) -> list[BarChart]: ...


@dataclass(frozen=True)
class Table:
    """Rows of text under named columns (the cable report: every link planned against found), as the HTML
    report shows them and ``ibprov report cables`` writes them as CSV; ``status`` (one per row: "pass",
    "fail" or "skipped") colours a row."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    status: tuple[str, ...] = ()


@runtime_checkable
class HasTables(Protocol):
    """Facts with a table to show (physical: the cable report)."""

    def report_tables(self) -> list[Table]: ...


class SectionFacts(Protocol):
    """What a section observed, beyond its checks (counts, the master SM, hosts reached, ...).

    The views know only this: a JSON object (its schema is the section's) and a few lines for people."""

    def as_dict(self) -> dict[str, Any]: ...

    def lines(self) -> list[str]: ...


@dataclass(frozen=True)
class SectionReport:
    """One verify section's part of the report: its checks, its facts, where and when it collected."""

    name: str  # "fabric", "nodes", ...
    title: str  # "Fabric"
    collected_from: str  # "this host", "node01 (ansible)", "each host (ansible)"
    started: str  # ISO 8601, UTC
    duration_seconds: float
    checks: tuple[CheckResult, ...]
    facts: SectionFacts
    notes: tuple[str, ...] = ()

    @property
    def findings(self) -> list[Finding]:
        """Every finding of the section, worst first."""
        return sorted((f for c in self.checks for f in c.findings), key=Finding.sort_key)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.FINDINGS if any(f.severity.fails for f in self.findings) else ExitCode.OK


@dataclass(frozen=True)
class NodeAction:
    """What ``verify --drain`` / ``--resume`` did (or, dry, would do) to one scheduler node."""

    node: str
    action: str  # "drain", "resume", or "keep" (left as it is, with why)
    reason: str  # the reason set (drain), or the one the node had (resume, keep)
    why: str  # the findings behind a drain, what passes now, or why the node was left alone
    result: str = ""  # "done", "failed: ...", "dry run: scontrol ...", "" for keep

    @property
    def failed(self) -> bool:
        return self.result.startswith("failed")

    def as_dict(self) -> dict[str, str]:
        return {"node": self.node, "action": self.action, "reason": self.reason, "why": self.why, "result": self.result}

    def line(self) -> str:
        done = f" [{self.result}]" if self.result else ""
        reason = f' "{self.reason}"' if self.reason else ""
        return f"{self.action} {self.node}{reason}: {self.why}{done}"


@dataclass(frozen=True)
class CounterTrend:
    """One port's error counter over the last runs of a history, as the HTML report draws it."""

    object: str  # "sm02 mlx5_0 port 1"
    counter: str  # "SymbolErrorCounter"
    points: tuple[tuple[str, int | None], ...]  # (run end, ISO 8601 UTC; value, None: the run read no counters)


@dataclass(frozen=True)
class Report:
    """A verification of one or more sections against one spec."""

    command: str  # "verify --fabric", "verify --fabric --nodes"
    cluster: str
    spec: str
    started: str  # ISO 8601, UTC
    duration_seconds: float
    sections: tuple[SectionReport, ...]
    notes: tuple[str, ...] = ()  # about the whole verification; each section has its own too
    actions: tuple[NodeAction, ...] = ()  # verify --drain / --resume: what was done to the scheduler's nodes
    # verify --history: (check, object) -> when the history first saw the finding (ISO 8601, UTC), and the
    # values over the last runs of the counters that moved since the previous run
    first_seen: Mapping[tuple[str, str], str] = field(default_factory=dict)
    trends: tuple[CounterTrend, ...] = ()
    # the cause graph (ibprov.verify.causes): symptom (check, object) -> why; a finding not in it is a cause
    explained: Mapping[FindingKey, Explanation] = field(default_factory=dict)
    # object -> the port it names, for the findings whose object is one planned port (or one planned cable)
    ports: Mapping[str, PortIds] = field(default_factory=dict)

    @classmethod
    def from_sections(
        cls,
        *,
        cluster: str,
        spec: str,
        sections: Sequence[SectionReport],
        started: str = "",
        duration_seconds: float | None = None,
        notes: Sequence[str] = (),
    ) -> Report:
        """The report of these sections; the command names them (``verify --fabric --nodes``)."""
        return cls(
            command="verify " + " ".join(f"--{s.name}" for s in sections),
            cluster=cluster,
            spec=spec,
            started=started or (sections[0].started if sections else ""),
            duration_seconds=sum(s.duration_seconds for s in sections)
            if duration_seconds is None
            else duration_seconds,
            sections=tuple(sections),
            notes=tuple(notes),
        )

    @property
    def checks(self) -> tuple[CheckResult, ...]:
        return tuple(c for s in self.sections for c in s.checks)

    def section(self, name: str) -> SectionReport:
        for s in self.sections:
            if s.name == name:
                return s
        raise KeyError(f"no {name!r} section in this report ({', '.join(s.name for s in self.sections)})")

    @property
    def all_notes(self) -> list[str]:
        """The report's notes, then each section's, each once."""
        return list(dict.fromkeys([*self.notes, *(n for s in self.sections for n in s.notes)]))

    @property
    def findings(self) -> list[Finding]:
        """Every finding, worst first."""
        return sorted((f for c in self.checks for f in c.findings), key=Finding.sort_key)

    @property
    def objects(self) -> int:
        return sum(len(c.cases()) for c in self.checks)

    def root_of(self, finding: Finding) -> FindingKey:
        """The cause at the end of ``finding``'s chain of explanations (its own key when nothing explains it)."""
        key: FindingKey = (finding.check, finding.object)
        seen = {key}
        while (why := self.explained.get(key)) is not None and why.cause not in seen:
            key = why.cause
            seen.add(key)
        return key

    @cached_property
    def _by_key(self) -> dict[FindingKey, Finding]:
        return {(f.check, f.object): f for c in self.checks for f in c.findings}

    def cause_of(self, finding: Finding) -> Finding | None:
        """The finding at the root of what explains ``finding`` (None: nothing does; it is a cause)."""
        root = self.root_of(finding)
        if root == (finding.check, finding.object):
            return None
        return self._by_key.get(root)

    @property
    def causes(self) -> list[Cause]:
        """The findings nothing explains, each with what it explains, worst cause first; a cause with symptoms
        goes before one without at the same severity."""
        findings = self.findings
        by_key = {(f.check, f.object): f for f in findings}
        symptoms: dict[FindingKey, list[Finding]] = {}
        for f in findings:
            root = self.root_of(f)
            if root != (f.check, f.object) and root in by_key:
                symptoms.setdefault(root, []).append(f)
        roots = [f for f in findings if self.root_of(f) == (f.check, f.object) or self.root_of(f) not in by_key]
        roots.sort(key=lambda f: (f.severity.rank, -len(symptoms.get((f.check, f.object), [])), f.check, f.object))
        return [Cause(f, tuple(symptoms.get((f.check, f.object), []))) for f in roots]

    def by_severity(self) -> dict[str, int]:
        counts = Counter(f.severity for f in self.findings)
        return {str(s): counts.get(s, 0) for s in Severity}

    @property
    def exit_code(self) -> ExitCode:
        """3 when a drain or resume failed (the scheduler was not told), else 1 on findings, else 0."""
        if any(a.failed for a in self.actions):
            return ExitCode.COLLECT_ERROR
        return ExitCode.FINDINGS if any(f.severity.fails for f in self.findings) else ExitCode.OK

    @property
    def summary(self) -> str:
        """The one-line outcome, e.g. ``FAIL: 3 findings (1 critical, 2 error) ...``."""
        findings = self.findings
        scope = f"{_plural(len(self.checks), 'check')} over {_plural(self.objects, 'object')}"
        if not findings:
            return f"PASS: no findings; {scope}"
        counts = ", ".join(f"{n} {s}" for s, n in self.by_severity().items() if n)
        found = _plural(len(findings), "finding")
        if self.explained:
            causes = len(self.causes)
            found = f"{_plural(causes, 'cause')} {'explains' if causes == 1 else 'explain'} {found}"
        if self.exit_code == ExitCode.OK:
            return f"PASS with {found} ({counts}); {scope}"
        return f"FAIL: {found} ({counts}); {scope}"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def utc_now_text() -> str:
    """The report's ``started`` stamp: UTC, seconds, ``Z`` suffix (``2026-12-02T11:21:28Z``)."""
    return utc_text(datetime.now(UTC))


def utc_text(when: datetime) -> str:
    """``when`` as report stamps are written: UTC, seconds, ``Z`` suffix."""
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
