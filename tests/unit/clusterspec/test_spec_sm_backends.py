"""subnet_manager.backend: each back end has its section and no other's, the SM runs where the back end says,
no host OpenSM is planned beside a switch SM, credentials are references, and what a back end does not carry
is a located warning -- never dropped without a word. Expected strings are ``LINE:COL: path: message``."""

# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

import pytest

from ibprov.clusterspec import load_spec_text
from ibprov.errors import SpecError

REPO = Path(__file__).resolve().parents[3]
SWITCH = (REPO / "examples" / "switch-sm.yaml").read_text()
UFM = (REPO / "examples" / "ufm.yaml").read_text()


def problems(text: str) -> list[str]:
    with pytest.raises(SpecError) as err:
        load_spec_text(text, "c.yaml")
    return [str(p).removeprefix("c.yaml:") for p in err.value.problems]


def warnings(text: str) -> list[str]:
    return [str(w).removeprefix("c.yaml:") for w in load_spec_text(text, "c.yaml").warnings]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_examples_of_both_back_ends_are_valid_without_warnings() -> None:
    assert warnings(SWITCH) == []
    assert warnings(UFM) == []


def test_a_switch_back_end_without_its_section_is_located_at_backend() -> None:
    start = SWITCH.index("  switch:\n")
    end = SWITCH.index("\npartitions:")
    text = SWITCH[:start] + SWITCH[end:]
    line = line_of(text, "backend: switch")
    assert problems(text) == [
        f"{line}:12: subnet_manager.backend: backend: switch needs subnet_manager.switch (name, url, username, password)"
    ]


def test_an_unknown_switch_is_located_with_a_suggestion() -> None:
    text = SWITCH.replace("    name: leaf01\n", "    name: leaf1\n")
    line = line_of(text, "name: leaf1")
    assert problems(text) == [
        f"{line}:11: subnet_manager.switch.name: unknown switch 'leaf1' (did you mean 'leaf01'?): the SM runs in a switch of the fabric"
    ]


def test_a_host_opensm_planned_beside_a_switch_sm_is_an_error_at_the_instance() -> None:
    text = SWITCH.replace("    save: true", "    save: true\n  instances:\n    - {node: login01, priority: 1}")
    line = line_of(text, "{node: login01, priority: 1}")
    assert problems(text) == [
        f"{line}:7: subnet_manager.instances[0]: a host OpenSM on login01 beside the SM of switch leaf01 is a second SM (the two elect a master between them and the loser's settings are silently unused): remove instances, or set backend: opensm"
    ]


def test_the_section_of_another_back_end_is_an_error_not_ignored() -> None:
    text = UFM.replace(
        "  instances:\n", "  switch: {name: leaf01, url: https://sw, username: env:A, password: env:B}\n  instances:\n"
    )
    line = line_of(text, "  switch: {name: leaf01")
    assert problems(text) == [
        f"{line}:11: subnet_manager.switch: subnet_manager.switch is read only with backend: switch (the backend is ufm): remove it, or set backend: switch"
    ]


def test_ufm_without_the_ports_of_its_sm_is_an_error() -> None:
    text = UFM.replace("  instances:\n    - {node: mgmt01, priority: 15}\n", "")
    line = line_of(text, "subnet_manager:") + 1  # a missing key: located at its section's first key
    assert problems(text) == [
        f"{line}:3: subnet_manager.instances: backend: ufm needs instances: the UFM server's HCA port(s) where UFM's SM runs (ibprov installs no OpenSM there; verify checks that no other SM runs)"
    ]


def test_ufm_without_its_section_is_located_at_backend() -> None:
    start = UFM.index("  ufm:\n")
    end = UFM.index("  instances:\n")
    text = UFM[:start] + UFM[end:]
    line = line_of(text, "backend: ufm")
    assert problems(text) == [
        f"{line}:12: subnet_manager.backend: backend: ufm needs subnet_manager.ufm (url, auth and its credentials)"
    ]


def test_ufm_refuses_a_both_default_membership_where_it_is_written() -> None:
    text = UFM.replace("    defmember: full", "    defmember: both", 1)
    line = line_of(text, "defmember: both")
    assert problems(text) == [
        f"{line}:16: partitions[0].defmember: UFM holds a GUID as full or limited, not both: give full or limited"
    ]


