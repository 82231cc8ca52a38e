"""The partitions as planned (ibprov.identity.partitions): each port's P_Key table from the spec and the
GUIDs, worked out here by hand; and render's partition variables are built from the same plan."""

from __future__ import annotations

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.identity.guids import GuidBook
from ibprov.identity.partitions import PartitionMember, plan_partitions, planned_pkeys
from ibprov.pkey import PKey
from ibprov.render.sm import build_sm_data

SPEC = """\
version: 1
cluster: {name: parts}
nodes:
  - {name: sm1, groups: [infra], hcas: [{device: mlx5_0, port_guids: {1: "0x0000000000000011"}}]}
  - {name: sm2, groups: [infra], hcas: [{device: mlx5_0, port_guids: {1: "0x0000000000000021"}}]}
  - {name: c1, groups: [compute], hcas: [{device: mlx5_0, port_guids: {1: "0x0000000000000031"}}]}
  - {name: c2, groups: [compute], hcas: [{device: mlx5_0%s}]}
switches:
  - {name: leaf01, role: leaf, ports: 4}
fabric:
  speed: HDR
  links:
    - leaf01:1 <-> sm1/mlx5_0:1
    - leaf01:2 <-> sm2/mlx5_0:1
    - leaf01:3 <-> c1/mlx5_0:1
    - leaf01:4 <-> c2/mlx5_0:1
subnet_manager:
  instances:
    - {node: sm1, priority: 15}
    - {node: sm2, priority: 14}
default_partition:
  membership: limited
partitions:
  - name: compute
    pkey: 0x0010
    defmember: full
    members:
      - group: compute
      - {node: sm1, membership: limited}
  - name: shared
    pkey: 0x0020
    members:
      - {all: true, membership: both}
      - {group: infra, membership: full}
"""
SM1, SM2, C1, C2 = 0x11, 0x21, 0x31, 0x41


def loaded(c2_guid: bool = True) -> LoadedSpec:
    return load_spec_text(SPEC % (', port_guids: {1: "0x0000000000000041"}' if c2_guid else ""), "parts.yaml")


def keys(*entries: int) -> frozenset[PKey]:
    return frozenset(PKey.from_wire(e) for e in entries)


def test_every_port_holds_default_and_its_partitions_with_the_planned_membership() -> None:
    spec = loaded()
    assert planned_pkeys(spec, GuidBook.for_spec(spec)) == {
        SM1: keys(0xFFFF, 0x0010, 0x8020),  # an SM port is a full member of Default; node beats group
        SM2: keys(0xFFFF, 0x8020),  # group (full) beats all (both)
        C1: keys(0x7FFF, 0x8010, 0x8020, 0x0020),  # Default limited; both: the full and the limited key
        C2: keys(0x7FFF, 0x8010, 0x8020, 0x0020),
    }
    for table in planned_pkeys(spec, GuidBook.for_spec(spec)).values():
        assert all(type(k) is PKey for k in table)


def test_the_plan_names_partitions_by_their_15_bit_key() -> None:
    spec = loaded()
    plan = plan_partitions(spec, GuidBook.for_spec(spec))
    assert plan.names == {0x7FFF: "Default", 0x0010: "compute", 0x0020: "shared"}
    assert [(p.name, p.pkey.base, p.pkey.full) for p in plan.partitions] == [
        ("compute", 0x10, True),
        ("shared", 0x20, True),
    ]
    assert plan.default.sm_ports == {SM1, SM2}
    assert plan.both


def test_render_writes_the_members_of_the_same_plan() -> None:
    spec = loaded()
    book = GuidBook.for_spec(spec)
    plan = plan_partitions(spec, book)
    sm = build_sm_data(spec, book)
    rendered = sm.common["ib_sm_partitions"]
    assert [(p["name"], p["pkey"]) for p in rendered] == [(p.name, p.pkey.base) for p in plan.partitions]
    for part, planned in zip(rendered, plan.partitions, strict=True):
        assert [(int(m["guid"], 16), m["membership"]) for m in part["members"]] == list(planned.members)
    assert plan.partitions[0].members == (
        PartitionMember(SM1, "limited"),
        PartitionMember(C1, "full"),
        PartitionMember(C2, "full"),
    )
    assert sm.common["ib_sm_default_partition"]["full_members"] == ["0x0000000000000011", "0x0000000000000021"]
    assert sm.common["ib_sm_options"]["allow_both_pkeys"] is True


def test_a_port_without_a_guid_is_left_out_and_its_node_named() -> None:
    spec = loaded(c2_guid=False)
    book = GuidBook.for_spec(spec)
    plan = plan_partitions(spec, book)
    assert set(plan.unresolved) == {"c2"}
    assert plan.unresolved["c2"].ports == ("mlx5_0:1", "mlx5_0:1")
    assert plan.unresolved["c2"].partitions == ("compute", "shared")
    assert plan.unresolved["c2"].first == ("partitions", 0, "members", 0)
    assert C2 not in planned_pkeys(spec, book)
    (problem,) = build_sm_data(spec, book).problems
    assert "no port GUID for c2 (1 port: mlx5_0:1), which partitions compute, shared need" in problem.message
