"""report.json: the machine-readable report. Its JSON Schema is :func:`report_schema` of the sections'
facts schemas (``ibprov.verify.registry.report_schema()`` composes it; also in docs/verify.md).

``schema_version`` changes only when a field is removed or changes meaning; new fields may appear.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ibprov import __version__
from ibprov.report.model import Finding, Report, Severity

__all__ = ["HEAD_PROPERTIES", "HEAD_REQUIRED", "SCHEMA_VERSION", "report_schema", "to_dict", "to_json"]

# 2: per-section facts in `sections` (was: `fabric`, `collected_from`, `soak_seconds`); 3: the routing facts'
# `hop_histogram` is `switches_per_route` (it always counted the switches on a route, not its hops)
SCHEMA_VERSION = 3

_STR = {"type": "string"}
_COUNT = {"type": "integer", "minimum": 0}

_CHECK_ID = {"type": "string", "pattern": r"^[a-z]+(\.[a-z0-9_]+)+$"}
_FINDING_KEY = {
    "type": "object",
    "required": ["check", "object"],
    "additionalProperties": False,
    "properties": {"check": _CHECK_ID, "object": _STR},
}
_FINDING = {
    "type": "object",
    "required": ["check", "severity", "object", "expected", "observed", "fix"],
    "additionalProperties": False,
    "properties": {
        "check": _CHECK_ID,
        "severity": {"enum": [str(s) for s in Severity]},
        "object": _STR,
        "expected": _STR,
        "observed": _STR,
        "fix": _STR,
        # the planned port the object names, as the per-port exporters label it; absent: not one planned port
        "port": {
            "type": "object",
            "required": ["guid", "port", "remote_guid", "remote_port"],
            "additionalProperties": False,
            "properties": {
                "guid": {"type": ["string", "null"], "pattern": "^0x[0-9a-f]{16}$"},
                "port": {"type": "integer", "minimum": 0, "maximum": 255},
                "remote_guid": {"type": ["string", "null"], "pattern": "^0x[0-9a-f]{16}$"},
                "remote_port": {"type": ["integer", "null"], "minimum": 0, "maximum": 255},
            },
        },
        # the finding that explains this one (its direct cause), the rule and the evidence; absent: a cause
        "caused_by": {
            "type": "object",
            "required": ["check", "object", "rule", "evidence"],
            "additionalProperties": False,
            "properties": {"check": _CHECK_ID, "object": _STR, "rule": _STR, "evidence": _STR},
        },
    },
}
# each finding nothing explains, worst first, with every finding it explains (directly or through others)
_CAUSE = {
    "type": "object",
    "required": ["check", "object", "severity", "symptoms"],
    "additionalProperties": False,
    "properties": {
        "check": _CHECK_ID,
        "object": _STR,
        "severity": {"enum": [str(s) for s in Severity]},
        "symptoms": {"type": "array", "items": _FINDING_KEY},
    },
}

_CHECK = {
    "type": "object",
    "required": ["id", "section", "title", "status", "objects", "findings", "caveats", "skipped"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": r"^[a-z]+(\.[a-z0-9_]+)+$"},
        "section": _STR,
        "title": _STR,
        "status": {"enum": ["pass", "fail", "skipped"]},
        "objects": _COUNT,
        "findings": _COUNT,
        "caveats": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["object", "text"],
                "additionalProperties": False,
                "properties": {"object": _STR, "text": _STR},
            },
        },
        "skipped": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["object", "reason"],
                "additionalProperties": False,
                "properties": {"object": _STR, "reason": _STR},
            },
        },
    },
}

_ACTION = {
    "type": "object",
    "required": ["node", "action", "reason", "why", "result"],
    "additionalProperties": False,
    "properties": {
        "node": _STR,
        "action": {"enum": ["drain", "resume", "keep"]},
        "reason": _STR,
        "why": _STR,
        "result": _STR,
    },
}

# the tool that wrote a report.json
TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "version"],
    "additionalProperties": False,
    "properties": {"name": {"const": "ibprov"}, "version": _STR},
}

# the fields every report.json opens with, whatever its form (a report, or report/failure.py's error document)
HEAD_REQUIRED = ("schema_version", "tool", "command", "cluster", "spec")
HEAD_PROPERTIES: dict[str, Any] = {
    "schema_version": {"const": SCHEMA_VERSION},
    "tool": TOOL_SCHEMA,
    "command": _STR,
    "cluster": _STR,
    "spec": _STR,
}


def tool_info() -> dict[str, str]:
    return {"name": "ibprov", "version": __version__}


_SECTION_HEAD = ["title", "collected_from", "started", "duration_seconds", "result", "facts", "notes"]


def _section_schema(facts: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": _SECTION_HEAD,
        "additionalProperties": False,
        "properties": {
            "title": _STR,
            "collected_from": _STR,
            "started": {"type": "string", "format": "date-time"},
            "duration_seconds": {"type": "number", "minimum": 0},
            "result": {"enum": ["pass", "fail"]},
            "facts": dict(facts),
            "notes": {"type": "array", "items": _STR},
        },
    }


def report_schema(facts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON Schema of report.json, given each section's name and the schema of its facts."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ibprov verify report",
        "type": "object",
        "required": [
            *HEAD_REQUIRED,
            "started",
            "duration_seconds",
            "result",
            "exit_code",
            "summary",
            "sections",
            "checks",
            "findings",
            "causes",
            "notes",
            "actions",
        ],
        "additionalProperties": False,
        "properties": {
            **HEAD_PROPERTIES,
            "started": {"type": "string", "format": "date-time"},
            "duration_seconds": {"type": "number", "minimum": 0},
            "result": {"enum": ["pass", "fail"]},
            "exit_code": {"enum": [0, 1]},
            "summary": {
                "type": "object",
                "required": ["text", "checks", "objects", "findings", "by_severity"],
                "additionalProperties": False,
                "properties": {
                    "text": _STR,
                    "checks": _COUNT,
                    "objects": _COUNT,
                    "findings": _COUNT,
                    "by_severity": {
                        "type": "object",
                        "required": [str(s) for s in Severity],
                        "additionalProperties": False,
                        "properties": {str(s): _COUNT for s in Severity},
                    },
                },
            },
            "sections": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": False,
                "properties": {name: _section_schema(schema) for name, schema in facts.items()},
            },
            "checks": {"type": "array", "items": _CHECK},
            "findings": {"type": "array", "items": _FINDING},
            "causes": {"type": "array", "items": _CAUSE},
            "notes": {"type": "array", "items": _STR},
            "actions": {"type": "array", "items": _ACTION},
        },
    }


def to_dict(report: Report) -> dict[str, Any]:
    findings = report.findings
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": tool_info(),
        "command": report.command,
        "cluster": report.cluster,
        "spec": report.spec,
        "started": report.started,
        "duration_seconds": round(report.duration_seconds, 3),
        "result": "pass" if report.exit_code == 0 else "fail",
        "exit_code": int(report.exit_code),
        "summary": {
            "text": report.summary,
            "checks": len(report.checks),
            "objects": report.objects,
            "findings": len(findings),
            "by_severity": report.by_severity(),
        },
        "sections": {
            s.name: {
                "title": s.title,
                "collected_from": s.collected_from,
                "started": s.started,
                "duration_seconds": round(s.duration_seconds, 3),
                "result": "pass" if s.exit_code == 0 else "fail",
                "facts": s.facts.as_dict(),
                "notes": list(s.notes),
            }
            for s in report.sections
        },
        "checks": [
            {
                "id": c.id,
                "section": s.name,
                "title": c.title,
                "status": c.status,
                "objects": len(c.cases()),
                "findings": len(c.findings),
                "caveats": [{"object": o, "text": text} for o, text in c.caveats],
                "skipped": [{"object": o, "reason": reason} for o, reason in c.skipped],
            }
            for s in report.sections
            for c in s.checks
        ],
        "findings": [_finding(report, f) for f in findings],
        "causes": [
            {
                "check": c.finding.check,
                "object": c.finding.object,
                "severity": str(c.finding.severity),
                "symptoms": [{"check": s.check, "object": s.object} for s in c.symptoms],
            }
            for c in report.causes
        ],
        "notes": list(report.notes),
        "actions": [a.as_dict() for a in report.actions],
    }


def _finding(report: Report, finding: Finding) -> dict[str, Any]:
    out: dict[str, Any] = finding.as_dict()
    port = report.ports.get(finding.object)
    if port is not None:
        out["port"] = port.as_dict()
    why = report.explained.get((finding.check, finding.object))
    if why is not None:
        out["caused_by"] = why.as_dict()
    return out


def to_json(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2) + "\n"
