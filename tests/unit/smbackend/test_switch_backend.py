"""The switch back end against the contract server (tests/contracts/mlnxos.py, on 127.0.0.1): a first apply
from an empty switch sends exactly the rendered configuration and leaves the switch holding the desired state;
a second run sends nothing that changes state (counted at the server); a spec change sends only the difference;
a refused command stops the run with the switch's words; failures are located at the spec field to fix."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from contracts.mlnxos import DEFAULT_PASSWORD, DEFAULT_USER, LOGIN_PAGE, MlnxosContract
from pytest_httpserver import HTTPServer
from werkzeug import Response

from ibprov.clusterspec import load_spec
from ibprov.clusterspec.model import SwitchSm
from ibprov.identity.guids import GuidBook
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.http import HttpSession
from ibprov.smbackend.state import BackendState, PartitionState, SmState
from ibprov.smbackend.switch import api as switch_api
from ibprov.smbackend.switch.api import SwitchApi
from ibprov.smbackend.switch.backend import apply_switch, connect, plan_switch, read_switch
from ibprov.smbackend.switch.commands import CARRIED, render_commands

A, B, C, D = 0x0C42A10300B7E014, 0x0C42A10300B7E028, 0x0C42A10300B7E03C, 0x0C42A10300B7E100
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "switch-sm.yaml"
URL = ("subnet_manager", "switch", "url")
USERNAME = ("subnet_manager", "switch", "username")


def _state(*parts: PartitionState, priority: int = 15) -> BackendState:
    return BackendState(SmState(True, priority), {p.pkey: p for p in parts})


DESIRED = _state(
    PartitionState(0x10, "compute", True, frozenset({(A, "full"), (B, "full"), (C, "full")}), mtu=5),
    PartitionState(0x20, "storage", False, frozenset({(A, "limited"), (D, "full")})),
    PartitionState(0x30, "mixed", True, frozenset({(B, "both"), (D, "full")})),
)


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IBPROV_TEST_SW_USER", DEFAULT_USER)
    monkeypatch.setenv("IBPROV_TEST_SW_PASSWORD", DEFAULT_PASSWORD)


@pytest.fixture
def httpserver(httpserver_ipv4: HTTPServer) -> HTTPServer:
    """pytest-httpserver's server on 127.0.0.1 (never another address)."""
    return httpserver_ipv4


@pytest.fixture
def switch(httpserver: HTTPServer) -> MlnxosContract:
    return MlnxosContract(httpserver)


def config(url: str, **extra: object) -> SwitchSm:
    refs = {"username": "env:IBPROV_TEST_SW_USER", "password": "env:IBPROV_TEST_SW_PASSWORD"}
    return SwitchSm.model_validate({"name": "leaf01", "url": url, **refs, **extra})


def held(desired: BackendState) -> dict[str, tuple[int, bool, dict[int, str]]]:
    """What the contract server should hold for ``desired``."""
    return {p.name or "": (p.pkey, p.ipoib, dict(p.members)) for p in desired.partitions.values()}


def applied(switch: MlnxosContract, cfg: SwitchSm, desired: BackendState) -> SwitchApi:
    """Apply ``desired`` (it must succeed), then start the server's log afresh."""
    api = connect(cfg)
    assert apply_switch(api, cfg, desired).ok
    switch.clear_log()
    return api


# --- first and second run --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["text", "lines", "dict"])
def test_a_first_apply_from_an_empty_switch_sends_exactly_the_rendered_configuration(
    httpserver: HTTPServer, shape: str
) -> None:
    switch = MlnxosContract(httpserver, config_shape=shape)
    cfg = config(switch.url)
    result = apply_switch(connect(cfg), cfg, DESIRED)
    assert result.ok, result.message
    assert switch.changing_commands() == render_commands(DESIRED, save=True)
    assert [a.text for a in result.done] == switch.changing_commands()
    assert switch.commands[0] == "show running-config"  # read back before anything is sent
    assert switch.snapshot() == held(DESIRED)
    assert (switch.state.sm_enabled, switch.state.sm_priority, switch.state.allow_both) == (True, 15, True)
    assert switch.saved == switch.state


def test_every_command_travels_alone_in_its_own_request(switch: MlnxosContract) -> None:
    cfg = config(switch.url)
    apply_switch(connect(cfg), cfg, DESIRED)
    sent = [r for r in switch.requests if r.kind == "commands"]
    assert sent
    assert all(len(r.commands) == 1 for r in sent)


def test_a_second_plan_and_apply_change_nothing(switch: MlnxosContract) -> None:
    cfg = config(switch.url)
    api = applied(switch, cfg, DESIRED)
    plan = plan_switch(api, cfg, DESIRED)
    assert plan.in_sync, [a.text for a in plan.actions]
    assert plan.actions == []
    assert plan.current == DESIRED.only(CARRIED)
    result = apply_switch(api, cfg, DESIRED)
    assert result.ok
    assert result.done == []
    assert switch.changes == 0
    assert switch.commands == ["show running-config", "show running-config"]