def test_ufm_refuses_both_membership_where_it_is_written() -> None:
    text = UFM.replace("      - {node: stor01, membership: limited}", "      - {node: stor01, membership: both}")
    line = line_of(text, "membership: both")
    assert problems(text) == [
        f"{line}:36: partitions[1].members[1].membership: UFM holds a GUID as full or limited, not both: give full or limited"
    ]


@pytest.mark.parametrize("auth", ["basic", "session"])
def test_ufm_password_auth_needs_both_references(auth: str) -> None:
    text = UFM.replace("    auth: session ", f"    auth: {auth} ").replace(
        "    password: env:IBPROV_UFM_PASSWORD\n", ""
    )
    (problem,) = problems(text)
    line = line_of(text, "  ufm:") + 1
    assert (
        problem
        == f"{line}:5: subnet_manager.ufm: auth: {auth} needs username and password (references, e.g. env:UFM_PASSWORD)"
    )


def test_a_literal_password_is_refused_never_stored() -> None:
    text = SWITCH.replace("password: env:IBPROV_SWITCH_PASSWORD", "password: hunter2")
    (problem,) = problems(text)
    assert "subnet_manager.switch.password:" in problem
    assert "must be a reference to the secret" in problem


def test_a_management_url_with_a_path_is_refused() -> None:
    text = SWITCH.replace("url: https://leaf01-mgmt.example.org", "url: https://leaf01/admin/launch")
    (problem,) = problems(text)
    assert "subnet_manager.switch.url:" in problem
    assert "a management address https://host or https://host:port (no path)" in problem


def test_tls_verification_is_on_unless_the_spec_turns_it_off() -> None:
    loaded = load_spec_text(SWITCH, "c.yaml")
    assert loaded.spec.subnet_manager.switch is not None
    assert loaded.spec.subnet_manager.switch.verify_tls is True


def test_what_the_switch_sm_does_not_carry_is_a_located_warning() -> None:
    text = SWITCH.replace("    pkey: 0x0020\n", "    pkey: 0x0020\n    mtu: 4096\n").replace(
        "  backend: switch\n", "  backend: switch\n  routing_engine: updn\n  sm_key: env:SMKEY\n"
    )
    found = warnings(text)
    engine = line_of(text, "routing_engine: updn")
    key = line_of(text, "sm_key: env:SMKEY")
    mtu = line_of(text, "    mtu: 4096")
    assert any(
        w.startswith(f"{engine}:")
        and "subnet_manager.routing_engine: not sent to the switch SM by ibprov: set it on the switch" in w
        for w in found
    ), found
    assert any(w.startswith(f"{key}:") and "subnet_manager.sm_key: not sent to the switch SM" in w for w in found)
    assert any(w.startswith(f"{mtu}:") and "partitions[1].mtu: not sent to the switch SM" in w for w in found)


def test_ufm_warns_that_the_qos_policy_is_not_sent_but_partition_limits_are() -> None:
    text = UFM.replace("partitions:\n", "qos:\n  enabled: true\n\npartitions:\n", 1)
    found = warnings(text)
    assert any("qos: UFM applies QoS per partition (mtu_limit, service_level, rate_limit" in w for w in found)
    assert not any(".mtu:" in w or ".rate:" in w for w in found)  # UFM carries the partitions' limits


def test_a_non_default_default_partition_is_a_warning_for_a_vendor_sm() -> None:
    text = SWITCH.replace("partitions:\n", "default_partition:\n  membership: limited\n\npartitions:\n", 1)
    assert any(
        "default_partition: the Default partition (0x7fff) stays as the switch SM has it" in w for w in warnings(text)
    )


def test_opensm_still_needs_an_instance() -> None:
    text = (REPO / "examples" / "rack.yaml").read_text()
    block = "  instances:\n    - node: sm01\n      priority: 15   # master\n    - node: sm02\n      priority: 14   # standby\n"
    assert block in text
    line = line_of(text, "subnet_manager:") + 1  # a missing key: located at its section's first key
    assert problems(text.replace(block, "")) == [
        f"{line}:3: subnet_manager.instances: backend: opensm needs at least one instance: the nodes that run OpenSM"
    ]
