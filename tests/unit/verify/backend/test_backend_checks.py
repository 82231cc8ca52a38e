"""verify --backend judges the back end's own view (hand-built states here) against the plan: in sync is no
finding; each kind of drift is exactly its finding; an unanswered back end is one finding and nothing else is
judged; prune turns an unplanned partition into an error; the switch's SM off or at another priority is found."""

from __future__ import annotations

from dataclasses import replace

from ibprov.report.model import Finding, SectionReport, Severity
from ibprov.smbackend.state import BackendState, PartitionState, SmState
from ibprov.verify.backend.observation import BackendView
from ibprov.verify.backend.plan import BackendCheckPlan
from ibprov.verify.backend.section import check_backend

SWITCH_CARRIED = ("name", "ipoib", "members")
UFM_CARRIED = ("ipoib", "members", "mtu", "rate", "sl")
A, B, C = 0x0C42A10300B7E014, 0x0C42A10300B7E028, 0x0C42A10300B7E03C

COMPUTE = PartitionState(0x10, "compute", True, frozenset({(A, "full"), (B, "full"), (C, "limited")}))
STORAGE = PartitionState(0x20, "storage", False, frozenset({(A, "limited"), (C, "full")}))
SWITCH_DESIRED = BackendState(SmState(True, 15), {0x10: COMPUTE, 0x20: STORAGE})


def switch_plan(*, prune: bool = False) -> BackendCheckPlan:
    return BackendCheckPlan(
        kind="switch",
        backend="switch leaf01",
        where="switch leaf01 (https://leaf01-mgmt.example.org)",
        carried=SWITCH_CARRIED,
        desired=SWITCH_DESIRED,
        prune=prune,
        names={0x10: "compute", 0x20: "storage"},
    )


def ufm_plan(*, prune: bool = False) -> BackendCheckPlan:
    desired = BackendState(
        None, {0x10: replace(COMPUTE, name=None, mtu=5), 0x20: replace(STORAGE, name=None, sl=2, rate=200.0)}
    )
    return BackendCheckPlan(
        kind="ufm",
        backend="UFM https://ufm.example.org",
        where="UFM (https://ufm.example.org)",
        carried=UFM_CARRIED,
        desired=desired,
        prune=prune,
        names={0x10: "compute", 0x20: "storage"},
    )


def seen(plan: BackendCheckPlan, state: BackendState | None = None, error: str | None = None) -> BackendView:
    return BackendView(plan.kind, plan.where, plan.desired if state is None and error is None else state, error)


def with_partitions(state: BackendState, *parts: PartitionState, drop: tuple[int, ...] = ()) -> BackendState:
    held = {k: p for k, p in state.partitions.items() if k not in drop}
    held.update({p.pkey: p for p in parts})
    return BackendState(state.sm, held)


def findings(report: SectionReport) -> list[Finding]:
    return [f for c in report.checks for f in c.findings]


def only(report: SectionReport) -> Finding:
    found = findings(report)
    assert len(found) == 1, found
    return found[0]


def test_a_switch_holding_the_plan_has_no_finding_and_every_partition_and_the_sm_were_examined() -> None:
    report = check_backend(switch_plan(), seen(switch_plan()))
    assert findings(report) == []
    examined = {c.id: c.objects for c in report.checks}
    assert examined == {
        "backend.reachable": ("switch leaf01",),
        "backend.partition": ("compute (0x0010)", "storage (0x0020)"),
        "backend.unplanned": ("0x0010 (compute)", "0x0020 (storage)"),
        "backend.sm": ("switch leaf01",),
    }
    assert report.facts.as_dict()["in_sync"] is True


def test_what_the_back_end_does_not_carry_is_not_compared() -> None:
    plan = switch_plan()
    richer = with_partitions(plan.desired, replace(COMPUTE, mtu=5, rate=100.0, sl=3))  # the reader's extra fields
    assert findings(check_backend(plan, seen(plan, richer))) == []


def test_a_planned_partition_the_back_end_lacks_is_one_partition_finding() -> None:
    plan = switch_plan()
    got = only(check_backend(plan, seen(plan, with_partitions(plan.desired, drop=(0x20,)))))
    assert (got.check, got.severity, got.object) == ("backend.partition", Severity.ERROR, "storage (0x0020)")
    assert got.observed.startswith("not held")
    assert got.fix == "run `ibprov apply SPEC` (it sends only the difference)"


def test_a_missing_member_and_a_changed_membership_are_named_in_one_partition_finding() -> None:
    plan = switch_plan()
    drift = replace(COMPUTE, members=frozenset({(A, "full"), (C, "full")}))
    got = only(check_backend(plan, seen(plan, with_partitions(plan.desired, drift))))
    assert got.object == "compute (0x0010)"
    assert "member 0x0c42a10300b7e028 absent, planned full" in got.observed
    assert "member 0x0c42a10300b7e03c full, planned limited" in got.observed
    assert "3 member(s), ipoib" in got.expected


def test_many_member_differences_are_counted_past_the_first_three() -> None:
    plan = switch_plan()
    extra = frozenset((0x1000 + i, "limited") for i in range(5))
    got = only(check_backend(plan, seen(plan, with_partitions(plan.desired, replace(STORAGE, members=extra)))))
    assert got.observed.count("member 0x") == 3
    assert got.observed.endswith("+4 more member difference(s)")  # 5 extra and 2 absent members


