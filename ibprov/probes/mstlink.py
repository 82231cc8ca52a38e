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

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from ibprov.probes._text import ParseError, note

__all__ = ["ModuleInfo", "MstlinkReading", "cable_medium", "parse_ber", "parse_mstlink"]

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

    sections: dict[str, dict[str, str]]
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
    """Read one port's output (text or ``--json``); raises :class:`ParseError` on output with no section."""
    clean = _ANSI.sub("", text) if "\x1b" in text else text
    notes: list[str] = []
    brace = clean.find("{")
    status = 0
    if brace >= 0 and (not clean[:brace].strip() or '"result"' in clean[brace:]):
        sections, status = _json_sections(clean, brace, notes)
    else:
        sections = _text_sections(clean, notes)
    if not sections:
        raise ParseError(TOOL, 0, "", "no section (expected 'Operational Info' and its dashes, or --json output)")
    return _typed(sections, notes, status)


# the usual layout, read at C speed where it can be (a large fabric's outputs are read in seconds): each title
# over its row of dashes, then key : value lines; anything else takes the line-by-line path below
_DASH_LINE = re.compile(r"\n[ \t]*-{3,}[ \t]*(?=\n|$)")
_KEY_VALUE = re.compile(r"^[ \t]*([^\n:]*?)[ \t]*:[ \t]*(.*?)[ \t]*$", re.M)


def _text_sections(text: str, notes: list[str]) -> dict[str, dict[str, str]]:
    chunks = _DASH_LINE.split(text)
    if len(chunks) < 2 or (("-E-" in text or "-W-" in text or "-I-" in text) and _MESSAGE.search(text)):
        return _line_sections(text, notes)
    head, _, title = chunks[0].rstrip().rpartition("\n")
    if head.strip():
        return _line_sections(text, notes)
    sections: dict[str, dict[str, str]] = {}
    for chunk in chunks[1:]:
        body, _, following = chunk.rstrip().rpartition("\n") if chunk is not chunks[-1] else (chunk, "", "")
        title = title.strip()
        if not title or ":" in title:
            return _line_sections(text, notes)
        found = _KEY_VALUE.findall(body)
        if len(found) != sum(1 for line in body.split("\n") if line.strip()):
            return _line_sections(text, notes)  # a line that is no field: read line by line, as a note
        fields = sections.setdefault(title, {})
        for key, value in found:
            fields[key] = value
        title = following
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


def _get(sections: dict[str, dict[str, str]], prefix: str, *keys: str) -> str | None:
    for title, fields in sections.items():
        if not title.startswith(prefix):
            continue
        for key in keys:
            value = fields.get(key)
            if value is not None:
                value = value.strip()
                if value and value != "N/A":
                    return value
    return None


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    m = _NUMBER.match(text.strip())
    return int(float(m.group(0))) if m else None


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    m = _NUMBER.match(text.strip())
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


_COUNTERS = "Physical Counters"
_MODULE = "Module Info"


def _typed(sections: dict[str, dict[str, str]], notes: list[str], status: int) -> MstlinkReading:
    module = None
    if any(t.startswith(_MODULE) for t in sections):
        cable_type = _get(sections, _MODULE, "Cable Type")
        technology = _get(sections, _MODULE, "Cable Technology")
        distance = _float(_get(sections, _MODULE, "Transfer Distance [m]", "Length [m]"))
        if not distance:
            distance = _float(_get(sections, _MODULE, "SMF Length", "SMF Length [m]")) or distance
        temperature, high = _range(_get(sections, _MODULE, "Temperature [C]", "Temperature"))
        module = ModuleInfo(
            medium=cable_medium(cable_type, technology),
            cable_type=cable_type,
            technology=technology,
            identifier=_get(sections, _MODULE, "Identifier"),
            vendor=_get(sections, _MODULE, "Vendor Name"),
            part_number=_get(sections, _MODULE, "Vendor Part Number"),
            serial=_get(sections, _MODULE, "Vendor Serial Number"),
            length_m=distance,
            temperature_c=temperature,
            temperature_high_c=high,
            firmware=_get(sections, _MODULE, "FW Version"),
        )
    return MstlinkReading(
        sections=sections,
        state=_get(sections, "Operational Info", "State"),
        physical_state=_get(sections, "Operational Info", "Physical state"),
        speed=_get(sections, "Operational Info", "Speed"),
        width=_get(sections, "Operational Info", "Width"),
        status_opcode=_int(_get(sections, "Troubleshooting Info", "Status Opcode")),
        recommendation=_get(sections, "Troubleshooting Info", "Recommendation"),
        firmware=_get(sections, "Tool Information", "Firmware Version"),
        minutes_since_clear=_float(_get(sections, _COUNTERS, "Time Since Last Clear [Min]")),
        effective_ber=parse_ber(_get(sections, _COUNTERS, "Effective Physical BER")),
        raw_ber=parse_ber(_get(sections, _COUNTERS, "Raw Physical BER")),
        symbol_ber=parse_ber(_get(sections, _COUNTERS, "Symbol BER")),
        effective_errors=_int(_get(sections, _COUNTERS, "Effective Physical Errors")),
        symbol_errors=_int(_get(sections, _COUNTERS, "Symbol Errors")),
        raw_errors_per_lane=_lanes(_get(sections, _COUNTERS, "Raw Physical Errors Per Lane")),
        link_down=_int(_get(sections, _COUNTERS, "Link Down Counter")),
        link_recoveries=_int(_get(sections, _COUNTERS, "Link Error Recovery Counter")),
        module=module,
        notes=tuple(notes),
        status_code=status,
    )
