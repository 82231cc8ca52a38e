"""Reports of the rack example for the report tests (JSON, JUnit, HTML, console, the CLI, sections): its fabric
section with three findings (a miswire, a counter above its threshold, the standby SM missing), and clean."""

from __future__ import annotations

from checkkit import example, perfect, plan_of, ref, rewire

from ibprov.clusterspec.types import Endpoint
from ibprov.report import Report, SectionReport
from ibprov.verify.fabric.observation import PortRef
from ibprov.verify.fabric.section import check_observation

RACK = plan_of(example("rack"))


def fabric_with_findings() -> SectionReport:
    obs = perfect(RACK)
    rewire(RACK, obs, Endpoint("node01", "mlx5_0", 1), PortRef(RACK.switch_guids["leaf01"] or 0, 9))
    obs.counters[ref(RACK, Endpoint("node02", "mlx5_0", 1))] = {"SymbolErrorCounter": 99}
    obs.sms = [s for s in obs.sms if s.priority != 14]
    return check_observation(RACK, obs, started="2026-12-02T10:00:00Z", duration=1.5, collected_from="this host")


def clean_fabric() -> SectionReport:
    return check_observation(RACK, perfect(RACK), started="2026-12-02T10:00:00Z", collected_from="this host")


def report_of(*sections: SectionReport) -> Report:
    return Report.from_sections(cluster="rack", spec="examples/rack.yaml", sections=sections)


def report_with_findings() -> Report:
    return report_of(fabric_with_findings())


def clean_report() -> Report:
    return report_of(clean_fabric())
