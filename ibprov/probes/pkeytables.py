"""PKey tables of many ports in one process (see pkeytables_probe.py): the command and its pure parser.

`smpquery pkeys` costs one process per port; on a 1,024-node fabric that start-up dominates verify. The
probe sends the same SMPs from one process through libibmad. Where it cannot run (no python3 or no
libibmad on the collecting host) verify falls back to `smpquery pkeys` per port.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ibprov import pkey
from ibprov.pkey import PKey
from ibprov.probes._text import ParseError, lines, note

TOOL = "pkeytables"
# the probe's one import of ibprov: replaced by the module's own source (standard library only) when sent
_PKEY_IMPORT = "\nfrom ibprov.pkey import PKey\n"


@dataclass(frozen=True)
class PortPkeys:
    lid: int
    port: int
    capacity: int | None
    pkeys: tuple[PKey, ...]
    error: str | None = None


@cache
def probe_source() -> str:
    """The probe as it is sent: stand-alone, the P_Key definition of ibprov/pkey.py inlined."""
    probe = Path(__file__).with_name("pkeytables_probe.py").read_text()
    if probe.count(_PKEY_IMPORT) != 1:
        raise RuntimeError(f"pkeytables_probe.py should import the P_Key once, as {_PKEY_IMPORT.strip()!r}")
    inlined = Path(pkey.__file__).read_text()
    return probe.replace(_PKEY_IMPORT, f"\n# --- ibprov/pkey.py ---\n{inlined}# ---\n", 1)


def argv(targets: Sequence[tuple[int, int, int | None]], python: str = "python3") -> tuple[str, ...]:
    """(LID, port, PartitionCap or None) per CA port; a known capacity (from the fabric cache's NodeInfo)
    spares the probe one NodeInfo SMP per port."""
    return (
        python,
        "-c",
        probe_source(),
        *(f"{lid}:{port}" if cap is None else f"{lid}:{port}:{cap}" for lid, port, cap in targets),
    )


_PORT = re.compile(r"^\s*\d+\s+\d+(?:\s|$)", re.ASCII)  # "LID PORT ...": a line of the probe's


def parse(text: str, notes: list[str] | None = None) -> dict[tuple[int, int], PortPkeys]:
    """``LID PORT CAP PKEY...`` or ``LID PORT error TEXT`` per port. Lines that are not the probe's (a Python
    warning, an ``ibwarn:`` line: stderr is merged) are read past, kept in ``notes`` when a list is given; a
    line of the probe's that does not read is a ParseError."""
    out: dict[tuple[int, int], PortPkeys] = {}
    for line_no, line in lines(TOOL, text, notes):
        if not _PORT.match(line):
            if notes is not None:
                notes.append(note(line_no, line))
            continue
        fields = line.split()
        try:
            lid, port = int(fields[0]), int(fields[1])
            if fields[2] == "error":
                out[(lid, port)] = PortPkeys(lid, port, None, (), " ".join(fields[3:]) or "error")
                continue
            keys = tuple(PKey.from_wire(int(f, 16)) for f in fields[3:])
            out[(lid, port)] = PortPkeys(lid, port, int(fields[2]), keys)
        except (IndexError, ValueError):
            raise ParseError(TOOL, line_no, line, "expected 'LID PORT CAPACITY PKEY...' or 'LID PORT error'") from None
    return out
