"""Runs for the history tests, built from the real report model (``to_dict`` of a :class:`Report`), so that
they follow report.json's schema: a fabric section (real :class:`FabricFacts`, with error counters and a
master SM), a perf section (its facts given as a schema-valid dict), each at a time counted in hours from T0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from ibprov.report.json_report import to_dict
from ibprov.report.model import CheckResult, Finding, Report, SectionReport, Severity
from ibprov.verify.fabric.facts import FabricFacts, SmFacts

REPO = Path(__file__).resolve().parents[3]
RACK = REPO / "examples" / "rack.yaml"
T0 = datetime(2026, 12, 1, 0, 0, 0, tzinfo=UTC)
SM01 = ("sm01 mlx5_0 port 1", 0x0C42A10300D8E2A0)
SM02 = ("sm02 mlx5_0 port 1", 0x0C42A10300D8E2B4)
FABRIC_CHECKS = ("cabling.miswire", "counters.threshold", "link.down", "sm.standby_missing")
PERF_CHECKS = ("perf.bandwidth",)
Counters = Mapping[str, Mapping[str, int]]  # port -> counter -> value


def when(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def finding(check: str, obj: str, severity: str = "error") -> Finding:
    return Finding(check, Severity(severity), obj, "as planned", "something else", "fix it")


def _checks(ids: Sequence[str], findings: Sequence[Finding]) -> tuple[CheckResult, ...]:
    out = []
    for check_id in dict.fromkeys([*ids, *(f.check for f in findings)]):
        mine = tuple(f for f in findings if f.check == check_id)
        objects = tuple(dict.fromkeys([*(f.object for f in mine), "node01 mlx5_0 port 1"]))
        out.append(CheckResult(check_id, f"title of {check_id}", objects, mine))
    return tuple(out)


def fabric_section(
    hours: float,
    findings: Sequence[Finding] = (),
    *,
    counters: Counters | None = None,
    master: tuple[str, int] | None = SM01,
    checks: Sequence[str] = FABRIC_CHECKS,
    duration: float = 60.0,
) -> SectionReport:
    sms = ()
    if master is not None:
        sms = (SmFacts(master[0], master[1], 1, 15, "MASTER", True),)
    facts = FabricFacts(
        switches=1,
        channel_adapters=6,
        links=6,
        subnet_managers=sms,
        counters=tuple(sorted((port, tuple(sorted(values.items()))) for port, values in (counters or {}).items())),
    )
    return SectionReport("fabric", "Fabric", "this host", iso(when(hours)), duration, _checks(checks, findings), facts)


@dataclass(frozen=True)
class DictFacts:
    """Section facts given as their report.json dict (the perf section's: a schema-valid dict)."""

    data: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.data))

    def lines(self) -> list[str]:
        return ["facts"]


def pair_result(
    client: str,
    server: str,
    value: float | None,
    *,
    status: str = "ok",
    limit: float | None = 180.0,
    test: str = "ib_write_bw 8MiB",
    unit: str = "Gb/s",
) -> dict[str, Any]:
    return {
        "client": client,
        "server": server,
        "test": test,
        "round": 1,
        "status": status,
        "value": value,
        "unit": unit,
        "limit": limit,
        "reason": "" if status == "ok" else "it did not run",
        "attempts": 1,
        "seconds": 5.0,
    }


