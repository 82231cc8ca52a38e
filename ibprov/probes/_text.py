"""What every diag parser shares: the error type, line iteration with noise skipped, number parsing, a shell
probe's output split into its sections."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from ibprov.errors import CollectError

__all__ = ["ParseError", "frozen", "hex_int", "lines", "note", "probe_sections"]

_SHOWN = 200  # longest offending line quoted in a message

# Warnings the diags print (on stderr, but a collector may merge it): skipped.
_NOISE = re.compile(r"^\s*(?:\S+: )?(?:ibwarn|WARN):", re.ASCII)
# Fatal messages: the output that follows or precedes them cannot be trusted.
_FATAL = re.compile(r"^\s*(?:\S+: )?(?:ibpanic|iberror):", re.ASCII)
# libibmad field dumps: ``Name:<dots>value`` (name + dots fill 32 columns, so a long name has no dot).
_INT = re.compile(r"^(?:0x[0-9a-fA-F]+|[0-9]+)$", re.ASCII)


class ParseError(CollectError):
    """Diag output a parser cannot read. ``line_no`` is 1-based; 0 means the output as a whole."""

    def __init__(self, tool: str, line_no: int, line: str, reason: str = "cannot parse") -> None:
        self.tool = tool
        self.line_no = line_no
        self.line = line
        self.reason = reason
        if line_no == 0:
            message = f"{tool}: {reason}"
        else:
            shown = line if len(line) <= _SHOWN else line[:_SHOWN] + "..."
            message = f"{tool}: line {line_no}: {reason}: {shown!r}"
        super().__init__(message)


def note(line_no: int, line: str) -> str:
    """How a line a reader does not know is kept on its result (``notes``): ``line N: TEXT``."""
    text = line.strip()
    return f"line {line_no}: {text if len(text) <= _SHOWN else text[:_SHOWN] + '...'}"


def lines(tool: str, text: str, notes: list[str] | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line_no, line)`` for each line worth reading: blank lines and ``ibwarn:`` warnings are
    skipped (appended to ``notes`` with :func:`note` when a list is given), trailing whitespace is dropped,
    and an ``ibpanic:``/``iberror:`` line raises ParseError."""
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if _NOISE.match(line):
            if notes is not None:
                notes.append(note(line_no, line))
            continue
        if _FATAL.match(line):
            raise ParseError(tool, line_no, line, "the tool reported a failure")
        yield line_no, line


def hex_int(value: str) -> int:
    """A hex number with or without ``0x`` (callers have matched ``[0-9a-fA-F]+`` already)."""
    return int(value.removeprefix("0x"), 16)


def frozen(values: Mapping[str, int]) -> Mapping[str, int]:
    """A read-only copy, for mappings kept inside frozen dataclasses."""
    return MappingProxyType(dict(values))


def probe_sections(stdout: str, mark: str) -> dict[str, str]:
    """A shell probe's output cut at the lines that start with ``mark`` (``echo '<mark>NAME'``): NAME -> the
    text up to the next such line, stripped. Text before the first one is dropped; a NAME printed twice
    gets both texts."""
    # one split at the mark lines, at C speed (a host's probe prints thousands of lines)
    parts = ("\n" + (stdout.replace("\r\n", "\n") if "\r" in stdout else stdout)).split("\n" + mark)
    sections: dict[str, list[str]] = {}
    for part in parts[1:]:
        name, _, body = part.partition("\n")
        sections.setdefault(name.strip(), []).append(body.strip("\n"))
    return {name: "\n".join(bodies).strip() for name, bodies in sections.items()}
