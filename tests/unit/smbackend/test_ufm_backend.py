"""The UFM back end against the contract server (tests/contracts/ufm.py, on 127.0.0.1): for each authentication
style, a first apply from empty leaves UFM holding the desired partitions and a second run sends nothing that
changes state (counted at the server); a spec change sends only the calls it needs; UFM's quirks (duplicate
create 400 or 409, the last member taking the partition with it, POST ignoring per-GUID memberships) are
met; failures are located at the spec field that names the fix, and a refused call stops the run."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from contracts.ufm import DEFAULT_PASSWORD, DEFAULT_TOKEN, DEFAULT_USER, UfmContract
from pytest_httpserver import HTTPServer

from ibprov.clusterspec import load_spec
from ibprov.clusterspec.model import UfmSm
from ibprov.identity.guids import GuidBook
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.http import HttpSession
from ibprov.smbackend.state import BackendState, PartitionState
from ibprov.smbackend.ufm import backend
from ibprov.smbackend.ufm.api import UfmApi
from ibprov.smbackend.ufm.backend import QOS_NOTE, apply_ufm, connect, plan_ufm, read_ufm
from ibprov.smbackend.ufm.payload import CARRIED

STYLES = ("basic", "session", "token")
PREFIX = {"basic": "/ufmRest", "session": "/ufmRestV2", "token": "/ufmRestV3"}
A, B, C, D, E = 0x0002C90300A1B2C3, 0x0002C90300A1B2C4, 0x0002C90300A1B2C5, 0x1070FD0300C8A014, 0x1070FD0300C8A028
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "ufm.yaml"


def _state(*parts: PartitionState) -> BackendState:
    return BackendState(None, {p.pkey: p for p in parts})


DESIRED = _state(
    PartitionState(0x10, "compute", True, frozenset({(A, "full"), (B, "full"), (C, "limited")}), mtu=4),
    PartitionState(0x11, "gpu", False, frozenset({(A, "limited"), (D, "full")}), mtu=5, rate=200.0, sl=1),
)


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IBPROV_TEST_UFM_USER", DEFAULT_USER)
    monkeypatch.setenv("IBPROV_TEST_UFM_PASSWORD", DEFAULT_PASSWORD)
    monkeypatch.setenv("IBPROV_TEST_UFM_TOKEN", DEFAULT_TOKEN)


@pytest.fixture
def httpserver(httpserver_ipv4: HTTPServer) -> HTTPServer:
    """pytest-httpserver's server on 127.0.0.1 (never another address)."""
    return httpserver_ipv4


@pytest.fixture
def ufm(httpserver: HTTPServer) -> UfmContract:
    return UfmContract(httpserver)


def config(httpserver: HTTPServer, auth: str = "basic", **extra: object) -> UfmSm:
    refs: dict[str, object] = (
        {"token": "env:IBPROV_TEST_UFM_TOKEN"}
        if auth == "token"
        else {"username": "env:IBPROV_TEST_UFM_USER", "password": "env:IBPROV_TEST_UFM_PASSWORD"}
    )
    return UfmSm.model_validate({"url": httpserver.url_for("/").rstrip("/"), "auth": auth, **refs, **extra})


def calls(ufm: UfmContract) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in ufm.changing_calls()]


def run_to(ufm: UfmContract, cfg: UfmSm, desired: BackendState) -> UfmApi:
    """Apply ``desired`` (it must succeed), then start the server's log afresh."""
    api = connect(cfg)
    assert apply_ufm(api, cfg, desired).ok
    ufm.clear_log()
    return api


def assert_in_sync(ufm: UfmContract, api: UfmApi, cfg: UfmSm, desired: BackendState) -> None:
    """UFM holds ``desired`` (what it carries), and a second plan and apply change nothing."""
    assert read_ufm(api).partitions == desired.only(CARRIED).partitions
    ufm.clear_log()
    plan = plan_ufm(api, cfg, desired)
    assert plan.in_sync, [a.text for a in plan.actions]
    result = apply_ufm(api, cfg, desired)
    assert result.ok
    assert result.done == []
    assert ufm.changing_calls() == []


# --- first and second run, per authentication style -------------------------------------------------------


