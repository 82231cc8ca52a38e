"""QoS on switch egress ports: the plan per port class, which ports are read (and the sample on a big
fabric), and the findings naming switch, port and the kind of port."""

from __future__ import annotations

from pathlib import Path

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.identity.guids import GuidBook
from ibprov.verify.fabric.checks import FAMILIES
from ibprov.verify.fabric.checks.qos import port_class, switch_port_name
from ibprov.verify.fabric.collect import switch_qos_ports
from ibprov.verify.fabric.observation import Observation, ObservedLink, ObservedNode, PortRef
from ibprov.verify.fabric.plan import Plan, build_plan
from ibprov.verify.fabric.section import check_observation
from ibprov.verify.judge import run_checks

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"
QOS = """
qos:
  enabled: true
  max_vls: 8
  sl2vl: "0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,15"
  vlarb_high: "2:64"
  vlarb_low: "0:32,1:64,3:16,4:16,5:16,6:16,7:16"
  switch_external:
    vlarb_low: "0:32,1:64,2:64,3:16"
  switch_port0:
    sl2vl: "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,15"
"""
DEFAULT_SL2VL = (0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 15)
SW0_SL2VL = (0,) * 15 + (15,)
SWE_LOW = ((0, 32), (1, 64), (2, 64), (3, 16))
HIGH = ((2, 64),)
DEFAULT_LOW = ((0, 32), (1, 64), (3, 16), (4, 16), (5, 16), (6, 16), (7, 16))


def fat_tree(extra: str = QOS) -> LoadedSpec:
    text = (EXAMPLES / "fat-tree.yaml").read_text()
    return load_spec_text(text + extra, "fat-tree-qos.yaml")


def plan_of(loaded: LoadedSpec) -> Plan:
    return build_plan(loaded, GuidBook.for_spec(loaded, allow_synthetic=True, twin=True))


def fabric(plan: Plan) -> Observation:
    """The plan's switches and HCAs, cabled as planned, with no table read yet."""
    obs = Observation()
    for lid, (_name, guid) in enumerate(plan.switch_guids.items(), start=1):
        assert guid is not None
        obs.nodes[guid] = ObservedNode(guid, "SW", _name, {}, lid, guid)
    for node, device in plan.hca_descriptions:
        guid = plan.book.hca_guid(node, device)
        assert guid is not None
        obs.nodes[guid] = ObservedNode(guid, "CA", f"{node} {device}", {1: (guid + 1, 100)})
    for link in plan.links:
        a, b = (_ref(plan, end) for end in (link.a, link.b))
        obs.links.append(ObservedLink(a, b, "4x", "HDR"))
    return obs


def _ref(plan: Plan, end: Endpoint) -> PortRef:
    guid = plan.switch_guids[end.device] if end.hca is None else plan.book.hca_guid(end.device, end.hca)
    assert guid is not None
    return PortRef(guid, end.port)


def as_planned(plan: Plan) -> Observation:
    """Every switch egress port with the tables OpenSM gives it under this plan."""
    obs = fabric(plan)
    ports, _total = switch_qos_ports(obs)
    for ref, _lid in ports:
        rows = tuple((i, SW0_SL2VL if ref.port == 0 and i == 0 else DEFAULT_SL2VL) for i in range(41))
        obs.switch_sl2vl[ref] = rows
        low = DEFAULT_LOW if ref.port == 0 else SWE_LOW
        obs.switch_vlarb[ref] = (HIGH + ((0, 0),) * 7, low + ((0, 0),) * 4)
    return obs


def switch_findings(plan: Plan, obs: Observation) -> list[tuple[str, str, str, str]]:
    return [
        (f.check, f.object, f.expected, f.observed)
        for r in run_checks(FAMILIES, plan, obs)
        for f in r.findings
        if f.check.startswith("qos.switch_")
    ]


def test_the_plan_resolves_each_switch_class_against_the_default_set() -> None:
    plan = plan_of(fat_tree())
    swe, sw0 = plan.switch_qos["switch_external"], plan.switch_qos["switch_port0"]
    assert (tuple(swe.sl2vl or ()), swe.vlarb_high, swe.vlarb_low) == (DEFAULT_SL2VL, HIGH, SWE_LOW)
    assert (tuple(sw0.sl2vl or ()), sw0.vlarb_high, sw0.vlarb_low) == (SW0_SL2VL, HIGH, DEFAULT_LOW)


def test_without_qos_no_switch_table_is_planned_or_examined() -> None:
    plan = plan_of(fat_tree(extra=""))
    assert plan.switch_qos == {}
    obs = as_planned(plan_of(fat_tree()))  # tables read anyway (e.g. by hand): nothing to judge them by
    results = {r.id: r for r in run_checks(FAMILIES, plan, obs)}
    assert results["qos.switch_sl2vl"].objects == ()
    assert results["qos.switch_vlarb"].findings == ()


