"""The MLNX-OS JSON API, as much of it as the SM needs, over ibprov's own HTTP client
(:class:`~ibprov.smbackend.http.HttpSession`). MLNX-OS User Manual 3.10-3.12, "JSON API":

* login: ``POST /admin/launch?script=rh&template=json-request&action=json-login`` with the JSON body
  ``{"username", "password"}``; the answer ``{"status": "OK", "status_msg": ...}`` sets the session cookie
  (Cray CANU logs in this way; HTTPS must be on: ``web https enable``);
* a command: ``POST /admin/launch?script=json`` with ``{"execution_type": "sync", "commands": [cmd]}``; the
  answer has a ``status`` and ``status_msg`` and one ``results[]`` entry per command with its own ``status``,
  ``status_msg`` and ``data``. Both levels are checked, as Dell Omnia's ``network/`` roles do.

ONE command per request (Omnia sends them so as well): the API's behaviour after a refused command in a batch is
not documented, and one per request makes the refused command the last one the switch ever received.

A session that expired (HTTP 401, a redirect to the login page, or 200 with status ERROR, no per-command result
and words about the session) is renewed once with the same credentials and the command sent again (it was not
run: the switch refused the request before running it); a second such answer is reported. The switch's words are
read under ``status_msg`` or ``status_message``. The credentials
are kept private: never in a message, a log or a repr.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ibprov.clusterspec.positions import Path
from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.http import HttpSession, Response

__all__ = ["COMMAND_PATH", "LOGIN_PATH", "PASSWORD", "URL", "USERNAME", "CommandRefused", "SwitchApi", "config_lines"]

LOGIN_PATH = "/admin/launch?script=rh&template=json-request&action=json-login"
COMMAND_PATH = "/admin/launch?script=json"
SECTION: Path = ("subnet_manager", "switch")
URL: Path = (*SECTION, "url")
USERNAME: Path = (*SECTION, "username")
PASSWORD: Path = (*SECTION, "password")
SHOW_CONFIG = "show running-config"


class CommandRefused(Exception):
    """The switch refused a command (either status level not OK): its own words in ``message``."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(f"{command!r}: {message}")
        self.command = command
        self.message = message


# the key of the switch's words: ``status_msg`` in the MLNX-OS manual's examples and CANU's mocks,
# ``status_message`` in other releases' answers; read under either
MESSAGE_KEYS = ("status_msg", "status_message")
# what a switch says when the session a request carried is gone (it answers 200 with status ERROR then, as well
# as 401 or a redirect to the login page)
_SESSION_GONE = re.compile(r"session|log ?in|logged|authenticat|authoriz", re.IGNORECASE)


def _message(data: Any, fallback: str) -> str:
    """The switch's own words: the command's message, else the answer's, else ``fallback``."""
    if isinstance(data, Mapping):
        first = _first_result(data)
        for source in (first, data):
            if not isinstance(source, Mapping):
                continue
            for key in MESSAGE_KEYS:
                if isinstance(source.get(key), str) and source[key]:
                    return str(source[key])
    return fallback