def perf_facts(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by = {s: sum(1 for r in results if r["status"] == s) for s in ("ok", "failed", "skipped")}
    return {
        "schedule": {
            "kind": "all-pairs",
            "rounds": 1,
            "pairs": len(results),
            "routes": "",
            "coverage_percent": None,
            "lower_bound": None,
        },
        "nodes": 4,
        "nodes_reached": 4,
        "nodes_with_rdma": 4,
        "runs": by,
        "tcp": {"ok": 0, "failed": 0, "skipped": 0},
        "results": list(results),
        "tcp_results": [],
    }


def perf_section(
    hours: float,
    findings: Sequence[Finding] = (),
    *,
    results: Sequence[Mapping[str, Any]] = (),
    checks: Sequence[str] = PERF_CHECKS,
    skipped: Sequence[str] = (),
) -> SectionReport:
    """``skipped``: check ids whose every object was skipped (status ``skipped``)."""
    judged = _checks(checks, findings)
    skips = tuple(
        CheckResult(c, f"title of {c}", ("a1 mlx5_0",), skipped=(("a1 mlx5_0", "no RDMA device"),)) for c in skipped
    )
    return SectionReport(
        "perf", "Performance", "each host", iso(when(hours)), 30.0, judged + skips, DictFacts(perf_facts(results))
    )


PHYSICAL_CHECKS = ("phy.ber_effective", "phy.ber_raw", "phy.module_temperature")
NO_ERRORS = 15e-255  # mstlink's BER when it counted no error


def cable_end(
    port: str,
    *,
    effective_ber: float | None = NO_ERRORS,
    raw_ber: float | None = NO_ERRORS,
    temperature_c: float | None = 40.0,
    read: bool = True,
) -> dict[str, Any]:
    """One end of a cable report row (verify --physical's facts), as report.json holds it."""
    module = {
        "medium": "aoc",
        "cable_type": "Active optical cable",
        "technology": "850 nm VCSEL",
        "length_m": 10.0,
        "vendor": "NVIDIA",
        "part_number": "MFS1S00-H010V",
        "serial": "MT2218X00001",
        "temperature_c": temperature_c,
        "effective_ber": effective_ber,
        "raw_ber": raw_ber,
    }
    return {"port": port, "read": read, "why": "" if read else "the host did not answer"} | {
        key: value if read else None for key, value in module.items()
    }


def cable_row(a: Mapping[str, Any], b: Mapping[str, Any], status: str = "as planned") -> dict[str, Any]:
    planned = {"medium": "aoc", "max_length_m": None, "part_numbers": [], "vendors": [], "from": "spec",
               "speed": "HDR", "width": "4x"}  # fmt: skip
    differences = [f"{a['port']}: 30 m > 10 m"] if status == "not as planned" else []
    return {
        "link": f"{a['port']} <-> {b['port']}",
        "tier": "host-leaf",
        "planned": planned,
        "ends": [dict(a), dict(b)],
        "status": status,
        "differences": differences,
    }


def physical_section(
    hours: float,
    findings: Sequence[Finding] = (),
    *,
    cables: Sequence[Mapping[str, Any]] = (),
    ports_read: int | None = None,
) -> SectionReport:
    """verify --physical's section: its facts the cable report ``cables`` (ports_read: the ends read, unless
    given)."""
    ends = [e for row in cables for e in row["ends"]]
    facts = {
        "ports_planned": len(ends),
        "ports_read": sum(1 for e in ends if e["read"]) if ports_read is None else ports_read,
        "hcas_planned": 0,
        "hcas_read": 0,
        "cables": list(cables),
    }
    return SectionReport(
        "physical", "Physical layer", "each host", iso(when(hours)), 20.0, _checks(PHYSICAL_CHECKS, findings),
        DictFacts(facts),
    )  # fmt: skip


def report_of(*sections: SectionReport, cluster: str = "rack1") -> Report:
    return Report.from_sections(cluster=cluster, spec=str(RACK), sections=sections)


def run(*sections: SectionReport, cluster: str = "rack1") -> dict[str, Any]:
    """report.json's dict of a run of these sections."""
    return to_dict(report_of(*sections, cluster=cluster))


def fabric_run(hours: float, findings: Sequence[Finding] = (), **options: Any) -> dict[str, Any]:
    """A run of the fabric section that started ``hours`` after T0 (options: :func:`fabric_section`'s)."""
    return run(fabric_section(hours, findings, **options))


@cache
def _validator() -> Any:
    import jsonschema

    from ibprov.verify.registry import report_schema

    return jsonschema.Draft202012Validator(report_schema(), format_checker=jsonschema.FormatChecker())


def valid(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data`` after checking it against report.json's schema."""
    _validator().validate(data)
    return data


# ------------------------------------------------------------------------------------------------ metrics text
_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})\{{(.*)\}} (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
_META = re.compile(rf"^# (HELP|TYPE) ({_NAME}) (.*)$")


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class Parsed:
    help: dict[str, str]
    type: dict[str, str]
    samples: list[Sample]

    def of(self, name: str, **labels: str) -> list[Sample]:
        """The samples of ``name`` whose labels include ``labels``."""
        return [s for s in self.samples if s.name == name and labels.items() <= s.labels.items()]

    def value(self, name: str, **labels: str) -> float:
        (sample,) = self.of(name, **labels)
        return sample.value


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "\\": "\\", '"': '"'}[m[1]], text)


def _labels(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = _LABEL.match(text, pos)
        assert m, f"bad label set at {text[pos:]!r}"
        assert m[1] not in out, f"label {m[1]} twice"
        out[m[1]] = _unescape(m[2])
        pos = m.end()
        if pos < len(text):
            assert text[pos] == ",", f"no comma at {text[pos:]!r}"
            pos += 1
    return out


def parse_metrics(text: str) -> Parsed:
    """OpenMetrics text as the textfile collector reads it (gauges with labels): each metric's HELP and TYPE
    once, before its samples, its samples together, ``# EOF`` last; a failed assertion for anything else."""
    assert text.endswith("# EOF\n"), "the text ends with # EOF"
    helps: dict[str, str] = {}
    types: dict[str, str] = {}
    samples: list[Sample] = []
    done: set[str] = set()
    current = ""
    for line in text.splitlines()[:-1]:
        meta = _META.match(line)
        if meta:
            kind, name, rest = meta.groups()
            table = helps if kind == "HELP" else types
            assert name not in table, f"{kind} of {name} twice"
            table[name] = rest
            if name != current:
                assert name not in done, f"{name}'s samples are not together"
                done.add(current)
                current = name
            continue
        m = _SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        name, labels, value = m.groups()
        assert name == current, f"{name}: a sample not after its HELP and TYPE, or apart from its others"
        assert name in types, f"{name}: a sample without a TYPE"
        assert name in helps, f"{name}: a sample without a HELP"
        samples.append(Sample(name, _labels(labels), float(value)))
    return Parsed(helps, types, samples)
