from __future__ import annotations

import pytest

from ibprov.errors import CollectError, ExitCode
from ibprov.probes import COLLECTORS, ParseError, collector, ibnetdiscover, smpquery


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "expected"),
    [
        ("ibnetdiscover", (), {}, ("ibnetdiscover",)),
        ("ibnetdiscover", (), {"ports": True}, ("ibnetdiscover", "-p")),
        ("ibnetdiscover", (), {"full": True}, ("ibnetdiscover", "-f")),
        ("iblinkinfo", (), {}, ("iblinkinfo", "-l")),
        ("iblinkinfo", (), {"line_mode": False}, ("iblinkinfo",)),
        ("ibqueryerrors", (), {}, ("ibqueryerrors", "-c")),
        (
            "ibqueryerrors",
            (),
            {"suppress_common": False, "details": True, "report_port": True, "threshold_file": "/t"},
            ("ibqueryerrors", "--details", "-r", "--threshold-file", "/t"),
        ),
        ("sminfo", (), {}, ("sminfo",)),
        ("smpquery pkeys", (5, 1), {}, ("smpquery", "pkeys", "5", "1")),
        ("smpquery sl2vl", (2, 1), {}, ("smpquery", "sl2vl", "2", "1")),
        ("smpquery vlarb", (2, 1), {}, ("smpquery", "vlarb", "2", "1")),
    ],
)
def test_argv_builders(
    name: str, args: tuple[object, ...], kwargs: dict[str, object], expected: tuple[str, ...]
) -> None:
    built = COLLECTORS[name].argv(*args, **kwargs)
    assert built == expected
    assert built[0] == COLLECTORS[name].tool


def test_registry_pairs_each_command_with_its_parser() -> None:
    assert COLLECTORS["ibnetdiscover"].parse is ibnetdiscover.parse
    assert COLLECTORS["smpquery pkeys"].parse is smpquery.parse_pkeys
    assert COLLECTORS["smpquery vlarb"].parse is smpquery.parse_vlarb
    assert {name for name, c in COLLECTORS.items() if c.ok_returncodes != {0}} == {"ibqueryerrors"}


def test_unknown_collector_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="no collector 'ibping'; known: dump_lfts, iblinkinfo, ibnetdiscover"):
        collector("ibping")
    assert collector("sminfo") is COLLECTORS["sminfo"]


def test_parse_error_is_a_collect_error_with_its_location() -> None:
    error = ParseError("ibnetdiscover", 12, "junk 'here'")
    assert isinstance(error, CollectError)
    assert error.exit_code == ExitCode.COLLECT_ERROR
    assert (error.tool, error.line_no, error.line, error.reason) == (
        "ibnetdiscover",
        12,
        "junk 'here'",
        "cannot parse",
    )
    assert str(error) == "ibnetdiscover: line 12: cannot parse: \"junk 'here'\""


def test_parse_error_shortens_long_lines_and_can_blame_the_whole_output() -> None:
    assert str(ParseError("perfquery", 3, "x" * 500)) == f"perfquery: line 3: cannot parse: '{'x' * 200}...'"
    assert str(ParseError("sminfo", 0, "", "no output")) == "sminfo: no output"
