"""The reports of a verification that could not produce findings: the spec did not load, the fabric or the
hosts could not be reached, the twin proof failed. CI jobs read junit.xml and report.json on every outcome,
so these are written too, with the failure inside (report.json: ``"result": "error"`` and the problems;
junit.xml: one testcase per problem, as an ``<error>``).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from ibprov.report.json_report import HEAD_PROPERTIES, HEAD_REQUIRED, SCHEMA_VERSION, tool_info

__all__ = ["ERROR_SCHEMA", "failure_json", "failure_junit"]

_STR = {"type": "string"}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [*HEAD_REQUIRED, "result", "exit_code", "problems"],
    "additionalProperties": False,
    "properties": {
        **HEAD_PROPERTIES,
        "result": {"const": "error"},
        "exit_code": {"enum": [1, 2, 3, 70]},
        "problems": {"type": "array", "minItems": 1, "items": _STR},
    },
}


def failure_json(command: str, cluster: str, spec: str, problems: Sequence[str], exit_code: int) -> str:
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": tool_info(),
        "command": command,
        "cluster": cluster,
        "spec": spec,
        "result": "error",
        "exit_code": int(exit_code),
        "problems": list(problems),
    }
    return json.dumps(doc, indent=2) + "\n"


def failure_junit(command: str, cluster: str, problems: Sequence[str], *, kind: str = "error") -> str:
    """One testsuite with a testcase per problem (``kind``: "error" when nothing could be judged,
    "failure" when what was judged failed, e.g. the twin proof)."""
    suites = ET.Element("testsuites", name="ibprov verify")
    suite = ET.SubElement(suites, "testsuite", name=f"ibprov {command} {cluster}".strip())
    for i, problem in enumerate(problems, 1):
        case = ET.SubElement(suite, "testcase", classname=command.replace(" ", "."), name=f"problem {i}", time="0")
        ET.SubElement(case, kind, message=problem.splitlines()[0] if problem else kind).text = problem
    count = str(len(problems))
    for element in (suites, suite):
        element.set("tests", count)
        element.set("failures", count if kind == "failure" else "0")
        element.set("errors", count if kind == "error" else "0")
    suite.set("skipped", "0")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
