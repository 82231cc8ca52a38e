"""report.json: the machine-readable report. Its JSON Schema is :data:`SCHEMA` (also in docs/verify.md).

``schema_version`` changes only when a field is removed or changes meaning; new fields may appear.
"""

from __future__ import annotations

import json
from typing import Any

from ibprov import __version__
from ibprov.report.model import Report, Severity

__all__ = ["SCHEMA", "SCHEMA_VERSION", "to_dict", "to_json"]

SCHEMA_VERSION = 1

_STR = {"type": "string"}
_COUNT = {"type": "integer", "minimum": 0}

_FINDING = {
    "type": "object",
    "required": ["check", "severity", "object", "expected", "observed", "fix"],
    "additionalProperties": False,
    "properties": {
        "check": {"type": "string", "pattern": r"^[a-z]+(\.[a-z0-9_]+)+$"},
        "severity": {"enum": [str(s) for s in Severity]},
        "object": _STR,
        "expected": _STR,
        "observed": _STR,
        "fix": _STR,
    },
}

_CHECK = {
    "type": "object",
    "required": ["id", "title", "status", "objects", "findings"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": r"^[a-z]+(\.[a-z0-9_]+)+$"},
        "title": _STR,
        "status": {"enum": ["pass", "fail"]},
        "objects": _COUNT,
        "findings": _COUNT,
    },
}

_SM = {
    "type": "object",
    "required": ["object", "port_guid", "lid", "priority", "state", "planned"],
    "additionalProperties": False,
    "properties": {
        "object": _STR,
        "port_guid": {"type": "string", "pattern": "^0x[0-9a-f]{16}$"},
        "lid": _COUNT,
        "priority": {"type": "integer", "minimum": 0, "maximum": 15},
        "state": {"enum": ["MASTER", "STANDBY", "DISCOVER", "NOTACT"]},
        "planned": {"type": "boolean"},
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ibprov verify report",
    "type": "object",
    "required": [
        "schema_version",
        "tool",
        "command",
        "cluster",
        "spec",
        "started",
        "duration_seconds",
        "collected_from",
        "soak_seconds",
        "result",
        "exit_code",
        "summary",
        "fabric",
        "checks",
        "findings",
        "notes",
    ],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "tool": {
            "type": "object",
            "required": ["name", "version"],
            "additionalProperties": False,
            "properties": {"name": {"const": "ibprov"}, "version": _STR},
        },
        "command": _STR,
        "cluster": _STR,
        "spec": _STR,
        "started": {"type": "string", "format": "date-time"},
        "duration_seconds": {"type": "number", "minimum": 0},
        "collected_from": _STR,
        "soak_seconds": {"type": ["number", "null"], "minimum": 0},
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
        "fabric": {
            "type": "object",
            "required": ["switches", "channel_adapters", "links", "master_sm", "subnet_managers"],
            "additionalProperties": True,
            "properties": {
                "switches": _COUNT,
                "channel_adapters": _COUNT,
                "links": _COUNT,
                "master_sm": {"oneOf": [_SM, {"type": "null"}]},
                "subnet_managers": {"type": "array", "items": _SM},
            },
        },
        "checks": {"type": "array", "items": _CHECK},
        "findings": {"type": "array", "items": _FINDING},
        "notes": {"type": "array", "items": _STR},
    },
}


def to_dict(report: Report) -> dict[str, Any]:
    findings = report.findings
    fabric: dict[str, Any] = {
        "switches": 0,
        "channel_adapters": 0,
        "links": 0,
        "master_sm": None,
        "subnet_managers": [],
    }
    fabric.update(report.fabric)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ibprov", "version": __version__},
        "command": report.command,
        "cluster": report.cluster,
        "spec": report.spec,
        "started": report.started,
        "duration_seconds": round(report.duration_seconds, 3),
        "collected_from": report.collected_from,
        "soak_seconds": None if report.soak_seconds is None else round(report.soak_seconds, 3),
        "result": "pass" if report.exit_code == 0 else "fail",
        "exit_code": int(report.exit_code),
        "summary": {
            "text": report.summary,
            "checks": len(report.checks),
            "objects": report.objects,
            "findings": len(findings),
            "by_severity": report.by_severity(),
        },
        "fabric": fabric,
        "checks": [
            {
                "id": c.id,
                "title": c.title,
                "status": "pass" if c.passed else "fail",
                "objects": len(c.cases()),
                "findings": len(c.findings),
            }
            for c in report.checks
        ],
        "findings": [f.as_dict() for f in findings],
        "notes": list(report.notes),
    }


def to_json(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2) + "\n"
