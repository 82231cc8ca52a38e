"""An OpenSM log (``opensm -f <file>``, default ``/var/log/opensm.log``): what it says about unicast routing.

OpenSM 3.3.23 writes ``<Mon> <DD> <HH:MM:SS> <usec> [<thread>] 0x<level> -> <text>``, where ``<text>`` is
``<function>: <message>`` for most lines. In each heavy sweep ``osm_ucast_mgr_process`` tries the engines
of ``-R``/``routing_engine`` in order; these are the lines it leaves (all seen on the ibsim twin)::

    ... 0x02 -> osm_ucast_mgr_process: minhop tables configured on all switches
    ... 0x01 -> construct_fabric: ERR AB2B: Found more than one root on fabric with maximum rank 0
    ... 0x01 -> ucast_mgr_route: ftree: cannot build lid matrices
    ... 0x02 -> updn_lid_matrices: disabling UPDN algorithm, no root nodes were found
    ... 0x01 -> ucast_mgr_route: updn: cannot build lid matrices
    ... 0x81 -> do_ucast_file_load: ERR 6302: Can't open ucast dump file '<path>': No such file or directory
    ... 0x01 -> ucast_mgr_route: file: cannot build fwd tables
    ... 0x01 -> osm_ucast_mgr_process: No routing engine able to successfully configure  switch tables on current fabric
    ... 0x01 -> setup_routing_engines: Failed to setup routing engine 'no_fallback'
    ... 0x02 -> SUBNET UP

``<engine> tables configured on all switches`` names the engine that ran. When every listed engine fails,
OpenSM routes with minhop without a line of its own (the failure lines are followed by ``minhop tables
configured``); with ``no_fallback`` in the list it logs ``No routing engine able ...`` instead (two spaces
before ``switch`` in 3.3.23), never reaches SUBNET UP and tries again at the next sweep (every 10 s).
3.3.23 also logs ``Failed to setup routing engine 'no_fallback'`` at start-up although the option works.
The log cannot tell a ``minhop`` the user listed from the built-in fall-back: a caller that knows the
requested engines can.

A routing attempt is read as the lines from the end of the previous one (or from OpenSM's start line
``0x.. -> OpenSM <version>``: the log accumulates across restarts) up to its conclusion (``tables
configured`` or ``No routing engine able``). The last attempt wins. Lines not in OpenSM's format (a line
cut short at the end of a log still being written, text pasted in) are kept as notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.probes._text import ParseError

__all__ = ["LOG_PATTERN", "EngineFailure", "LogLine", "RoutingAttempt", "RoutingLog", "parse"]

TOOL = "opensm log"
FALLBACK_ENGINE = "minhop"
# An extended regular expression (``grep -E``; Python's re reads it the same) for the lines parse() uses: a
# large log can be filtered where it lies and parse() gives the same answer on what the filter keeps.
# It starts with '(' so that grep never reads it as an option.
LOG_PATTERN = (
    r"(-> (OpenSM |osm_ucast_mgr_process: |ucast_mgr_route: |setup_routing_engines: |SUBNET UP"
    r"|updn_lid_matrices: disabling)|ERR [0-9A-Fa-f]{4}:)"
)

_LINE = re.compile(r"^\w{3} [ \d]\d \d\d:\d\d:\d\d \d{6} \[[0-9A-Fa-f]+\] 0x([0-9A-Fa-f]{2}) -> (.*)$", re.ASCII)
_START = re.compile(r"^OpenSM (\S+)$")
_CONFIGURED = re.compile(r"^osm_ucast_mgr_process: (\S+) tables configured on all switches$")
_ENGINE_FAILED = re.compile(r"^ucast_mgr_route: (\S+): cannot build (?:lid matrices|fwd tables)$")
_NO_ENGINE = re.compile(r"^osm_ucast_mgr_process: No routing engine able to successfully configure\s+switch tables")
_SETUP_FAILED = re.compile(r"^setup_routing_engines: Failed to setup routing engine '(.*)'$")
_SUBNET_UP = "SUBNET UP"
_ERR = re.compile(r"\bERR [0-9A-Fa-f]{4}:")
_ERROR_LEVEL = 0x01


@dataclass(frozen=True)
class LogLine:
    line_no: int  # 1-based, in the text given to parse
    text: str  # the whole line, as logged


@dataclass(frozen=True)
class EngineFailure:
    engine: str
    line: LogLine  # 'ucast_mgr_route: <engine>: cannot build ...'
    # the error lines (and updn's 'disabling UPDN') logged since the last failure, conclusion or SUBNET UP
    causes: tuple[LogLine, ...]


@dataclass(frozen=True)
class RoutingAttempt:
    """One heavy sweep's routing: the engines that failed, then the one that configured the tables (or none)."""

    failures: tuple[EngineFailure, ...]
    configured: str | None  # the engine named by 'tables configured on all switches'
    configured_line: LogLine | None
    no_engine_line: LogLine | None  # 'No routing engine able ...' (no_fallback): nothing was configured
    subnet_up: LogLine | None  # the first SUBNET UP after the conclusion, before the next attempt

    @property
    def concluded(self) -> bool:
        return self.configured_line is not None or self.no_engine_line is not None

    @property
    def fell_back(self) -> bool:
        """Engines failed and minhop configured the tables (the built-in fall-back, or minhop listed last)."""
        return bool(self.failures) and self.configured == FALLBACK_ENGINE

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(f.engine for f in self.failures)