@pytest.mark.parametrize("auth", STYLES)
def test_a_first_apply_from_empty_creates_every_partition_and_ufm_then_holds_the_desired_state(
    ufm: UfmContract, httpserver: HTTPServer, auth: str
) -> None:
    cfg = config(httpserver, auth)
    api = connect(cfg)
    result = apply_ufm(api, cfg, DESIRED)
    assert result.ok
    p = PREFIX[auth]
    assert calls(ufm) == [
        ("POST", f"{p}/resources/pkeys/add"),
        ("PUT", f"{p}/resources/pkeys/"),
        ("POST", f"{p}/resources/pkeys/add"),
        ("PUT", f"{p}/resources/pkeys/"),
    ]
    assert [a.text for a in result.done] == [a.text for a in result.plan.actions]
    assert read_ufm(api).partitions == DESIRED.only(CARRIED).partitions
    assert ufm.members(0x11) == {"0002C90300A1B2C3": "limited", "1070FD0300C8A014": "full"}


@pytest.mark.parametrize("auth", STYLES)
def test_a_second_run_plans_and_sends_nothing_that_changes_state(
    ufm: UfmContract, httpserver: HTTPServer, auth: str
) -> None:
    cfg = config(httpserver, auth)
    api = run_to(ufm, cfg, DESIRED)
    assert_in_sync(ufm, api, cfg, DESIRED)


def test_a_plan_shows_each_call_as_method_path_and_compact_body_and_changes_nothing(
    ufm: UfmContract, httpserver: HTTPServer
) -> None:
    cfg = config(httpserver)
    plan = plan_ufm(connect(cfg), cfg, DESIRED)
    assert ufm.changing_calls() == []
    assert plan.backend == "ufm"
    assert plan.current == BackendState()
    assert plan.actions[0].text == (
        'POST /ufmRest/resources/pkeys/add {"pkey":"0x0010","index0":false,"ip_over_ib":true,"mtu_limit":4}'
    )
    assert plan.actions[1].text.startswith(
        'PUT /ufmRest/resources/pkeys/ {"pkey":"0x0010","guids":["0002c90300a1b2c3","0002c90300a1b2c4",'
        '"0002c90300a1b2c5"],"memberships":["full","full","limited"]'
    )
    assert [(a.verb, a.pkey) for a in plan.actions] == [("add", 0x10), ("set", 0x10), ("add", 0x11), ("set", 0x11)]


def test_the_example_spec_reaches_ufm_and_stays_in_sync(ufm: UfmContract, httpserver: HTTPServer) -> None:
    loaded = load_spec(EXAMPLE)
    desired, _ = desired_state(loaded, GuidBook.for_spec(loaded, allow_synthetic=True, twin=True))
    cfg = config(httpserver, "session")
    api = run_to(ufm, cfg, desired)
    assert_in_sync(ufm, api, cfg, desired)


def test_the_list_shaped_answer_is_read_the_same(httpserver: HTTPServer) -> None:
    ufm = UfmContract(httpserver, list_shape=True)
    cfg = config(httpserver)
    api = run_to(ufm, cfg, DESIRED)
    assert_in_sync(ufm, api, cfg, DESIRED)


def test_qos_defaults_ufm_reports_for_limits_the_spec_leaves_unset_are_not_fought(httpserver: HTTPServer) -> None:
    ufm = UfmContract(httpserver, qos_defaults=True)
    cfg = config(httpserver)
    desired = _state(PartitionState(0x10, None, True, frozenset({(A, "full")})))
    api = run_to(ufm, cfg, desired)
    assert read_ufm(api).partitions[0x10].mtu == 2  # UFM's default, which the spec does not set
    assert plan_ufm(api, cfg, desired).in_sync


# --- a spec change sends only what it needs ---------------------------------------------------------------


def _change(pkey: int, **fields: object) -> Callable[[BackendState], BackendState]:
    def change(state: BackendState) -> BackendState:
        parts = dict(state.partitions)
        parts[pkey] = replace(parts[pkey], **fields)  # type: ignore[arg-type]
        return BackendState(None, parts)

    return change


