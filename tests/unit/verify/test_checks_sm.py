from __future__ import annotations

import dataclasses

from checkkit import example, findings, pairs, perfect, plan_of, ref

from ibprov.clusterspec.types import Endpoint
from ibprov.report.model import Report, Severity
from ibprov.verify.fabric.observation import Observation, ObservedSm
from ibprov.verify.fabric.section import check_observation

RACK = plan_of(example("rack"))  # sm01 priority 15 (master), sm02 priority 14 (standby)
SM01, SM02 = "sm01 mlx5_0 port 1", "sm02 mlx5_0 port 1"


def _set(obs: Observation, name: str, **changes: object) -> None:
    obs.sms = [dataclasses.replace(s, **changes) if s.port.node_guid == _guid(name) else s for s in obs.sms]  # type: ignore[arg-type]


def _guid(name: str) -> int:
    return ref(RACK, Endpoint(name, "mlx5_0", 1)).node_guid


def _drop(obs: Observation, name: str) -> None:
    obs.sms = [s for s in obs.sms if s.port.node_guid != _guid(name)]


def test_the_planned_master_and_standby_pass() -> None:
    assert findings(RACK, perfect(RACK), "sm.") == []


def test_no_master_at_all_is_critical() -> None:
    obs = perfect(RACK)
    _set(obs, "sm01", state="STANDBY")
    (finding,) = findings(RACK, obs, "sm.")
    assert (finding.check, finding.severity) == ("sm.master", Severity.CRITICAL)
    assert finding.expected == f"{SM01} MASTER (priority 15)"
    assert finding.observed.startswith("no MASTER (")


def test_two_masters_are_critical_and_named() -> None:
    obs = perfect(RACK)
    _set(obs, "sm02", state="MASTER")
    (finding,) = findings(RACK, obs, "sm.master")
    assert finding.observed == f"2 MASTERs: {SM01} MASTER (priority 15) and {SM02} MASTER (priority 14)"


def test_a_lower_priority_master_while_the_planned_one_runs_is_critical() -> None:
    obs = perfect(RACK)
    _set(obs, "sm01", state="STANDBY")
    _set(obs, "sm02", state="MASTER")
    assert pairs(RACK, obs, "sm.") == {("sm.master", "fabric")}
    assert findings(RACK, obs, "sm.")[0].observed == f"{SM02} MASTER (priority 14) while the planned master is STANDBY"


def test_after_failover_the_standby_as_master_passes_and_the_stopped_sm_is_a_warning() -> None:
    obs = perfect(RACK)
    _drop(obs, "sm01")
    _set(obs, "sm02", state="MASTER")
    (finding,) = findings(RACK, obs)
    assert (finding.check, finding.object, finding.severity) == ("sm.standby_missing", SM01, Severity.WARNING)
    assert finding.observed == f"not running; {SM02} took over as MASTER (failover the plan allows)"
    report = check_observation(RACK, obs)
    assert report.exit_code == 0
    assert report.facts.as_dict()["master_sm"]["object"] == SM02
    assert Report.from_sections(cluster="c", spec="", sections=[report]).summary.startswith(
        "PASS with 1 finding (1 warning)"
    )


def test_a_planned_standby_that_is_not_running_is_an_error() -> None:
    obs = perfect(RACK)
    _drop(obs, "sm02")
    (finding,) = findings(RACK, obs)
    assert (finding.check, finding.object, finding.severity) == ("sm.standby_missing", SM02, Severity.ERROR)
    assert finding.text == f"{SM02}: planned STANDBY (priority 14), found no SM running on this port"


def test_a_standby_stuck_discovering_is_an_error() -> None:
    obs = perfect(RACK)
    _set(obs, "sm02", state="DISCOVER")
    assert findings(RACK, obs)[0].observed == "DISCOVER (priority 14)"


def test_an_sm_on_a_node_the_plan_does_not_name_is_a_rogue_security_finding() -> None:
    obs = perfect(RACK)
    node03 = ref(RACK, Endpoint("node03", "mlx5_0", 1))
    guid, lid = obs.nodes[node03.node_guid].ports[1]
    obs.sms.append(ObservedSm(node03, guid or 0, lid or 0, 15, "STANDBY"))
    (finding,) = findings(RACK, obs)
    assert (finding.check, finding.object, finding.severity) == ("sm.rogue", "node03 mlx5_0 port 1", Severity.SECURITY)
    assert finding.observed.startswith("STANDBY SM with priority 15 (port GUID 0x0c42a10300d8e3f0")


def test_a_rogue_master_is_both_a_rogue_and_a_master_finding() -> None:
    obs = perfect(RACK)
    _set(obs, "sm01", state="STANDBY")
    node03 = ref(RACK, Endpoint("node03", "mlx5_0", 1))
    obs.sms.append(ObservedSm(node03, 0x0C42A10300D8E3F0, 7, 15, "MASTER"))
    assert pairs(RACK, obs) == {("sm.rogue", "node03 mlx5_0 port 1"), ("sm.master", "fabric")}
    assert findings(RACK, obs)[0].check == "sm.master"  # critical first


def test_a_planned_sm_with_another_priority_is_a_priority_finding() -> None:
    obs = perfect(RACK)
    _set(obs, "sm02", priority=3)
    assert pairs(RACK, obs) == {("sm.priority", SM02)}
    assert findings(RACK, obs)[0].text == f"{SM02}: planned priority 14, found priority 3"
