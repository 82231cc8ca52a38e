from __future__ import annotations

from checkkit import ACTIVE, example, findings, pairs, perfect, plan_of, ref, rewire, unplug

from ibprov.clusterspec.types import Endpoint
from ibprov.identity.guids import GuidBook
from ibprov.report.model import Severity
from ibprov.verify.fabric.checks.matching import classify
from ibprov.verify.fabric.observation import LinkState, ObservedLink, ObservedNode, PortRef
from ibprov.verify.fabric.plan import build_plan

FAT = plan_of(example("fat-tree"))
RACK = plan_of(example("rack"))


def node(name: str) -> Endpoint:
    return Endpoint(name, "mlx5_0", 1)


def test_the_fabric_as_planned_has_no_findings_at_all() -> None:
    for plan in (FAT, RACK, plan_of(example("qos-partitions"))):
        assert findings(plan, perfect(plan)) == []


def test_a_cable_on_the_wrong_port_is_a_miswire_naming_the_planned_and_found_port() -> None:
    obs = perfect(FAT)
    rewire(FAT, obs, node("node07"), PortRef(FAT.switch_guids["leaf01"] or 0, 30))  # planned leaf01:8
    (finding,) = findings(FAT, obs)
    assert finding.check == "cabling.miswire"
    assert finding.text == "node07 mlx5_0 port 1: planned leaf01 port 8, found leaf01 port 30"
    assert finding.severity is Severity.ERROR


def test_a_node_moved_to_another_leaf_is_one_miswire_and_not_also_a_missing_cable() -> None:
    obs = perfect(FAT)
    rewire(FAT, obs, node("node05"), PortRef(FAT.switch_guids["leaf04"] or 0, 8))
    assert pairs(FAT, obs) == {("cabling.miswire", "node05 mlx5_0 port 1")}
    assert findings(FAT, obs)[0].observed == "leaf04 port 8"


def test_two_swapped_cables_are_one_swap_finding() -> None:
    obs = perfect(RACK)
    leaf = RACK.switch_guids["leaf01"] or 0
    rewire(RACK, obs, node("node01"), PortRef(leaf, 2))
    rewire(RACK, obs, node("node02"), PortRef(leaf, 1))
    (finding,) = findings(RACK, obs)
    assert finding.check == "cabling.swapped"
    assert finding.object == "node01 mlx5_0 port 1 and node02 mlx5_0 port 1"
    assert finding.expected == "leaf01 port 1 and leaf01 port 2"
    assert finding.observed == "leaf01 port 2 and leaf01 port 1"


def test_swapped_uplinks_between_switches_are_one_swap_named_by_the_leaf_ends() -> None:
    obs = perfect(FAT)
    up = [link for link in FAT.links if link.a.device == "leaf01" and link.b.device.startswith("spine")][:2]
    (a1, b1), (a2, b2) = ((up[0].a, up[0].b), (up[1].a, up[1].b))
    rewire(FAT, obs, a1, ref(FAT, b2))
    rewire(FAT, obs, a2, ref(FAT, b1))
    (finding,) = findings(FAT, obs)
    assert finding.check == "cabling.swapped"
    assert finding.object == f"leaf01 port {a1.port} and leaf01 port {a2.port}"


def test_a_three_way_rotation_is_three_miswires() -> None:
    obs = perfect(RACK)
    leaf = RACK.switch_guids["leaf01"] or 0
    for name, port in (("node01", 2), ("node02", 3), ("node03", 1)):
        rewire(RACK, obs, node(name), PortRef(leaf, port))
    assert {c for c, _o in pairs(RACK, obs)} == {"cabling.miswire"}
    assert len(findings(RACK, obs)) == 3


def test_a_missing_cable_names_its_planned_ends_and_what_the_ports_show() -> None:
    obs = perfect(RACK)
    unplug(RACK, obs, node("node03"))
    (finding,) = findings(RACK, obs)
    assert finding.check == "cabling.missing"
    assert finding.object == "node03 mlx5_0 port 1"
    assert finding.expected == "leaf01 port 3"
    assert finding.observed == "no link (leaf01 port 3 Down/Polling; node03 mlx5_0 port 1 Down/Polling)"