def _members(pkey: int, *members: tuple[int, str]) -> Callable[[BackendState], BackendState]:
    return _change(pkey, members=frozenset(members))


def _drop(pkey: int) -> Callable[[BackendState], BackendState]:
    return lambda s: BackendState(None, {k: p for k, p in s.partitions.items() if k != pkey})


P = "/ufmRest/resources/pkeys"
CHANGES = {
    "member added full": (_members(0x10, (A, "full"), (B, "full"), (C, "limited"), (E, "full")), [("POST", P + "/")]),
    "member added limited": (_members(0x11, (A, "limited"), (D, "full"), (E, "limited")), [("POST", P + "/")]),
    "members added with two memberships": (
        _members(0x11, (A, "limited"), (D, "full"), (B, "full"), (E, "limited")),
        [("PUT", P + "/")],
    ),
    "member removed": (_members(0x10, (A, "full"), (C, "limited")), [("DELETE", P + "/0x0010/guids/0002c90300a1b2c4")]),
    "membership changed": (_members(0x10, (A, "full"), (B, "limited"), (C, "limited")), [("PUT", P + "/")]),
    "members replaced": (_members(0x11, (E, "full")), [("PUT", P + "/")]),
    "one of three replaced": (
        _members(0x10, (A, "full"), (B, "full"), (E, "limited")),
        [("POST", P + "/"), ("DELETE", P + "/0x0010/guids/0002c90300a1b2c5")],
    ),
    "ipoib flipped": (_change(0x11, ipoib=True), [("PUT", P + "/")]),
    "qos changed": (_change(0x11, mtu=4, sl=2), [("PUT", P + "/qos_conf")]),
    "qos set where unset": (_change(0x10, rate=100.0), [("PUT", P + "/qos_conf")]),
    "partition removed, prune off": (_drop(0x11), []),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_spec_change_sends_only_the_calls_it_needs(ufm: UfmContract, httpserver: HTTPServer, name: str) -> None:
    change, expected = CHANGES[name]
    cfg = config(httpserver)
    api = run_to(ufm, cfg, DESIRED)
    changed = change(DESIRED)
    result = apply_ufm(api, cfg, changed)
    assert result.ok, result.message
    assert calls(ufm) == expected
    if name != "partition removed, prune off":
        assert_in_sync(ufm, api, cfg, changed)


def test_a_member_added_with_one_membership_is_posted_with_that_single_membership(
    ufm: UfmContract, httpserver: HTTPServer
) -> None:
    cfg = config(httpserver)
    api = run_to(ufm, cfg, DESIRED)
    apply_ufm(api, cfg, _members(0x11, (A, "limited"), (D, "full"), (E, "limited"))(DESIRED))
    (post,) = ufm.changing_calls()
    assert post.body == {
        "pkey": "0x0011",
        "guids": ["1070fd0300c8a028"],
        "membership": "limited",
        "ip_over_ib": False,
        "index0": False,
    }
    assert ufm.members(0x11)["1070FD0300C8A028"] == "limited"


def test_a_qos_change_carries_the_restart_note(ufm: UfmContract, httpserver: HTTPServer) -> None:
    cfg = config(httpserver)
    api = run_to(ufm, cfg, DESIRED)
    plan = plan_ufm(api, cfg, _change(0x11, sl=3)(DESIRED))
    assert [a.text for a in plan.actions] == [
        'PUT /ufmRest/resources/pkeys/qos_conf {"pkey":"0x0011","mtu_limit":5,"service_level":3,"rate_limit":200.0}'
    ]
    assert QOS_NOTE in plan.notes
    assert "restart" in QOS_NOTE


def test_a_partition_the_spec_does_not_name_is_left_alone_and_named_without_prune(
    ufm: UfmContract, httpserver: HTTPServer
) -> None:
    ufm.seed(0x0042, {"0002c90300a1b2c3": "full"})  # e.g. ib-kubernetes' pod partition
    cfg = config(httpserver)
    result = apply_ufm(connect(cfg), cfg, DESIRED)
    assert result.ok
    assert ("DELETE", f"{P}/0x0042") not in calls(ufm)
    assert 0x42 in ufm.pkeys
    assert any(n.startswith("0x0042 (1 member(s)) is in UFM, not in the spec: left alone") for n in result.plan.notes)


def test_with_prune_a_partition_the_spec_does_not_name_is_deleted_but_never_default(
    ufm: UfmContract, httpserver: HTTPServer
) -> None:
    cfg = config(httpserver, prune=True)
    api = run_to(ufm, cfg, DESIRED)
    result = apply_ufm(api, cfg, _drop(0x11)(DESIRED))
    assert result.ok
    assert calls(ufm) == [("DELETE", f"{P}/0x0011")]
    assert set(ufm.pkeys) == {0x10, 0x7FFF}
    assert_in_sync(ufm, api, cfg, _drop(0x11)(DESIRED))


def test_a_partition_without_members_yet_is_created_only_with_a_note(ufm: UfmContract, httpserver: HTTPServer) -> None:
    cfg = config(httpserver)
    empty = _state(PartitionState(0x20, "later", True, frozenset(), sl=2))
    api = connect(cfg)
    result = apply_ufm(api, cfg, empty)
    assert calls(ufm) == [("POST", f"{P}/add")]
    assert any("created without members" in n for n in result.plan.notes)
    assert_in_sync(ufm, api, cfg, empty)


# --- UFM's quirks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 409])
def test_a_duplicate_create_answered_400_or_409_counts_as_done(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    """Another tool created the pkey between ibprov's read and its create: UFM says it exists; that is done."""
    ufm = UfmContract(httpserver, duplicate_status=status)
    ufm.seed(0x10, {"0002c90300a1b2c3": "full"})
    cfg = config(httpserver)
    api = connect(cfg)
    with monkeypatch.context() as patched:
        patched.setattr(backend, "read_ufm", lambda api: BackendState())  # the read that missed it
        result = apply_ufm(api, cfg, DESIRED)
    assert result.ok, result.message
    assert [r.status for r in ufm.changing_calls()][:2] == [status, 200]
    assert any("0x0010 existed already" in n for n in result.plan.notes)
    assert_in_sync(ufm, api, cfg, DESIRED)


def test_a_planned_partition_the_spec_leaves_memberless_is_not_emptied(
    ufm: UfmContract, httpserver: HTTPServer
) -> None:
    """UFM deletes a partition with its last member: removing them all would delete a planned partition."""
    cfg = config(httpserver)
    api = run_to(ufm, cfg, DESIRED)
    emptied = _members(0x11)(DESIRED)
    result = apply_ufm(api, cfg, emptied)
    assert result.ok
    assert calls(ufm) == []
    assert ufm.members(0x11) == {"0002C90300A1B2C3": "limited", "1070FD0300C8A014": "full"}
    assert any("UFM deletes a partition with its last member" in n for n in result.plan.notes)


def test_replacing_every_member_keeps_the_partition(ufm: UfmContract, httpserver: HTTPServer) -> None:
    cfg = config(httpserver)
    api = run_to(ufm, cfg, DESIRED)
    apply_ufm(api, cfg, _members(0x11, (E, "limited"))(DESIRED))
    assert not any(r.method == "DELETE" for r in ufm.changing_calls())
    assert ufm.members(0x11) == {"1070FD0300C8A028": "limited"}


# --- located errors and refusals --------------------------------------------------------------------------


@pytest.mark.parametrize("auth", STYLES)
def test_refused_credentials_are_located_at_the_username_or_the_token(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, auth: str
) -> None:
    UfmContract(httpserver)
    monkeypatch.setenv("IBPROV_TEST_UFM_PASSWORD", "wrong-password")
    monkeypatch.setenv("IBPROV_TEST_UFM_TOKEN", "wrong-token")
    with pytest.raises(BackendError) as caught:
        connect(config(httpserver, auth))
    assert caught.value.path == ("subnet_manager", "ufm", "token" if auth == "token" else "username")
    assert f"auth: {auth}" in caught.value.message
    assert "wrong-password" not in caught.value.message
    assert "wrong-token" not in caught.value.message


@pytest.mark.parametrize(
    ("offered", "auth"), [(("basic",), "session"), (("session",), "basic"), (("basic", "session"), "token")]
)
def test_a_wrong_auth_style_is_located_at_auth(httpserver: HTTPServer, offered: tuple[str, ...], auth: str) -> None:
    UfmContract(httpserver, styles=offered)
    with pytest.raises(BackendError) as caught:
        connect(config(httpserver, auth))
    assert caught.value.path == ("subnet_manager", "ufm", "auth")
    assert f"is auth: {auth} right for this UFM" in caught.value.message
    assert PREFIX[auth] in caught.value.message


def test_a_refused_call_stops_the_run_with_ufm_s_words_and_nothing_after_it_is_sent(
    ufm: UfmContract, httpserver: HTTPServer
) -> None:
    third = PartitionState(0x12, "storage", True, frozenset({(E, "full")}))
    desired = _state(*DESIRED.partitions.values(), third)
    ufm.refuse(0x11, "PKey 0x11 is reserved for SHARP")
    cfg = config(httpserver)
    result = apply_ufm(connect(cfg), cfg, desired)
    assert not result.ok
    assert result.failed is not None
    assert result.failed.pkey == 0x11
    assert result.failed.text.startswith("POST /ufmRest/resources/pkeys/add ")
    assert result.message == "PKey 0x11 is reserved for SHARP"
    assert [a.pkey for a in result.done] == [0x10, 0x10]
    assert ufm.changing_calls()[-1].path == f"{P}/add"
    assert ufm.changing_calls()[-1].status == 400
    assert len(ufm.changing_calls()) == 3
    assert set(ufm.pkeys) == {0x10, 0x7FFF}


def test_a_ufm_answering_5xx_is_located_at_the_url(ufm: UfmContract, httpserver: HTTPServer) -> None:
    cfg = config(httpserver)
    api = connect(cfg)
    ufm.failing = 503
    with pytest.raises(BackendError) as caught:
        read_ufm(api)
    assert caught.value.path == ("subnet_manager", "ufm", "url")
    assert "answered 503" in caught.value.message


def test_an_unreachable_ufm_is_located_at_the_url() -> None:
    with socket.socket() as probe:  # a port on 127.0.0.1 nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cfg = UfmSm(
        url=f"http://127.0.0.1:{port}",
        auth="basic",
        username="env:IBPROV_TEST_UFM_USER",
        password="env:IBPROV_TEST_UFM_PASSWORD",
    )
    with pytest.raises(BackendError) as caught:
        connect(cfg, timeout=5)
    assert caught.value.path == ("subnet_manager", "ufm", "url")


def test_a_missing_credential_variable_is_located_at_its_field(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("IBPROV_TEST_UFM_PASSWORD")
    with pytest.raises(BackendError) as caught:
        connect(config(httpserver))
    assert caught.value.path == ("subnet_manager", "ufm", "password")


def test_an_expired_session_is_renewed_once(ufm: UfmContract, httpserver: HTTPServer) -> None:
    cfg = config(httpserver, "session")
    api = connect(cfg)
    ufm.expire_sessions()
    assert read_ufm(api) == BackendState()
    assert [r.path for r in ufm.requests].count("/dologin") == 2


def test_no_credential_appears_in_a_plan_a_log_or_a_repr(ufm: UfmContract, httpserver: HTTPServer) -> None:
    for auth in STYLES:
        cfg = config(httpserver, auth)
        api = connect(cfg)
        plan = plan_ufm(api, cfg, DESIRED)
        seen = " ".join([*(a.text for a in plan.actions), *plan.notes, repr(api), repr(api.http.log)])
        seen += " ".join(repr(r) for r in ufm.requests)
        for secret in (DEFAULT_PASSWORD, DEFAULT_TOKEN):
            assert secret not in seen


# --- the contract server pins the behaviours it says it pins ----------------------------------------------


@pytest.fixture
def raw(ufm: UfmContract) -> HttpSession:
    return HttpSession(ufm.url)


BASIC = {"Authorization": "Basic aWJwcm92LXRlc3Q6Y29udHJhY3Qtc2VjcmV0"}  # DEFAULT_USER:DEFAULT_PASSWORD


def test_contract_credentials_of_another_style_on_a_prefix_answer_401(raw: HttpSession) -> None:
    assert raw.request("GET", "/ufmRest/app/ufm_version", headers=BASIC).status == 200
    assert raw.request("GET", "/ufmRestV2/app/ufm_version", headers=BASIC).status == 401
    assert raw.request("GET", "/ufmRestV3/app/ufm_version", headers=BASIC).status == 401


def test_contract_post_ignores_plural_memberships_and_put_honours_them(ufm: UfmContract, raw: HttpSession) -> None:
    body = {"pkey": "0x10", "guids": ["0002c90300a1b2c3", "0002c90300a1b2c4"], "memberships": ["limited", "full"]}
    assert raw.request("POST", f"{P}/", json_body=body, headers=BASIC).status == 200
    assert ufm.members(0x10) == {"0002C90300A1B2C3": "full", "0002C90300A1B2C4": "full"}
    assert raw.request("PUT", f"{P}/", json_body=body, headers=BASIC).status == 200
    assert ufm.members(0x10) == {"0002C90300A1B2C3": "limited", "0002C90300A1B2C4": "full"}
    short = {**body, "memberships": ["full"]}
    assert raw.request("PUT", f"{P}/", json_body=short, headers=BASIC).status == 400


def test_contract_put_replaces_the_member_list_and_creates_a_missing_pkey(ufm: UfmContract, raw: HttpSession) -> None:
    ufm.seed(0x10, {"0002c90300a1b2c3": "full"})
    body = {"pkey": "0x10", "guids": ["0002c90300a1b2c4"], "memberships": ["limited"]}
    assert raw.request("PUT", f"{P}/", json_body=body, headers=BASIC).status == 200
    assert ufm.members(0x10) == {"0002C90300A1B2C4": "limited"}
    assert raw.request("PUT", f"{P}/", json_body={**body, "pkey": "0x13"}, headers=BASIC).status == 200
    assert ufm.members(0x13) == {"0002C90300A1B2C4": "limited"}


def test_contract_removing_the_last_member_deletes_the_partition(ufm: UfmContract, raw: HttpSession) -> None:
    ufm.seed(0x10, {"0002c90300a1b2c3": "full", "0002c90300a1b2c4": "full"})
    assert raw.request("DELETE", f"{P}/0x10/guids/0002c90300a1b2c3", headers=BASIC).status == 200
    assert raw.request("GET", f"{P}/0x10?guids_data=true", headers=BASIC).status == 200
    assert raw.request("DELETE", f"{P}/0x10/guids/0002c90300a1b2c4", headers=BASIC).status == 200
    assert raw.request("GET", f"{P}/0x10?guids_data=true", headers=BASIC).status == 404


def test_contract_guids_are_checked_and_a_guid_added_twice_is_held_once(ufm: UfmContract, raw: HttpSession) -> None:
    bad = {"pkey": "0x10", "guids": ["0x0002c90300a1b2c3"]}
    assert raw.request("POST", f"{P}/", json_body=bad, headers=BASIC).status == 400
    good = {"pkey": "0x10", "guids": ["0002c90300a1b2c3"], "membership": "limited"}
    for _ in range(2):
        assert raw.request("POST", f"{P}/", json_body=good, headers=BASIC).status == 200
    assert ufm.members(0x10) == {"0002C90300A1B2C3": "limited"}
    answer = raw.request("GET", f"{P}?guids_data=true", headers=BASIC).json()
    assert answer["0x10"]["guids"] == [{"guid": "0002C90300A1B2C3", "membership": "limited", "index0": False}]


@pytest.mark.parametrize(("status", "words"), [(409, "already exists"), (400, "already exists")])
def test_contract_a_duplicate_create_answers_as_configured(httpserver: HTTPServer, status: int, words: str) -> None:
    UfmContract(httpserver, duplicate_status=status)
    raw = HttpSession(httpserver.url_for("/").rstrip("/"))
    assert raw.request("POST", f"{P}/add", json_body={"pkey": "0x10"}, headers=BASIC).status == 200
    again = raw.request("POST", f"{P}/add", json_body={"pkey": "0x10"}, headers=BASIC)
    assert again.status == status
    assert words in again.text
