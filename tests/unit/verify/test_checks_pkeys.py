from __future__ import annotations

from checkkit import example, findings, pairs, perfect, plan_of

from ibprov.clusterspec.types import Endpoint
from ibprov.pkey import PKey
from ibprov.report.model import Severity

PLAN = plan_of(example("qos-partitions"))
NODE01 = PLAN.port_guids[Endpoint("node01", "mlx5_0", 1)] or 0  # compute full, storage/mgmt limited
LOGIN = PLAN.port_guids[Endpoint("login01", "mlx5_0", 1)] or 0  # compute limited, mgmt full
STOR01 = PLAN.port_guids[Endpoint("stor01", "mlx5_0", 1)] or 0


def test_planned_tables_pass_in_any_order() -> None:
    obs = perfect(PLAN)
    obs.pkeys[NODE01] = tuple(reversed(obs.pkeys[NODE01]))
    assert findings(PLAN, obs, "pkey.") == []
    assert set(obs.pkeys[NODE01]) == {0xFFFF, 0x8010, 0x0020, 0x0030}


def test_a_partition_missing_from_a_member_port_is_named() -> None:
    obs = perfect(PLAN)
    obs.pkeys[NODE01] = tuple(k for k in obs.pkeys[NODE01] if k != 0x8010)
    (finding,) = findings(PLAN, obs)
    assert (finding.check, finding.object) == ("pkey.missing", "node01 mlx5_0 port 1")
    assert finding.expected == "0x8010 (compute, full)"
    assert finding.observed.startswith("not in the table (0x0020 (storage, limited), ")


def test_a_port_holding_a_partition_it_is_not_in_is_a_security_finding() -> None:
    obs = perfect(PLAN)
    obs.pkeys[STOR01] += (PKey.from_wire(0x8010),)
    (finding,) = findings(PLAN, obs)
    assert (finding.check, finding.object, finding.severity) == (
        "pkey.extra",
        "stor01 mlx5_0 port 1",
        Severity.SECURITY,
    )
    assert finding.observed == "0x8010 (compute, full) in the table"


def test_full_membership_where_the_plan_says_limited_is_a_security_finding() -> None:
    obs = perfect(PLAN)
    obs.pkeys[LOGIN] = tuple(PKey.from_wire(0x8010) if k == 0x0010 else k for k in obs.pkeys[LOGIN])
    (finding,) = findings(PLAN, obs)
    assert (finding.check, finding.severity) == ("pkey.membership", Severity.SECURITY)
    assert finding.text == "login01 mlx5_0 port 1: planned 0x0010 (compute, limited), found 0x8010 (compute, full)"


def test_limited_membership_where_the_plan_says_full_is_an_error() -> None:
    obs = perfect(PLAN)
    obs.pkeys[NODE01] = tuple(PKey.from_wire(0x0010) if k == 0x8010 else k for k in obs.pkeys[NODE01])
    (finding,) = findings(PLAN, obs)
    assert (finding.check, finding.severity) == ("pkey.membership", Severity.ERROR)


def test_an_unreadable_table_is_not_judged_here() -> None:
    obs = perfect(PLAN)
    del obs.pkeys[NODE01]
    assert findings(PLAN, obs) == []


def test_the_default_partition_counts_like_any_other() -> None:
    obs = perfect(PLAN)
    obs.pkeys[NODE01] = tuple(PKey.from_wire(0x7FFF) if k == 0xFFFF else k for k in obs.pkeys[NODE01])
    assert pairs(PLAN, obs) == {("pkey.membership", "node01 mlx5_0 port 1")}
    assert findings(PLAN, obs)[0].expected == "0xffff (Default, full)"
