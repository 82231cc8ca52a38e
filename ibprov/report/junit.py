"""junit.xml: one testcase per check and object (classname = check id, name = object).

An object with a finding is a failed testcase (``<failure type="<severity>">``, the finding in the message,
the fix hint in the text); an object the check examined without a finding is a passed testcase.
Warnings are failures here too (CI shows them), although they do not change the exit status.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ibprov.report.model import Report

__all__ = ["to_junit"]


def to_junit(report: Report) -> str:
    suites = ET.Element("testsuites", name="ibprov verify")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"ibprov {report.command} {report.cluster}",
        timestamp=report.started,
        time=f"{report.duration_seconds:.3f}",
        hostname=report.collected_from,
    )
    tests = failures = 0
    for check in report.checks:
        for obj, findings in check.cases():
            tests += 1
            case = ET.SubElement(suite, "testcase", classname=check.id, name=obj, time="0")
            if findings:
                failures += 1
                worst = min(findings, key=lambda f: f.severity.rank)
                failure = ET.SubElement(
                    case, "failure", type=str(worst.severity), message="; ".join(f.text for f in findings)
                )
                failure.text = "\n".join(f"{f.text}\nfix: {f.fix}" for f in findings)
    for element in (suites, suite):
        element.set("tests", str(tests))
        element.set("failures", str(failures))
        element.set("errors", "0")
    suite.set("skipped", "0")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
