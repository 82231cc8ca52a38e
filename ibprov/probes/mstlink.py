"""The reader of ``mstlink`` (Debian's mstflint) and NVIDIA MFT's ``mlxlink``: one port's operational state,
physical counters and BER, module (cable/transceiver) information, in text or ``--json``.

Layouts in the field (docs/physical.md; each proven on a capture in tests/fixtures/mstlink/):

* Text: sections, each a title, a row of ``-`` and ``Key<pad>: value`` lines. The key column moved (colon at
  column 32 up to MFT 4.32, 35 from builds of 4.30/4.33 on, some with a trailing space after the value): a
  line is split on its first ``" : "`` (else its first ``":"``), never on a column. Colour codes
  (``ESC[32m`` ... ``ESC[0m``) are written even into a pipe: they are removed first.
* ``--json``: ``{"status": {"code", "message"}, "result": {"output": {SECTION: {KEY: VALUE | {"values": [..]}}}}}``.
  ``code`` is 1 (and the tool exits 1) when any sub-query failed, with every other section still present:
  the sections are read, the message is a note. Text before the first ``{`` (a warning) is a note too.
* Counters: the EDR class (``Effective Physical Errors``, ``Raw Physical Errors Per Lane``, ``Effective/Raw
  Physical BER``) and the amBER set of 16 nm and newer devices (``Symbol Errors``, ``Symbol BER`` first);
  ``Link Down Counter`` and ``Link Error Recovery Counter`` may be absent (BlueField-3). A BER reads
  ``<coef>E-<exp>``; ``15E-255`` is "no errors". Every value reads ``N/A`` while the link is down.
* Module: ``Cable Type`` (``Passive copper cable``, ``Active cable (active copper / optics)``, ``Optical Module
  (separated)``), ``Cable Technology``, ``Vendor Name``/``Part Number``/``Serial Number``, ``Transfer Distance
  [m]`` (a single-mode module may read 0 there and give its reach in ``SMF Length``), DDM readings as
  ``value [low..high]`` where ``[0..0]``-style placeholders are no thresholds.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ibprov.probes._text import ParseError, note

__all__ = [
    "LazySections",
    "ModuleInfo",
    "MstlinkReading",
    "cable_medium",
    "parse_ber",
    "parse_mstlink",
    "read_every_field",
]

TOOL = "mstlink"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_DASHES = re.compile(r"^-{3,}$")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_RANGE = re.compile(r"^\s*(.*?)\s*\[\s*([-+]?[0-9.]+)\s*\.\.\s*([-+]?[0-9.]+)\s*\]\s*$")
_BER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[eE]\s*([-+]?\d+)\s*$")
# a title whose underline a web page dropped ("Operational Info #", a grep that kept the title only)
_TITLE = re.compile(r"^[A-Z][A-Za-z ()/]* (?:Info|Information)(?: \(PCIe\))?(?:\s*#)?$")
_TITLE_TAIL = re.compile(r"\s*#$")
_MESSAGE = re.compile(r"^\s*-[EWI]-\s", re.M)  # mstlink's own "-E- ..." / "-W- ..." lines


@dataclass(frozen=True)
class ModuleInfo:
    """The cable or transceiver at the port, as ``-m`` shows it."""

    medium: str | None  # dac, acc, aoc, transceiver; None: none plugged or a type ibprov does not know
    cable_type: str | None  # as printed: "Passive copper cable"
    technology: str | None  # "Copper cable, passive, unequalized", "850 nm VCSEL"
    identifier: str | None  # QSFP28, OSFP, ...
    vendor: str | None
    part_number: str | None
    serial: str | None
    length_m: float | None  # cable length, or a transceiver's rated reach (SMF Length where Transfer Distance is 0)
    temperature_c: float | None
    temperature_high_c: float | None  # the module's own high alarm threshold; None when it gives no real range
    firmware: str | None


@dataclass(frozen=True)
class MstlinkReading:
    """One port as mstlink/mlxlink printed it: every section's fields (``sections``), and the typed ones."""

    sections: Mapping[str, dict[str, str]]
    state: str | None = None
    physical_state: str | None = None
    speed: str | None = None  # IB-NDR, IB-HDR, 200G ...
    width: str | None = None  # 4x
    status_opcode: int | None = None  # Troubleshooting Info; 0: no issue
    recommendation: str | None = None
    firmware: str | None = None  # Tool Information: the device's firmware
    minutes_since_clear: float | None = None
    effective_ber: float | None = None
    raw_ber: float | None = None
    symbol_ber: float | None = None
    effective_errors: int | None = None
    symbol_errors: int | None = None
    raw_errors_per_lane: tuple[int, ...] = ()
    link_down: int | None = None
    link_recoveries: int | None = None
    module: ModuleInfo | None = None
    notes: tuple[str, ...] = ()
    status_code: int = 0  # --json's status code (1: a sub-query failed; the sections read are still good)

    def field(self, section_prefix: str, key: str) -> str | None:
        """The value of ``key`` in the first section whose title starts with ``section_prefix``."""
        for title, fields in self.sections.items():
            if title.startswith(section_prefix) and key in fields:
                return fields[key]
        return None


