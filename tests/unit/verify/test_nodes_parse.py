"""verify --nodes parsers: ib_facts, rate text, ulimit, OpenSM evidence, ip -j addr, package versions."""

from __future__ import annotations

import pytest
from nodekit import ib_facts, probe_stdout

from ibprov.probes.hostprobe import (
    parse_ib_facts,
    parse_ip_addr,
    parse_memlock,
    parse_opensm,
    parse_probe,
    parse_rate,
    parse_stack_version,
)


@pytest.mark.parametrize(
    ("text", "gbps"),
    [
        ("200 Gb/sec (4X HDR)", 200.0),
        ("100 Gb/sec (4X EDR)", 100.0),
        ("56 Gb/sec (4X FDR)", 54.56),
        ("40 Gb/sec (4X QDR)", 32.0),
        ("50 Gb/sec (1X HDR)", 50.0),
        ("25 Gb/sec", 25.0),
    ],
)
def test_sysfs_rate_text_becomes_the_data_rate(text: str, gbps: float) -> None:
    assert parse_rate(text) == pytest.approx(gbps)


def test_rate_falls_back_to_the_number_when_there_is_no_text() -> None:
    assert parse_rate(None, 100) == 100.0
    assert parse_rate(None, None) is None


def test_ib_facts_ports_are_keyed_by_number_with_state_rate_and_firmware() -> None:
    devices = parse_ib_facts(ib_facts(fw="20.1", state="DOWN", phys="Polling")["ansible_facts"])
    port = devices["mlx5_0"].ports[1]
    assert devices["mlx5_0"].fw_ver == "20.1"
    assert (port.state, port.phys_state, port.rate_gbps) == ("DOWN", "Polling", 200.0)


def test_ib_facts_without_devices_is_empty() -> None:
    assert parse_ib_facts({"ib": {"devices": {}}}) == {}
    assert parse_ib_facts({}) == {}


def test_probe_sections_are_split_by_marker() -> None:
    sections = parse_probe(probe_stdout(memlock="65536", stack="1:50.0-1"))
    assert sections["memlock"] == "65536"
    assert sections["stack"] == "1:50.0-1"
    assert set(sections) == {"memlock", "opensm", "ip", "stack"}


def test_memlock_is_unlimited_or_a_number() -> None:
    assert parse_memlock("unlimited\n") == "unlimited"
    assert parse_memlock("8192") == "8192"
    assert parse_memlock("") is None


def test_opensm_evidence_comes_from_active_units_and_pgrep_lines() -> None:
    assert parse_opensm("inactive\ninactive") == ()
    assert parse_opensm("active\n1234 /usr/sbin/opensm -g 0x1") == (
        "systemd unit active",
        "1234 /usr/sbin/opensm -g 0x1",
    )


def test_ip_addr_json_gives_addresses_per_interface() -> None:
    text = parse_probe(probe_stdout(ifaces={"ib0": ["10.0.0.1/24"], "ib0.8001": []}))["ip"]
    assert parse_ip_addr(text) == {"lo": ("127.0.0.1/8",), "ib0": ("10.0.0.1/24",), "ib0.8001": ()}
    assert parse_ip_addr("not json") == {}


def test_stack_version_is_none_when_the_package_is_unknown() -> None:
    assert parse_stack_version("50.0-2ubuntu0.2") == "50.0-2ubuntu0.2"
    assert parse_stack_version("") is None
    assert parse_stack_version("package rdma-core is not installed") is None