@dataclass(frozen=True)
class RoutingLog:
    version: str | None  # from the last 'OpenSM <version>' start line
    attempts: tuple[RoutingAttempt, ...]  # concluded ones, oldest first, then an unfinished one if any
    setup_failures: tuple[LogLine, ...]  # 'Failed to setup routing engine' lines of the last start
    notes: tuple[LogLine, ...]  # lines not in OpenSM's log format

    @property
    def last(self) -> RoutingAttempt | None:
        """The latest concluded attempt (an unfinished one after it is ignored)."""
        return next((a for a in reversed(self.attempts) if a.concluded), None)

    @property
    def engine(self) -> str | None:
        """The engine that configured the tables in the latest attempt; None if none did."""
        return self.last.configured if self.last else None

    @property
    def engine_line(self) -> LogLine | None:
        return self.last.configured_line if self.last else None

    @property
    def failures(self) -> tuple[EngineFailure, ...]:
        return self.last.failures if self.last else ()

    @property
    def fell_back(self) -> bool:
        return self.last.fell_back if self.last else False

    @property
    def fallback_line(self) -> LogLine | None:
        """The 'minhop tables configured' line of a fall-back, else None."""
        return self.engine_line if self.fell_back else None

    @property
    def subnet_up(self) -> bool:
        """The latest attempt was followed by SUBNET UP."""
        return self.last is not None and self.last.subnet_up is not None


class _Attempt:
    def __init__(self) -> None:
        self.failures: list[EngineFailure] = []
        self.causes: list[LogLine] = []
        self.touched = False

    def done(self, configured: str | None, line: LogLine | None, no_engine: LogLine | None) -> RoutingAttempt:
        return RoutingAttempt(tuple(self.failures), configured, line, no_engine, None)


def parse(text: str) -> RoutingLog:
    """The routing attempts in an OpenSM log. Raises ParseError when no line is an OpenSM log line."""
    version: str | None = None
    attempts: list[RoutingAttempt] = []
    setup: list[LogLine] = []
    notes: list[LogLine] = []
    current = _Attempt()
    seen = 0
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        match = _LINE.match(line)
        if match is None:
            notes.append(LogLine(line_no, line))
            continue
        seen += 1
        level, body = int(match[1], 16), match[2]
        here = LogLine(line_no, line)
        if start := _START.match(body):
            version, setup = start[1], []
            current = _Attempt()  # a new OpenSM process: earlier error lines are not this run's
            continue
        if configured := _CONFIGURED.match(body):
            attempts.append(current.done(configured[1], here, None))
            current = _Attempt()
        elif _NO_ENGINE.match(body):
            attempts.append(current.done(None, None, here))
            current = _Attempt()
        elif failed := _ENGINE_FAILED.match(body):
            current.failures.append(EngineFailure(failed[1], here, tuple(current.causes)))
            current.causes, current.touched = [], True
        elif _SETUP_FAILED.match(body):
            setup.append(here)
        elif body == _SUBNET_UP:
            if attempts and attempts[-1].subnet_up is None and not current.touched:
                done = attempts[-1]
                attempts[-1] = RoutingAttempt(
                    done.failures, done.configured, done.configured_line, done.no_engine_line, here
                )
            current.causes = []
        elif level & _ERROR_LEVEL or _ERR.search(body) or body.startswith("updn_lid_matrices: disabling UPDN"):
            current.causes.append(here)
    if seen == 0:
        raise ParseError(TOOL, 0, "", "no OpenSM log line ('<date> <time> <usec> [<thread>] 0x<level> -> ...')")
    if current.failures:
        attempts.append(current.done(None, None, None))
    return RoutingLog(version, tuple(attempts), tuple(setup), tuple(notes))
