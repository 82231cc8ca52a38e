"""The back ends' credentials are never written: plan, apply and `verify --backend` (with its report.json, HTML
report, history and metrics) against the UFM and switch contract servers with known credentials, and the
failures (a wrong password, a back end that does not answer), leave them in no file and no message."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from contracts.mlnxos import MlnxosContract
from contracts.ufm import UfmContract
from pytest_httpserver import HTTPServer

from ibprov import cli
from ibprov.clusterspec import load_spec
from ibprov.errors import CollectError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
USER = "ops-5ecret-user-k7"
PASSWORD = "pa55-5ecret-w0rd-q3"
SECRETS = (USER, PASSWORD)


@pytest.fixture
def httpserver(httpserver_ipv4: HTTPServer) -> HTTPServer:
    """pytest-httpserver's server on 127.0.0.1 (never another address)."""
    return httpserver_ipv4


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("IBPROV_SWITCH_USER", "IBPROV_UFM_USER"):
        monkeypatch.setenv(name, USER)
    for name in ("IBPROV_SWITCH_PASSWORD", "IBPROV_UFM_PASSWORD"):
        monkeypatch.setenv(name, PASSWORD)


def spec_at(tmp_path: Path, name: str, planned_url: str, url: str) -> Path:
    path = tmp_path / name
    path.write_text((EXAMPLES / name).read_text().replace(planned_url, url))
    return path


def files_holding(root: Path) -> list[str]:
    return [
        f"{p.relative_to(root)}: {s}"
        for p in root.rglob("*")
        if p.is_file()
        for s in SECRETS
        if s.encode() in p.read_bytes()
    ]


@pytest.mark.parametrize(
    ("name", "planned_url", "contract"),
    [
        ("ufm.yaml", "https://ufm.example.org", UfmContract),
        ("switch-sm.yaml", "https://leaf01-mgmt.example.org", MlnxosContract),
    ],
)
def test_plan_apply_and_verify_write_no_credential(
    httpserver: HTTPServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    planned_url: str,
    contract: type[UfmContract] | type[MlnxosContract],
) -> None:
    server = contract(httpserver, username=USER, password=PASSWORD)
    spec = spec_at(tmp_path, name, planned_url, server.url)
    loaded = load_spec(spec)
    assert cli._run_backend(loaded, check=True)
    assert cli._run_backend(loaded, check=False)
    said = capsys.readouterr()
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli.cli,
        [
            "verify", str(spec), "--backend", "--json", str(out / "report.json"), "--html", str(out / "report.html"),
            "--history", str(out / "history"), "--metrics", str(out / "ibprov.prom"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (out / "report.json").is_file()
    assert any((out / "history").rglob("report.json"))
    assert files_holding(tmp_path) == []
    for text in (said.out, said.err, result.output):
        assert not any(s in text for s in SECRETS)


def test_a_refused_login_and_an_unreachable_back_end_say_so_without_the_credentials(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    server = UfmContract(httpserver, username=USER, password="another-password")
    loaded = load_spec(spec_at(tmp_path, "ufm.yaml", "https://ufm.example.org", server.url))
    with pytest.raises(CollectError) as refused:
        cli._run_backend(loaded, check=True)
    with socket.socket() as sock:  # a port on 127.0.0.1 nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    loaded = load_spec(
        spec_at(tmp_path, "switch-sm.yaml", "https://leaf01-mgmt.example.org", f"http://127.0.0.1:{port}")
    )
    with pytest.raises(CollectError) as unreachable:
        cli._run_backend(loaded, check=True)
    for message in (str(refused.value), str(unreachable.value)):
        assert not any(s in message for s in SECRETS), message
    assert "subnet_manager" in str(refused.value)
