"""The MPI probe's ``tools`` section on real captures (tests/fixtures/mpiconf, produced here on Debian 12 with
Open MPI 4.1.4 and mpi4py 3.1.4): the tools found, and a line that is no tool (bash's locale warning merged from
stderr) is a note, whatever it is and wherever it comes."""

from __future__ import annotations

from dataclasses import replace

from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpinoise import MPI_NOISE
from noiselines import insert, noted, shown

from ibprov.probes.mpiconf import MARK, Tools, parse_probe, parse_tools

CAPTURES = capture_names("mpiconf/tools-*.txt")
LOCALE = "bash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)"


def tools_of(name: str) -> Tools:
    sections = parse_probe(read_capture(f"mpiconf/{name}"))
    return parse_tools(sections["tools"] or "")


def test_open_mpi_4_1_4_and_mpi4py_3_1_4_without_osu() -> None:
    tools = tools_of("tools-ompi4.1.4-mpi4py3.1.4-debian12.txt")
    assert tools == Tools(mpirun="/usr/bin/mpirun", mpi4py="3.1.4")
    assert not tools.osu


def test_open_mpi_5_0_7_and_mpi4py_4_0_3_of_debian_13_without_osu() -> None:
    tools = tools_of("tools-ompi5.0.7-mpi4py4.0.3-debian13.txt")
    assert tools == Tools(mpirun="/usr/bin/mpirun", mpi4py="4.0.3")
    assert not tools.osu


def test_a_locale_warning_before_the_section_mark_is_not_in_the_section() -> None:
    """bash printed its warning before the first mark: probe_sections drops text before it."""
    text = read_capture("mpiconf/tools-ompi4.1.4-mpi4py3.1.4-debian12-locale-warning.txt")
    assert text.split("\n")[0] == LOCALE
    assert tools_of("tools-ompi4.1.4-mpi4py3.1.4-debian12-locale-warning.txt") == Tools(
        "/usr/bin/mpirun", mpi4py="3.1.4"
    )


def test_a_warning_inside_the_section_is_a_note() -> None:
    body = read_capture("mpiconf/tools-ompi4.1.4-mpi4py3.1.4-debian12.txt").split("\n")
    text = "\n".join([body[0], LOCALE, *body[1:]])
    tools = parse_tools(parse_probe(text)["tools"] or "")
    assert tools == Tools("/usr/bin/mpirun", mpi4py="3.1.4", notes=(f"line 1: {LOCALE}",))


def test_every_capture_is_tested_above() -> None:
    assert [n.removeprefix("mpiconf/") for n in CAPTURES] == [
        "tools-ompi4.1.4-mpi4py3.1.4-debian12-locale-warning.txt",
        "tools-ompi4.1.4-mpi4py3.1.4-debian12.txt",
        "tools-ompi5.0.7-mpi4py4.0.3-debian13.txt",
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(CAPTURES), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    text = read_capture(name)
    section = text[text.index(MARK) :].split("\n", 1)[1].rstrip("\n").split("\n")  # the lines after the mark
    clean = parse_tools("\n".join(section))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(section)), MPI_NOISE), max_size=8), label="inserts")
    tools = parse_tools("\n".join(insert(section, inserts)))
    assert replace(tools, notes=()) == clean
    assert noted(tools.notes) == shown(inserts)