def parse_ber(text: str | None) -> float | None:
    """``1E-8`` -> 1e-08, ``15E-255`` -> 1.5e-254 (no errors: below any limit), ``N/A`` -> None."""
    if text is None:
        return None
    m = _BER.match(_ANSI.sub("", text))
    if not m:
        return None
    return float(f"{m.group(1)}e{m.group(2)}")


def cable_medium(cable_type: str | None, technology: str | None) -> str | None:
    """dac, acc, aoc or transceiver from mstlink's Cable Type and Cable Technology (mstflint ``getCableType``);
    None for an unplugged port or a type that is none of these."""
    kind = (cable_type or "").lower()
    tech = (technology or "").lower()
    if kind.startswith("passive copper"):
        return "dac"
    if kind.startswith("active cable"):
        return "acc" if "copper" in tech else "aoc"
    if kind.startswith("optical module"):
        return "transceiver"
    return None


def parse_mstlink(text: str) -> MstlinkReading:
    """Read one port's output (text or ``--json``); raises :class:`ParseError` on output with no section.

    Text in the usual layout (titles over dashes, every other line a field) takes a fast path: the fields the
    reading types are read at once and every section when first asked for (:class:`LazySections`); anything
    else, and text the fast path declines, is read by :func:`read_every_field`. Both give the same reading
    (tests/unit/probes/test_mstlink_fast_path.py proves it on every capture and hundreds of variants)."""
    clean = _ANSI.sub("", text) if "\x1b" in text else text
    if not _is_json(clean):
        kinds = _typed_kinds(clean)
        if kinds is not None:
            return _typed(_typed_lookups(kinds), _MODULE in kinds, [], 0, LazySections(clean))
    return read_every_field(clean)


def read_every_field(text: str) -> MstlinkReading:
    """:func:`parse_mstlink` the general way: every section's every field read first, then the typed ones."""
    clean = _ANSI.sub("", text) if "\x1b" in text else text
    notes: list[str] = []
    status = 0
    if _is_json(clean):
        sections, status = _json_sections(clean, clean.find("{"), notes)
    else:
        sections = _text_sections(clean, notes)
    if not sections:
        raise ParseError(TOOL, 0, "", "no section (expected 'Operational Info' and its dashes, or --json output)")
    kinds = {prefix: [f for t, f in sections.items() if t.startswith(prefix)] for prefix, _keys in _READ}
    return _typed(_lookups(kinds), bool(kinds[_MODULE]), notes, status, sections)


def _is_json(text: str) -> bool:
    brace = text.find("{")
    return brace >= 0 and (not text[:brace].strip() or '"result"' in text[brace:])


class LazySections(Mapping[str, dict[str, str]]):
    """Every section of a text output in the usual layout, read when first asked for: a fabric's worth of
    ports is judged on its typed fields alone, and a port's 90 other fields cost nothing until shown."""

    __slots__ = ("_read", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._read: dict[str, dict[str, str]] | None = None

    def _sections(self) -> dict[str, dict[str, str]]:
        if self._read is None:
            self._read = _text_sections(self._text, [])
        return self._read

    def __getitem__(self, title: str) -> dict[str, str]:
        return self._sections()[title]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sections())

    def __len__(self) -> int:
        return len(self._sections())

    def __repr__(self) -> str:
        return repr(self._sections())


# the usual layout, read at C speed where it can be (a large fabric's outputs are read in seconds): each title
# over its row of dashes, then key : value lines; anything else takes the line-by-line path below
# (a message line of mstlink's own is spotted in the same pass: its group is not None)
_DASH_LINE = re.compile(r"\n(?:[ \t]*-{3,}[ \t]*(?=\n|$)|\s*(-[EWI]-\s))")
_KEY_VALUE = re.compile(r"^[ \t]*([^\n:]*?)[ \t]*:[ \t]*(.*?)[ \t]*$", re.M)
# a non-blank line with no colon inside a section: no field, so the line path reads it (as a note)
_NOT_A_FIELD = re.compile(r"\n(?![ \t]*+(?:\n|$))(?![^\n:]*+:)")


