from __future__ import annotations

import re

from checkkit import EXAMPLES, example, findings, perfect, plan_of, plan_text, ref

from ibprov.clusterspec.types import Endpoint
from ibprov.verify.fabric.observation import Soak

RACK = plan_of(example("rack"))
NODE02 = Endpoint("node02", "mlx5_0", 1)
LEAF04 = Endpoint("leaf01", None, 4)


def test_counters_above_their_threshold_are_one_finding_per_port() -> None:
    obs = perfect(RACK)
    obs.counters[ref(RACK, NODE02)] = {"SymbolErrorCounter": 42, "LinkDownedCounter": 11, "PortXmitWait": 5}
    (finding,) = findings(RACK, obs)
    assert finding.check == "counters.threshold"
    assert finding.object == "node02 mlx5_0 port 1"
    assert finding.expected == "LinkDownedCounter <= 10, SymbolErrorCounter <= 10"
    assert finding.observed == "LinkDownedCounter = 11, SymbolErrorCounter = 42"


def test_a_counter_at_its_threshold_passes() -> None:
    obs = perfect(RACK)
    obs.counters[ref(RACK, LEAF04)] = {"SymbolErrorCounter": 10, "PortXmitDiscards": 100}
    assert findings(RACK, obs) == []


def test_counters_without_a_threshold_are_not_judged() -> None:
    obs = perfect(RACK)
    obs.counters[ref(RACK, NODE02)] = {"PortXmitConstraintErrors": 200, "QP1Dropped": 9}
    assert findings(RACK, obs) == []


def test_thresholds_from_the_spec_override_the_defaults() -> None:
    text = (EXAMPLES / "rack.yaml").read_text() + "acceptance:\n  error_thresholds: {SymbolErrorCounter: 0}\n"
    plan = plan_text(text)
    obs = perfect(plan)
    obs.counters[ref(plan, LEAF04)] = {"SymbolErrorCounter": 1, "LinkDownedCounter": 10}
    (finding,) = findings(plan, obs)
    assert (finding.object, finding.observed) == ("leaf01 port 4", "SymbolErrorCounter = 1")


def test_any_rise_of_a_link_health_counter_during_the_soak_is_reported_with_its_rate() -> None:
    obs = perfect(RACK)
    obs.soak = Soak(30.0, {ref(RACK, LEAF04): {"SymbolErrorCounter": 3, "PortXmitWait": 999}})
    (finding,) = findings(RACK, obs)
    assert finding.check == "counters.soak_rate"
    assert finding.object == "leaf01 port 4"
    assert finding.expected == "SymbolErrorCounter +0 in 30 s"
    assert finding.observed == "SymbolErrorCounter +3 (0.10/s)"


def test_congestion_counters_during_the_soak_fail_only_above_their_threshold() -> None:
    obs = perfect(RACK)
    obs.soak = Soak(10.0, {ref(RACK, NODE02): {"PortXmitWait": 1001, "PortXmitDiscards": 50}})
    (finding,) = findings(RACK, obs)
    assert finding.expected == "PortXmitWait +1000 at most in 10 s"
    assert re.fullmatch(r"PortXmitWait \+1001 \(100\.10/s\)", finding.observed)


def test_without_a_soak_there_is_no_soak_check_object() -> None:
    from ibprov.verify.fabric.checks import FAMILIES
    from ibprov.verify.judge import run_checks

    (soak,) = [r for r in run_checks(FAMILIES, RACK, perfect(RACK)) if r.id == "counters.soak_rate"]
    assert soak.objects == ()
