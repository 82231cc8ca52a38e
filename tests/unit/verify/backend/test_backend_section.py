"""verify --backend as the CLI runs it: registered (not run by default), refused for host OpenSM with where its
partitions are checked instead, an unreachable back end or a missing credential is one located finding, and
against the contract servers (tests/contracts) a back end seeded with the plan passes while one drift is
exactly its finding."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from contracts.mlnxos import DEFAULT_PASSWORD as SWITCH_PASSWORD
from contracts.mlnxos import DEFAULT_USER as SWITCH_USER
from contracts.mlnxos import MlnxosContract, Partition
from contracts.ufm import DEFAULT_PASSWORD as UFM_PASSWORD
from contracts.ufm import DEFAULT_USER as UFM_USER
from contracts.ufm import UfmContract
from pytest_httpserver import HTTPServer

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.errors import IbprovError
from ibprov.identity.guids import GuidBook
from ibprov.report.model import Finding, SectionReport, Severity
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.state import BackendState
from ibprov.smbackend.sync import backend_apply, backend_plan
from ibprov.smbackend.ufm.payload import qos_fields
from ibprov.verify.registry import VerifyOptions, load_section, section_info

REPO = Path(__file__).resolve().parents[4]
SWITCH = (REPO / "examples" / "switch-sm.yaml").read_text()
UFM = (REPO / "examples" / "ufm.yaml").read_text()
OPENSM = (REPO / "examples" / "qos-partitions.yaml").read_text()


def run(loaded: LoadedSpec) -> SectionReport:
    return load_section(section_info("backend")).run(loaded, VerifyOptions(), None)


def findings(report: SectionReport) -> list[Finding]:
    return [f for c in report.checks for f in c.findings]


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def switch_spec(url: str) -> LoadedSpec:
    return load_spec_text(SWITCH.replace("https://leaf01-mgmt.example.org", url), "cluster.yaml")


def test_the_section_is_registered_and_runs_only_when_asked_for() -> None:
    info = section_info("backend")
    assert (info.default, info.options) == (False, frozenset())
    section = load_section(info)
    assert [c.id for c in section.checks] == [
        "backend.reachable",
        "backend.partition",
        "backend.unplanned",
        "backend.sm",
    ]


def test_a_host_opensm_spec_is_refused_pointing_at_verify_fabric() -> None:
    loaded = load_spec_text(OPENSM, "cluster.yaml")
    assert loaded.spec.subnet_manager.backend == "opensm"
    with pytest.raises(IbprovError, match="OpenSM's partitions are read from the fabric by verify --fabric"):
        run(loaded)


def test_an_unreachable_switch_is_one_finding_located_at_its_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IBPROV_SWITCH_USER", "admin")
    monkeypatch.setenv("IBPROV_SWITCH_PASSWORD", "secret")
    report = run(switch_spec(f"http://127.0.0.1:{closed_port()}"))
    (got,) = findings(report)
    assert (got.check, got.object) == ("backend.reachable", "switch leaf01")
    assert got.observed.startswith("cluster.yaml:")
    assert "subnet_manager.switch.url" in got.observed
    assert report.facts.as_dict()["reachable"] is False


def test_a_credential_that_is_not_set_is_one_finding_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IBPROV_SWITCH_USER", raising=False)
    monkeypatch.delenv("IBPROV_SWITCH_PASSWORD", raising=False)
    (got,) = findings(run(switch_spec(f"http://127.0.0.1:{closed_port()}")))
    assert got.check == "backend.reachable"
    assert "IBPROV_SWITCH_" in got.observed


# --- against the UFM contract server (tests/contracts/ufm.py, on 127.0.0.1) ---------------------------------


@pytest.fixture
def httpserver(httpserver_ipv4: HTTPServer) -> HTTPServer:
    """pytest-httpserver's server on 127.0.0.1 (never another address)."""
    return httpserver_ipv4


def planned(loaded: LoadedSpec) -> BackendState:
    return desired_state(loaded, GuidBook.for_spec(loaded))[0]


