"""verify --nodes checks: a healthy rack passes; each check fails on its own fault, naming the object."""

from __future__ import annotations

import dataclasses

from nodekit import IPOIB, healthy_host, healthy_rack, ib_facts, probe_stdout, rack_plan

from ibprov.report.model import Finding, Severity
from ibprov.run.adhoc import HostOutcome
from ibprov.verify.judge import catalogue
from ibprov.verify.nodes.checks import FAMILIES, version_matches
from ibprov.verify.nodes.collect import observe_host
from ibprov.verify.nodes.observation import HostObservation
from ibprov.verify.nodes.section import check_nodes

ALL_IDS = [c.id for c in catalogue(FAMILIES)]


def findings(hosts: dict[str, HostObservation], stack_version: str | None = None) -> list[Finding]:
    plan = dataclasses.replace(rack_plan(), stack_version=stack_version)
    return check_nodes(plan, hosts).findings


def only(found: list[Finding], check: str) -> list[Finding]:
    assert {f.check for f in found} == {check}, found
    return found


def test_every_check_id_is_stable_and_dotted() -> None:
    assert ALL_IDS == [
        "node.unreachable",
        "node.hca_missing",
        "node.port_state",
        "node.rate",
        "node.firmware",
        "node.stack_version",
        "node.memlock",
        "node.ipoib",
        "node.stray_sm",
    ]


def test_a_healthy_rack_passes_every_check() -> None:
    report = check_nodes(rack_plan(), healthy_rack())
    assert report.findings == []
    assert report.exit_code == 0
    assert report.name == "nodes"
    assert report.facts.as_dict() == {"hosts": 6, "hosts_reached": 6}
    assert [c.id for c in report.checks] == ALL_IDS


def test_an_unreachable_host_is_an_error_finding_and_the_others_are_still_checked() -> None:
    hosts = healthy_rack()
    hosts["node02"] = HostObservation("node02", error="unreachable: ssh: connect to host node02 port 22")
    hosts["node03"] = healthy_host("node03", state="DOWN", phys="Polling")
    found = findings(hosts)
    assert [(f.check, f.object, f.severity) for f in found] == [
        ("node.port_state", "node03 mlx5_0 port 1", Severity.ERROR),
        ("node.unreachable", "node02", Severity.ERROR),
    ]
    assert "port 22" in found[1].observed


def test_a_host_that_was_not_collected_is_unreachable() -> None:
    hosts = healthy_rack()
    del hosts["node04"]
    assert [f.object for f in only(findings(hosts), "node.unreachable")] == ["node04"]


def test_a_missing_hca_is_named_with_the_devices_present() -> None:
    hosts = healthy_rack()
    hosts["node01"] = healthy_host("node01", device="mlx5_1")
    (f,) = only(findings(hosts), "node.hca_missing")
    assert (f.object, f.observed) == ("node01 mlx5_0 port 1", "no mlx5_0 (mlx5_1)")


def test_a_missing_port_is_named() -> None:
    hosts = healthy_rack()
    hosts["node01"] = healthy_host("node01", ports=(2,))
    (f,) = only(findings(hosts), "node.hca_missing")
    assert f.observed == "mlx5_0 has ports 2"


def test_a_port_not_active_is_a_port_state_finding() -> None:
    hosts = healthy_rack()
    hosts["sm02"] = healthy_host("sm02", state="INIT", phys="LinkUp")
    (f,) = only(findings(hosts), "node.port_state")
    assert (f.object, f.expected, f.observed) == ("sm02 mlx5_0 port 1", "ACTIVE / LinkUp", "INIT / LinkUp")


def test_a_port_below_the_planned_rate_is_named_with_the_sysfs_text() -> None:
    hosts = healthy_rack()
    hosts["node04"] = healthy_host("node04", rate_text="100 Gb/sec (2X HDR)")
    (f,) = only(findings(hosts), "node.rate")
    assert (f.object, f.expected, f.observed) == ("node04 mlx5_0 port 1", "HDR 4x (200 Gb/s)", "100 Gb/sec (2X HDR)")


def test_fdr_signalling_text_is_judged_by_data_rate() -> None:
    plan = rack_plan()
    ports = tuple(dataclasses.replace(p, rate_gbps=54.56, rate_text="FDR 4x (54.56 Gb/s)") for p in plan.ports)
    hosts = {h: healthy_host(h, rate_text="56 Gb/sec (4X FDR)") for h in healthy_rack()}
    assert check_nodes(dataclasses.replace(plan, ports=ports), hosts).findings == []
    hosts["node01"] = healthy_host("node01", rate_text="40 Gb/sec (4X QDR)")
    assert [f.object for f in check_nodes(dataclasses.replace(plan, ports=ports), hosts).findings] == [
        "node01 mlx5_0 port 1"
    ]