def test_a_change_in_the_spec_sends_only_the_difference(switch: MlnxosContract) -> None:
    cfg = config(switch.url)
    api = applied(switch, cfg, DESIRED)
    changed = _state(
        PartitionState(0x10, "compute", False, frozenset({(A, "full"), (B, "limited")})),
        DESIRED.partitions[0x20],
        DESIRED.partitions[0x30],
        priority=14,
    )
    result = apply_switch(api, cfg, changed)
    assert result.ok
    assert switch.changing_commands() == [
        "no ib partition compute ipoib",
        "ib partition compute member 0x0c42a10300b7e028 type limited",
        "no ib partition compute member 0x0c42a10300b7e03c",
        "ib sm sm-priority 14",
        "configuration write",
    ]
    assert switch.snapshot() == held(changed)
    switch.clear_log()
    assert plan_switch(api, cfg, changed).in_sync


def test_a_partition_the_spec_does_not_name_is_left_alone_unless_prune(switch: MlnxosContract) -> None:
    switch.preload(["ib partition scratch pkey 0x40", "ib partition scratch member 0x0000000000000042 type full"])
    cfg = config(switch.url)
    api = applied(switch, cfg, DESIRED)
    assert "scratch" in switch.snapshot()
    plan = plan_switch(api, cfg, DESIRED)
    assert plan.in_sync
    assert any("scratch" in n and "left alone" in n for n in plan.notes)
    pruned = config(switch.url, prune=True)
    assert apply_switch(api, pruned, DESIRED).ok
    assert switch.changing_commands() == ["no ib partition scratch", "configuration write"]
    assert switch.snapshot() == held(DESIRED)


def test_a_partition_renamed_in_the_spec_is_removed_and_recreated_on_the_switch(switch: MlnxosContract) -> None:
    switch.preload(["ib partition old_name pkey 0x10", "ib partition old_name member 0x0c42a10300b7e014 type full"])
    cfg = config(switch.url)
    result = apply_switch(connect(cfg), cfg, DESIRED)
    assert result.ok, result.message
    assert switch.changing_commands()[:2] == ["ib sm allow-both-pkeys", "no ib partition old_name"]
    assert switch.snapshot() == held(DESIRED)
    assert any("old_name" in n for n in result.plan.notes)


def test_save_false_leaves_the_change_unsaved(switch: MlnxosContract) -> None:
    cfg = config(switch.url, save=False)
    assert apply_switch(connect(cfg), cfg, DESIRED).ok
    assert "configuration write" not in switch.commands
    assert switch.saved is None


def test_the_example_spec_s_desired_state_applies_and_reads_back(switch: MlnxosContract) -> None:
    loaded = load_spec(EXAMPLE)
    desired, _plan = desired_state(loaded, GuidBook.for_spec(loaded, allow_synthetic=True, twin=True))
    cfg = config(switch.url)
    api = connect(cfg)
    assert apply_switch(api, cfg, desired).ok
    assert read_switch(api) == desired.only(CARRIED)


# --- refusals and failures -------------------------------------------------------------------------------


def test_a_refused_command_stops_the_run_with_the_switch_s_words(switch: MlnxosContract) -> None:
    cfg = config(switch.url)
    refused = "ib partition storage pkey 0x0020"
    switch.refuse(refused, "% Partition table full")
    result = apply_switch(connect(cfg), cfg, DESIRED)
    assert not result.ok
    assert result.failed is not None
    assert result.failed.text == refused
    assert result.failed.pkey == 0x20
    assert result.message == "% Partition table full"
    rendered = render_commands(DESIRED, save=True)
    upto = rendered[: rendered.index(refused) + 1]
    assert switch.changing_commands() == upto  # nothing after the refused one reached the switch
    assert [a.text for a in result.done] == upto[:-1]
    assert switch.saved is None


def test_a_command_the_switch_does_not_know_is_refused_in_its_words(switch: MlnxosContract) -> None:
    cfg = config(switch.url)
    api = connect(cfg)
    with pytest.raises(switch_api.CommandRefused) as refused:
        api.run("ib sm priority-of-the-day 3")
    assert refused.value.message.startswith("% Unrecognized command")


