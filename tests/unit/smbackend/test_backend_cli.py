"""The back-end step of ``ibprov plan`` and ``ibprov apply`` (``cli._run_backend``: both commands run it before
the hosts) on the example specs, pointed at the contract servers on 127.0.0.1 (tests/contracts): plan prints
the changes it would send and changes nothing, apply sends them, a second plan is in sync; what plan would
send an empty switch is the file render writes; a refused change is located at the partition it came from
(FILE:LINE:COL) and stops the run; an unreachable back end is located at its url (exit 3); and verify
--backend, reading the back end as apply left it, finds nothing."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from contracts.mlnxos import DEFAULT_PASSWORD as SW_PASSWORD
from contracts.mlnxos import DEFAULT_USER as SW_USER
from contracts.mlnxos import MlnxosContract
from contracts.ufm import DEFAULT_PASSWORD as UFM_PASSWORD
from contracts.ufm import DEFAULT_USER as UFM_USER
from contracts.ufm import UfmContract
from pytest_httpserver import HTTPServer

from ibprov import cli
from ibprov.clusterspec import LoadedSpec, load_spec
from ibprov.errors import CollectError
from ibprov.identity.guids import GuidBook
from ibprov.render.backend import backend_files
from ibprov.verify.backend.section import verify_backend

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SWITCH_URL = "https://leaf01-mgmt.example.org"
UFM_URL = "https://ufm.example.org"


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IBPROV_SWITCH_USER", SW_USER)
    monkeypatch.setenv("IBPROV_SWITCH_PASSWORD", SW_PASSWORD)
    monkeypatch.setenv("IBPROV_UFM_USER", UFM_USER)
    monkeypatch.setenv("IBPROV_UFM_PASSWORD", UFM_PASSWORD)


@pytest.fixture
def httpserver(httpserver_ipv4: HTTPServer) -> HTTPServer:
    """pytest-httpserver's server on 127.0.0.1 (never another address)."""
    return httpserver_ipv4


def example_at(tmp_path: Path, name: str, planned_url: str, url: str) -> LoadedSpec:
    text = (EXAMPLES / name).read_text()
    assert planned_url in text
    path = tmp_path / name
    path.write_text(text.replace(planned_url, url))
    return load_spec(path)


def sent(out: str, mark: str) -> list[str]:
    return [line.split(f"{mark}: ", 1)[1] for line in out.splitlines() if line.startswith(f"  {mark}: ")]


def test_switch_plan_prints_the_rendered_commands_apply_sends_them_then_in_sync_and_verify_clean(
    httpserver: HTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    switch = MlnxosContract(httpserver)
    loaded = example_at(tmp_path, "switch-sm.yaml", SWITCH_URL, switch.url)
    rendered = backend_files(loaded, GuidBook.for_spec(loaded), "header")["sm-backend/switch-commands.txt"]
    commands = [line for line in rendered.splitlines() if not line.startswith("#")]

    assert cli._run_backend(loaded, check=True)
    out = capsys.readouterr().out
    assert "contract-tested, not run against the product" in out
    assert sent(out, "would send") == commands
    assert switch.changing_commands() == []

    assert cli._run_backend(loaded, check=False)
    assert sent(capsys.readouterr().out, "sent") == commands
    assert switch.changing_commands() == commands

    assert cli._run_backend(loaded, check=True)
    assert cli._run_backend(loaded, check=False)
    assert "  in sync: nothing to send" in capsys.readouterr().out
    assert switch.changing_commands() == commands  # the second run sent nothing that changes state

    report = verify_backend(loaded, GuidBook.for_spec(loaded))  # verify --backend judges what apply left
    assert [f for c in report.checks for f in c.findings] == []
    assert {c.id: len(c.objects) for c in report.checks}["backend.partition"] == len(loaded.spec.partitions)


def test_plan_and_apply_reconcile_ufm_a_second_run_makes_no_changing_call_and_verify_is_clean(
    httpserver: HTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ufm = UfmContract(httpserver)
    loaded = example_at(tmp_path, "ufm.yaml", UFM_URL, ufm.url)

    assert cli._run_backend(loaded, check=True)
    planned = sent(capsys.readouterr().out, "would send")
    assert len(planned) >= 3  # a create per partition at least
    assert ufm.changing_calls() == []

    assert cli._run_backend(loaded, check=False)
    assert sent(capsys.readouterr().out, "sent") == planned
    first = len(ufm.changing_calls())
    assert first >= len(planned)

    assert cli._run_backend(loaded, check=False)
    assert "  in sync: nothing to send" in capsys.readouterr().out
    assert len(ufm.changing_calls()) == first

    report = verify_backend(loaded, GuidBook.for_spec(loaded))  # verify --backend judges what apply left
    assert [f for c in report.checks for f in c.findings] == []
    assert {c.id: len(c.objects) for c in report.checks}["backend.partition"] == len(loaded.spec.partitions)


def test_a_refused_command_is_located_at_its_partition_and_nothing_after_it_is_sent(
    httpserver: HTTPServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    switch = MlnxosContract(httpserver)
    switch.refuse("ib partition storage ipoib", "% IPoIB is not allowed on this partition")
    loaded = example_at(tmp_path, "switch-sm.yaml", SWITCH_URL, switch.url)

    assert not cli._run_backend(loaded, check=False)
    captured = capsys.readouterr()
    line = (tmp_path / "switch-sm.yaml").read_text().splitlines().index("  - name: storage") + 1
    assert re.search(
        rf"switch-sm\.yaml:{line}:\d+: partitions\[1\]: refused 'ib partition storage ipoib': "
        r"% IPoIB is not allowed on this partition; nothing after it was sent",
        captured.err,
    ), captured.err
    assert "not sent: ib partition storage member" in captured.out
    assert not any(c.startswith("ib partition storage member") for c in switch.changing_commands())


def test_an_unreachable_back_end_is_located_at_its_url(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port on 127.0.0.1 nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    loaded = example_at(tmp_path, "ufm.yaml", UFM_URL, f"http://127.0.0.1:{port}")
    with pytest.raises(CollectError) as raised:
        cli._run_backend(loaded, check=True)
    assert re.match(r".*ufm\.yaml:\d+:\d+: subnet_manager\.ufm\.url: ", str(raised.value)), str(raised.value)
