"""A contract-test server for NVIDIA UFM Enterprise's REST API (the part ibprov uses: login and partitions), on
pytest-httpserver, bound to 127.0.0.1 by the tests that use it.

Product and documents followed:

* UFM Enterprise REST API Guide, v6.12 to v6.22: "REST API Complementary Information" (the three
  authentication styles and their prefixes: basic on ``/ufmRest``, session via ``POST /dologin`` with
  ``httpd_username``/``httpd_password`` on ``/ufmRestV2``, an access token sent as ``Authorization: Basic
  <token>`` on ``/ufmRestV3``) and "PKey GUIDs Rest API" (``GET /resources/pkeys?guids_data=true&qos_conf=true``,
  ``POST /resources/pkeys/add``, ``POST`` and ``PUT /resources/pkeys/``, ``DELETE /resources/pkeys/<pkey>`` and
  ``…/<pkey>/guids/<g1>,<g2>``, ``PUT /resources/pkeys/qos_conf``; GUIDs 16-20 hex characters, pkeys hex in
  0x0-0x7fff exclusive, membership full|limited defaulting to full, ip_over_ib defaulting to true);
* the behaviours that an NVIDIA mock UFM server test-suite documents, which says it "pins the mock to real UFM
  6.19.x": ``POST /resources/pkeys/`` ignores a plural ``memberships`` array (members take the single
  ``membership``, default full); ``PUT`` honours ``memberships``, refuses a length mismatch with 400, replaces the
  whole member list and creates the pkey if missing; removing the last member deletes the partition (a later GET
  answers 404); re-adding a GUID it holds is idempotent; a duplicate create answers 409;
* the clients Mellanox/ib-kubernetes (basic auth, ``GET /ufmRest/app/ufm_version`` as reachability check,
  GUIDs returned upper case without separators) and fabiendupont/nvidia-ufm-api (the prefix per style,
  ``PUT /resources/pkeys/`` with QoS fields, ``qos_conf``, the 400 "already exists" comment on a duplicate
  create).

Switchable where the sources disagree: the duplicate-create answer (``duplicate_status`` 409, as the 6.19 mock,
or 400 "... already exists", as the older documents and the fabiendupont comment); the shape of the detailed
GET (a map keyed by pkey, or a list of entries: ``list_shape``); whether POST ignores plural memberships
(``post_ignores_memberships``, on by default) and whether the last member's removal deletes the partition
(``last_member_deletes``, on by default); whether unset QoS limits read back as null or as UFM-like defaults
(``qos_defaults``).

ASSUMED (not seen in the sources): a wrong login to ``/dologin`` answers 401 and a right one 302 with a
``sessionid`` cookie; a disabled style's prefix (or ``/dologin`` without session login) answers 404, as a UFM
that lacks that API would; credentials of another style on a prefix answer 401; the detailed GET's keys are
``0x<hex>`` without padding and unset QoS limits are null (or, with ``qos_defaults``, mtu_limit 2,
service_level 0, rate_limit 2.5, the guide's create example); ``PUT /resources/pkeys/`` applies the QoS
fields it carries and refuses an empty ``guids``; ``POST /resources/pkeys/`` creates a missing pkey and sets
the pkey's ip_over_ib; the Default partition 0x7fff cannot be deleted (400); errors are ``{"error": text}``;
``/app/ufm_version`` answers ``{"ufm_release_version": ...}``.

The server records every request (method, path, query, JSON body and status; never a header or the login
form) and counts the calls that may change state. ``faults`` (tests/contracts/faults.py) breaks it in the middle
of a sync: a 503, a reset after the call was carried out, a stall past the client's timeout, failing reads.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from contracts.faults import Faults
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

__all__ = ["DEFAULT_PASSWORD", "DEFAULT_TOKEN", "DEFAULT_USER", "Pkey", "Recorded", "UfmContract"]

DEFAULT_USER = "ibprov-test"
DEFAULT_PASSWORD = "contract-secret"
DEFAULT_TOKEN = "contract-token-0123456789"
SESSION_COOKIE = "sessionid"
DEFAULT_PKEY = 0x7FFF
STYLE_OF_PREFIX = {"ufmRest": "basic", "ufmRestV2": "session", "ufmRestV3": "token"}
QOS_DEFAULTS = {"mtu_limit": 2, "service_level": 0, "rate_limit": 2.5}
CHANGING = ("POST", "PUT", "DELETE")
_PREFIXED = re.compile(r"^/(ufmRest|ufmRestV2|ufmRestV3)(/.*)?$")
_GUID = re.compile(r"^[0-9a-fA-F]{16,20}$")


@dataclass
class Pkey:
    ip_over_ib: bool = True
    guids: dict[str, tuple[str, bool]] = field(default_factory=dict)  # GUID (upper) -> (membership, index0)
    mtu_limit: int | None = None
    service_level: int | None = None
    rate_limit: float | None = None


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: str
    body: Any  # the JSON body, None without one (the login form is never recorded)
    status: int


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, content_type="application/json")


class UfmContract:
    """One UFM with state, served by ``server`` (every path, every method)."""

    def __init__(
        self,
        server: HTTPServer,
        *,
        username: str = DEFAULT_USER,
        password: str = DEFAULT_PASSWORD,
        token: str = DEFAULT_TOKEN,
        styles: tuple[str, ...] = ("basic", "session", "token"),
        duplicate_status: int = 409,
        list_shape: bool = False,
        post_ignores_memberships: bool = True,
        last_member_deletes: bool = True,
        qos_defaults: bool = False,
        version: str = "6.19.0-5",
    ) -> None:
        self.server = server
        self.styles = styles
        self.duplicate_status = duplicate_status
        self.list_shape = list_shape
        self.post_ignores_memberships = post_ignores_memberships
        self.last_member_deletes = last_member_deletes
        self.qos_defaults = qos_defaults
        self.version = version
        self._basic = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
        self._token = f"Basic {token}"
        self._login = (username, password)
        self.sessions: set[str] = set()
        self.pkeys: dict[int, Pkey] = {DEFAULT_PKEY: Pkey(ip_over_ib=True)}
        self.refused: dict[int, tuple[int, str]] = {}
        self.failing: int | None = None
        self.faults = Faults()  # a 503, a reset or a stall in the middle of a sync; reads that fail first
        self.requests: list[Recorded] = []
        server.expect_request(re.compile(r"^/.*")).respond_with_handler(self._handle)

    # --- what tests set and read -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self.server.url_for("/").rstrip("/")

    def seed(self, pkey: int, members: Mapping[str, str] | None = None, *, ip_over_ib: bool = True, **qos: Any) -> None:
        """Put a partition in UFM as another tool would have (members: GUID text -> membership)."""
        guids = {_norm(g): (m, False) for g, m in (members or {}).items()}
        self.pkeys[pkey] = Pkey(
            ip_over_ib, guids, qos.get("mtu_limit"), qos.get("service_level"), qos.get("rate_limit")
        )

    def refuse(self, pkey: int, message: str, status: int = 400) -> None:
        """Every call that would change ``pkey`` answers ``status`` with ``message``."""
        self.refused[pkey] = (status, message)

    def expire_sessions(self) -> None:
        self.sessions.clear()

    def changing_calls(self) -> list[Recorded]:
        """The requests that may change state (the login excluded)."""
        return [r for r in self.requests if r.method in CHANGING and r.path != "/dologin"]

    def clear_log(self) -> None:
        self.requests.clear()

    def members(self, pkey: int) -> dict[str, str]:
        return {g: m for g, (m, _i) in self.pkeys[pkey].guids.items()}

    # --- the server ------------------------------------------------------------------------------------

    def _handle(self, request: Request) -> Response:
        changing = request.method in CHANGING and request.path != "/dologin"
        unavailable = _json({"error": "Service Unavailable"}, 503)
        response = self.faults.answer(request, changing, lambda: self._route(request), unavailable)
        body = None if request.path == "/dologin" else request.get_json(silent=True)
        self.requests.append(
            Recorded(request.method, request.path, request.query_string.decode(), body, response.status_code)
        )
        return response

    def _route(self, request: Request) -> Response:
        if self.failing is not None:
            return _json({"error": "Internal Server Error"}, self.failing)
        if request.path == "/dologin":
            return self._dologin(request)
        match = _PREFIXED.match(request.path)
        if match is None or STYLE_OF_PREFIX[match.group(1)] not in self.styles:
            return _json({"error": "Not Found"}, 404)
        if not self._authorised(STYLE_OF_PREFIX[match.group(1)], request):
            return _json({"error": "Unauthorized"}, 401)
        try:
            return self._resource(request, match.group(2) or "/")
        except _Refused as refusal:
            return _json({"error": refusal.message}, refusal.status)

    def _dologin(self, request: Request) -> Response:
        if "session" not in self.styles or request.method != "POST":
            return _json({"error": "Not Found"}, 404)
        if (request.form.get("httpd_username"), request.form.get("httpd_password")) != self._login:
            return _json({"error": "Authentication failed"}, 401)
        session = secrets.token_hex(16)
        self.sessions.add(session)
        response = Response("", status=302, headers={"Location": "/"})
        response.set_cookie(SESSION_COOKIE, session, path="/")
        return response

    def _authorised(self, style: str, request: Request) -> bool:
        if style == "session":
            return request.cookies.get(SESSION_COOKIE) in self.sessions
        return request.headers.get("Authorization") == (self._basic if style == "basic" else self._token)

    def _resource(self, request: Request, rest: str) -> Response:
        method = request.method
        if method == "GET":
            return self._get(request, rest)
        body = request.get_json(silent=True) if method in ("POST", "PUT") else None
        if body is not None and not isinstance(body, dict):
            raise _Refused(400, "the body is not a JSON object")
        route: dict[tuple[str, str], Callable[[dict[str, Any]], Response]] = {
            ("POST", "/resources/pkeys/add"): self._create,
            ("POST", "/resources/pkeys/"): self._post_guids,
            ("POST", "/resources/pkeys"): self._post_guids,
            ("PUT", "/resources/pkeys/"): self._put_guids,
            ("PUT", "/resources/pkeys"): self._put_guids,
            ("PUT", "/resources/pkeys/qos_conf"): self._qos,
        }
        handler = route.get((method, rest))
        if handler is not None:
            return handler(body or {})
        match = re.match(r"^/resources/pkeys/([^/]+)(?:/guids/([^/]+))?/?$", rest)
        if method == "DELETE" and match is not None:
            pkey = _pkey(match.group(1), allow_default=True)
            if match.group(2):
                return self._remove_guids(pkey, match.group(2).split(","))
            return self._delete(pkey)
        return _json({"error": "Not Found"}, 404)

    # --- reads -----------------------------------------------------------------------------------------

    def _get(self, request: Request, rest: str) -> Response:
        if rest == "/app/ufm_version":
            return _json({"ufm_release_version": self.version})
        detailed = request.args.get("guids_data") == "true"
        qos = request.args.get("qos_conf") == "true"
        if rest.rstrip("/") == "/resources/pkeys":
            if not detailed:
                return _json([f"0x{k:x}" for k in sorted(self.pkeys)])
            if self.list_shape:
                return _json([{"pkey": f"0x{k:x}", **self._entry(k, qos)} for k in sorted(self.pkeys)])
            return _json({f"0x{k:x}": self._entry(k, qos) for k in sorted(self.pkeys)})
        match = re.match(r"^/resources/pkeys/([^/]+)/?$", rest)
        if match is not None:
            pkey = _pkey(match.group(1), allow_default=True)
            if pkey not in self.pkeys:
                return _json({"error": f"PKey 0x{pkey:x} not found"}, 404)
            return _json(self._entry(pkey, qos))
        return _json({"error": "Not Found"}, 404)

    def _entry(self, pkey: int, qos: bool) -> dict[str, Any]:
        held = self.pkeys[pkey]
        entry: dict[str, Any] = {
            "partition": "management" if pkey == DEFAULT_PKEY else f"api_pkey_0x{pkey:x}",
            "ip_over_ib": held.ip_over_ib,
            "sharp_enabled": False,
            "guids": [{"guid": g, "membership": m, "index0": i} for g, (m, i) in sorted(held.guids.items())],
        }
        if qos:
            for name in QOS_DEFAULTS:
                value = getattr(held, name)
                entry[name] = QOS_DEFAULTS[name] if value is None and self.qos_defaults else value
        return entry

    # --- changes ---------------------------------------------------------------------------------------

    def _check_refused(self, pkey: int) -> None:
        if pkey in self.refused:
            raise _Refused(*self.refused[pkey])

    def _create(self, body: dict[str, Any]) -> Response:
        pkey = _pkey(body.get("pkey"))
        self._check_refused(pkey)
        if pkey in self.pkeys:
            raise _Refused(self.duplicate_status, f"PKey 0x{pkey:x} already exists")
        held = Pkey(ip_over_ib=_flag(body, "ip_over_ib", True))
        _apply_qos(held, _qos_values(body))
        self.pkeys[pkey] = held
        return _json({})

    def _post_guids(self, body: dict[str, Any]) -> Response:
        pkey = _pkey(body.get("pkey"))
        guids = _guids(body)
        self._check_refused(pkey)
        if self.post_ignores_memberships or "memberships" not in body:
            memberships = [_membership(body.get("membership", "full"))] * len(guids)
        else:
            memberships = _memberships(body, len(guids))
        ip_over_ib, index0 = _flag(body, "ip_over_ib", True), _flag(body, "index0", False)
        held = self.pkeys.setdefault(pkey, Pkey())
        held.ip_over_ib = ip_over_ib
        for guid, membership in zip(guids, memberships, strict=True):
            held.guids[guid] = (membership, index0)  # a GUID held already: the same entry again
        return _json({})

    def _put_guids(self, body: dict[str, Any]) -> Response:
        pkey = _pkey(body.get("pkey"))
        guids = _guids(body)
        if "memberships" in body:
            memberships = _memberships(body, len(guids))
        else:
            memberships = [_membership(body.get("membership", "full"))] * len(guids)
        qos, ip_over_ib, index0 = _qos_values(body), _flag(body, "ip_over_ib", True), _flag(body, "index0", False)
        self._check_refused(pkey)
        held = self.pkeys.setdefault(pkey, Pkey())
        held.ip_over_ib = ip_over_ib
        held.guids = {g: (m, index0) for g, m in zip(guids, memberships, strict=True)}
        _apply_qos(held, qos)
        return _json({})

    def _qos(self, body: dict[str, Any]) -> Response:
        pkey = _pkey(body.get("pkey"))
        self._check_refused(pkey)
        if pkey not in self.pkeys:
            raise _Refused(404, f"PKey 0x{pkey:x} not found")
        _apply_qos(self.pkeys[pkey], _qos_values(body))
        return _json({})

    def _remove_guids(self, pkey: int, guids: list[str]) -> Response:
        self._check_refused(pkey)
        if pkey not in self.pkeys:
            raise _Refused(404, f"PKey 0x{pkey:x} not found")
        for text in guids:
            if not _GUID.match(text):
                raise _Refused(400, f"invalid GUID {text!r}: 16-20 hex characters")
            self.pkeys[pkey].guids.pop(text.upper(), None)
        if not self.pkeys[pkey].guids and self.last_member_deletes and pkey != DEFAULT_PKEY:
            del self.pkeys[pkey]  # UFM 6.19: the last member takes the partition with it
        return _json({})

    def _delete(self, pkey: int) -> Response:
        self._check_refused(pkey)
        if pkey == DEFAULT_PKEY:
            raise _Refused(400, "the default pkey 0x7fff cannot be deleted")
        if pkey not in self.pkeys:
            raise _Refused(404, f"PKey 0x{pkey:x} not found")
        del self.pkeys[pkey]
        return _json({})


# --- validation, as the guide states it -------------------------------------------------------------------


def _norm(guid: str) -> str:
    return guid.replace(":", "").upper().removeprefix("0X")


def _pkey(value: Any, *, allow_default: bool = False) -> int:
    if not isinstance(value, str):
        raise _Refused(400, "pkey is required (a hex string)")
    try:
        pkey = int(value, 16)
    except ValueError:
        raise _Refused(400, f"invalid pkey {value!r}") from None
    if not 0 < pkey < DEFAULT_PKEY and not (allow_default and pkey == DEFAULT_PKEY):
        raise _Refused(400, f"invalid pkey {value!r}: 0x0-0x7fff exclusive")
    return pkey


def _guids(body: Mapping[str, Any]) -> list[str]:
    guids = body.get("guids")
    if not isinstance(guids, list) or not guids:
        raise _Refused(400, "guids is required (a non-empty list)")
    for guid in guids:
        if not isinstance(guid, str) or not _GUID.match(guid):
            raise _Refused(400, f"invalid GUID {guid!r}: 16-20 hex characters")
    return [g.upper() for g in guids]


def _membership(value: Any) -> str:
    if value not in ("full", "limited"):
        raise _Refused(400, f"invalid membership {value!r}: full or limited")
    return str(value)


def _memberships(body: Mapping[str, Any], count: int) -> list[str]:
    memberships = body.get("memberships")
    if not isinstance(memberships, list) or len(memberships) != count:
        raise _Refused(400, "memberships must give one membership per GUID")
    return [_membership(m) for m in memberships]


def _flag(body: Mapping[str, Any], key: str, default: bool) -> bool:
    value = body.get(key, default)
    if not isinstance(value, bool):
        raise _Refused(400, f"{key} must be true or false")
    return value


def _qos_values(body: Mapping[str, Any]) -> dict[str, Any]:
    """The QoS fields a body carries, checked before anything is changed."""
    out: dict[str, Any] = {}
    if "mtu_limit" in body:
        if body["mtu_limit"] not in (1, 2, 3, 4, 5) or isinstance(body["mtu_limit"], bool):
            raise _Refused(400, f"invalid mtu_limit {body['mtu_limit']!r}")
        out["mtu_limit"] = int(body["mtu_limit"])
    if "service_level" in body:
        value = body["service_level"]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 15:
            raise _Refused(400, f"invalid service_level {value!r}")
        out["service_level"] = value
    if "rate_limit" in body:
        if isinstance(body["rate_limit"], bool) or not isinstance(body["rate_limit"], (int, float)):
            raise _Refused(400, f"invalid rate_limit {body['rate_limit']!r}")
        out["rate_limit"] = float(body["rate_limit"])
    return out


def _apply_qos(held: Pkey, values: Mapping[str, Any]) -> None:
    for name, value in values.items():
        setattr(held, name, value)
