"""junit.xml: one testsuite per verify section (its notes as properties), one testcase per check and object
(classname = check id, name = object).

An object judged against a stand-in (a link the twin runs at another rate than planned) that passed is a
*skipped* testcase whose message says so: the planned property was not verified.

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
    total_tests = total_failures = 0
    for section in report.sections:
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"ibprov verify --{section.name} {report.cluster}",
            timestamp=section.started or report.started,
            time=f"{section.duration_seconds:.3f}",
            hostname=section.collected_from,
        )
        if section.notes:
            properties = ET.SubElement(suite, "properties")
            for note in section.notes:
                ET.SubElement(properties, "property", name="note", value=note)
        tests = failures = skipped = 0
        for check in section.checks:
            caveats = dict(check.caveats)
            skips = dict(check.skipped)
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
                elif obj in skips:  # not judged here (e.g. no RDMA device): neither passed nor failed
                    skipped += 1
                    ET.SubElement(case, "skipped", message=f"skipped: {skips[obj]}")
                elif obj in caveats:  # passed, but against a stand-in: the planned property is not verified
                    skipped += 1
                    ET.SubElement(case, "skipped", message=caveats[obj])
        _counts(suite, tests, failures)
        suite.set("skipped", str(skipped))
        total_tests += tests
        total_failures += failures
    _counts(suites, total_tests, total_failures)
    suites.set("time", f"{report.duration_seconds:.3f}")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _counts(element: ET.Element, tests: int, failures: int) -> None:
    element.set("tests", str(tests))
    element.set("failures", str(failures))
    element.set("errors", "0")
