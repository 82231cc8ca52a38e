"""A held-out rail-optimized rack for verify --physical's tests: 5 GPU nodes (an odd count) with 4 NDR HCAs
each, 4 rail leaves and 2 spines, DAC to the hosts and transceivers between leaves and spines; and its
observations, built from real captures (tests/fixtures/mstlink/) and PCIe paths and GPU matrices the tests
build.

The healthy port readings are the real MFT 4.35 NDR capture (a 1 m passive copper OSFP cable) with the
counter block of the real MFT 4.24 HDR capture (healthy: symbol and effective BER 15E-255, raw 1E-8) and a
time since clear; the leaf-spine ports are the BUILT in-band optical capture with its degraded values set to a
healthy link's. What a test changes is said where it changes it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from captures import read_capture

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.physical import PcieLink
from ibprov.probes.gputopo import GpuTopology
from ibprov.probes.mstlink import MstlinkReading, parse_mstlink
from ibprov.probes.pcie import PcieHop
from ibprov.probes.phyprobe import DevicePhysical, HostPhysical
from ibprov.verify.physical.observation import PhysicalObservation, PortReading
from ibprov.verify.physical.plan import PhysicalPlan, build_physical_plan

NODES = 5
RAILS = 4
DAC = "mstlink/ndr-cx7-hca-module-dac-col35-mft435-csegpu.txt"
OPTICAL = "mstlink/ndr-quantum2-switch-inband-lid-optical-errors-BUILT.txt"
GEN5_X16 = PcieLink(5, 16)
HDR_COUNTERS = "mstlink/hdr-cx6-hca-counters-grepfiltered-col32-mft424-shadeform.txt"


def rack_text(extra_fabric: str = "", extra_hca: str = "", acceptance: str = "") -> str:
    lines = ["version: 1", "cluster: {name: heldout}", "nodes:"]
    for i in range(NODES):
        hcas = ", ".join(f"{{device: mlx5_{j}{extra_hca}}}" for j in range(RAILS))
        lines.append(f"  - {{name: gpu{i:02d}, gpus: 4, hcas: [{hcas}]}}")
    lines += [
        "fabric:",
        "  speed: NDR",
        "  fat_tree: {radix: 16, leaves: 4, spines: 2, hosts_per_leaf: 8, uplinks_per_leaf: 8, rails: rail-optimized}",
        "  cables:",
        "    tiers:",
        "      host-leaf: {medium: dac, max_length_m: 2}",
        "      leaf-spine: {medium: transceiver, max_length_m: 30}",
        extra_fabric,
        "subnet_manager:",
        "  routing_engine: ftree",
        "  instances: [{node: gpu00}]",
        acceptance,
        "",
    ]
    return "\n".join(lines)


def rack(**kwargs: str) -> LoadedSpec:
    return load_spec_text(rack_text(**kwargs), "heldout.yaml")


def body(relative: str) -> str:
    return read_capture(relative)


def counters_block(minutes: float = 720.0) -> str:
    """The first HCA's counter block of the real HDR capture (grep-filtered there), with a time since clear."""
    chunk = body(HDR_COUNTERS).split("==========")[2]
    lines = [ln for ln in chunk.split("\n") if ":" in ln and not ln.startswith(("FEC", "amBER"))]
    return "\nPhysical Counters and BER Info\n------------------------------\n" + "\n".join(
        [f"Time Since Last Clear [Min]     : {minutes}", *lines]
    )


def dac_text() -> str:
    return body(DAC) + counters_block()


def optical_text(**values: str) -> str:
    """The BUILT optical capture; with no ``values`` a healthy link's numbers, else those given (key -> value)."""
    healthy = {
        "Symbol Errors": "0",
        "Symbol BER": "15E-255",
        "Effective Physical Errors": "0",
        "Effective Physical BER": "15E-255",
        "Raw Physical BER": "1E-8",
        "Link Down Counter": "0",
        "Link Error Recovery Counter": "0",
        "Temperature [C]": "45 [-5..70]",
    }
    text = body(OPTICAL)
    for key, value in (values or healthy).items():
        text = set_value(text, key, value)
    return text


