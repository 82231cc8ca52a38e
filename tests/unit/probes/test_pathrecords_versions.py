"""saquery -p on real captures of infiniband-diags 44.0 under ibsim (tests/fixtures/routing, each with its
source and version on its first line), and on the older layouts as saquery.c printed them (no capture of an
older version was found): lines that are not saquery's become notes wherever they come; output that is not
saquery's or a record cut short is an error quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, insert, noted, shown

from ibprov.probes import pathrecords
from ibprov.probes._text import ParseError

CAPTURES = [n for n in capture_names("routing/saquery-p-*.txt") if "sa-down" not in n]


def test_every_capture_is_read() -> None:
    # the values of each are checked in tests/unit/probes/test_pathrecords.py; the SA-down one is refused there
    assert [n.removeprefix("routing/") for n in CAPTURES] == [
        "saquery-p-pairs-ring5-dfsssp-Q.txt",
        "saquery-p-pairs-ring5-file.txt",
        "saquery-p-pairs-ring5-lash-Q.txt",
        "saquery-p-pairs-ring5-minhop.txt",
        "saquery-p-ring5-dfsssp-Q.txt",
        "saquery-p-ring5-lash-Q.txt",
    ]
    assert len(pathrecords.parse(read_capture(CAPTURES[0])).records) == 20


def block(fields: list[tuple[str, str]]) -> str:
    return "PathRecord dump:\n" + "".join(f"\t\t{name}{'.' * (24 - len(name))}{value}\n" for name, value in fields)


# saquery.c's printf of each era (the field names and number formats), filled with one record's values
NEW = [
    ("service_id", "0x0000000000000000"), ("dgid", "fe80::2:c902:25:930c"), ("sgid", "fe80::2:c902:25:9201"),
    ("dlid", "1"), ("slid", "2"), ("hop_flow_raw", "0x0"), ("tclass", "0x0"), ("num_path_revers", "0x80"),
    ("pkey", "0xFFFF"), ("qos_class", "0x0"), ("sl", "0x0"), ("mtu", "0x84"), ("rate", "0x86"),
    ("pkt_life", "0x92"), ("preference", "0x0"), ("resv2", "0x000000000000"),
]  # fmt: skip
OFED_1_4 = [(n, {"dlid": "0x1", "slid": "0x2", "resv2": "0x0"}.get(n, v)) for n, v in NEW] + [("resv3", "0x0")]
OFED_1_3 = [
    (
        n,
        {"dgid": "0xfe80000000000000 : 0x0002c9020025930c", "sgid": "0xfe80000000000000 : 0x0002c90200259201"}.get(
            n, v
        ),
    )
    for n, v in OFED_1_4
]
OFED_1_2 = [("resv0", "0x0000000000000000"), *[f for f in OFED_1_3[1:] if f[0] != "qos_class"]]


@pytest.mark.parametrize(
    ("fields", "sgid"),
    [
        (NEW, "fe80::2:c902:25:9201"),  # infiniband-diags 1.5 (2009) to rdma-core today
        (OFED_1_4, "fe80::2:c902:25:9201"),  # 2008-2009: hex LIDs, resv2 and resv3
        (OFED_1_3, "0xfe80000000000000 : 0x0002c90200259201"),  # 2007-2008: GIDs as two halves
        (OFED_1_2, "0xfe80000000000000 : 0x0002c90200259201"),  # before 2007-08: resv0, no qos_class
    ],
)
def test_every_layout_saquery_printed(fields: list[tuple[str, str]], sgid: str) -> None:
    (record,) = pathrecords.parse(block(fields)).records
    assert (record.slid, record.dlid, record.sl, record.pkey, record.mtu_bytes, record.rate_code) == (
        2, 1, 0, 0xFFFF, 2048, 6
    )  # fmt: skip
    assert (record.sgid, record.reversible) == (sgid, True)


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("bash: saquery: command not found\n", 1, "not saquery -p output: expected 'PathRecord dump:' blocks"),
        (block(NEW[:5]), 1, "the record ends after 5 of 16 fields"),
        (block([*NEW[:9], ("sl", "0x0")]), 11, "expected field 'qos_class'"),
        (block([*NEW, ("resv3", "0x0"), ("resv4", "0x0")]), 19, "a field after 17 fields"),
        ("\t\tdlid....................1\n", 1, "a field before any 'PathRecord dump:' line"),
        ("Query SA failed: Connection timed out\n", 1, "the SA query failed"),
    ],
)
def test_what_is_not_whole_saquery_output_is_an_error_quoting_its_line(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        pathrecords.parse(text)
    assert caught.value.line_no == line_no


def test_no_route_is_no_record_and_no_error() -> None:
    assert pathrecords.parse("") == pathrecords.PathRecords(())
    assert pathrecords.parse("ibwarn: [1] x: y\n").notes == ("line 1: ibwarn: [1] x: y",)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(CAPTURES), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = pathrecords.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), NOISE), max_size=8), label="inserts")
    result = pathrecords.parse("\n".join(insert(lines, inserts)))
    strip = lambda r: [replace(x, line_no=0) for x in r.records]  # noqa: E731 - the record's own line moves
    assert strip(result) == strip(clean)
    # the LID-0 note of a truncated table names its record's line, which moves with the insertions
    assert [n for n in noted(result.notes) if "LID 0" not in n] == sorted(shown(inserts))