def test_firmware_differing_from_the_spec_is_a_finding() -> None:
    plan = rack_plan()
    ports = tuple(dataclasses.replace(p, firmware="20.40.1000") for p in plan.ports)
    hosts = healthy_rack()
    hosts["node01"] = healthy_host("node01", fw="20.40.1000")
    found = only(check_nodes(dataclasses.replace(plan, ports=ports), hosts).findings, "node.firmware")
    assert len(found) == 5
    assert "node01 mlx5_0" not in {f.object for f in found}
    assert found[0].expected == "firmware 20.40.1000"


def test_firmware_outlier_is_named_when_spec_has_no_version() -> None:
    hosts = healthy_rack()
    hosts["node03"] = healthy_host("node03", fw="20.31.1014")
    (f,) = only(findings(hosts), "node.firmware")
    assert f.object == "node03 mlx5_0"
    assert f.observed == "firmware 20.31.1014"
    assert f.expected.startswith("firmware 20.39.1002 (as on 5 other HCAs")


def test_a_firmware_tie_without_a_spec_version_names_every_hca() -> None:
    hosts = {h: healthy_host(h, fw="A" if i % 2 else "B") for i, h in enumerate(healthy_rack())}
    assert len(only(findings(hosts), "node.firmware")) == 6


def test_stack_version_is_only_checked_when_the_spec_sets_one() -> None:
    assert findings(healthy_rack(), stack_version=None) == []
    assert findings(healthy_rack(), stack_version="50.0") == []
    found = only(findings(healthy_rack(), stack_version="24.10"), "node.stack_version")
    assert len(found) == 6
    assert (found[0].expected, found[0].observed) == ("rdma-core 24.10", "rdma-core 50.0-2ubuntu0.2")


def test_version_prefix_matching_respects_component_boundaries() -> None:
    assert version_matches("50.0", "1:50.0-2")
    assert not version_matches("50.0", "50.01-1")
    assert not version_matches("50.0", "49.1-1")


def _host_with_probe(
    host: str, *, memlock: str = "unlimited", opensm: str = "inactive", ifaces: dict[str, list[str]] | None = None
) -> HostObservation:
    planned = {"ib0": [f"{IPOIB[host]}/24"]}
    stdout = probe_stdout(memlock=memlock, opensm=opensm, ifaces=planned if ifaces is None else ifaces)
    return observe_host(host, HostOutcome("ok", ib_facts()), HostOutcome("ok", {"stdout": stdout}))


def test_a_limited_memlock_is_a_finding() -> None:
    hosts = healthy_rack()
    hosts["node02"] = _host_with_probe("node02", memlock="65536")
    (f,) = only(findings(hosts), "node.memlock")
    assert (f.object, f.observed) == ("node02", "65536 KiB")


def test_a_missing_ipoib_interface_is_a_finding() -> None:
    hosts = healthy_rack()
    hosts["node02"] = _host_with_probe("node02", ifaces={})
    (f,) = only(findings(hosts), "node.ipoib")
    assert (f.object, f.expected, f.observed) == ("node02 ib0", "ib0 with 10.20.0.12/24", "no interface ib0")


def test_a_wrong_ipoib_address_is_a_finding() -> None:
    hosts = healthy_rack()
    hosts["node02"] = _host_with_probe("node02", ifaces={"ib0": ["10.20.0.99/24"]})
    (f,) = only(findings(hosts), "node.ipoib")
    assert f.observed == "ib0 with 10.20.0.99/24"


def test_opensm_on_a_host_without_an_sm_instance_is_a_security_finding() -> None:
    hosts = healthy_rack()
    hosts["node01"] = _host_with_probe("node01", opensm="inactive\n4242 /usr/sbin/opensm")
    (f,) = only(findings(hosts), "node.stray_sm")
    assert (f.object, f.severity) == ("node01", Severity.SECURITY)
    assert "4242 /usr/sbin/opensm" in f.observed


def test_opensm_on_a_planned_sm_host_is_not_stray() -> None:
    hosts = healthy_rack()
    hosts["sm01"] = _host_with_probe("sm01", opensm="active\n4242 /usr/sbin/opensm")
    assert findings(hosts) == []
