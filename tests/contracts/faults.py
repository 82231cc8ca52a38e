"""Failures injected into the contract servers (tests/contracts/ufm.py, mlnxos.py), the ones a back end shows in
the middle of a sync: a server error (the request was not carried out), a connection reset after the request
was carried out (the client never hears that it was), a request left unanswered past the client's timeout, and
reads that fail a few times before they answer."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from werkzeug import Request, Response

__all__ = ["Faults"]

HOW = ("503", "reset", "stall")


@dataclass
class Faults:
    """What a contract server does wrong, and when."""

    accepted_before_break: int | None = None  # changing requests accepted before the break; None: no break
    how: str = "503"
    stall_s: float = 2.0  # longer than the tests' client timeout
    read_failures: int = 0  # the next reads answer 503, this many times
    fired: bool = False

    def break_after(self, accepted: int, how: str = "503") -> None:
        if how not in HOW:
            raise ValueError(f"how: one of {HOW}")
        self.accepted_before_break, self.how, self.fired = accepted, how, False

    def answer(self, request: Request, changing: bool, run: Callable[[], Response], error: Response) -> Response:
        """``run()`` (the server's own answer), unless a fault is due: then the fault."""
        if not changing and self.read_failures > 0:
            self.read_failures -= 1
            return error
        if not changing or self.accepted_before_break is None:
            return run()
        if self.accepted_before_break > 0:
            response = run()
            if response.status_code < 300:
                self.accepted_before_break -= 1
            return response
        self.accepted_before_break, self.fired = None, True
        if self.how == "503":
            return error
        if self.how == "stall":
            time.sleep(self.stall_s)
            return error
        response = run()  # carried out, then the connection is dropped before the answer
        sock = request.environ.get("werkzeug.socket")
        if isinstance(sock, socket.socket):
            sock.shutdown(socket.SHUT_RDWR)
        return response
