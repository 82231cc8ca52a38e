from __future__ import annotations

from checkkit import example, findings, pairs, perfect, plan_of

from ibprov.clusterspec.types import Endpoint
from ibprov.verify.fabric.checks import FAMILIES
from ibprov.verify.fabric.checks.qos import arb_matches
from ibprov.verify.judge import run_checks

PLAN = plan_of(example("qos-partitions"))  # sl2vl 0..7,0..6,15; vlarb_high 2:64; vlarb_low 0:32,1:64,...
NODE02 = PLAN.port_guids[Endpoint("node02", "mlx5_0", 1)] or 0


def test_planned_qos_tables_pass() -> None:
    assert findings(PLAN, perfect(PLAN), "qos.") == []


def test_a_different_sl2vl_table_names_both_tables() -> None:
    obs = perfect(PLAN)
    obs.sl2vl[NODE02] = (1, 0, *obs.sl2vl[NODE02][2:])
    (finding,) = findings(PLAN, obs)
    assert (finding.check, finding.object) == ("qos.sl2vl", "node02 mlx5_0 port 1")
    assert finding.expected == "SL0-15 -> VL 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,15"
    assert finding.observed == "SL0-15 -> VL 1,0,2,3,4,5,6,7,0,1,2,3,4,5,6,15"


def test_a_different_vl_arbitration_weight_is_a_vlarb_finding() -> None:
    obs = perfect(PLAN)
    high, low = obs.vlarb[NODE02]
    obs.vlarb[NODE02] = (((2, 32), *high[1:]), low)
    (finding,) = findings(PLAN, obs)
    assert finding.text == "node02 mlx5_0 port 1: planned high 2:64, found high 2:32"


def test_vlarb_entries_after_the_planned_ones_must_have_weight_zero() -> None:
    assert arb_matches([(2, 64)], [(2, 64), (0, 0), (0, 0)])
    assert not arb_matches([(2, 64)], [(2, 64), (3, 8)])
    assert not arb_matches([(2, 64)], [])


def test_without_qos_in_the_plan_the_qos_checks_examine_nothing() -> None:
    rack = plan_of(example("rack"))
    results = {r.id: r for r in run_checks(FAMILIES, rack, perfect(rack))}
    assert results["qos.sl2vl"].objects == ()
    assert results["qos.vlarb"].objects == ()
    assert pairs(rack, perfect(rack), "qos.") == set()
