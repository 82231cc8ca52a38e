from __future__ import annotations

import pytest
from captures import read_capture

from ibprov.probes import ParseError
from ibprov.probes.sminfo import SmInfo, parse


def test_sim_master_sm() -> None:
    assert parse(read_capture("sim/sminfo-sim-v44.txt")) == SmInfo(1, 0x100001, 229, 0, 3, "SMINFO_MASTER")


def test_real_hdr_master_with_priority_15() -> None:
    # The capture starts with the command the user typed (" sminfo").
    info = parse(read_capture("sminfo/hdr-master-priority15.txt", not_output=1))
    assert (info.lid, info.guid, info.activity_count, info.priority) == (4, 0x8C0EB0300F6FC26, 5568705, 15)
    assert info.is_master


def test_typed_command_is_a_note_not_sminfo_output() -> None:
    info = parse(read_capture("sminfo/hdr-master-priority15.txt"))
    assert info.notes == ("line 1: sminfo",)
    assert info.lid == 4


def test_standby_sm_is_not_master() -> None:
    info = parse("sminfo: sm lid 7 sm guid 0x2c9, activity count 0 priority 14 state 2 SMINFO_STANDBY\n")
    assert (info.state, info.state_name, info.is_master) == (2, "SMINFO_STANDBY", False)


def test_empty_output_is_an_error() -> None:
    with pytest.raises(ParseError, match=r"^sminfo: no 'sminfo: sm lid \.\.\.' line in the output$"):
        parse("\n")


def test_two_sminfo_lines_are_an_error() -> None:
    line = "sminfo: sm lid 1 sm guid 0x1, activity count 1 priority 0 state 3 SMINFO_MASTER\n"
    with pytest.raises(ParseError, match="line 2: a second sminfo line"):
        parse(line * 2)