def test_tables_as_opensm_sets_them_pass_and_every_read_port_is_examined() -> None:
    plan = plan_of(fat_tree())
    obs = as_planned(plan)
    assert switch_findings(plan, obs) == []
    results = {r.id: r for r in run_checks(FAMILIES, plan, obs)}
    assert len(results["qos.switch_sl2vl"].objects) == len(obs.switch_sl2vl) > len(plan.switch_guids)


def test_a_wrong_external_vlarb_names_switch_port_and_kind() -> None:
    plan = plan_of(fat_tree())
    obs = as_planned(plan)
    leaf01 = plan.switch_guids["leaf01"] or 0
    uplink = next(
        link.a if link.a.device == "leaf01" else link.b
        for link in plan.links
        if {link.a.device, link.b.device} & {"leaf01"} and not link.a.hca and not link.b.hca
    )
    high, _low = obs.switch_vlarb[PortRef(leaf01, uplink.port)]
    obs.switch_vlarb[PortRef(leaf01, uplink.port)] = (high, ((0, 64), (1, 32), (2, 64), (3, 16)))
    assert switch_findings(plan, obs) == [
        (
            "qos.switch_vlarb",
            f"leaf01 port {uplink.port}",
            "low 0:32,1:64,2:64,3:16 (switch-to-switch port, qos_swe_*)",
            "low 0:64,1:32,2:64,3:16",
        )
    ]


def test_a_wrong_sl2vl_row_names_the_ingress_ports_and_port_0_has_its_own_row() -> None:
    plan = plan_of(fat_tree())
    obs = as_planned(plan)
    spine = PortRef(plan.switch_guids["spine01"] or 0, 0)
    rows = dict(obs.switch_sl2vl[spine])
    rows[0] = DEFAULT_SL2VL  # port 0's own row is qos_sw0_*'s: the external set there is wrong
    for i in (3, 4, 5, 9):
        rows[i] = SW0_SL2VL
    obs.switch_sl2vl[spine] = tuple(sorted(rows.items()))
    ((check, obj, expected, observed),) = switch_findings(plan, obs)
    assert (check, obj) == ("qos.switch_sl2vl", "spine01 port 0")
    assert expected.startswith("from port 0: SL0-15 -> VL 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,15 (port 0, qos_sw0_*)")
    assert observed == (
        "from port 0: SL0-15 -> VL 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,15; "
        "from ports 3-5,9: SL0-15 -> VL 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,15"
    )


def test_port_class_tells_host_facing_from_switch_to_switch() -> None:
    plan = plan_of(fat_tree())
    obs = fabric(plan)
    host_end = next(link for link in plan.links if link.a.hca or link.b.hca)
    sw_end = host_end.b if host_end.a.hca else host_end.a
    assert port_class(obs, _ref(plan, sw_end)) == ("switch_external", "host-facing port, qos_swe_*")
    assert port_class(obs, PortRef(_ref(plan, sw_end).node_guid, 0)) == ("switch_port0", "port 0, qos_sw0_*")
    assert switch_port_name(plan, obs, _ref(plan, sw_end)) == f"{sw_end.device} port {sw_end.port}"
    assert switch_port_name(plan, obs, PortRef(0x1234, 2)) == "switch 0x0000000000001234 port 2"


def test_every_cabled_switch_port_is_read_within_the_budget_and_a_sample_above_it() -> None:
    plan = plan_of(fat_tree())
    obs = fabric(plan)
    cabled = {(e.device, e.port) for link in plan.links for e in (link.a, link.b) if not e.hca}
    everything, total = switch_qos_ports(obs)
    assert total == len(everything) == len(cabled) + len(plan.switch_guids)
    sample, total_again = switch_qos_ports(obs, budget=total - 1)
    assert total_again == total
    by_switch: dict[int, list[int]] = {}
    for ref, lid in sample:
        assert lid == obs.nodes[ref.node_guid].lid
        by_switch.setdefault(ref.node_guid, []).append(ref.port)
    assert set(by_switch) == {g for g in plan.switch_guids.values()}
    for guid, ports in by_switch.items():
        kinds = [port_class(obs, PortRef(guid, p))[1] for p in ports]
        assert ports[0] == 0
        assert len(ports) == len(set(kinds)) <= 3  # port 0, one host-facing, one switch-to-switch at most
    report = check_observation(plan, obs)  # no table read: the note says only what the collector recorded
    obs.switch_qos_ports = (len(sample), total)
    noted = check_observation(plan, obs).notes
    assert not any("switch QoS tables read on" in n for n in report.notes)
    assert any(f"switch QoS tables read on {len(sample)} of {total}" in n for n in noted)