def ufm_with_the_plan(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> tuple[LoadedSpec, UfmContract]:
    """The UFM example against a contract UFM seeded, as another tool would have, with exactly the plan."""
    monkeypatch.setenv("IBPROV_UFM_USER", UFM_USER)
    monkeypatch.setenv("IBPROV_UFM_PASSWORD", UFM_PASSWORD)
    ufm = UfmContract(httpserver)
    loaded = load_spec_text(UFM.replace("https://ufm.example.org", ufm.url), "cluster.yaml")
    for part in planned(loaded).partitions.values():
        members = {f"{g:016x}": m for g, m in part.members}
        ufm.seed(part.pkey, members, ip_over_ib=part.ipoib, **qos_fields(part))
    return loaded, ufm


def test_a_ufm_holding_the_plan_passes_and_nothing_is_changed(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded, ufm = ufm_with_the_plan(httpserver, monkeypatch)
    report = run(loaded)
    assert findings(report) == []
    assert {c.id: len(c.objects) for c in report.checks} == {
        "backend.reachable": 1,
        "backend.partition": 3,
        "backend.unplanned": 3,
        "backend.sm": 0,
    }
    assert report.facts.as_dict()["in_sync"] is True
    assert ufm.changing_calls() == []


def test_right_after_apply_a_ufm_keeping_its_own_qos_defaults_is_in_sync_in_the_summary_too(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """UFM reads back mtu_limit 2, rate_limit 2.5 and service_level 0 for limits the spec leaves unset: apply
    sends nothing for them, the checks find nothing, and the summary (and in_sync) agrees with both."""
    monkeypatch.setenv("IBPROV_UFM_USER", UFM_USER)
    monkeypatch.setenv("IBPROV_UFM_PASSWORD", UFM_PASSWORD)
    ufm = UfmContract(httpserver, qos_defaults=True)
    loaded = load_spec_text(UFM.replace("https://ufm.example.org", ufm.url), "cluster.yaml")
    book = GuidBook.for_spec(loaded)
    assert backend_apply(loaded, book).failed is None
    assert backend_plan(loaded, book).in_sync, "plan: nothing left to send"
    report = run(loaded)
    assert findings(report) == []
    assert report.facts.as_dict()["in_sync"] is True
    assert report.facts.lines()[0].endswith("; in sync")


def test_a_ufm_member_held_with_another_membership_is_the_one_finding(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded, ufm = ufm_with_the_plan(httpserver, monkeypatch)
    node02 = "1070FD0300C8A028"
    assert ufm.members(0x10)[node02] == "full"
    members = {**ufm.members(0x10), node02: "limited"}
    ufm.seed(0x10, members, ip_over_ib=True, mtu_limit=5)
    (got,) = findings(run(loaded))
    assert (got.check, got.object) == ("backend.partition", "compute (0x0010)")
    assert got.observed == "member 0x1070fd0300c8a028 limited, planned full"


def test_a_partition_another_tool_made_in_ufm_is_the_one_warning(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded, ufm = ufm_with_the_plan(httpserver, monkeypatch)
    ufm.seed(0xAB, {"1070FD0300C8B000": "full"}, ip_over_ib=False)
    (got,) = findings(run(loaded))
    assert (got.check, got.severity) == ("backend.unplanned", Severity.WARNING)
    assert got.object.startswith("0x00ab (")


# --- against the MLNX-OS contract server (tests/contracts/mlnxos.py, on 127.0.0.1) --------------------------


def switch_with_the_plan(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> tuple[LoadedSpec, MlnxosContract]:
    """The switch example against a contract switch whose state is exactly the plan (set directly, not by
    ibprov's own commands): SM on at the planned priority, the planned partitions."""
    monkeypatch.setenv("IBPROV_SWITCH_USER", SWITCH_USER)
    monkeypatch.setenv("IBPROV_SWITCH_PASSWORD", SWITCH_PASSWORD)
    switch = MlnxosContract(httpserver)
    loaded = switch_spec(switch.url)
    desired = planned(loaded)
    assert desired.sm is not None
    switch.state.sm_enabled, switch.state.sm_priority = desired.sm.enabled, desired.sm.priority
    for part in desired.partitions.values():
        assert part.name is not None
        switch.state.partitions[part.name] = Partition(part.pkey, part.ipoib, dict(part.members))
    return loaded, switch


def test_a_switch_holding_the_plan_passes_and_nothing_is_changed(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded, switch = switch_with_the_plan(httpserver, monkeypatch)
    report = run(loaded)
    assert findings(report) == []
    assert {c.id: c.objects for c in report.checks}["backend.partition"] == ("compute (0x0010)", "storage (0x0020)")
    assert {c.id: c.objects for c in report.checks}["backend.sm"] == ("switch leaf01",)
    assert report.facts.as_dict()["in_sync"] is True
    assert switch.changing_commands() == []


def test_a_switch_whose_sm_was_turned_off_is_the_one_finding(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded, switch = switch_with_the_plan(httpserver, monkeypatch)
    switch.preload(["no ib sm"])
    (got,) = findings(run(loaded))
    assert (got.check, got.object) == ("backend.sm", "switch leaf01")
    assert got.observed == "SM disabled, priority 15"


def test_a_switch_partition_without_its_ipoib_flag_is_the_one_finding(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded, switch = switch_with_the_plan(httpserver, monkeypatch)
    switch.state.partitions["storage"].ipoib = False
    (got,) = findings(run(loaded))
    assert (got.check, got.object, got.observed) == (
        "backend.partition",
        "storage (0x0020)",
        "ipoib False, planned True",
    )