@pytest.mark.parametrize("status", [200, 401])
def test_a_wrong_password_is_located_at_the_username_with_the_switch_s_message(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    switch = MlnxosContract(httpserver, login_refusal=status)
    monkeypatch.setenv("IBPROV_TEST_SW_PASSWORD", "not-the-password")
    with pytest.raises(BackendError) as err:
        connect(config(switch.url))
    assert err.value.path == USERNAME
    assert "invalid username or password" in err.value.message
    assert "not-the-password" not in err.value.message
    assert DEFAULT_USER not in err.value.message
    assert switch.commands == []


def test_a_missing_credential_is_located_at_its_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IBPROV_TEST_SW_PASSWORD")
    with pytest.raises(BackendError) as err:
        connect(config("http://127.0.0.1:9"))
    assert err.value.path == ("subnet_manager", "switch", "password")


@pytest.mark.parametrize("unauthenticated", [302, 401, 200])
def test_a_session_that_expires_mid_run_is_renewed_once_and_the_run_continues(
    httpserver: HTTPServer, unauthenticated: int
) -> None:
    switch = MlnxosContract(httpserver, unauthenticated=unauthenticated)
    cfg = config(switch.url)
    api = connect(cfg)
    switch.expire_session(after=4)  # the read-back and three commands, then the session is gone
    result = apply_switch(api, cfg, DESIRED)
    assert result.ok, result.message
    assert switch.changing_commands() == render_commands(DESIRED, save=True)  # none lost, none twice
    assert switch.snapshot() == held(DESIRED)
    kinds = [(r.kind, r.status) for r in switch.requests]
    assert kinds.count(("json-login", 200)) == 2
    assert ("commands", unauthenticated) in kinds


@pytest.mark.parametrize("key", ["status_msg", "status_message"])
def test_the_switch_s_words_are_read_under_either_key(httpserver: HTTPServer, key: str) -> None:
    switch = MlnxosContract(httpserver, message_key=key)
    switch.refuse("ib partition mixed ipoib", "% IPoIB is not allowed on this partition")
    cfg = config(switch.url)
    result = apply_switch(connect(cfg), cfg, DESIRED)
    assert not result.ok
    assert result.message == "% IPoIB is not allowed on this partition"


def test_a_refused_command_that_talks_of_no_session_is_not_taken_for_an_expired_one(httpserver: HTTPServer) -> None:
    switch = MlnxosContract(httpserver, unauthenticated=200)
    switch.refuse("ib partition mixed ipoib", "% partition mixed: IPoIB needs the SM running")
    cfg = config(switch.url)
    result = apply_switch(connect(cfg), cfg, DESIRED)
    assert not result.ok
    assert [r.kind for r in switch.requests].count("json-login") == 1


def test_a_session_refused_again_after_a_fresh_login_is_an_error_not_a_loop(switch: MlnxosContract) -> None:
    api = connect(config(switch.url))
    switch.sessions.clear()

    def stale_cookie(response: Response) -> Response:  # the login answers OK, but its session is never valid
        response.set_cookie("session", "stale", path="/")
        return response

    switch._new_session = stale_cookie  # type: ignore[method-assign]
    with pytest.raises(BackendError) as err:
        api.run("ib sm")
    assert err.value.path == USERNAME
    assert "refused a fresh session" in err.value.message
    assert [r.kind for r in switch.requests].count("json-login") == 2  # the first login and one renewal
    assert switch.commands == []


def test_an_unreachable_switch_is_located_at_its_url() -> None:
    with socket.socket() as sock:  # a port nobody listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with pytest.raises(BackendError) as err:
            connect(config(url), timeout=5)
    assert err.value.path == URL
    assert "switch leaf01" in err.value.message
    assert "cannot be reached" in err.value.message


def test_a_running_configuration_the_model_cannot_hold_is_located_at_the_url(switch: MlnxosContract) -> None:
    switch.preload(["ib partition odd pkey 0x50"])
    switch.state.partitions["odd"].members[0] = "full"
    api = connect(config(switch.url))
    real = switch.running_config
    switch.running_config = lambda: [*real(), "   ib partition odd member ALL type full"]  # type: ignore[method-assign]
    with pytest.raises(BackendError) as err:
        read_switch(api)
    assert err.value.path == URL
    assert "names no port GUID" in err.value.message


def test_omnia_s_form_login_gives_a_session_the_json_api_accepts(switch: MlnxosContract) -> None:
    """The server pins Omnia's login too (302 and a cookie), so the double serves both clients."""
    http = HttpSession(switch.url, url_path=URL)
    refused = http.request(
        "POST", "/admin/launch?script=rh&template=login&action=login", form={"f_user_id": "x", "f_password": "y"}
    )
    assert (refused.status, refused.headers.get("Location")) == (302, LOGIN_PAGE)
    body = {"commands": ["ib sm"]}
    assert http.request("POST", "/admin/launch?script=json", json_body=body).status == 302
    login = http.request(
        "POST",
        "/admin/launch?script=rh&template=login&action=login",
        form={"f_user_id": DEFAULT_USER, "f_password": DEFAULT_PASSWORD},
    )
    assert login.status == 302
    answer = http.request("POST", "/admin/launch?script=json", json_body=body)
    assert answer.json()["results"][0]["status"] == "OK"
    assert switch.state.sm_enabled


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("ib partition x pkey 0x7fff", "0x1-0x7ffe"),
        ("ib partition nowhere ipoib", "does not exist"),
        ("ib partition nowhere member 0x0000000000000001 type full", "does not exist"),
        ("ib partition other pkey 0x10", "already used by partition compute"),
    ],
)
def test_the_contract_server_refuses_what_the_documents_say_the_switch_refuses(
    switch: MlnxosContract, command: str, says: str
) -> None:
    switch.preload(["ib partition compute pkey 0x10"])
    api = connect(config(switch.url))
    with pytest.raises(switch_api.CommandRefused, match=says):
        api.run(command)