def _first_result(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    results = data.get("results")
    if isinstance(results, list) and results and isinstance(results[0], Mapping):
        return results[0]
    return None


def _sets_cookie(response: Response) -> bool:
    return any(k.lower() == "set-cookie" for k in response.headers)


def config_lines(data: Any) -> list[str]:
    """``show running-config``'s ``data`` as lines. Its JSON shape is NOT documented (the manual's examples are
    other show commands, which answer structured JSON), so a string, a list of lines and a dict of lines (or
    nestings of them, in order) are all read; anything else raises ValueError."""
    if isinstance(data, str):
        return data.splitlines()
    if isinstance(data, list):
        return [line for item in data for line in config_lines(item)]
    if isinstance(data, Mapping):
        return [line for value in data.values() for line in config_lines(value)]
    raise ValueError(f"a {type(data).__name__} where text lines were expected")


class SwitchApi:
    """One logged-in switch: :meth:`login`, then :meth:`run` one command at a time."""

    def __init__(self, http: HttpSession) -> None:
        self.http = http
        self._credentials: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"SwitchApi({self.http.base!r})"

    # --- login -------------------------------------------------------------------------------------------

    def login(self, username: str, password: str) -> None:
        """The JSON login; a refusal is a BackendError at the spec's username with the switch's words."""
        self._credentials = (username, password)
        self._login()

    def _login(self) -> None:
        if self._credentials is None:
            raise BackendError(USERNAME, f"{self.http.what}: no login before the first command")
        username, password = self._credentials
        body = {"username": username, "password": password}
        answer = self.http.request("POST", LOGIN_PATH, json_body=body, changes_nothing=True)
        data = answer.json()
        if answer.status in (401, 403) or (answer.status == 200 and _status(data) != "OK"):
            said = _message(data, f"HTTP {answer.status}")
            raise BackendError(
                USERNAME,
                f"{self.http.what} at {self.http.base} refused the login ({said}): check the values of the "
                "username and password references and that the account may use the JSON API",
            )
        if answer.status != 200:
            raise BackendError(URL, self._unexpected(answer, "the JSON login"))
        if not _sets_cookie(answer):
            raise BackendError(
                URL, f"{self.http.what} at {self.http.base} accepted the login but set no session cookie"
            )

    def _unexpected(self, answer: Response, what: str) -> str:
        return (
            f"{self.http.what} at {self.http.base} answered HTTP {answer.status} to {what}: "
            f"{_message(answer.json(), ' '.join(answer.text.split())[:200] or 'no message')} "
            "(is the JSON API on: `web https enable`?)"
        )

    # --- commands ----------------------------------------------------------------------------------------

    def _post(self, command: str) -> Response:
        body = {"execution_type": "sync", "commands": [command]}
        reads = command.startswith("show ")  # a show changes nothing: tried again on a server error
        return self.http.request("POST", COMMAND_PATH, json_body=body, changes_nothing=reads)

    def run(self, command: str) -> dict[str, Any]:
        """Send ``command`` alone and return the switch's answer; raises :class:`CommandRefused` when the
        answer's or the command's status is not OK, BackendError when the switch cannot be talked to (or
        answers a server error: whether a changing command was carried out is then unknown)."""
        answer = self._post(command)
        if _expired(answer):
            self._login()  # once: the session expired (or was dropped); the command was not run
            answer = self._post(command)
            if _expired(answer):
                raise BackendError(
                    USERNAME,
                    f"{self.http.what} at {self.http.base} refused a fresh session (HTTP {answer.status}: "
                    f"{_message(answer.json(), 'no message')}): check that the account may use the JSON API",
                )
        if answer.status >= 500 or answer.status == 404:
            raise BackendError(URL, self._unexpected(answer, "a command"))
        data = answer.json()
        if answer.status != 200 or not isinstance(data, dict):
            raise CommandRefused(command, _message(data, f"HTTP {answer.status}, no JSON answer"))
        first = _first_result(data)
        if _status(data) != "OK" or first is None or _status(first) != "OK":
            raise CommandRefused(command, _message(data, f"status {_status(first or data)!r}"))
        return data

    def running_config(self) -> list[str]:
        """``show running-config`` as lines (the switch's state, parsed by the same grammar as the rendering)."""
        try:
            data = self.run(SHOW_CONFIG)
        except CommandRefused as refused:
            raise BackendError(
                URL, f"{self.http.what} at {self.http.base} refused {SHOW_CONFIG!r}: {refused.message}"
            ) from None
        first = _first_result(data) or {}
        try:
            return config_lines(first.get("data"))
        except ValueError as exc:
            raise BackendError(
                URL,
                f"{self.http.what} at {self.http.base}: the answer to {SHOW_CONFIG!r} holds no configuration text "
                f"({exc}; its JSON shape is not documented)",
            ) from None


def _status(data: Any) -> Any:
    return data.get("status") if isinstance(data, Mapping) else None


def _expired(answer: Response) -> bool:
    """The request's session is gone, so nothing was run: HTTP 401, a redirect (the web UI's answer to a request
    without a valid session: the login page), or 200 with status ERROR, no per-command result and words about
    the session or the login."""
    if answer.status == 401 or 300 <= answer.status < 400:
        return True
    data = answer.json() if answer.status == 200 else None
    if not isinstance(data, Mapping) or _status(data) == "OK" or _first_result(data) is not None:
        return False
    return bool(_SESSION_GONE.search(_message(data, "")))