def _chunks(text: str) -> list[tuple[str, str]] | None:
    """(title, body) of each section of the usual layout; None when the text needs the line-by-line path
    (a message line, text before the first title, a title with a colon)."""
    parts = _DASH_LINE.split(text)
    if len(parts) < 3 or any(parts[1::2]) or _MESSAGE.match(text):
        return None
    chunks = parts[0::2]
    head, _, title = chunks[0].rstrip().rpartition("\n")
    if head.strip():
        return None
    out = []
    last = len(chunks) - 1
    for i in range(1, len(chunks)):
        chunk = chunks[i]
        body, _, following = chunk.rstrip().rpartition("\n") if i != last else (chunk, "", "")
        title = title.strip()
        if not title or ":" in title:
            return None
        out.append((title, body))
        title = following
    return out


def _text_sections(text: str, notes: list[str]) -> dict[str, dict[str, str]]:
    chunks = _chunks(text)
    if chunks is None or any(_NOT_A_FIELD.search(body) for _title, body in chunks):
        return _line_sections(text, notes)  # a line that is no field: read line by line, as a note
    sections: dict[str, dict[str, str]] = {}
    for title, body in chunks:
        fields = sections.setdefault(title, {})
        for key, value in _KEY_VALUE.findall(body):
            fields[key] = value
    return sections


def _line_sections(text: str, notes: list[str]) -> dict[str, dict[str, str]]:
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    rows = text.split("\n")
    nonblank = [i for i, r in enumerate(rows) if r.strip()]
    after = dict(itertools.pairwise(nonblank))
    for i, raw in enumerate(rows):
        line = raw.strip()
        if not line or _DASHES.match(line):
            continue
        following = rows[after[i]].strip() if i in after else ""
        if ":" not in line and (_DASHES.match(following) or _TITLE.match(line)):
            current = sections.setdefault(_TITLE_TAIL.sub("", line), {})
            continue
        if current is None or _MESSAGE.match(line) or ":" not in line:
            notes.append(note(i + 1, raw))
            continue
        key, sep, value = line.partition(" : ")
        if not sep:
            key, _, value = line.partition(":")
        current[key.strip()] = value.strip()
    return sections


def _json_sections(text: str, brace: int, notes: list[str]) -> tuple[dict[str, dict[str, str]], int]:
    before = text[:brace]
    for line_no, line in enumerate(before.split("\n"), start=1):
        if line.strip():
            notes.append(note(line_no, line))
    try:
        doc, end = json.JSONDecoder().raw_decode(text[brace:])
    except ValueError as exc:
        raise ParseError(TOOL, 0, "", f"--json output that is not JSON: {exc}") from None
    for line_no, line in enumerate(text[brace + end :].split("\n"), start=1):
        if line.strip():
            notes.append(note(line_no, line))
    if not isinstance(doc, dict):
        raise ParseError(TOOL, 0, "", "--json output that is not an object")
    status = doc.get("status") or {}
    code = int(status.get("code", 0)) if isinstance(status, dict) else 0
    if code and isinstance(status, dict) and status.get("message"):
        notes.append(f"status {code}: {str(status['message']).strip()}")
    output = (doc.get("result") or {}).get("output") if isinstance(doc.get("result"), dict) else None
    if not isinstance(output, dict):
        return {}, code
    sections: dict[str, dict[str, str]] = {}
    for title, fields in output.items():
        if isinstance(fields, dict):
            sections[str(title)] = {str(k): _json_value(v) for k, v in fields.items()}
    return sections, code


def _json_value(value: Any) -> str:
    if isinstance(value, dict) and "values" in value:
        values = value["values"]
        return ",".join(str(v) for v in values) if isinstance(values, list) else str(values)
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value).strip()


def _get(kinds: Mapping[str, list[dict[str, str]]], prefix: str, *keys: str) -> str | None:
    """The first of ``keys`` with a value (not N/A) in the sections whose title starts with ``prefix``."""
    for fields in kinds.get(prefix, ()):
        for key in keys:
            value = fields.get(key)
            if value is not None:
                value = value.strip()
                if value and value != "N/A":
                    return value
    return None


def _int(text: str | None) -> int | None:
    number = _float(text)
    return None if number is None else int(number)


def _float(text: str | None) -> float | None:
    """The number a value starts with (``720.0``, ``2 [0..3]`` -> 2.0); None when it starts with none."""
    if text is None:
        return None
    text = text.strip()
    if text[-1:].isdigit() and "_" not in text:  # a plain number (float() would also take "1_0", "inf")
        try:
            return float(text)
        except ValueError:
            pass
    m = _NUMBER.match(text)
    return float(m.group(0)) if m else None


