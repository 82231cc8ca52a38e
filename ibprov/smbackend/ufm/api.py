"""UFM Enterprise's REST API, as much of it as partitions need, over ibprov's own HTTP client
(:class:`~ibprov.smbackend.http.HttpSession`).

Authentication ("REST API Complementary Information", UFM 6.12-6.22), each style with its own path prefix:

* ``basic``: ``Authorization: Basic b64(user:password)`` on every call, under ``/ufmRest``;
* ``session``: ``POST /dologin`` with the form fields ``httpd_username`` and ``httpd_password``, then the
  session cookie, under ``/ufmRestV2`` (an expired session is renewed once);
* ``token``: an access token created in UFM, sent as ``Authorization: Basic <token>``, under ``/ufmRestV3``.

Every login ends with ``GET <prefix>/app/ufm_version`` (ib-kubernetes' reachability check), so that a wrong
password, a wrong style and an unreachable UFM are each found before anything is read or sent, and each is
one :class:`BackendError` at the spec field that names the fix: the URL (unreachable, TLS, 5xx), the
username or token (401/403), ``auth`` (404 on the login or the version: the prefix does not exist for this
UFM's credentials). A refusal of a change (another 4xx) is returned as a :class:`Reply` for the caller to stop
at, with UFM's own words. A credential never appears in a message, a log or a repr.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ibprov.clusterspec.positions import Path
from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.http import HttpSession, Response
from ibprov.smbackend.ufm.payload import fmt_pkey, fmt_ufm_guid

__all__ = ["PKEYS_QUERY", "PREFIX", "Reply", "UfmApi", "ufm_message"]

AuthStyle = Literal["basic", "session", "token"]
PREFIX: Mapping[str, str] = {"basic": "/ufmRest", "session": "/ufmRestV2", "token": "/ufmRestV3"}
PKEYS_QUERY = "?guids_data=true&qos_conf=true"
SECTION: Path = ("subnet_manager", "ufm")
URL: Path = (*SECTION, "url")
AUTH: Path = (*SECTION, "auth")


@dataclass(frozen=True)
class Reply:
    """UFM's answer to a change: accepted (``ok``) or refused, with its own words; ``note`` says why an
    answer that is no success still counts as one (a duplicate create)."""

    status: int
    ok: bool
    message: str = ""
    note: str = ""


def ufm_message(response: Response) -> str:
    """UFM's own words for an answer: the ``error``/``message``/``detail`` of a JSON body, else its text."""
    data = response.json()
    if isinstance(data, Mapping):
        for key in ("error", "message", "detail", "description"):
            if isinstance(data.get(key), str) and data[key]:
                return str(data[key])
    text = " ".join(response.text.split())
    return text[:300] if text else f"HTTP {response.status}"


