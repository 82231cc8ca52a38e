"""sminfo of every infiniband-diags in the field on real captures (tests/fixtures/sminfo and the sim one, each
with its source and version on its first line): the master SM's LID, GUID, activity count, priority and state
read from each; lines that are not sminfo's become notes wherever they come; a sminfo line that does not read
and output that is not sminfo's are errors quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, insert, noted, shown

from ibprov.probes import sminfo
from ibprov.probes._text import ParseError
from ibprov.probes.sminfo import SmInfo

CAPTURES = [*capture_names("sminfo/*.txt"), "sim/sminfo-sim-v44.txt"]


@pytest.mark.parametrize(
    ("name", "prompt", "expected"),
    [
        # OFED 1.2.x (2008, mthca, Open MPI users list): the oldest layout in the field, the same printf
        ("sminfo/ofed1.2-mthca-2008-ompi-users.txt", 0, SmInfo(2, 0x2C90200259201, 6881, 0, 3, "SMINFO_MASTER")),
        # Oracle Big Data Appliance, Sun DCS 36P QDR switches: the master SM runs on a switch (LID 15)
        ("sminfo/oracle-bda-sun-dcs-qdr.txt", 1, SmInfo(15, 0x10E0406D5AA0A0, 26263191, 14, 3, "SMINFO_MASTER")),
        # HDR MT4123 fabric (version not posted): priority 15
        ("sminfo/hdr-master-priority15.txt", 1, SmInfo(4, 0x8C0EB0300F6FC26, 5568705, 15, 3, "SMINFO_MASTER")),
        # infiniband-diags 44.0 (rdma-core 44, Debian 12), ibsim
        ("sim/sminfo-sim-v44.txt", 0, SmInfo(1, 0x100001, 229, 0, 3, "SMINFO_MASTER")),
    ],
)
def test_each_capture_reads_the_master_sm(name: str, prompt: int, expected: SmInfo) -> None:
    info = sminfo.parse(read_capture(name, not_output=prompt))
    assert info == expected
    assert info.is_master


def test_every_capture_is_tested_above() -> None:
    assert CAPTURES == [
        "sminfo/hdr-master-priority15.txt",
        "sminfo/ofed1.2-mthca-2008-ompi-users.txt",
        "sminfo/oracle-bda-sun-dcs-qdr.txt",
        "sim/sminfo-sim-v44.txt",
    ]


def test_the_prompt_a_capture_typed_is_a_note() -> None:
    info = sminfo.parse(read_capture("sminfo/oracle-bda-sun-dcs-qdr.txt"))
    assert info.notes == ("line 1: [root@bda01node05 ~]# sminfo",)
    assert info.lid == 15


def test_a_state_above_master_reads_as_printed() -> None:
    # sminfo.c: STATESTR(s) is "???" for a state the table does not name
    info = sminfo.parse("sminfo: sm lid 3 sm guid 0x2c9, activity count 7 priority 1 state 5 ???\n")
    assert (info.state, info.state_name, info.is_master) == (5, "???", False)


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("bash: sminfo: command not found\n", 1, "not sminfo output: expected 'sminfo: sm lid N sm guid"),
        ("sminfo: sm lid 2 sm guid 0x2c90200259201, activity count 6881 priority 0\n", 1, "expected 'sminfo: sm lid N"),
        ("ibwarn: [9] x: y\nsminfo: sm lid 2 sm guid 0x2c9, activity count\n", 2, "expected 'sminfo: sm lid N"),
        ("sminfo: iberror: failed: query\n", 1, "the tool reported a failure"),
        ("", 0, "no 'sminfo: sm lid ...' line in the output"),
        ("ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)\n", 0, "no 'sminfo: sm lid ...' line"),
    ],
)
def test_what_is_not_sminfo_output_is_an_error_quoting_its_line(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        sminfo.parse(text)
    assert caught.value.line_no == line_no


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(CAPTURES), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = sminfo.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), NOISE), max_size=8), label="inserts")
    info = sminfo.parse("\n".join(insert(lines, inserts)))
    assert replace(info, notes=()) == replace(clean, notes=())
    assert noted(info.notes) == sorted(shown(inserts) + noted(clean.notes))
