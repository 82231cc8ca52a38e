"""mstlink's fast path (the typed fields read at once, every section when asked for) gives exactly the reading of
the general path (every section's every field read first) -- or declines and leaves the text to it: on every
capture in tests/fixtures/mstlink, and on variants of the captures the fast path takes: a line that is no field,
a blank or indented line, a title without its dashes, mstlink's own message, a key twice, two sections of one
kind, a field before the first title, CRLF line ends, values padded with blanks or N/A, a section of dashes."""

from __future__ import annotations

import pickle

import pytest
from captures import capture_names, read_capture

from ibprov.probes import mstlink
from ibprov.probes._text import ParseError
from ibprov.probes.mstlink import LazySections, MstlinkReading, parse_mstlink, read_every_field

# the captures in the usual layout (titles over dashes, every other line a field): the fast path reads them
USUAL = [
    "mstlink/100gbe-bf3-dpu-module-counters-col35-mft430-sigcomm26.txt",
    "mstlink/100gbe-cx4-hca-counters-edr-class-collapsed-forum206063.txt",
    "mstlink/100gbe-cx4-hca-eye-collapsed-forum206063.txt",
    "mstlink/400g-osfp-module-ddm-selected-lines-sichek.txt",
    "mstlink/400g-unknown-counters-ansi-transcribed-sichek.txt",
    "mstlink/ndr-cx7-hca-module-dac-col35-mft435-csegpu.txt",
    "mstlink/ndr-quantum2-switch-inband-lid-optical-errors-BUILT.txt",
]
# lines inserted after every line of a usual capture
INSERTED = [
    "a line that is no field",
    "   ",
    "",
    "Module Info",
    "Physical Counters and BER Info #",
    "-E- Failed to read the module: timeout",
    "-W- a warning with no colon",
    "State                           : Polling",
    "   Speed                        : IB-EDR",
    "Vendor Name                     : N/A",
    "Raw Physical BER                : 3E-5",
    "Temperature [C]:71 [-5..75]",
    "Cable Type : Optical Module (separated)",
    "Key with: two : colons",
    "--",
    "-----",
]


def same(text: str) -> bool:
    """Whether parse_mstlink and read_every_field agree on ``text`` (a reading each, or the same error);
    returns whether the fast path took it."""
    try:
        general: MstlinkReading | str = read_every_field(text)
    except ParseError as exc:
        general = str(exc)
    try:
        fast: MstlinkReading | str = parse_mstlink(text)
    except ParseError as exc:
        fast = str(exc)
    assert fast == general, text
    if isinstance(fast, MstlinkReading) and isinstance(general, MstlinkReading):
        assert dict(fast.sections) == dict(general.sections)
        assert fast.notes == general.notes
    took = isinstance(fast, MstlinkReading) and isinstance(fast.sections, LazySections)
    return took


def test_the_usual_captures_are_the_ones_the_fast_path_takes() -> None:
    taken = [n for n in capture_names("mstlink/*.txt") if mstlink._typed_kinds(mstlink._ANSI.sub("", read_capture(n)))]
    assert taken == USUAL


@pytest.mark.parametrize("name", capture_names("mstlink/*.txt"))
def test_every_capture_reads_the_same_on_both_paths(name: str) -> None:
    assert same(read_capture(name)) == (name in USUAL)


@pytest.mark.parametrize("name", USUAL)
def test_a_line_inserted_anywhere_reads_the_same_on_both_paths(name: str) -> None:
    lines = read_capture(name).split("\n")
    taken = declined = 0
    for i in range(len(lines) + 1):
        for extra in INSERTED:
            if same("\n".join([*lines[:i], extra, *lines[i:]])):
                taken += 1
            else:
                declined += 1
    # both sides of the property are exercised: harmless lines keep the fast path, odd ones leave it
    assert taken > len(lines)
    assert declined > len(lines)


@pytest.mark.parametrize("name", USUAL)
def test_layout_changes_read_the_same_on_both_paths(name: str) -> None:
    text = read_capture(name)
    lines = text.split("\n")
    dashes = [i for i, line in enumerate(lines) if line.strip().startswith("---")]
    variants = [
        text.replace("\n", "\r\n"),
        "State : Active\n" + text,
        "\n\n" + text + "\n\n",
        text + "\nPhysical Counters (PCIe)\n------------------------\nRaw Physical BER : 9E-3\nSymbol Errors : 7\n",
        text + "\nOperational Info\n----------------\nState : Disabled\nSpeed : N/A\n",
        text + "\nModule Info\n-----------\nVendor Name : Other\nVendor Serial Number : X1\n",
        text + "\n-------\n",
        text.replace(" : ", " :\t").replace("\n", "  \n"),
        text.replace(" : ", ": "),
        text.replace("Info\n", "Info: x\n", 1),
        # the second key of a lookup where the first is missing (older layouts)
        text.replace("Transfer Distance [m]", "Length [m]"),
        text.replace("Temperature [C]", "Temperature"),
        text.replace("SMF Length", "SMF Length [m]"),
        text.replace("Transfer Distance [m]", "Length [m]").replace("SMF Length", "SMF Length [m]"),
    ]
    for i in dashes:
        variants.append("\n".join([*lines[:i], *lines[i + 1 :]]))  # a title loses its dashes
        variants.append("\n".join([*lines[:i], "", *lines[i:]]))  # a blank line between title and dashes
        variants.append("\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]))  # dashes twice
    for variant in variants:
        same(variant)


def test_the_second_key_of_a_lookup_is_read_where_the_first_is_missing() -> None:
    text = read_capture("mstlink/ndr-cx7-hca-module-dac-col35-mft435-csegpu.txt")
    older = text.replace("Transfer Distance [m]", "Length [m]").replace("Temperature [C]", "Temperature")
    module = parse_mstlink(older).module
    assert module is not None
    assert module.length_m == 1.0
    assert module.temperature_c == 0.0


@pytest.mark.parametrize("message", ["-E- Failed to get module info: timeout", "  -W- Port is down: no counters"])
def test_a_message_inside_the_output_is_a_note_on_both_paths(message: str) -> None:
    lines = read_capture("mstlink/ndr-cx7-hca-module-dac-col35-mft435-csegpu.txt").split("\n")
    text = "\n".join([*lines[:8], message, *lines[8:]])
    for reading in (parse_mstlink(text), read_every_field(text)):
        assert any(message.strip() in n for n in reading.notes)
        assert not any(message.split(":")[0].strip() in key for s in reading.sections.values() for key in s)


def test_lazy_sections_read_when_asked_and_pickle_whole() -> None:
    text = read_capture("mstlink/ndr-cx7-hca-module-dac-col35-mft435-csegpu.txt")
    reading = parse_mstlink(text)
    assert isinstance(reading.sections, LazySections)
    general = read_every_field(text).sections
    assert list(reading.sections) == list(general)
    assert len(reading.sections) == len(general)
    assert reading.sections["Module Info"] == general["Module Info"]
    assert repr(reading.sections) == repr(general)
    again = pickle.loads(pickle.dumps(reading))
    assert again == reading
    assert dict(again.sections) == dict(general)
