"""The pkeytables probe's reader (ibprov's own probe, no tool version: its lines are the ones
test_pkeytables_probe.py has the probe print): lines that are not the probe's (a Python warning, an ibwarn line:
stderr is merged) are read past and kept as notes; a line of the probe's that does not read is an error."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, insert, noted, shown

from ibprov.probes import pkeytables
from ibprov.probes._text import ParseError
from ibprov.probes.pkeytables import PortPkeys

LINES = ["7 1 37 0xffff 0x0010 0x8020 0x7fff 0x8030", "9 1 64 0xffff", "12 1 error pkey table query failed"]


def test_the_probes_lines() -> None:
    assert pkeytables.parse("\n".join(LINES)) == {
        (7, 1): PortPkeys(7, 1, 37, (0xFFFF, 0x0010, 0x8020, 0x7FFF, 0x8030)),
        (9, 1): PortPkeys(9, 1, 64, (0xFFFF,)),
        (12, 1): PortPkeys(12, 1, None, (), "pkey table query failed"),
    }


def test_a_python_warning_is_a_note() -> None:
    warning = "/usr/lib/python3.6/site-packages/x.py:3: DeprecationWarning: the imp module is deprecated"
    notes: list[str] = []
    assert pkeytables.parse(f"{warning}\n{LINES[1]}\n", notes) == {(9, 1): PortPkeys(9, 1, 64, (0xFFFF,))}
    assert notes == [f"line 1: {warning}"]


@pytest.mark.parametrize("line", ["7 1", "7 1 x 0xffff", "7 1 37 0xfffz"])
def test_a_probe_line_that_does_not_read_is_an_error(line: str) -> None:
    with pytest.raises(ParseError, match=re.escape("expected 'LID PORT CAPACITY PKEY...' or 'LID PORT error'")):
        pkeytables.parse(line)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inserts=st.lists(st.tuples(st.integers(0, len(LINES)), NOISE), max_size=8))
def test_inserted_warning_lines_change_only_the_notes(inserts: list[tuple[int, str]]) -> None:
    notes: list[str] = []
    assert pkeytables.parse("\n".join(insert(LINES, inserts)), notes) == pkeytables.parse("\n".join(LINES))
    assert noted(tuple(notes)) == shown(inserts)
