"""``sminfo``: which subnet manager is master, as seen from this port (pure parser).

The output is one line, printed by the same ``printf`` since infiniband-diags 1.2.2 (2007) through rdma-core
today (``infiniband-diags/sminfo.c``)::

    sminfo: sm lid 4 sm guid 0x8c0eb0300f6fc26, activity count 5568705 priority 15 state 3 SMINFO_MASTER

The state name is ``SMINFO_NOTACT``, ``SMINFO_DISCOVER``, ``SMINFO_STANDBY``, ``SMINFO_MASTER`` or ``???``
(a state above 3); before 1.2.2 the activity count was printed signed (``%d``), so it may be negative.

A line that is not ``sminfo``'s (an ``ibwarn:`` line, a libibumad or syslog message, a shell warning, the
command a capture typed: the probe merges stderr into stdout) is kept as a note on the result, never the end
of the output. A line that starts like the sminfo line but does not read as one is a ParseError quoting it
(output cut short or from a tool that prints differently), and so is output with no sminfo line at all (a
missing binary, an error message): the error says what was expected and quotes the first line that came.
``iberror:``/``ibpanic:`` lines are the tool's failure (ParseError).

Proven on (tests/fixtures/sminfo and tests/fixtures/sim, one real capture each, see
tests/fixtures/proven/sminfo.yaml): OFED 1.2 (infiniband-diags of OFED 1.2.x, mthca SDR/DDR cluster, 2008),
Oracle Big Data Appliance (Sun DCS 36P QDR fabric, version not posted), an HDR MT4123 fabric (version not
posted) and infiniband-diags 44.0 (rdma-core 44, Debian 12; ibsim simulation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ibprov.probes._text import ParseError, lines, note

__all__ = ["SmInfo", "argv", "parse"]

TOOL = "sminfo"

_LINE = re.compile(
    r"^sminfo: sm lid (\d+) sm guid 0x([0-9a-fA-F]+), activity count (-?\d+) priority (\d+) state (\d+) (\S+)$",
    re.ASCII,
)
_START = re.compile(r"^sminfo: sm lid\b", re.ASCII)  # the start of the sminfo line, whatever follows
_EXPECTED = "'sminfo: sm lid N sm guid 0xGUID, activity count N priority N state N NAME'"


@dataclass(frozen=True)
class SmInfo:
    lid: int
    guid: int
    activity_count: int
    priority: int
    state: int  # 0 NOTACT, 1 DISCOVER, 2 STANDBY, 3 MASTER
    state_name: str  # "SMINFO_MASTER", ... ("???" for a state above 3)
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not sminfo's (warnings, log lines)

    @property
    def is_master(self) -> bool:
        return self.state_name == "SMINFO_MASTER"


def argv(target: int | None = None) -> tuple[str, ...]:
    """``sminfo`` asks the master SM; ``sminfo <lid>`` asks the SM at that LID."""
    return ("sminfo",) if target is None else ("sminfo", str(target))


def parse(text: str) -> SmInfo:
    found: SmInfo | None = None
    notes: list[str] = []
    first_foreign: tuple[int, str] | None = None
    for line_no, line in lines(TOOL, text, notes):
        stripped = line.strip()
        match = _LINE.match(stripped)
        if match is None:
            if _START.match(stripped):
                raise ParseError(TOOL, line_no, line, f"expected {_EXPECTED}, got")
            notes.append(note(line_no, line))
            if first_foreign is None:
                first_foreign = (line_no, line)
            continue
        if found is not None:
            raise ParseError(TOOL, line_no, line, "a second sminfo line")
        lid, guid, count, priority, state = (int(match[i], 16 if i == 2 else 10) for i in range(1, 6))
        found = SmInfo(lid, guid, count, priority, state, match[6])
    if found is None:
        if first_foreign is not None:
            line_no, line = first_foreign
            raise ParseError(TOOL, line_no, line, f"not sminfo output: expected {_EXPECTED}, got")
        raise ParseError(TOOL, 0, "", "no 'sminfo: sm lid ...' line in the output")
    return replace(found, notes=tuple(notes))