class UfmApi:
    """One logged-in UFM. ``auth`` picks the header or cookie and the prefix; credentials stay private."""

    def __init__(
        self,
        http: HttpSession,
        auth: AuthStyle,
        *,
        username: str | None = None,
        password: str | None = None,
        token: str | None = None,
    ) -> None:
        self.http = http
        self.auth: AuthStyle = auth
        self.prefix = PREFIX[auth]
        self._username = username or ""
        self._password = password or ""
        self._headers: dict[str, str] = {}
        if auth == "basic":
            pair = f"{self._username}:{self._password}".encode()
            self._headers = {"Authorization": "Basic " + base64.b64encode(pair).decode()}
        elif auth == "token":
            self._headers = {"Authorization": f"Basic {token or ''}"}

    def __repr__(self) -> str:
        return f"UfmApi({self.http.base!r}, auth={self.auth!r})"

    @property
    def credential_path(self) -> Path:
        """The spec field a refused login points at: the token, else the username."""
        return (*SECTION, "token" if self.auth == "token" else "username")

    # --- login and errors --------------------------------------------------------------------------------

    def login(self) -> str:
        """Log in (session style) and check reachability and credentials with ``GET <prefix>/app/ufm_version``;
        returns UFM's version text (may be empty)."""
        if self.auth == "session":
            self._dologin()
        answer = self._send("GET", "/app/ufm_version")
        if answer.status == 404:
            raise self._wrong_style(f"GET {self.prefix}/app/ufm_version")
        if answer.status >= 300:
            raise BackendError(URL, self._said(answer, f"GET {self.prefix}/app/ufm_version"))
        data = answer.json()
        version = data.get("ufm_release_version") if isinstance(data, Mapping) else data
        return str(version or "")

    def _dologin(self) -> None:
        form = {"httpd_username": self._username, "httpd_password": self._password}
        answer = self.http.request("POST", "/dologin", form=form, changes_nothing=True)
        if answer.status == 404:
            raise self._wrong_style("POST /dologin")
        if answer.status in (401, 403):
            raise self._refused(answer)
        if answer.status >= 500:
            raise BackendError(URL, self._said(answer, "POST /dologin"))

    def _send(self, method: str, suffix: str, body: Any = None, *, retried: bool = False) -> Response:
        answer = self.http.request(
            method, self.prefix + suffix, json_body=body, headers=self._headers, changes_nothing=method == "GET"
        )
        if answer.status in (401, 403):
            if self.auth == "session" and not retried:  # an expired session: log in again, once
                self._dologin()
                return self._send(method, suffix, body, retried=True)
            raise self._refused(answer)
        if answer.status >= 500:
            raise BackendError(URL, self._said(answer, f"{method} {self.prefix}{suffix.split('?')[0]}"))
        return answer

    def _refused(self, answer: Response) -> BackendError:
        what = "the token" if self.auth == "token" else "the username and password"
        return BackendError(
            self.credential_path,
            f"UFM at {self.http.base} refused {what} (HTTP {answer.status}, auth: {self.auth}, {self.prefix}): "
            f"check the reference's value and that the account may use UFM's REST API",
        )

    def _wrong_style(self, call: str) -> BackendError:
        others = ", ".join(f"{style} {prefix}" for style, prefix in PREFIX.items() if style != self.auth)
        return BackendError(
            AUTH,
            f"UFM at {self.http.base} answered 404 to {call}: is auth: {self.auth} right for this UFM (the prefix "
            f"{self.prefix}{' and POST /dologin' if self.auth == 'session' else ''} belong to it; {others})?",
        )

    def _said(self, answer: Response, call: str) -> str:
        return f"UFM at {self.http.base} answered {answer.status} to {call}: {ufm_message(answer)}"

    # --- reads -------------------------------------------------------------------------------------------

    def get_pkeys(self) -> Any:
        """Every pkey with its GUIDs and QoS (``guids_data=true&qos_conf=true``), as UFM answers (JSON)."""
        call = f"GET {self.prefix}/resources/pkeys{PKEYS_QUERY}"
        answer = self._send("GET", "/resources/pkeys" + PKEYS_QUERY)
        if answer.status == 404:
            raise self._wrong_style(call)
        if answer.status >= 300:
            raise BackendError(URL, self._said(answer, call))
        data = answer.json()
        if data is None and answer.body.strip() not in (b"", b"null"):
            raise BackendError(URL, f"UFM at {self.http.base} answered {call} with something that is not JSON")
        return {} if data is None else data

    # --- changes -----------------------------------------------------------------------------------------

    def path(self, suffix: str) -> str:
        """The full path of a call (as plans show it)."""
        return self.prefix + suffix

    def _change(self, method: str, suffix: str, body: Any = None) -> Reply:
        answer = self._send(method, suffix, body)
        if answer.status < 300:
            return Reply(answer.status, True)
        return Reply(answer.status, False, ufm_message(answer))

    def create_pkey(self, body: Mapping[str, Any]) -> Reply:
        """``POST …/resources/pkeys/add``. A pkey that exists already is no refusal: older documents answer
        400 containing "exist", a mock pinned to UFM 6.19 answers 409; both mean "already there"."""
        reply = self._change("POST", "/resources/pkeys/add", dict(body))
        exists = reply.status == 409 or (reply.status == 400 and "exist" in reply.message.lower())
        if not reply.ok and exists:
            return Reply(reply.status, True, reply.message, f"{body.get('pkey')} existed already (HTTP {reply.status})")
        return reply

    def put_guids(self, body: Mapping[str, Any]) -> Reply:
        """``PUT …/resources/pkeys/``: replace the member list (per-GUID memberships honoured)."""
        return self._change("PUT", "/resources/pkeys/", dict(body))

    def post_guids(self, body: Mapping[str, Any]) -> Reply:
        """``POST …/resources/pkeys/``: add GUIDs with one membership."""
        return self._change("POST", "/resources/pkeys/", dict(body))

    def remove_guids(self, pkey: int, guids: Sequence[int]) -> Reply:
        """``DELETE …/resources/pkeys/<pkey>/guids/<g1>,<g2>`` (removing the last member deletes the pkey)."""
        return self._change("DELETE", remove_guids_suffix(pkey, guids))

    def set_qos(self, body: Mapping[str, Any]) -> Reply:
        """``PUT …/resources/pkeys/qos_conf``."""
        return self._change("PUT", "/resources/pkeys/qos_conf", dict(body))

    def delete_pkey(self, pkey: int) -> Reply:
        """``DELETE …/resources/pkeys/<pkey>``; one already gone (404) is no refusal."""
        reply = self._change("DELETE", delete_pkey_suffix(pkey))
        if reply.status == 404:
            return Reply(404, True, reply.message, f"{fmt_pkey(pkey)} was gone already")
        return reply


def remove_guids_suffix(pkey: int, guids: Sequence[int]) -> str:
    return f"/resources/pkeys/{fmt_pkey(pkey)}/guids/{','.join(fmt_ufm_guid(g) for g in sorted(guids))}"


def delete_pkey_suffix(pkey: int) -> str:
    return f"/resources/pkeys/{fmt_pkey(pkey)}"


def compact(body: Any) -> str:
    """A body as a plan shows it: compact JSON."""
    return json.dumps(body, separators=(",", ":"))