def _lanes(text: str | None) -> tuple[int, ...]:
    if text is None:
        return ()
    return tuple(int(float(n)) for n in re.findall(r"\d+(?:\.\d+)?", text))


def _range(text: str | None) -> tuple[float | None, float | None]:
    """``45 [-5..75]`` -> (45.0, 75.0); a placeholder range (``[0..0]``, ``[-40..-40]``) gives no threshold."""
    if text is None:
        return None, None
    m = _RANGE.match(text)
    if not m:
        return _float(text), None
    low, high = float(m.group(2)), float(m.group(3))
    return _float(m.group(1)), high if high > low else None


_OPERATIONAL = "Operational Info"
_TROUBLESHOOTING = "Troubleshooting Info"
_TOOL = "Tool Information"
_COUNTERS = "Physical Counters"
_MODULE = "Module Info"
# the fields _typed reads, by the title prefix of their section
_READ: tuple[tuple[str, tuple[str, ...]], ...] = (
    (_OPERATIONAL, ("State", "Physical state", "Speed", "Width")),
    (_TROUBLESHOOTING, ("Status Opcode", "Recommendation")),
    (_TOOL, ("Firmware Version",)),
    (
        _COUNTERS,
        (
            "Time Since Last Clear [Min]", "Effective Physical BER", "Raw Physical BER", "Symbol BER",
            "Effective Physical Errors", "Symbol Errors", "Raw Physical Errors Per Lane", "Link Down Counter",
            "Link Error Recovery Counter",
        ),
    ),
    (
        _MODULE,
        (
            "Cable Type", "Cable Technology", "Transfer Distance [m]", "Length [m]", "SMF Length", "SMF Length [m]",
            "Temperature [C]", "Temperature", "Identifier", "Vendor Name", "Vendor Part Number",
            "Vendor Serial Number", "FW Version",
        ),
    ),
)  # fmt: skip


def _key_alternation(keys: tuple[str, ...]) -> str:
    """``K(?:ey|ind)|...``: alternatives grouped by first character (the engine rejects a line at once)."""
    first: dict[str, list[str]] = {}
    for key in sorted(keys, key=len, reverse=True):
        first.setdefault(key[0], []).append(key[1:])
    return "|".join(re.escape(c) + "(?:" + "|".join(map(re.escape, rest)) + ")" for c, rest in first.items())


# per kind of section, the lines of the fields _typed reads, as _KEY_VALUE reads them (the key whole, up to the
# first colon; the value unstripped: _get strips it); every other line is passed over inside the engine
_FIELDS = tuple(
    (prefix, re.compile(r"\n[ \t]*(" + _key_alternation(keys) + r")[ \t]*:([^\n]*)")) for prefix, keys in _READ
)
_COLONS = itertools.repeat(":")


@functools.lru_cache(maxsize=1024)  # a pure function of a title; a fabric's outputs repeat a dozen titles
def _kind_of(title: str) -> tuple[str, re.Pattern[str]] | None:
    return next((read for read in _FIELDS if title.startswith(read[0])), None)


def _typed_kinds(text: str) -> dict[str, list[dict[str, str]]] | None:
    """Per kind of section :func:`_typed` reads (title prefix), the fields it reads of each such section, as
    :func:`_text_sections` reads them; None when the text is not in the usual layout (the general path then
    reads it, and notes what it reads past). The same on every capture and on their variants
    (tests/unit/probes/test_mstlink_fast_path.py)."""
    chunks = _chunks(text)
    if chunks is None:
        return None
    lines = text.split("\n")
    # every line with no colon is a title or its dashes (or blank): else the line path reads it, as a note
    if len(lines) - lines.count("") - sum(map(str.__contains__, lines, _COLONS)) != 2 * len(chunks):
        return None
    kinds: dict[str, list[dict[str, str]]] = {}
    titles: dict[str, dict[str, str]] = {}
    for title, body in chunks:
        kind = _kind_of(title)
        if kind is None:
            continue
        fields = titles.get(title)
        if fields is None:
            fields = titles[title] = {}
            kinds.setdefault(kind[0], []).append(fields)
        fields.update(kind[1].findall(body))
    return kinds


