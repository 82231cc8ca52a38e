"""A contract-test server for an NVIDIA/Mellanox managed InfiniBand switch (MLNX-OS) with its embedded subnet
manager: the JSON API ibprov drives and the SM and partition commands it sends, on pytest-httpserver, bound to
127.0.0.1 by the tests that use it.

Product and documents followed:

* NVIDIA MLNX-OS User Manual, v3.10 to v3.12 LTS: "JSON API" (login ``POST /admin/launch?script=rh&
  template=json-request&action=json-login`` with ``{"username", "password"}`` answering ``{"status": "OK",
  "status_msg": ...}`` and a session cookie; commands ``POST /admin/launch?script=json`` with ``{"commands":
  [...]}`` or ``{"cmd": ...}`` and an optional ``execution_type``; answers with ``status``, ``status_msg`` and
  one ``results[]`` entry per command with its own ``status``, ``status_msg``, ``data``) and "SM Commands"
  (``ib sm`` / ``no ib sm``, default off; ``ib sm allow-both-pkeys``);
* the NVIDIA MLNX-GW manual, "Configuring Partition Keys" (``ib partition NAME pkey 0xID`` with ID in
  0x1-0x7ffe, ``ib partition NAME ipoib``, ``ib partition NAME member ... type full|limited``);
* Dell Omnia's ``network/`` roles (the form login ``POST /admin/launch?script=rh&template=login&action=login``
  with ``f_user_id``/``f_password`` answering 302 and a cookie; one command per request; both status levels
  checked; ``configuration write`` to save);
* Cray CANU's mocks of the JSON login (``{"status": "OK", "status_msg": "Successfully logged-in"}``).

It pins: both logins and the session cookie (a command without one answers 302 to the login page, 401 with
``unauthenticated=401``, or 200 with status "ERROR" and a message saying the session expired with
``unauthenticated=200``: ASSUMED wording); the switch's words under ``status_msg`` or, with
``message_key="status_message"``, the other spelling; the answer's two status levels; an unknown command refused
with status "ERROR" and ``% Unrecognized command ...``; a pkey outside 0x1-0x7ffe refused; ``ipoib`` or ``member``
on a partition that does not exist refused; a second partition with a pkey another holds refused; the state the
commands leave (SM on/off and priority, allow-both, partitions name -> pkey, IPoIB flag, members) and ``show
running-config`` answered from it in the same CLI syntax, among comments and lines of other features.

ASSUMED (not confirmed against a switch): the priority keyword ``ib sm sm-priority N`` (0-15; a public
runbook's); the JSON shape of ``show running-config`` (``results[0].data`` as one text, switchable to a list
of lines or a dict of them: ``config_shape``); a running configuration that shows the SM state and the
priority only once set, the Default partition as ``management`` with ``member ALL``, and member GUIDs as
``0x`` with 16 hex digits; re-creating a partition under another pkey refused (remove it first); ``type both``
refused without ``ib sm allow-both-pkeys``; a batch stopped at its first refused command; removing a member
the partition does not have accepted; a refused JSON login answering 200 with status "ERROR" (or HTTP 401:
``login_refusal``); the form login answering 302 to the login page, without a cookie, when refused; the
session cookie's name ``session``.

The server records every request (kind, the commands it carried, the HTTP status; never a login body) and
every command it received in a valid session, and counts the ones that may change state (all but ``show``).
It can be told to refuse a command (fault injection) and to drop its sessions after a number of requests;
``faults`` (tests/contracts/faults.py) breaks it in the middle of a sync: a 503, a reset after the command
was carried out, a stall past the client's timeout, failing reads.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from contracts.faults import Faults
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

__all__ = ["DEFAULT_PASSWORD", "DEFAULT_USER", "LOGIN_PAGE", "MlnxosContract", "Partition", "Recorded"]

DEFAULT_USER = "ibprov-test"
DEFAULT_PASSWORD = "contract-secret"
SESSION_COOKIE = "session"
LOGIN_PAGE = "/admin/launch?script=rh&template=login"
PRIORITY = ("sm-priority",)
_GUID = re.compile(r"^0x[0-9a-fA-F]{1,16}$|^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){7}$")
_HEADER = ["##", '## Running database "initial"', "## Generated at 2024/05/02 10:00:00 +0000", "##"]
_OTHER = [
    "##",
    "## Interface IB configuration",
    "##",
    '   interface ib 1/1 description "node01 mlx5_0"',
    "   interface ib 1/2 shutdown",
]
_MANAGEMENT = ["   ib partition management pkey 0x7fff", "   ib partition management member ALL type full"]
_NETWORK = ["##", "## Network management configuration", "##", "   hostname leaf01", "   web https enable"]


@dataclass
class Partition:
    pkey: int
    ipoib: bool = False
    members: dict[int, str] = field(default_factory=dict)  # port GUID -> full | limited | both


@dataclass
class State:
    sm_enabled: bool = False
    sm_priority: int | None = None
    allow_both: bool = False
    partitions: dict[str, Partition] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    kind: str  # json-login | form-login | commands | unknown
    commands: tuple[str, ...]
    status: int  # HTTP


class _Error(Exception):
    """A command the switch refuses: ``str(exc)`` is its status_msg."""


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, content_type="application/json")


def _unrecognized(line: str) -> _Error:
    return _Error(f'% Unrecognized command "{line}".')


class MlnxosContract:
    """One switch with state, served by ``server`` (every path: unknown ones answer 404)."""

    def __init__(
        self,
        server: HTTPServer,
        *,
        username: str = DEFAULT_USER,
        password: str = DEFAULT_PASSWORD,
        login_refusal: int = 200,
        unauthenticated: int = 302,
        config_shape: str = "text",
        message_key: str = "status_msg",
    ) -> None:
        self.server = server
        self._login = (username, password)
        self.login_refusal = login_refusal
        self.unauthenticated = unauthenticated
        self.config_shape = config_shape
        self.key = message_key  # the key of the switch's words: status_msg (the manual, CANU) or status_message
        self.state = State()
        self.saved: State | None = None
        self.sessions: set[str] = set()
        self.requests: list[Recorded] = []
        self.commands: list[str] = []  # every command received in a valid session, in order
        self.refusals: dict[str, str] = {}
        self._expire_after: int | None = None
        self.faults = Faults()  # a 503, a reset or a stall in the middle of a sync; reads that fail first
        server.expect_request(re.compile(r"^/.*")).respond_with_handler(self._handle)

    # --- what tests set and read -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self.server.url_for("/").rstrip("/")

    def preload(self, lines: list[str]) -> None:
        """Configure the switch as someone before ibprov did (nothing recorded)."""
        for line in lines:
            self._execute(line)

    def refuse(self, command: str, message: str) -> None:
        """Fault injection: ``command`` (exactly) answers status ERROR with ``message``."""
        self.refusals[command] = message

    def expire_session(self, after: int = 0) -> None:
        """Drop every session after ``after`` more command requests (0: now)."""
        if after == 0:
            self.sessions.clear()
        else:
            self._expire_after = after

    def changing_commands(self) -> list[str]:
        """The commands received that may change state (every one but ``show ...``)."""
        return [c for c in self.commands if not c.startswith("show ")]

    @property
    def changes(self) -> int:
        return len(self.changing_commands())

    def clear_log(self) -> None:
        self.requests.clear()
        self.commands.clear()

    def snapshot(self) -> dict[str, tuple[int, bool, dict[int, str]]]:
        """The partitions: name -> (pkey, IPoIB flag, members)."""
        return {n: (p.pkey, p.ipoib, dict(p.members)) for n, p in self.state.partitions.items()}

    def running_config(self) -> list[str]:
        """``show running-config`` from the state, in CLI syntax (partitions in name order)."""
        sm = ["##", "## Subnet Manager configuration", "##"]
        if self.state.allow_both:
            sm.append("   ib sm allow-both-pkeys")
        sm += _MANAGEMENT
        for name in sorted(self.state.partitions):
            sm += self._partition_lines(name, self.state.partitions[name])
        if self.state.sm_priority is not None:
            sm.append(f"   ib sm sm-priority {self.state.sm_priority}")
        sm.append("   ib sm" if self.state.sm_enabled else "   no ib sm")
        return [*_HEADER, "", *_OTHER, *sm, *_NETWORK]

    @staticmethod
    def _partition_lines(name: str, part: Partition) -> list[str]:
        lines = [f"   ib partition {name} pkey 0x{part.pkey:04x}"]
        if part.ipoib:
            lines.append(f"   ib partition {name} ipoib")
        return lines + [f"   ib partition {name} member 0x{g:016x} type {t}" for g, t in sorted(part.members.items())]

    # --- the server ------------------------------------------------------------------------------------

    def _handle(self, request: Request) -> Response:
        args = request.args
        route = (request.method, request.path, args.get("script"), args.get("template"), args.get("action"))
        if route == ("POST", "/admin/launch", "rh", "json-request", "json-login"):
            return self._record("json-login", (), self._json_login(request))
        if route == ("POST", "/admin/launch", "rh", "login", "login"):
            return self._record("form-login", (), self._form_login(request))
        if route[:3] == ("POST", "/admin/launch", "json"):
            return self._commands(request)
        return self._record("unknown", (), _json({"status": "ERROR", self.key: "Not Found"}, 404))

    def _record(self, kind: str, commands: tuple[str, ...], response: Response) -> Response:
        self.requests.append(Recorded(kind, commands, response.status_code))
        return response

    def _new_session(self, response: Response) -> Response:
        session = secrets.token_hex(16)
        self.sessions.add(session)
        response.set_cookie(SESSION_COOKIE, session, path="/", httponly=True)
        return response

    def _json_login(self, request: Request) -> Response:
        body = request.get_json(silent=True)
        given = (body.get("username"), body.get("password")) if isinstance(body, dict) else None
        if given != self._login:
            refused = {"status": "ERROR", self.key: "Authentication failed: invalid username or password"}
            return _json(refused, self.login_refusal)
        return self._new_session(_json({"status": "OK", self.key: "Successfully logged-in"}))

    def _form_login(self, request: Request) -> Response:
        if (request.form.get("f_user_id"), request.form.get("f_password")) != self._login:
            return Response("", status=302, headers={"Location": LOGIN_PAGE})
        return self._new_session(Response("", status=302, headers={"Location": "/admin/launch?script=rh"}))

    def _commands(self, request: Request) -> Response:
        body = request.get_json(silent=True)
        if request.cookies.get(SESSION_COOKIE) not in self.sessions:
            if self.unauthenticated == 401:
                response = _json({"status": "ERROR", self.key: "Unauthorized"}, 401)
            elif self.unauthenticated == 200:  # ASSUMED wording: a session the switch no longer knows
                response = _json({"status": "ERROR", self.key: "Session expired: please log in again"})
            else:
                response = Response("", status=302, headers={"Location": LOGIN_PAGE})
            return self._record("commands", _carried(body), response)
        commands = _carried(body)
        if not commands:
            return self._record("commands", (), _json({"status": "ERROR", self.key: "no commands"}, 400))
        changing = any(not c.startswith("show ") for c in commands)
        unavailable = _json({"status": "ERROR", self.key: "Service Unavailable"}, 503)
        response = self.faults.answer(request, changing, lambda: _json(self._run(commands)), unavailable)
        if self._expire_after is not None:
            self._expire_after -= 1
            if self._expire_after == 0:
                self.sessions.clear()
                self._expire_after = None
        return self._record("commands", commands, response)

    def _run(self, commands: tuple[str, ...]) -> dict[str, Any]:
        """Each command in order; the batch stops at the first refused one (ASSUMED)."""
        results: list[dict[str, Any]] = []
        for command in commands:
            self.commands.append(command)
            try:
                data = self._execute(command)
            except _Error as error:
                results.append({"executed_command": command, "status": "ERROR", self.key: str(error)})
                return {"status": "ERROR", self.key: str(error), "results": results}
            results.append({"executed_command": command, "status": "OK", self.key: "", "data": data})
        return {"status": "OK", self.key: "", "results": results}

    # --- the CLI ---------------------------------------------------------------------------------------

    def _execute(self, line: str) -> Any:
        if line in self.refusals:
            raise _Error(self.refusals[line])
        words = line.split()
        if words == ["show", "running-config"]:
            return self._config_data()
        if words == ["configuration", "write"]:
            self.saved = copy.deepcopy(self.state)
            return None
        negated = words[:1] == ["no"]
        core = words[1:] if negated else words
        if core[:2] == ["ib", "sm"]:
            self._sm(core[2:], negated, line)
        elif core[:2] == ["ib", "partition"] and len(core) >= 3:
            self._partition(core[2], core[3:], negated, line)
        else:
            raise _unrecognized(line)
        return None

    def _config_data(self) -> Any:
        lines = self.running_config()
        if self.config_shape == "lines":
            return lines
        if self.config_shape == "dict":
            return {"Lines": lines}
        return "\n".join(lines) + "\n"

    def _sm(self, rest: list[str], negated: bool, line: str) -> None:
        if not rest:
            self.state.sm_enabled = not negated
        elif rest == ["allow-both-pkeys"]:
            self.state.allow_both = not negated
        elif tuple(rest[:1]) == PRIORITY and len(rest) == 2 and not negated:
            if not rest[1].isdigit() or not 0 <= int(rest[1]) <= 15:
                raise _Error(f"% Invalid sm priority {rest[1]!r}: 0-15")
            self.state.sm_priority = int(rest[1])
        else:
            raise _unrecognized(line)

    def _existing(self, name: str) -> Partition:
        if name not in self.state.partitions:
            raise _Error(f"% Partition {name} does not exist")
        return self.state.partitions[name]

    def _partition(self, name: str, rest: list[str], negated: bool, line: str) -> None:
        if negated and not rest:
            self._existing(name)
            del self.state.partitions[name]
        elif rest[:1] == ["pkey"] and len(rest) == 2 and not negated:
            self._create(name, rest[1])
        elif rest == ["ipoib"]:
            self._existing(name).ipoib = not negated
        elif rest[:1] == ["member"] and len(rest) == (2 if negated else 4):
            self._member(name, rest[1:], negated)
        else:
            raise _unrecognized(line)

    def _create(self, name: str, text: str) -> None:
        try:
            pkey = int(text, 16)
        except ValueError:
            raise _Error(f"% Invalid pkey {text!r}") from None
        if not 0x1 <= pkey <= 0x7FFE:
            raise _Error(f"% Invalid pkey {text}: the range is 0x1-0x7ffe")
        for other, part in self.state.partitions.items():
            if part.pkey == pkey and other != name:
                raise _Error(f"% PKey 0x{pkey:04x} is already used by partition {other}")
        held = self.state.partitions.get(name)
        if held is not None and held.pkey != pkey:
            raise _Error(f"% Partition {name} already has pkey 0x{held.pkey:04x}; remove it first")
        self.state.partitions.setdefault(name, Partition(pkey))

    def _member(self, name: str, rest: list[str], negated: bool) -> None:
        part = self._existing(name)
        if not _GUID.match(rest[0]):
            raise _Error(f"% Invalid GUID {rest[0]!r}")
        guid = int(rest[0].replace(":", ""), 16)
        if negated:
            part.members.pop(guid, None)
            return
        if rest[1] != "type" or rest[2] not in ("full", "limited", "both"):
            raise _Error(f"% Invalid membership type {rest[2]!r}: full, limited or both")
        if rest[2] == "both" and not self.state.allow_both:
            raise _Error("% Membership type both requires 'ib sm allow-both-pkeys'")
        part.members[guid] = rest[2]


def _carried(body: Any) -> tuple[str, ...]:
    """The commands of a request body: ``{"commands": [...]}`` or ``{"cmd": "..."}``."""
    if not isinstance(body, dict):
        return ()
    if isinstance(body.get("commands"), list):
        return tuple(str(c) for c in body["commands"])
    if isinstance(body.get("cmd"), str):
        return (body["cmd"],)
    return ()