def set_value(text: str, key: str, value: str) -> str:
    out = []
    for line in text.split("\n"):
        name, sep, _ = line.partition(":")
        if sep and name.strip() == key:
            line = f"{name}: {value}"
        out.append(line)
    return "\n".join(out)


def reading(text: str) -> MstlinkReading:
    return parse_mstlink(text)


def hca_path(numa: int, current: PcieLink = GEN5_X16, capable: PcieLink = GEN5_X16) -> tuple[PcieHop, ...]:
    return (
        PcieHop("0000:41:00.0", current, capable, numa),
        PcieHop("0000:40:01.1", PcieLink(5, 16), PcieLink(5, 16), numa),
    )


def topology(node_gpus: int = 4, swap: tuple[int, int] | None = None) -> GpuTopology:
    """GPU i is PIX to mlx5_i, NODE to the HCAs of its socket, SYS to the others; ``swap``: those two HCAs'
    rows exchanged (a card in the wrong slot)."""
    nics = [f"mlx5_{j}" for j in range(RAILS)]
    if swap is not None:
        a, b = swap
        nics[a], nics[b] = nics[b], nics[a]
    relation = {}
    for g in range(node_gpus):
        for j, nic in enumerate(nics):
            relation[(g, nic)] = "PIX" if j == g else ("NODE" if j // 2 == g // 2 else "SYS")
    return GpuTopology(tuple(range(node_gpus)), tuple(f"mlx5_{j}" for j in range(RAILS)), relation)


def healthy_host(firmware: str = "28.46.3048") -> HostPhysical:
    dac = reading(dac_text())
    devices = {
        f"mlx5_{j}": DevicePhysical(f"mlx5_{j}", firmware, "MT_0000000838", "MT4129", hca_path(j // 2), {1: dac})
        for j in range(RAILS)
    }
    gpus = tuple((f"0000:{0x18 + 0x20 * g:02x}:00.0", g // 2) for g in range(4))
    return HostPhysical(frozenset({"mstlink", "nvidia-smi"}), devices, gpus, topology())


def healthy(plan: PhysicalPlan) -> PhysicalObservation:
    hosts = {h: healthy_host() for h in plan.hosts}
    dac, optical = reading(dac_text()), reading(optical_text())
    switch_ports = {
        (p.end.device, p.end.port): PortReading(dac if p.cable.tier == "host-leaf" else optical)
        for p in plan.switch_ports
    }
    return PhysicalObservation(hosts=hosts, switch_ports=switch_ports)


def plan_of(loaded: LoadedSpec | None = None) -> PhysicalPlan:
    return build_physical_plan(loaded or rack())


def with_device(obs: PhysicalObservation, host: str, device: str, **changes: object) -> PhysicalObservation:
    seen = obs.hosts[host]
    devices = dict(seen.devices)
    devices[device] = dataclasses.replace(devices[device], **changes)  # type: ignore[arg-type]
    hosts = dict(obs.hosts)
    hosts[host] = dataclasses.replace(seen, devices=devices)
    return dataclasses.replace(obs, hosts=hosts)


def with_host(obs: PhysicalObservation, host: str, **changes: object) -> PhysicalObservation:
    hosts = dict(obs.hosts)
    hosts[host] = dataclasses.replace(hosts[host], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(obs, hosts=hosts)


def with_switch_port(obs: PhysicalObservation, switch: str, port: int, text: str) -> PhysicalObservation:
    ports = dict(obs.switch_ports)
    ports[(switch, port)] = PortReading(reading(text))
    return dataclasses.replace(obs, switch_ports=ports)


HERE = Path(__file__).resolve().parent