def test_a_missing_cable_whose_node_left_the_fabric_says_so() -> None:
    obs = perfect(RACK)
    unplug(RACK, obs, node("node03"))
    del obs.nodes[ref(RACK, node("node03")).node_guid]
    (finding,) = findings(RACK, obs)
    assert finding.observed == "no link (leaf01 port 3 Down/Polling; node03 mlx5_0 port 1 not on the fabric)"


def test_a_disabled_port_is_a_down_link_not_a_missing_cable() -> None:
    obs = perfect(RACK)
    unplug(RACK, obs, node("node03"), state=LinkState("Down", "Disabled"))
    assert pairs(RACK, obs) == {("link.down", "node03 mlx5_0 port 1")}


def test_an_unknown_guid_at_a_planned_position_is_a_wrong_device() -> None:
    obs = perfect(RACK)
    here = ref(RACK, node("node02"))
    stranger = 0x0002C90300ABCDEF
    obs.nodes[stranger] = ObservedNode(stranger, "CA", "node02 mlx5_0", {1: (stranger + 1, 50)})
    rewire(RACK, obs, Endpoint("leaf01", None, 2), PortRef(stranger, 1))
    del obs.nodes[here.node_guid]
    (finding,) = findings(RACK, obs)
    assert finding.check == "cabling.wrong_device"
    assert finding.object == "leaf01 port 2"
    assert finding.expected == "node02 mlx5_0 port 1 (0x0c42a10300d8e3dc)"
    assert finding.observed == '0x0002c90300abcdef "node02 mlx5_0" port 1'


def test_a_cable_between_two_unused_ports_is_unplanned() -> None:
    obs = perfect(FAT)
    a = PortRef(FAT.switch_guids["leaf01"] or 0, 35)
    b = PortRef(FAT.switch_guids["leaf02"] or 0, 35)
    obs.links.append(ObservedLink(a, b, "4x", "HDR"))
    obs.states[a] = obs.states[b] = ACTIVE
    (finding,) = findings(FAT, obs)
    assert (finding.check, finding.object) == ("cabling.unplanned", "leaf01 port 35")
    assert finding.observed == "a cable to leaf02 port 35"


def test_a_device_the_plan_does_not_have_is_unplanned() -> None:
    obs = perfect(RACK)
    guid = 0x0200000000000A00
    obs.nodes[guid] = ObservedNode(guid, "CA", "intruder mlx5_0", {1: (guid + 1, 60)})
    leaf = PortRef(RACK.switch_guids["leaf01"] or 0, 20)
    obs.links.append(ObservedLink(leaf, PortRef(guid, 1), "4x", "HDR"))
    assert pairs(RACK, obs) == {("cabling.unplanned", "leaf01 port 20")}
    assert findings(RACK, obs)[0].observed == 'a cable to 0x0200000000000a00 "intruder mlx5_0" port 1'


def test_devices_without_guids_are_matched_by_node_description_with_a_note() -> None:
    loaded = example("fat-tree")
    synthetic = plan_of(loaded)
    obs = perfect(synthetic)  # "the fabric", with GUIDs the spec does not know
    plan = build_plan(loaded, GuidBook.for_spec(loaded), obs.nodes.values())
    assert findings(plan, obs) == []
    assert plan.notes
    assert "matched by NodeDescription" in plan.notes[0]
    assert plan.switch_guids == synthetic.switch_guids


def test_classify_sorts_every_observed_link_into_exactly_one_bucket() -> None:
    obs = perfect(FAT)
    rewire(FAT, obs, node("node05"), PortRef(FAT.switch_guids["leaf04"] or 0, 8))
    unplug(FAT, obs, node("node09"))
    result = classify(FAT, obs)
    assert len(result.matched) == len(FAT.links) - 2
    assert [m[0] for m in result.miswired] == [node("node05")]
    assert [lk.b for lk, _s in result.missing] == [node("node09")]
