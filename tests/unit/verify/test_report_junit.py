from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter

from reportkit import clean_report, report_with_findings

from ibprov.report import to_junit
from ibprov.verify.fabric.checks import FAMILIES
from ibprov.verify.judge import catalogue


def cases(xml: str) -> list[ET.Element]:
    root = ET.fromstring(xml)
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite.findall("testcase")


def test_one_testcase_per_check_and_object() -> None:
    report = report_with_findings()
    testcases = cases(to_junit(report))
    keys = Counter((c.get("classname"), c.get("name")) for c in testcases)
    assert max(keys.values()) == 1
    assert {c.get("classname") for c in testcases} >= {"cabling.miswire", "link.width", "pkey.missing", "sm.master"}
    assert len(testcases) == report.objects


def test_findings_are_failures_and_everything_else_passes() -> None:
    report = report_with_findings()
    xml = to_junit(report)
    failed = {
        (c.get("classname"), c.get("name")): c.find("failure") for c in cases(xml) if c.find("failure") is not None
    }
    assert set(failed) == {
        ("cabling.miswire", "node01 mlx5_0 port 1"),
        ("counters.threshold", "node02 mlx5_0 port 1"),
        ("sm.standby_missing", "sm02 mlx5_0 port 1"),
    }
    miswire = failed[("cabling.miswire", "node01 mlx5_0 port 1")]
    assert miswire is not None
    assert miswire.get("type") == "error"
    assert miswire.get("message") == "node01 mlx5_0 port 1: planned leaf01 port 1, found leaf01 port 9"
    assert "fix: " in (miswire.text or "")
    root = ET.fromstring(xml)
    assert root.get("failures") == "3"
    assert root.get("tests") == str(len(cases(xml)))


def test_a_clean_run_lists_passing_testcases_for_every_check_with_objects() -> None:
    testcases = cases(to_junit(clean_report()))
    assert all(c.find("failure") is None for c in testcases)
    with_objects = {c.get("classname") for c in testcases}
    # no soak, no QoS and no rail-optimized fat tree in the clean report: those checks examine nothing
    unexamined = {
        "counters.soak_rate",
        "qos.sl2vl",
        "qos.vlarb",
        "qos.switch_sl2vl",
        "qos.switch_vlarb",
        "cabling.rail",
    }
    assert with_objects == {c.id for c in catalogue(FAMILIES)} - unexamined
