"""``sminfo``: which subnet manager is master, as seen from this port."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.probes._text import ParseError, lines

__all__ = ["SmInfo", "argv", "parse"]

TOOL = "sminfo"

_LINE = re.compile(
    r"^sminfo: sm lid (\d+) sm guid 0x([0-9a-fA-F]+), activity count (\d+) priority (\d+) state (\d+) (\w+)$",
    re.ASCII,
)


@dataclass(frozen=True)
class SmInfo:
    lid: int
    guid: int
    activity_count: int
    priority: int
    state: int  # 0 NOTACT, 1 DISCOVER, 2 STANDBY, 3 MASTER
    state_name: str  # "SMINFO_MASTER", ...

    @property
    def is_master(self) -> bool:
        return self.state_name == "SMINFO_MASTER"


def argv(target: int | None = None) -> tuple[str, ...]:
    """``sminfo`` asks the master SM; ``sminfo <lid>`` asks the SM at that LID."""
    return ("sminfo",) if target is None else ("sminfo", str(target))


def parse(text: str) -> SmInfo:
    found: SmInfo | None = None
    for line_no, line in lines(TOOL, text):
        match = _LINE.match(line.strip())
        if match is None:
            raise ParseError(TOOL, line_no, line)
        if found is not None:
            raise ParseError(TOOL, line_no, line, "a second sminfo line")
        lid, guid, count, priority, state = (int(match[i], 16 if i == 2 else 10) for i in range(1, 6))
        found = SmInfo(lid, guid, count, priority, state, match[6])
    if found is None:
        raise ParseError(TOOL, 0, "", "no 'sminfo: sm lid ...' line in the output")
    return found
