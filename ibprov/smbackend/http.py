"""ibprov's own HTTP client for the back ends (the standard library's urllib: no extra dependency on the machine
that runs apply): one session per back end with its cookies, TLS verified by default (the system's CAs or a
given bundle), no redirect followed (a login that answers 302 is read as such), and every transport failure
turned into one actionable :class:`BackendError` located at the spec's URL field.

Why not ``ansible.builtin.uri``: the read-back-then-send-the-difference logic is Python's to judge (Ansible
gathers, Python judges), the contract tests drive it directly, and a site's inventory needs no switch or UFM
host. Every request and answer is recorded (:attr:`HttpSession.log`) without bodies that carry credentials.
"""

from __future__ import annotations

import http.client
import http.cookiejar
import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ibprov.clusterspec.positions import Path
from ibprov.smbackend.errors import BackendError

__all__ = ["HttpSession", "Response"]

_TRANSIENT = frozenset({500, 502, 503, 504})
_sleep = time.sleep  # the pause between tries (tests replace it)


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8", errors="replace") or "null")
        except json.JSONDecodeError:
            return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is returned to the caller as it is


@dataclass
class HttpSession:
    """One back end's connection: ``base`` (scheme://host[:port]), its TLS settings, its cookies."""

    base: str
    verify_tls: bool = True
    ca_file: str | None = None
    timeout: float = 30.0
    url_path: Path = ()  # the spec field of the URL, for located errors
    what: str = "the back end"  # "switch leaf01", "UFM"
    log: list[tuple[str, str, int]] = field(default_factory=list)  # (method, path, status)
    # a request that changes nothing (a read, a login) is tried again after each of these pauses when the back
    # end answers 500, 502, 503 or 504 or cannot be talked to; a request that changes state never is (it may
    # have been carried out: the next plan reads what is left)
    retry_delays: tuple[float, ...] = (0.5, 1.0, 2.0)

    def __post_init__(self) -> None:
        self.base = self.base.rstrip("/")
        self.cookies = http.cookiejar.CookieJar()
        handlers: list[urllib.request.BaseHandler] = [
            urllib.request.HTTPCookieProcessor(self.cookies),
            _NoRedirect(),
        ]
        if self.base.startswith("https:"):
            if self.verify_tls:
                context = ssl.create_default_context(cafile=self.ca_file)
            else:
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._opener = urllib.request.build_opener(*handlers)

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        changes_nothing: bool = False,
    ) -> Response:
        """One request; with ``changes_nothing``, tried again (bounded, :attr:`retry_delays`) while the back end
        answers a server error or cannot be talked to."""
        pauses = list(self.retry_delays) if changes_nothing else []
        while True:
            try:
                response = self._once(method, path, json_body=json_body, form=form, headers=headers)
            except BackendError:
                if not pauses:
                    raise
            else:
                if response.status not in _TRANSIENT or not pauses:
                    return response
            _sleep(pauses.pop(0))

    def _once(
        self,
        method: str,
        path: str,
        *,
        json_body: Any,
        form: Mapping[str, str] | None,
        headers: Mapping[str, str] | None,
    ) -> Response:
        data = None
        sent = {"Accept": "application/json", **(headers or {})}
        if json_body is not None:
            data = json.dumps(json_body).encode()
            sent["Content-Type"] = "application/json"
        elif form is not None:
            data = urllib.parse.urlencode(form).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        req = urllib.request.Request(self.base + path, data=data, headers=sent, method=method)
        try:
            with self._opener.open(req, timeout=self.timeout) as answer:
                response = Response(answer.status, dict(answer.headers.items()), answer.read())
        except urllib.error.HTTPError as err:  # 4xx/5xx (and the 3xx no handler followed)
            response = Response(err.code, dict(err.headers.items()) if err.headers else {}, err.read() or b"")
        except urllib.error.URLError as err:
            raise BackendError(self.url_path, self._unreachable(err.reason)) from None
        except (TimeoutError, OSError, http.client.HTTPException) as err:  # a reset, a timeout, a cut answer
            raise BackendError(self.url_path, self._unreachable(err)) from None
        self.log.append((method, path.split("?")[0], response.status))
        return response

    def _unreachable(self, reason: object) -> str:
        if isinstance(reason, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(reason):
            return (
                f"{self.what} at {self.base}: its TLS certificate is not trusted ({reason}); give the CA that "
                "signed it as ca_file (verify_tls: false only for a lab)"
            )
        return f"{self.what} at {self.base} cannot be reached ({reason}): check the address and that HTTPS is on"
