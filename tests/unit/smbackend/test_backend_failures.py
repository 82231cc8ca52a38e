"""A back end that fails in the middle of an apply (against the contract servers, tests/contracts/faults.py): a
503, a connection reset after the change was carried out, or no answer within the timeout, while a change is
sent. The apply stops there with one message located at the partition the change came from, naming what
failed and listing what the back end accepted before it, and exits 3; the next plan shows exactly what is left;
the next apply completes it, and a plan after that is in sync. Only requests that change nothing (reads, logins)
are tried again, a bounded number of times; a change is never sent twice."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
from ibprov.errors import CollectError, ExitCode
from ibprov.smbackend import http as backend_http
from ibprov.smbackend import sync

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
BACKENDS = {
    "ufm": ("ufm.yaml", "https://ufm.example.org", UfmContract),
    "switch": ("switch-sm.yaml", "https://leaf01-mgmt.example.org", MlnxosContract),
}


@pytest.fixture(autouse=True)
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The credentials set, and the pauses between tries recorded instead of slept."""
    monkeypatch.setenv("IBPROV_SWITCH_USER", SW_USER)
    monkeypatch.setenv("IBPROV_SWITCH_PASSWORD", SW_PASSWORD)
    monkeypatch.setenv("IBPROV_UFM_USER", UFM_USER)
    monkeypatch.setenv("IBPROV_UFM_PASSWORD", UFM_PASSWORD)
    slept: list[float] = []
    monkeypatch.setattr(backend_http, "_sleep", slept.append)
    return slept


@pytest.fixture
def httpserver(httpserver_ipv4: HTTPServer) -> HTTPServer:
    """pytest-httpserver's server on 127.0.0.1 (never another address)."""
    return httpserver_ipv4


def setup(httpserver: HTTPServer, tmp_path: Path, kind: str) -> tuple[LoadedSpec, Any]:
    name, planned_url, contract = BACKENDS[kind]
    server = contract(httpserver)
    path = tmp_path / name
    path.write_text((EXAMPLES / name).read_text().replace(planned_url, server.url))
    return load_spec(path), server


def lines(out: str, mark: str) -> list[str]:
    return [line.split(f"{mark}: ", 1)[1] for line in out.splitlines() if line.startswith(f"  {mark}: ")]


def changes_sent(server: Any) -> int:
    if isinstance(server, MlnxosContract):
        return len([r for r in server.requests if r.kind == "commands" and not r.commands[0].startswith("show ")])
    return len(server.changing_calls())


@pytest.mark.parametrize("how", ["503", "reset", "stall"])
@pytest.mark.parametrize("kind", ["ufm", "switch"])
def test_a_back_end_failing_mid_apply_is_located_listed_and_completed_by_the_next_apply(
    httpserver: HTTPServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    how: str,
) -> None:
    loaded, server = setup(httpserver, tmp_path, kind)
    connect: Callable[..., Any] = getattr(sync, kind).connect
    monkeypatch.setattr(getattr(sync, kind), "connect", lambda cfg: connect(cfg, timeout=0.5))
    assert cli._run_backend(loaded, check=True)
    planned = lines(capsys.readouterr().out, "would send")
    server.faults.break_after(2, how)

    with pytest.raises(CollectError) as broken:
        cli._run_backend(loaded, check=False)
    out = capsys.readouterr().out
    assert lines(out, "sent") == planned[:2]
    assert lines(out, "failed (carried out or not: unknown)") == [planned[2]]
    assert lines(out, "not sent") == planned[3:]
    message = str(broken.value)
    assert broken.value.exit_code == ExitCode.COLLECT_ERROR
    assert re.match(rf"{re.escape(str(tmp_path))}/\S+\.yaml:\d+:\d+: (partitions\[\d\]|subnet_manager\.\w+): ", message)
    assert f"sending {planned[2]!r} failed: " in message
    assert f"the back end accepted 2 change(s) before it: {planned[0]}; {planned[1]}; " in message
    assert "`ibprov plan " in message
    assert "`ibprov apply " in message
    assert {"503": "503", "reset": "cannot be reached", "stall": "timed out"}[how] in message

    assert cli._run_backend(loaded, check=True)  # (served once the server has done with the failed request)
    assert changes_sent(server) == 3, "the change that failed was not sent again"
    left = lines(capsys.readouterr().out, "would send")
    carried_out = how == "reset"  # the reset came after the back end had carried it out
    if carried_out and kind == "switch" and planned[2] == "configuration write":
        carried_out = False  # saving again is always planned
    assert left == (planned[3:] if carried_out else planned[2:]), "the next plan shows exactly what is left"

    assert cli._run_backend(loaded, check=False)
    capsys.readouterr()
    assert cli._run_backend(loaded, check=True)
    out = capsys.readouterr().out
    assert "  in sync: nothing to send" in out or lines(out, "would send") == ["configuration write"]


@pytest.mark.parametrize("kind", ["ufm", "switch"])
def test_a_read_that_fails_is_tried_again_a_bounded_number_of_times(
    httpserver: HTTPServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    pauses: list[float],
    kind: str,
) -> None:
    loaded, server = setup(httpserver, tmp_path, kind)
    server.faults.read_failures = 2
    assert cli._run_backend(loaded, check=True), "two 503s, then the read answers"
    assert pauses == [0.5, 1.0]
    assert lines(capsys.readouterr().out, "would send")

    server.faults.read_failures = 10
    with pytest.raises(CollectError) as failed:
        cli._run_backend(loaded, check=True)
    assert "503" in str(failed.value)
    assert pauses == [0.5, 1.0, 0.5, 1.0, 2.0], "three pauses, then it gives up"
    assert server.faults.read_failures == 10 - 4, "four tries"
    assert changes_sent(server) == 0
