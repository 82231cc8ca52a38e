"""What ``verify --physical`` reports besides its checks: how much of the physical layer was read, and the
cable report: every planned link, planned against found at both ends (medium, length, vendor and part,
serial, temperature, BER). report.json carries it whole; the HTML report shows it as a table;
``ibprov report cables`` writes it as CSV or JSON for the cabling contractor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ibprov.probes.mstlink import MstlinkReading
from ibprov.report.model import Table
from ibprov.verify.physical.checks import ber_text, cable_differences, hca_devices, port_readings
from ibprov.verify.physical.observation import PhysicalObservation, PortReading
from ibprov.verify.physical.plan import PhysicalPlan, PlannedCable, PlannedPort

__all__ = ["CABLE_COLUMNS", "SCHEMA", "PhysicalFacts", "cable_rows", "cable_table", "physical_facts"]

_COUNT = {"type": "integer", "minimum": 0}
_TEXT_OR_NULL = {"type": ["string", "null"]}
_NUM_OR_NULL = {"type": ["number", "null"]}
_END = {
    "type": "object",
    "required": ["port", "read", "why"],
    "properties": {
        "port": {"type": "string"},
        "read": {"type": "boolean"},
        "why": {"type": "string"},
        "medium": _TEXT_OR_NULL,
        "cable_type": _TEXT_OR_NULL,
        "technology": _TEXT_OR_NULL,
        "length_m": _NUM_OR_NULL,
        "vendor": _TEXT_OR_NULL,
        "part_number": _TEXT_OR_NULL,
        "serial": _TEXT_OR_NULL,
        "temperature_c": _NUM_OR_NULL,
        "effective_ber": _NUM_OR_NULL,
        "raw_ber": _NUM_OR_NULL,
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ports_planned", "ports_read", "hcas_planned", "hcas_read", "cables"],
    "additionalProperties": False,
    "properties": {
        "ports_planned": _COUNT,
        "ports_read": _COUNT,
        "hcas_planned": _COUNT,
        "hcas_read": _COUNT,
        "skipped_because": {"type": "string"},
        "cables": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["link", "tier", "planned", "ends", "status"],
                "properties": {
                    "link": {"type": "string"},
                    "tier": {"type": "string"},
                    "planned": {"type": "object"},
                    "ends": {"type": "array", "items": _END},
                    "status": {"enum": ["as planned", "not as planned", "not read"]},
                    "differences": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}


def _end(p: PlannedPort, r: MstlinkReading, why: str) -> dict[str, Any]:
    """One end that was read: what it found."""
    m = r.module
    return {
        "port": p.name,
        "read": True,
        "why": why,
        "medium": m.medium if m else None,
        "cable_type": m.cable_type if m else None,
        "technology": m.technology if m else None,
        "length_m": m.length_m if m else None,
        "vendor": m.vendor if m else None,
        "part_number": m.part_number if m else None,
        "serial": m.serial if m else None,
        "temperature_c": m.temperature_c if m else None,
        "effective_ber": r.effective_ber,
        "raw_ber": r.raw_ber,
    }


def _planned(cable: PlannedCable) -> dict[str, Any]:
    return {
        "medium": cable.medium,
        "max_length_m": cable.max_length_m,
        "part_numbers": list(cable.part_numbers),
        "vendors": list(cable.vendors),
        "from": cable.medium_from,
        "speed": str(cable.speed),
        "width": str(cable.width),
    }


def cable_rows(plan: PhysicalPlan, obs: PhysicalObservation) -> list[dict[str, Any]]:
    """Every planned cable: planned, found at each end, and whether it is as planned. Cables planned alike
    share one ``planned`` dict (read-only: the rows are rendered, never changed)."""
    readings: dict[str, tuple[PlannedPort, PortReading]] = port_readings(plan, obs) if plan.twin is None else {}
    get = readings.get
    not_read = plan.twin or "not read (no host or switch read)"
    switch_why = plan.twin or obs.switches_not_read or not_read
    planned_alike: dict[tuple[Any, ...], dict[str, Any]] = {}
    rows = []
    for cable, ports in zip(plan.cables, plan.cable_ports, strict=True):
        out_ends = []
        differences: list[str] = []
        modules = 0
        for p in ports:
            got = get(p.name)
            r = got[1].reading if got is not None else None
            if r is None:
                why = got[1].why if got is not None else switch_why if p.end.hca is None else not_read
                out_ends.append({"port": p.name, "read": False, "why": why})  # nothing found to show
                continue
            out_ends.append(_end(p, r, got[1].why if got is not None else ""))
            if r.module is not None:
                modules += 1
                differences += [f"{p.name}: {d}" for d in cable_differences(cable, r.module)]
        key = cable[3:]  # all but the link and its ends
        planned = planned_alike.get(key)
        if planned is None:
            planned = planned_alike[key] = _planned(cable)
        rows.append(
            {
                "link": cable.link,
                "tier": cable.tier,
                "planned": planned,
                "ends": out_ends,
                "status": "not read" if not modules else "not as planned" if differences else "as planned",
                "differences": differences,
            }
        )
    return rows


CABLE_COLUMNS = (
    "link",
    "tier",
    "planned",
    "status",
    "end A",
    "A found",
    "A serial",
    "A temp C",
    "A eff BER",
    "A raw BER",
    "end B",
    "B found",
    "B serial",
    "B temp C",
    "B eff BER",
    "B raw BER",
    "differences / why not read",
)


def _num(value: Any) -> str:
    return "" if value is None else f"{value:g}"


def _end_cells(end: dict[str, Any]) -> tuple[str, ...]:
    if not end["read"]:
        return (end["port"], "not read", "", "", "", "")
    found = "no module info" if end["cable_type"] is None and end["vendor"] is None else module_text_of(end)
    ber = ber_text(end["effective_ber"]) if end["effective_ber"] is not None else ""
    raw = ber_text(end["raw_ber"]) if end["raw_ber"] is not None else ""
    return (end["port"], found, end["serial"] or "", _num(end["temperature_c"]), ber, raw)


def module_text_of(end: dict[str, Any]) -> str:
    kind = " / ".join(x for x in (end["cable_type"], end["technology"]) if x) or "unidentified"
    length = f", {end['length_m']:g} m" if end["length_m"] is not None else ""
    who = " ".join(x for x in (end["vendor"], end["part_number"]) if x)
    return f"{kind}{length}" + (f", {who}" if who else "")


def _planned_text(planned: dict[str, Any]) -> str:
    parts = [planned["medium"] or "any"]
    if planned["max_length_m"] is not None:
        parts.append(f"{planned['max_length_m']:g} m")
    parts += planned["part_numbers"] + planned["vendors"]
    return " ".join(parts)


def cable_table(rows: list[dict[str, Any]]) -> Table:
    """The cable report as a table (HTML, CSV)."""
    out, status = [], []
    for row in rows:
        a, b = row["ends"]
        why = "; ".join(row["differences"]) or "; ".join(e["why"] for e in row["ends"] if e["why"] and not e["read"])
        out.append(
            (
                row["link"],
                row["tier"],
                _planned_text(row["planned"]),
                row["status"],
                *_end_cells(a),
                *_end_cells(b),
                why,
            )
        )
        status.append({"as planned": "pass", "not as planned": "fail"}.get(row["status"], "skipped"))
    return Table("Cables: planned against found", CABLE_COLUMNS, tuple(out), tuple(status))


@dataclass(frozen=True)
class PhysicalFacts:
    ports_planned: int
    ports_read: int
    hcas_planned: int
    hcas_read: int
    cables: tuple[dict[str, Any], ...]
    skipped_because: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ports_planned": self.ports_planned,
            "ports_read": self.ports_read,
            "hcas_planned": self.hcas_planned,
            "hcas_read": self.hcas_read,
            "cables": list(self.cables),
        }
        if self.skipped_because:
            out["skipped_because"] = self.skipped_because
        return out

    def lines(self) -> list[str]:
        if self.skipped_because:
            return [f"skipped: {self.skipped_because}"]
        as_planned = sum(1 for c in self.cables if c["status"] == "as planned")
        wrong = sum(1 for c in self.cables if c["status"] == "not as planned")
        return [
            f"{self.ports_read} of {self.ports_planned} ports read",
            f"{self.hcas_read} of {self.hcas_planned} HCAs read",
            f"cables: {as_planned} as planned, {wrong} not, {len(self.cables) - as_planned - wrong} not read",
        ]

    def report_tables(self) -> list[Table]:
        return [cable_table(list(self.cables))] if self.cables and not self.skipped_because else []


def physical_facts(plan: PhysicalPlan, obs: PhysicalObservation) -> PhysicalFacts:
    if plan.twin is not None:
        return PhysicalFacts(len(plan.ports), 0, len(plan.hcas), 0, tuple(cable_rows(plan, obs)), plan.twin)
    read = sum(1 for _p, r in port_readings(plan, obs).values() if r.reading is not None)  # tried and read
    hcas = sum(1 for _h, dev, _why in hca_devices(plan, obs) if dev is not None)
    return PhysicalFacts(len(plan.ports), read, len(plan.hcas), hcas, tuple(cable_rows(plan, obs)))
