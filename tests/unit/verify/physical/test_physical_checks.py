"""verify --physical on a held-out rail-optimized rack (phykit): a healthy rack passes every check with every
planned link in the cable report; a degraded link, a wrong cable, a narrowed PCIe link and a remote GPU each
give the finding that names the port and shows the numbers; what cannot be read is skipped with why; the twin
skips everything and passes nothing."""

from __future__ import annotations

import dataclasses

import phykit
import pytest

from ibprov.clusterspec.physical import PcieLink
from ibprov.report.model import Finding, Severity
from ibprov.twinnet.limits import NO_PHYSICAL_LAYER, TwinLimits
from ibprov.verify.physical.facts import cable_table
from ibprov.verify.physical.observation import PhysicalObservation
from ibprov.verify.physical.plan import build_physical_plan
from ibprov.verify.physical.section import check_physical


def findings(plan: object, obs: PhysicalObservation) -> list[Finding]:
    return check_physical(plan, obs).findings  # type: ignore[arg-type]


def by_check(found: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in found:
        out.setdefault(f.check, []).append(f)
    return out


def test_the_held_out_rack_plans_every_link_with_its_medium_and_every_hca_with_its_pcie_need_and_gpu() -> None:
    loaded = phykit.rack()
    plan = build_physical_plan(loaded)
    assert len(plan.cables) == len(loaded.topology.links) == phykit.NODES * phykit.RAILS + 4 * 8
    tiers = {c.tier for c in plan.cables}
    assert tiers == {"host-leaf", "leaf-spine"}
    assert {c.medium for c in plan.cables if c.tier == "host-leaf"} == {"dac"}
    assert {c.medium for c in plan.cables if c.tier == "leaf-spine"} == {"transceiver"}
    assert len(plan.host_ports) == phykit.NODES * phykit.RAILS
    assert len(plan.switch_ports) == phykit.NODES * phykit.RAILS + 2 * 4 * 8
    hca = next(h for h in plan.hcas if h.name == "gpu03 mlx5_2")
    assert (hca.need, hca.rate_gbps, hca.gpu) == (PcieLink(5, 16), 400.0, 2)
    assert hca.need_from == "derived from NDR 4x"
    assert "rail 2" in hca.gpu_from


def test_a_healthy_rack_passes_every_check_and_lists_every_link_as_planned() -> None:
    plan = phykit.plan_of()
    obs = phykit.healthy(plan)
    report = check_physical(plan, obs)
    assert report.findings == []
    statuses = {c.id: c.status for c in report.checks}
    assert statuses["phy.ber_effective"] == statuses["phy.cable"] == statuses["phy.pcie"] == "pass"
    assert statuses["phy.gpu_locality"] == "pass"
    rows = report.facts.as_dict()["cables"]
    assert [r["link"] for r in rows] == [c.link for c in plan.cables]
    assert {r["status"] for r in rows} == {"as planned"}
    table = cable_table(rows)
    assert len(table.rows) == len(plan.cables)
    first = dict(zip(table.columns, table.rows[0], strict=True))
    assert first["A serial"] or first["B serial"]


def test_passive_copper_reports_no_temperature_threshold_so_its_temperature_is_skipped_not_passed() -> None:
    plan = phykit.plan_of()
    report = check_physical(plan, phykit.healthy(plan))
    temperature = next(c for c in report.checks if c.id == "phy.module_temperature")
    skipped = dict(temperature.skipped)
    assert skipped["gpu00 mlx5_0 port 1"] == "the module reports no temperature alarm threshold (e.g. passive copper)"
    assert "leaf01 port 9" not in skipped  # the optics have a real alarm range and are judged


def test_a_degraded_optical_link_gives_ber_raw_ber_link_errors_and_temperature_findings_with_the_numbers() -> None:
    plan = phykit.plan_of()
    spine_port = next(p for p in plan.switch_ports if p.cable.tier == "leaf-spine")
    obs = phykit.with_switch_port(
        phykit.healthy(plan), spine_port.end.device, spine_port.end.port, phykit.body(phykit.OPTICAL)
    )
    found = by_check(findings(plan, obs))
    name = spine_port.name
    (ber,) = found["phy.ber_effective"]
    assert (ber.object, ber.expected) == (name, "<= 1E-12")
    assert ber.observed == "effective BER 2E-11, symbol BER 1E-12 over 720 min since clear"
    (raw,) = found["phy.ber_raw"]
    assert (raw.object, raw.severity, raw.expected) == (name, Severity.ERROR, "raw BER <= 1E-5 (NDR)")
    assert raw.observed.startswith("3E-5 (raw errors per lane 98812345678,")
    (rates,) = found["phy.link_errors"]
    assert rates.observed == (
        "18359 symbol errors in 12.0 h = 1.53e+03/h; 14 link error recoveries in 12.0 h = 1.17/h; "
        "2 link downs in 12.0 h = 0.167/h"
    )
    assert rates.expected == "SymbolErrorCounter <= 0.417/h; LinkErrorRecoveryCounter <= 0/h; LinkDownedCounter <= 0/h"
    (hot,) = found["phy.module_temperature"]
    assert (hot.severity, hot.expected, hot.observed) == (
        Severity.WARNING,
        "below 65 C (5 C under its alarm)",
        "68 C (alarm at 70 C; NVIDIA MMA4Z00-NS)",
    )
    assert set(found) == {"phy.ber_effective", "phy.ber_raw", "phy.link_errors", "phy.module_temperature"}


def test_a_raw_ber_between_the_warning_and_the_limit_is_a_warning_only() -> None:
    plan = phykit.plan_of()
    port = next(p for p in plan.switch_ports if p.cable.tier == "leaf-spine")
    text = phykit.set_value(phykit.optical_text(), "Raw Physical BER", "2E-6")
    obs = phykit.with_switch_port(phykit.healthy(plan), port.end.device, port.end.port, text)
    (raw,) = findings(plan, obs)
    assert (raw.check, raw.severity, raw.observed) == (
        "phy.ber_raw",
        Severity.WARNING,
        "2E-6 (raw errors per lane 98812345678,101234567890,244567891234,106543219876)",
    )


def test_a_module_at_its_alarm_is_an_error() -> None:
    plan = phykit.plan_of()
    port = next(p for p in plan.switch_ports if p.cable.tier == "leaf-spine")
    text = phykit.set_value(phykit.optical_text(), "Temperature [C]", "71 [-5..70]")
    (hot,) = findings(plan, phykit.with_switch_port(phykit.healthy(plan), port.end.device, port.end.port, text))
    assert (hot.check, hot.severity, hot.expected) == ("phy.module_temperature", Severity.ERROR, "below 70 C")


def test_an_optical_module_on_a_link_planned_as_dac_is_a_wrong_cable_named_at_its_link() -> None:
    plan = phykit.plan_of()
    host_port = next(p for p in plan.host_ports if p.name == "gpu01 mlx5_3 port 1")
    obs = phykit.healthy(plan)
    # both ends of the host-leaf cable read the optical module (the HCA end and the leaf end)
    optical = phykit.reading(phykit.optical_text())
    obs = phykit.with_device(obs, "gpu01", "mlx5_3", links={1: optical})
    leaf_end = next(e for e in host_port.cable.ends if e.hca is None)
    obs = phykit.with_switch_port(obs, leaf_end.device, leaf_end.port, phykit.optical_text())
    (wrong,) = findings(plan, obs)
    assert wrong.check == "phy.cable"
    assert wrong.object == host_port.cable.link
    assert wrong.expected == "passive copper (DAC), <= 2 m (fabric.cables.tiers.host-leaf)"
    assert (
        "at gpu01 mlx5_3 port 1: Optical Module (separated) / 850 nm VCSEL, 50 m, NVIDIA MMA4Z00-NS" in wrong.observed
    )
    assert wrong.observed.endswith("(optical transceivers and fibre, not passive copper (DAC))")  # a reach is no length
    row = next(r for r in check_physical(plan, obs).facts.as_dict()["cables"] if r["link"] == host_port.cable.link)
    assert row["status"] == "not as planned"


def test_a_dac_longer_than_planned_and_a_part_or_vendor_off_the_list_are_wrong_cables() -> None:
    loaded = phykit.rack(extra_fabric="    vendors: [NVIDIA, Mellanox]")
    plan = phykit.plan_of(loaded)
    obs = phykit.healthy(plan)
    three_m = phykit.set_value(phykit.dac_text(), "Transfer Distance [m]", "3")
    obs = phykit.with_device(obs, "gpu04", "mlx5_0", links={1: phykit.reading(three_m)})
    found = [f for f in findings(plan, obs) if f.object.endswith("gpu04/mlx5_0:1")]
    (wrong,) = found
    assert "3 m > 2 m" in wrong.observed
    assert "vendor FS not NVIDIA or Mellanox" in wrong.observed
    # every other host-leaf cable is an FS DAC too: each one is off the vendor list
    assert len([f for f in findings(plan, obs) if f.check == "phy.cable"]) == phykit.NODES * phykit.RAILS


def test_where_the_spec_is_silent_the_design_rule_plans_copper_to_the_hosts_and_optics_above() -> None:
    text = phykit.rack_text().replace(
        "    tiers:\n      host-leaf: {medium: dac, max_length_m: 2}\n"
        "      leaf-spine: {medium: transceiver, max_length_m: 30}\n",
        "    copper_max_tier: host-leaf\n",
    )
    from ibprov.clusterspec import load_spec_text

    plan = build_physical_plan(load_spec_text(text, "silent.yaml"))
    media = {(c.tier, c.medium, c.medium_from) for c in plan.cables}
    rule = "fabric.cables.copper_max_tier host-leaf (ibprov design's rule)"
    assert media == {("host-leaf", "copper", rule), ("leaf-spine", "optical", rule)}
    obs = phykit.healthy(plan)
    assert findings(plan, obs) == []  # DAC is copper, the transceiver optical


def test_a_narrowed_pcie_link_is_named_with_the_arithmetic() -> None:
    plan = phykit.plan_of()
    obs = phykit.with_device(phykit.healthy(plan), "gpu02", "mlx5_1", path=phykit.hca_path(0, PcieLink(4, 8)))
    (narrow,) = findings(plan, obs)
    assert (narrow.check, narrow.object) == ("phy.pcie", "gpu02 mlx5_1")
    assert narrow.observed == "Gen4 x8 = 126 Gb/s usable < 400 Gb/s NDR 4x; capable of Gen5 x16"
    assert narrow.expected == "Gen5 x16 = 504 Gb/s usable (NDR 4x (400 Gb/s); derived from NDR 4x)"


def test_a_bottleneck_above_the_hca_is_named_at_its_hop() -> None:
    plan = phykit.plan_of()
    path = (
        phykit.hca_path(0)[0],
        dataclasses.replace(phykit.hca_path(0)[1], current=PcieLink(4, 16)),
    )
    obs = phykit.with_device(phykit.healthy(plan), "gpu02", "mlx5_1", path=path)
    (narrow,) = findings(plan, obs)
    assert narrow.observed == "Gen5 x16 at the HCA, but limited by Gen4 x16 = 252 Gb/s usable at 0000:40:01.1"


def test_a_link_that_carries_the_rate_but_trained_below_card_and_slot_is_a_warning() -> None:
    loaded = phykit.rack().spec.model_copy()
    del loaded
    text = phykit.rack_text().replace("speed: NDR", "speed: HDR")
    from ibprov.clusterspec import load_spec_text

    plan = build_physical_plan(load_spec_text(text, "hdr.yaml"))
    obs = phykit.with_device(phykit.healthy(plan), "gpu02", "mlx5_1", path=phykit.hca_path(0, PcieLink(4, 16)))
    found = [f for f in findings(plan, obs) if f.check == "phy.pcie"]
    (slow,) = found
    assert slow.severity == Severity.WARNING
    assert slow.expected == "Gen5 x16 (what the card and its slot both can do)"


def test_a_pcie_link_set_in_the_spec_is_required_as_written() -> None:
    plan = build_physical_plan(phykit.rack(extra_hca=", pcie_generation: 5, pcie_width: 16"))
    obs = phykit.with_device(phykit.healthy(plan), "gpu00", "mlx5_0", path=phykit.hca_path(0, PcieLink(5, 8)))
    (narrow,) = findings(plan, obs)
    assert narrow.expected.endswith("nodes[0].hcas[0].pcie_generation/pcie_width)")
    assert narrow.observed.startswith("Gen5 x8 = 252 Gb/s usable < 400 Gb/s")


def test_an_hca_not_local_to_its_rails_gpu_is_named_with_the_nic_that_is() -> None:
    plan = phykit.plan_of()
    obs = phykit.with_host(phykit.healthy(plan), "gpu03", topology=phykit.topology(swap=(1, 3)))
    found = by_check(findings(plan, obs))["phy.gpu_locality"]
    assert [f.object for f in found] == ["gpu03 mlx5_1", "gpu03 mlx5_3"]
    assert found[0].observed == "SYS to GPU1; local to GPU1: mlx5_3 PIX"
    assert found[0].expected == "GPU1 at PXB or nearer (rail 1 of a rail-optimized fabric serves GPU 1)"


def test_a_server_without_a_local_nic_says_which_gpu_has_none() -> None:
    plan = phykit.plan_of()
    topo = phykit.topology()
    remote = dataclasses.replace(topo, relation={k: ("SYS" if k[0] == 0 else v) for k, v in topo.relation.items()})
    obs = phykit.with_host(phykit.healthy(plan), "gpu00", topology=remote)
    (far,) = findings(plan, obs)
    assert far.observed == "SYS to GPU0; no NIC is local to GPU0"


def test_without_nvidia_smi_the_gpu_is_judged_by_its_numa_node() -> None:
    plan = phykit.plan_of()
    obs = phykit.with_host(phykit.healthy(plan), "gpu01", topology=None)
    assert findings(plan, obs) == []
    obs = phykit.with_device(obs, "gpu01", "mlx5_0", path=phykit.hca_path(1))
    (far,) = findings(plan, obs)
    assert far.check == "phy.gpu_locality"
    assert far.observed == "NUMA node 1; GPU0 (0000:18:00.0) is on NUMA node 0"


def test_a_planned_numa_node_is_checked() -> None:
    plan = build_physical_plan(phykit.rack(extra_hca=", numa_node: 0"))
    (wrong,) = [f for f in findings(plan, phykit.healthy(plan)) if f.check == "phy.numa"][:1]
    assert (wrong.object, wrong.expected, wrong.observed) == ("gpu00 mlx5_2", "NUMA node 0", "NUMA node 1")


def test_a_host_without_mstlink_is_skipped_with_the_package_that_brings_it() -> None:
    plan = phykit.plan_of()
    obs = phykit.healthy(plan)
    devices = {n: dataclasses.replace(d, links={}) for n, d in obs.hosts["gpu02"].devices.items()}
    obs = phykit.with_host(obs, "gpu02", tools=frozenset(), devices=devices)
    report = check_physical(plan, obs)
    assert report.findings == []
    ber = next(c for c in report.checks if c.id == "phy.ber_effective")
    assert dict(ber.skipped)["gpu02 mlx5_0 port 1"] == (
        "no mstlink or mlxlink on gpu02: apt install mstflint (Debian/Ubuntu) or dnf install mstflint (RHEL family)"
    )


def test_an_unreachable_host_is_a_finding_and_its_ports_are_skipped_not_passed() -> None:
    plan = phykit.plan_of()
    obs = phykit.healthy(plan)
    hosts = {h: v for h, v in obs.hosts.items() if h != "gpu04"}
    obs = dataclasses.replace(obs, hosts=hosts, unreachable={"gpu04": "UNREACHABLE: ssh timed out"})
    report = check_physical(plan, obs)
    (down,) = report.findings
    assert (down.check, down.object) == ("phy.unreachable", "gpu04")
    pcie = next(c for c in report.checks if c.id == "phy.pcie")
    assert dict(pcie.skipped)["gpu04 mlx5_0"] == "gpu04 did not answer: UNREACHABLE: ssh timed out"


def test_a_link_that_is_down_is_skipped_for_its_counters() -> None:
    plan = phykit.plan_of()
    down = phykit.set_value(phykit.dac_text(), "State", "Disable")
    obs = phykit.with_device(phykit.healthy(plan), "gpu00", "mlx5_0", links={1: phykit.reading(down)})
    report = check_physical(plan, obs)
    ber = next(c for c in report.checks if c.id == "phy.ber_effective")
    assert "the link is Disable" in dict(ber.skipped)["gpu00 mlx5_0 port 1"]


def test_a_troubleshooting_opcode_is_reported_with_its_recommendation() -> None:
    plan = phykit.plan_of()
    text = phykit.set_value(phykit.dac_text(), "Status Opcode", "1031")
    text = phykit.set_value(text, "Recommendation", "Shorted cable")
    obs = phykit.with_device(phykit.healthy(plan), "gpu00", "mlx5_0", links={1: phykit.reading(text)})
    (bad,) = findings(plan, obs)
    assert (bad.check, bad.observed) == ("phy.troubleshooting", "opcode 1031: Shorted cable")


def test_firmware_that_differs_within_a_kind_names_the_odd_device() -> None:
    plan = phykit.plan_of()
    obs = phykit.with_device(phykit.healthy(plan), "gpu03", "mlx5_0", firmware="28.39.1002")
    (odd,) = findings(plan, obs)
    assert (odd.check, odd.object, odd.observed) == ("phy.firmware", "gpu03 mlx5_0", "28.39.1002")
    assert odd.expected == "28.46.3048 (as 19 of 20 HCA MT_0000000838)"


@pytest.mark.parametrize("section_limits", [TwinLimits(cluster="heldout")])
def test_the_twin_skips_every_check_with_its_reason_and_passes_nothing(section_limits: TwinLimits) -> None:
    plan = build_physical_plan(phykit.rack(), twin=section_limits)
    report = check_physical(plan, PhysicalObservation())
    assert report.findings == []
    assert {c.id: c.status for c in report.checks if c.objects} == dict.fromkeys(
        [c.id for c in report.checks if c.objects], "skipped"
    )
    assert all(why == NO_PHYSICAL_LAYER for c in report.checks for _o, why in c.skipped)
    assert report.facts.lines() == [f"skipped: {NO_PHYSICAL_LAYER}"]
    assert report.notes == (f"skipped: {NO_PHYSICAL_LAYER}",)


def test_a_link_trained_to_fewer_lanes_than_card_and_slot_allow_is_a_warning_even_at_full_generation() -> None:
    text = phykit.rack_text().replace("speed: NDR", "speed: HDR")
    from ibprov.clusterspec import load_spec_text

    plan = build_physical_plan(load_spec_text(text, "hdr.yaml"))
    obs = phykit.with_device(phykit.healthy(plan), "gpu02", "mlx5_1", path=phykit.hca_path(0, PcieLink(5, 8)))
    (narrow,) = [f for f in findings(plan, obs) if f.check == "phy.pcie"]
    assert (narrow.severity, narrow.observed) == (
        Severity.WARNING,
        "Gen5 x8 = 252 Gb/s usable (carries HDR 4x (200 Gb/s), but trained down)",
    )