# the values _typed reads: (title prefix of their section, the keys tried in turn); each named by its first key
_LOOKUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (_MODULE, ("Cable Type",)),
    (_MODULE, ("Cable Technology",)),
    (_MODULE, ("Transfer Distance [m]", "Length [m]")),
    (_MODULE, ("SMF Length", "SMF Length [m]")),
    (_MODULE, ("Temperature [C]", "Temperature")),
    (_MODULE, ("Identifier",)),
    (_MODULE, ("Vendor Name",)),
    (_MODULE, ("Vendor Part Number",)),
    (_MODULE, ("Vendor Serial Number",)),
    (_MODULE, ("FW Version",)),
    (_OPERATIONAL, ("State",)),
    (_OPERATIONAL, ("Physical state",)),
    (_OPERATIONAL, ("Speed",)),
    (_OPERATIONAL, ("Width",)),
    (_TROUBLESHOOTING, ("Status Opcode",)),
    (_TROUBLESHOOTING, ("Recommendation",)),
    (_TOOL, ("Firmware Version",)),
    (_COUNTERS, ("Time Since Last Clear [Min]",)),
    (_COUNTERS, ("Effective Physical BER",)),
    (_COUNTERS, ("Raw Physical BER",)),
    (_COUNTERS, ("Symbol BER",)),
    (_COUNTERS, ("Effective Physical Errors",)),
    (_COUNTERS, ("Symbol Errors",)),
    (_COUNTERS, ("Raw Physical Errors Per Lane",)),
    (_COUNTERS, ("Link Down Counter",)),
    (_COUNTERS, ("Link Error Recovery Counter",)),
)
_SECOND_KEYS = tuple((keys[0], keys[1]) for _prefix, keys in _LOOKUPS if len(keys) > 1)


def _typed_lookups(kinds: Mapping[str, list[dict[str, str]]]) -> dict[str, str]:
    """:func:`_lookups` of :func:`_typed_kinds`' sections (only the fields read, so no two kinds share a key),
    at dict speed where every kind has one section."""
    if any(len(sections) != 1 for sections in kinds.values()):
        return _lookups(kinds)
    merged: dict[str, str] = {}
    for (fields,) in kinds.values():
        merged.update(fields)
    values = {k: v for k, v in zip(merged, map(str.strip, merged.values()), strict=True) if v and v != "N/A"}
    for first, second in _SECOND_KEYS:
        if first not in values and second in values:
            values[first] = values[second]
    return values


def _lookups(kinds: Mapping[str, list[dict[str, str]]]) -> dict[str, str]:
    """Each lookup's value, named by its first key (none where :func:`_get` finds none)."""
    out = {}
    for prefix, keys in _LOOKUPS:
        value = _get(kinds, prefix, *keys)
        if value is not None:
            out[keys[0]] = value
    return out


def _typed(
    values: dict[str, str], has_module: bool, notes: list[str], status: int, every: Mapping[str, dict[str, str]]
) -> MstlinkReading:
    """The reading: typed fields from the lookups' ``values``, ``every`` section kept whole; a module when
    a Module Info section is there."""
    get = values.get
    module = None
    if has_module:
        cable_type = get("Cable Type")
        technology = get("Cable Technology")
        distance = _float(get("Transfer Distance [m]"))
        if not distance:
            distance = _float(get("SMF Length")) or distance
        temperature, high = _range(get("Temperature [C]"))
        module = ModuleInfo(
            medium=cable_medium(cable_type, technology),
            cable_type=cable_type,
            technology=technology,
            identifier=get("Identifier"),
            vendor=get("Vendor Name"),
            part_number=get("Vendor Part Number"),
            serial=get("Vendor Serial Number"),
            length_m=distance,
            temperature_c=temperature,
            temperature_high_c=high,
            firmware=get("FW Version"),
        )
    return MstlinkReading(
        sections=every,
        state=get("State"),
        physical_state=get("Physical state"),
        speed=get("Speed"),
        width=get("Width"),
        status_opcode=_int(get("Status Opcode")),
        recommendation=get("Recommendation"),
        firmware=get("Firmware Version"),
        minutes_since_clear=_float(get("Time Since Last Clear [Min]")),
        effective_ber=parse_ber(get("Effective Physical BER")),
        raw_ber=parse_ber(get("Raw Physical BER")),
        symbol_ber=parse_ber(get("Symbol BER")),
        effective_errors=_int(get("Effective Physical Errors")),
        symbol_errors=_int(get("Symbol Errors")),
        raw_errors_per_lane=_lanes(get("Raw Physical Errors Per Lane")),
        link_down=_int(get("Link Down Counter")),
        link_recoveries=_int(get("Link Error Recovery Counter")),
        module=module,
        notes=tuple(notes),
        status_code=status,
    )