def test_an_ipoib_flag_and_a_name_that_differ_are_partition_findings() -> None:
    plan = switch_plan()
    drift = replace(COMPUTE, ipoib=False, name="compute-old")
    got = only(check_backend(plan, seen(plan, with_partitions(plan.desired, drift))))
    assert got.check == "backend.partition"
    assert "ipoib False, planned True" in got.observed
    assert "name 'compute-old', planned 'compute'" in got.observed


def test_a_ufm_mtu_that_differs_is_a_partition_finding_and_ufm_has_no_sm_check() -> None:
    plan = ufm_plan()
    drift = replace(plan.desired.partitions[0x10], mtu=4)
    report = check_backend(plan, seen(plan, with_partitions(plan.desired, drift)))
    got = only(report)
    assert (got.check, got.object) == ("backend.partition", "compute (0x0010)")
    assert got.observed == "mtu 4, planned 5"
    assert {c.id: c.objects for c in report.checks}["backend.sm"] == ()


def test_a_ufm_limit_the_plan_leaves_unset_is_not_compared_as_apply_sends_none() -> None:
    plan = ufm_plan()
    defaults = replace(plan.desired.partitions[0x10], rate=2.5, sl=0)  # UFM's own: the spec sets only mtu here
    assert findings(check_backend(plan, seen(plan, with_partitions(plan.desired, defaults)))) == []
    drift = replace(defaults, mtu=4)  # a limit the plan sets is compared all the same
    assert only(check_backend(plan, seen(plan, with_partitions(plan.desired, drift)))).observed == "mtu 4, planned 5"


def test_ufm_names_are_not_compared_since_ufm_before_6_22_keeps_none() -> None:
    plan = ufm_plan()
    named = with_partitions(plan.desired, replace(plan.desired.partitions[0x10], name="k8s-compute"))
    assert findings(check_backend(plan, seen(plan, named))) == []


def test_an_unplanned_partition_is_a_warning_naming_prune_and_other_tools() -> None:
    plan = ufm_plan()
    stray = PartitionState(0xAB, "ib-k8s", False, frozenset({(B, "full")}))
    got = only(check_backend(plan, seen(plan, with_partitions(plan.desired, stray))))
    assert (got.check, got.severity, got.object) == ("backend.unplanned", Severity.WARNING, "0x00ab (ib-k8s)")
    assert "prune: true" in got.fix
    assert "ib-kubernetes" in got.fix


def test_with_prune_an_unplanned_partition_is_an_error_and_the_back_end_is_not_in_sync() -> None:
    plan = switch_plan(prune=True)
    stray = PartitionState(0xAB, None, False, frozenset())
    report = check_backend(plan, seen(plan, with_partitions(plan.desired, stray)))
    got = only(report)
    assert (got.check, got.severity, got.object) == ("backend.unplanned", Severity.ERROR, "0x00ab (unnamed)")
    assert report.facts.as_dict()["in_sync"] is False
    assert check_backend(switch_plan(), seen(plan, with_partitions(plan.desired, stray))).facts.as_dict()["in_sync"]


def test_the_default_partition_a_back_end_keeps_is_never_unplanned() -> None:
    plan = ufm_plan()
    default = PartitionState(0x7FFF, "Default", True, frozenset({(A, "full")}))
    assert findings(check_backend(plan, seen(plan, with_partitions(plan.desired, default)))) == []


def test_a_disabled_switch_sm_is_a_finding() -> None:
    plan = switch_plan()
    got = only(check_backend(plan, seen(plan, replace(plan.desired, sm=SmState(False, 15)))))
    assert (got.check, got.severity, got.object) == ("backend.sm", Severity.ERROR, "switch leaf01")
    assert (got.expected, got.observed) == ("SM enabled, priority 15", "SM disabled, priority 15")


def test_a_switch_sm_at_another_priority_is_a_finding() -> None:
    plan = switch_plan()
    got = only(check_backend(plan, seen(plan, replace(plan.desired, sm=SmState(True, 10)))))
    assert (got.check, got.observed) == ("backend.sm", "SM enabled, priority 10")


def test_a_switch_whose_sm_state_was_not_read_is_a_finding() -> None:
    plan = switch_plan()
    got = only(check_backend(plan, seen(plan, replace(plan.desired, sm=None))))
    assert got.check == "backend.sm"


def test_an_unanswered_back_end_is_one_finding_and_nothing_else_is_examined() -> None:
    plan = switch_plan()
    error = "cluster.yaml:48:10: subnet_manager.switch.url: switch leaf01 at https://x cannot be reached"
    report = check_backend(plan, seen(plan, error=error))
    got = only(report)
    assert (got.check, got.object, got.observed) == ("backend.reachable", "switch leaf01", error)
    assert [c.objects for c in report.checks if c.id != "backend.reachable"] == [(), (), ()]
    assert report.facts.as_dict()["reachable"] is False
    assert "not read" in report.facts.lines()[0]


def test_the_report_says_the_back_end_is_contract_tested_and_what_only_the_product_proves() -> None:
    report = check_backend(ufm_plan(), seen(ufm_plan()))
    assert "ufm back end: contract-tested, not run against the product" in report.notes
    assert any("only the product proves" in n and "verify --fabric" in n for n in report.notes)
    assert report.facts.as_dict()["label"] == "contract-tested, not run against the product"


def test_unresolved_nodes_are_noted_since_their_ports_are_left_out_of_the_planned_members() -> None:
    plan = replace(switch_plan(), unresolved=("node04",))
    report = check_backend(plan, seen(plan))
    assert any("node04" in n and "ibprov discover" in n for n in report.notes)
