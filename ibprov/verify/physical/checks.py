"""The checks of ``verify --physical``: pure functions of (plan, observation) -> findings.

Objects: ports (``node01 mlx5_0 port 1``, ``leaf01 port 33``), cables (``leaf01:1 <-> node01/mlx5_0:1``), HCAs
(``node01 mlx5_0``) and hosts. A port, cable or HCA that could not be read is skipped with why (the host did not
answer, no mstlink there and the package that brings it, the link is down); on the twin every check is skipped
with the twin's reason: nothing physical is ever passed that was not measured.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from ibprov.clusterspec.physical import MEDIA, medium_matches
from ibprov.probes.gputopo import DISTANCE
from ibprov.probes.mstlink import ModuleInfo, MstlinkReading
from ibprov.probes.pcie import PcieHop
from ibprov.report.model import Finding, Severity
from ibprov.verify.judge import Check, CheckFamily
from ibprov.verify.physical.observation import DevicePhysical, HostPhysical, PhysicalObservation, PortReading
from ibprov.verify.physical.plan import PhysicalPlan, PlannedCable, PlannedHca, PlannedPort

__all__ = ["FAMILIES", "ber_text", "port_readings"]

Plan = PhysicalPlan
Obs = PhysicalObservation
_CLEAR = "mstlink -d DEV -p PORT --pc (or mlxlink) clears the physical counters"


def ber_text(value: float | None) -> str:
    """1e-08 -> ``1E-8``, mstlink's own form; the no-error value (15E-255) -> ``0``."""
    if value is None:
        return "N/A"
    if value < 1e-100:
        return "0"
    mantissa, _, exponent = f"{value:.1E}".partition("E")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}E{int(exponent)}"


_Derived = TypeVar("_Derived")
_MEMO: dict[str, tuple[Plan, Obs, object]] = {}


def _memo(name: str, plan: Plan, obs: Obs, compute: Callable[[], _Derived]) -> _Derived:
    """What ``compute`` derives from this very plan and observation, computed once for all the checks that
    read it (the checks of one report run one after the other on the same two objects; a large fabric has
    hundreds of thousands of ports)."""
    held = _MEMO.get(name)
    if held is not None and held[0] is plan and held[1] is obs:
        return held[2]  # type: ignore[return-value]
    value = compute()
    _MEMO[name] = (plan, obs, value)
    return value


def port_readings(plan: Plan, obs: Obs) -> dict[str, tuple[PlannedPort, PortReading]]:
    """Every planned port that was read or tried -> (its plan, what was read or why not). When no switch port
    was read at all (:attr:`PhysicalObservation.switches_not_read`), the switch ports are not in it: they
    are skipped wholesale with that reason (:func:`switches_unread`)."""

    def compute() -> dict[str, tuple[PlannedPort, PortReading]]:
        out: dict[str, tuple[PlannedPort, PortReading]] = {}
        for p in plan.host_ports:
            out[p.name] = (p, obs.host_port(p.end.device, p.end.hca or "", p.end.port))
        if not obs.switches_not_read:
            for p in plan.switch_ports:
                out[p.name] = (p, obs.switch_port(p.end.device, p.end.port))
        return out

    return _memo("ports", plan, obs, compute)


def switches_unread(plan: Plan, obs: Obs) -> list[str]:
    """The switch ports that were not even tried (no switch port read at all), in plan order."""
    return [p.name for p in plan.switch_ports] if obs.switches_not_read else []


def _port_states(plan: Plan, obs: Obs) -> tuple[dict[str, str], list[tuple[PlannedPort, MstlinkReading]]]:
    """(every port not read or whose link is down -> why, every port read whose link is up)."""

    def compute() -> tuple[dict[str, str], list[tuple[PlannedPort, MstlinkReading]]]:
        down: dict[str, str] = {}
        up = []
        for name, (p, read) in port_readings(plan, obs).items():
            r = read.reading
            if r is None:
                down[name] = read.why
            else:
                why = _link_down(r)
                if why:
                    down[name] = why
                else:
                    up.append((p, r))
        down.update(dict.fromkeys(switches_unread(plan, obs), obs.switches_not_read))
        return down, up

    return _memo("states", plan, obs, compute)


# ------------------------------------------------------------------------------------------ objects, skips
def _ports(plan: Plan, obs: Obs) -> Sequence[str]:
    return _memo("port names", plan, obs, plan.port_names)


def _hosts(plan: Plan, _obs: Obs) -> Sequence[str]:
    return list(plan.hosts)


def _cables(plan: Plan, _obs: Obs) -> Sequence[str]:
    return [c.link for c in plan.cables]


def _hcas(plan: Plan, _obs: Obs) -> Sequence[str]:
    return [h.name for h in plan.hcas]


def _gpu_hcas(plan: Plan, _obs: Obs) -> Sequence[str]:
    return [h.name for h in plan.hcas if h.gpu is not None]


def _numa_hcas(plan: Plan, _obs: Obs) -> Sequence[str]:
    return [h.name for h in plan.hcas if h.numa_node is not None]


def _twin(objects: Callable[[Plan, Obs], Sequence[str]], plan: Plan, obs: Obs) -> dict[str, str] | None:
    if plan.twin is None:
        return None
    return dict.fromkeys(objects(plan, obs), plan.twin)


def _link_down(reading: MstlinkReading) -> str | None:
    if reading.state is not None and reading.state.lower() not in ("active", "linkup", "up"):
        return f"the link is {reading.state} (mstlink reads its counters as N/A)"
    return None


def _port_skips(need: Callable[[MstlinkReading], str | None]) -> Callable[[Plan, Obs], Mapping[str, str]]:
    def skips(plan: Plan, obs: Obs) -> Mapping[str, str]:
        twin = _twin(_ports, plan, obs)
        if twin is not None:
            return twin
        down, up = _port_states(plan, obs)
        out = dict(down)
        for p, r in up:
            why = need(r)
            if why:
                out[p.name] = why
        return out

    return skips


def _no_ber(r: MstlinkReading) -> str | None:
    return None if r.effective_ber is not None or r.symbol_ber is not None else "mstlink gave no effective BER"


def _no_raw(r: MstlinkReading) -> str | None:
    return None if r.raw_ber is not None else "mstlink gave no raw BER"


def _no_counters(r: MstlinkReading) -> str | None:
    return None if r.minutes_since_clear else "mstlink gave no time since the counters were cleared"


def _no_opcode(r: MstlinkReading) -> str | None:
    return None if r.status_opcode is not None else "mstlink printed no Troubleshooting Info"


def _no_temperature(r: MstlinkReading) -> str | None:
    m = r.module
    if m is None or m.temperature_c is None:
        return "no module temperature (no -m output, or a module without a sensor)"
    if m.temperature_high_c is None:
        return "the module reports no temperature alarm threshold (e.g. passive copper)"
    return None


def _up(plan: Plan, obs: Obs) -> list[tuple[PlannedPort, MstlinkReading]]:
    """The ports read whose link is up."""
    return _port_states(plan, obs)[1]


def _ready(
    plan: Plan, obs: Obs, need: Callable[[MstlinkReading], str | None]
) -> list[tuple[PlannedPort, MstlinkReading]]:
    if plan.twin is not None:
        return []
    return [(p, r) for p, r in _up(plan, obs) if need(r) is None]


# ------------------------------------------------------------------------------------------ checks
UNREACHABLE = Check(
    "phy.unreachable",
    "Every planned host answers the physical probe through Ansible",
    Severity.ERROR,
    "check that the host is up and reachable (`ansible HOST -m ping` with the inventory verify used)",
    _hosts,
    object_kind="the host",
    skips=lambda plan, obs: _twin(_hosts, plan, obs) or {},
)
BER_EFFECTIVE = Check(
    "phy.ber_effective",
    "Every port's effective (post-FEC) and symbol BER is within acceptance.physical.effective_ber_max",
    Severity.ERROR,
    "errors reach the application: reseat or replace the cable or module (both ends), clean the fibre; "
    f"then clear the counters ({_CLEAR}) and read again after a soak under traffic",
    _ports,
    object_kind="the port (`node01 mlx5_0 port 1`, `leaf01 port 33`)",
    skips=_port_skips(_no_ber),
)
BER_RAW = Check(
    "phy.ber_raw",
    "Every port's raw (pre-FEC) BER is within acceptance.physical.raw_ber_max for its speed",
    Severity.ERROR,
    "a marginal cable or optic: FEC still hides it, but it flaps under load; reseat, clean or replace it "
    f"({_CLEAR}; watch the raw BER over the next days)",
    _ports,
    object_kind="the port",
    severity_note="warning above acceptance.physical.raw_ber_warn, error above raw_ber_max",
    skips=_port_skips(_no_raw),
)
LINK_ERRORS = Check(
    "phy.link_errors",
    "Symbol errors, link error recoveries and link downs since the counters were cleared stay within "
    "acceptance.error_rates_per_hour",
    Severity.ERROR,
    f"a link that retrains or drops: reseat or replace the cable; after bring-up clear the counters ({_CLEAR}) "
    "once, as NVIDIA recommends, and judge the rate over a soak",
    _ports,
    object_kind="the port",
    skips=_port_skips(_no_counters),
)
TROUBLESHOOTING = Check(
    "phy.troubleshooting",
    "mstlink's troubleshooting opcode is 0 (no issue observed) on every port",
    Severity.ERROR,
    "follow the recommendation mstlink prints (the opcode table is in docs/physical.md)",
    _ports,
    object_kind="the port",
    skips=_port_skips(_no_opcode),
)
CABLE = Check(
    "phy.cable",
    "Every cable is of the planned medium, length or reach, part and vendor (read at either end)",
    Severity.ERROR,
    "replace the cable with the planned one (the cable report lists every link planned against found), or "
    "correct fabric.cables / the link's cable in the spec",
    _cables,
    object_kind="the cable (`leaf01:1 <-> node01/mlx5_0:1`)",
    skips=lambda plan, obs: _cable_skips(plan, obs),
)
TEMPERATURE = Check(
    "phy.module_temperature",
    "Every module runs below its own high-temperature alarm by acceptance.physical.module_temperature_margin_c",
    Severity.WARNING,
    "check the airflow at the port (fans, blanking panels, a neighbouring hot module); replace a module that "
    "stays hot: it shuts down at its alarm",
    _ports,
    object_kind="the port",
    severity_note="error at or over the module's alarm threshold",
    skips=_port_skips(_no_temperature),
)
PCIE = Check(
    "phy.pcie",
    "Every HCA's PCIe link (and every hop above it) carries its fastest planned port's rate",
    Severity.ERROR,
    "reseat the card in a slot wired for the needed generation and width (BIOS: the slot's link speed and "
    "bifurcation); a riser or retimer can train it down",
    _hcas,
    object_kind="the HCA (`node01 mlx5_0`)",
    severity_note="warning when the link carries the rate but trained below what card and slot both can do",
    skips=lambda plan, obs: _pcie_skips(plan, obs),
)
GPU_LOCALITY = Check(
    "phy.gpu_locality",
    "Every HCA that serves a GPU is local to it (acceptance.physical.gpu_locality; the NUMA node without nvidia-smi)",
    Severity.ERROR,
    "GPUDirect RDMA crosses the CPU: move the HCA (or the cable) so that the rail's HCA sits under the GPU's "
    "PCIe switch, or correct the GPU the spec gives the HCA or its rail",
    _gpu_hcas,
    object_kind="the HCA",
    skips=lambda plan, obs: _gpu_skips(plan, obs),
)
NUMA = Check(
    "phy.numa",
    "Every HCA with a planned numa_node is on it",
    Severity.ERROR,
    "correct nodes[].hcas[].numa_node (perftest binds to it) or move the card",
    _numa_hcas,
    object_kind="the HCA",
    skips=lambda plan, obs: _numa_skips(plan, obs),
)
FIRMWARE: Check[Plan, Obs] = Check(
    "phy.firmware",
    "Devices of one kind run one firmware version (HCAs by board id, modules by part number, switches)",
    Severity.WARNING,
    "update the odd device to the version the others run (mstflint / mlxfwmanager; switches: their image)",
    lambda plan, obs: _firmware_objects(plan, obs),
    object_kind="the HCA, the port of a module, or the switch",
)


# ------------------------------------------------------------------------------------------ functions
def _unreachable(plan: Plan, obs: Obs) -> list[Finding]:
    if plan.twin is not None:
        return []
    return [UNREACHABLE.finding(h, "answers", obs.unreachable[h]) for h in plan.hosts if h in obs.unreachable]


def _ber(plan: Plan, obs: Obs) -> list[Finding]:
    limit = plan.limits.effective_ber_max
    out = []
    for p, r in _ready(plan, obs, _no_ber):
        worst = max(v for v in (r.effective_ber, r.symbol_ber) if v is not None)
        if worst > limit:
            parts = [f"effective BER {ber_text(r.effective_ber)}"]
            if r.symbol_ber is not None:
                parts.append(f"symbol BER {ber_text(r.symbol_ber)}")
            since = f" over {r.minutes_since_clear:g} min since clear" if r.minutes_since_clear else ""
            out.append(BER_EFFECTIVE.finding(p.name, f"<= {ber_text(limit)}", ", ".join(parts) + since))
    return out


def _raw(plan: Plan, obs: Obs) -> list[Finding]:
    out = []
    for p, r in _ready(plan, obs, _no_raw):
        raw = r.raw_ber or 0.0
        high, warn = plan.limits.raw_ber_max[p.speed], plan.limits.raw_ber_warn[p.speed]
        lanes = f" (raw errors per lane {','.join(map(str, r.raw_errors_per_lane))})" if r.raw_errors_per_lane else ""
        if raw > high:
            out.append(BER_RAW.finding(p.name, f"raw BER <= {ber_text(high)} ({p.speed})", f"{ber_text(raw)}{lanes}"))
        elif raw > warn:
            out.append(
                BER_RAW.finding(
                    p.name,
                    f"raw BER <= {ber_text(warn)} ({p.speed}, warning level)",
                    f"{ber_text(raw)}{lanes}",
                    severity=Severity.WARNING,
                )
            )
    return out


_RATE_COUNTERS = (
    ("SymbolErrorCounter", "symbol errors"),
    ("LinkErrorRecoveryCounter", "link error recoveries"),
    ("LinkDownedCounter", "link downs"),
)


def _counts(r: MstlinkReading) -> dict[str, int | None]:
    symbols = r.symbol_errors if r.symbol_errors is not None else r.effective_errors
    return {
        "SymbolErrorCounter": symbols,
        "LinkErrorRecoveryCounter": r.link_recoveries,
        "LinkDownedCounter": r.link_down,
    }


def _link_errors(plan: Plan, obs: Obs) -> list[Finding]:
    out = []
    for p, r in _ready(plan, obs, _no_counters):
        hours = (r.minutes_since_clear or 0.0) / 60.0
        over, limits = [], []
        for counter, words in _RATE_COUNTERS:
            limit = plan.rates_per_hour.get(counter)
            count = _counts(r)[counter]
            if limit is None or not count:
                continue
            rate = count / hours
            if rate > limit:
                over.append(f"{count} {words} in {hours:.1f} h = {rate:.3g}/h")
                limits.append(f"{counter} <= {limit:g}/h")
        if over:
            out.append(LINK_ERRORS.finding(p.name, "; ".join(limits), "; ".join(over)))
    return out


def _troubleshooting(plan: Plan, obs: Obs) -> list[Finding]:
    out = []
    for p, r in _ready(plan, obs, _no_opcode):
        if r.status_opcode:
            said = f": {r.recommendation}" if r.recommendation else ""
            out.append(
                TROUBLESHOOTING.finding(p.name, "opcode 0 (no issue observed)", f"opcode {r.status_opcode}{said}")
            )
    return out


def _temperature(plan: Plan, obs: Obs) -> list[Finding]:
    margin = plan.limits.module_temperature_margin_c
    out = []
    for p, r in _ready(plan, obs, _no_temperature):
        m = r.module
        if m is None or m.temperature_c is None or m.temperature_high_c is None:  # _no_temperature skipped it
            continue
        t, high = m.temperature_c, m.temperature_high_c
        found = f"{t:g} C (alarm at {high:g} C; {m.vendor or '?'} {m.part_number or '?'})"
        if t >= high:
            out.append(TEMPERATURE.finding(p.name, f"below {high:g} C", found, severity=Severity.ERROR))
        elif t >= high - margin:
            out.append(TEMPERATURE.finding(p.name, f"below {high - margin:g} C ({margin:g} C under its alarm)", found))
    return out


# ------------------------------------------------------------------------------------------ cables
def module_text(m: ModuleInfo) -> str:
    """``Optical Module (separated) / 850 nm VCSEL, 50 m, NVIDIA MMA4Z00-NS``."""
    kind = " / ".join(x for x in (m.cable_type, m.technology) if x) or "unidentified"
    length = f", {m.length_m:g} m" if m.length_m is not None else ""
    who = " ".join(x for x in (m.vendor, m.part_number) if x)
    return f"{kind}{length}" + (f", {who}" if who else "")


def cable_differences(cable: PlannedCable, m: ModuleInfo) -> list[str]:
    """What of the module at one end is not as planned (empty: as planned)."""
    out = []
    if cable.medium is not None:
        if m.medium is None:
            out.append(f"no known medium ({m.cable_type or 'no Cable Type'})")
        elif not medium_matches(cable.medium, m.medium):
            out.append(f"{MEDIA[m.medium]}, not {MEDIA[cable.medium]}")
    if cable.max_length_m is not None and m.length_m is not None and m.medium is not None:
        if m.medium == "transceiver" and m.length_m < cable.max_length_m:
            out.append(f"reach {m.length_m:g} m < {cable.max_length_m:g} m")
        elif m.medium != "transceiver" and m.length_m > cable.max_length_m:
            out.append(f"{m.length_m:g} m > {cable.max_length_m:g} m")
    if cable.part_numbers and (m.part_number or "") not in cable.part_numbers:
        out.append(f"part {m.part_number or '?'} not {' or '.join(cable.part_numbers)}")
    if cable.vendors and (m.vendor or "").lower() not in {v.lower() for v in cable.vendors}:
        out.append(f"vendor {m.vendor or '?'} not {' or '.join(cable.vendors)}")
    return out


def cable_reads(plan: Plan, obs: Obs) -> list[tuple[tuple[PlannedPort, PortReading], ...]]:
    """Per cable (in plan.cables' order) its planned ends as read or tried: the ends that are planned ports
    (an HCA port of a node that is not a host, e.g. an SM server, is not probed), a switch port with why it
    was not read when none was."""

    def compute() -> list[tuple[tuple[PlannedPort, PortReading], ...]]:
        readings = port_readings(plan, obs)
        unread = PortReading(None, obs.switches_not_read)
        out = []
        for ends in plan.cable_ports:
            read = []
            for p in ends:
                got = readings.get(p.name)
                if got is not None:
                    read.append(got)
                elif obs.switches_not_read and p.end.hca is None:
                    read.append((p, unread))
            out.append(tuple(read))
        return out

    return _memo("cables", plan, obs, compute)


def _cable_skips(plan: Plan, obs: Obs) -> Mapping[str, str]:
    twin = _twin(_cables, plan, obs)
    if twin is not None:
        return twin
    out = {}
    for cable, ends in zip(plan.cables, cable_reads(plan, obs), strict=True):
        if not ends:
            continue
        for _p, r in ends:
            if r.reading is not None and r.reading.module is not None:
                break
        else:
            out[cable.link] = "; ".join(r.why or f"{p.name}: mstlink printed no Module Info" for p, r in ends)
    return out


def _cable(plan: Plan, obs: Obs) -> list[Finding]:
    if plan.twin is not None:
        return []
    out = []
    for cable, ends in zip(plan.cables, cable_reads(plan, obs), strict=True):
        wrong = []
        for p, read in ends:
            m = read.reading.module if read.reading is not None else None
            if m is None:
                continue
            diffs = cable_differences(cable, m)
            if diffs:
                wrong.append(f"at {p.name}: {module_text(m)} ({'; '.join(diffs)})")
        if wrong:
            out.append(CABLE.finding(cable.link, f"{cable.planned_text()} ({cable.medium_from})", "; ".join(wrong)))
    return out


# ------------------------------------------------------------------------------------------ PCIe, GPU, NUMA
def hca_devices(plan: Plan, obs: Obs) -> list[tuple[PlannedHca, DevicePhysical | None, str]]:
    """Every planned HCA (in plan.hcas' order) with its device as its host's probe saw it, or why none."""
    return _memo("hcas", plan, obs, lambda: [(h, *obs.device(h.host, h.device)) for h in plan.hcas])


def _hca_skips(
    objects: Callable[[Plan, Obs], Sequence[str]],
    judged: Callable[[PlannedHca], bool],
    unreadable: Callable[[PlannedHca, DevicePhysical, HostPhysical], str | None],
) -> Callable[[Plan, Obs], Mapping[str, str]]:
    """The skips of a check over HCAs: every one on the twin; else each judged HCA that was not seen (why) or
    whose values ``unreadable`` finds missing."""

    def skips(plan: Plan, obs: Obs) -> Mapping[str, str]:
        twin = _twin(objects, plan, obs)
        if twin is not None:
            return twin
        out = {}
        for h, dev, why in hca_devices(plan, obs):
            if not judged(h):
                continue
            missing = why if dev is None else unreadable(h, dev, obs.hosts[h.host])
            if missing:
                out[h.name] = missing
        return out

    return skips


def _no_link(h: PlannedHca, dev: DevicePhysical, _seen: HostPhysical) -> str | None:
    if dev.pcie is None or dev.pcie.current is None:
        return f"sysfs gives no PCIe link speed and width for {h.device} (current_link_speed missing)"
    return None


def _no_locality(_h: PlannedHca, dev: DevicePhysical, seen: HostPhysical) -> str | None:
    if seen.topology is None and (dev.pcie is None or dev.pcie.numa_node is None or not seen.gpus):
        return "no nvidia-smi topo -m and no NUMA node of the HCA or its GPU in sysfs"
    return None


def _no_numa(_h: PlannedHca, dev: DevicePhysical, _seen: HostPhysical) -> str | None:
    if dev.pcie is None or dev.pcie.numa_node is None:
        return "sysfs gives no NUMA node (numa_node -1: no locality from firmware)"
    return None


Skips = Callable[[Plan, Obs], Mapping[str, str]]
_pcie_skips: Skips = _hca_skips(_hcas, lambda _h: True, _no_link)
_gpu_skips: Skips = _hca_skips(_gpu_hcas, lambda h: h.gpu is not None, _no_locality)
_numa_skips: Skips = _hca_skips(_numa_hcas, lambda h: h.numa_node is not None, _no_numa)


def _pcie(plan: Plan, obs: Obs) -> list[Finding]:
    if plan.twin is not None:
        return []
    out = []
    for h, dev, _why in hca_devices(plan, obs):
        if dev is None or dev.pcie is None or dev.pcie.current is None:
            continue
        finding = _pcie_finding(h, dev.path)
        if finding is not None:
            out.append(finding)
    return out


def _pcie_finding(h: PlannedHca, hops: Sequence[PcieHop]) -> Finding | None:
    hca = hops[0]
    current = hca.current
    assert current is not None
    need_text = f"{h.need.arithmetic()} ({h.rate_text}; {h.need_from})"
    capable = f"; capable of {hca.capable.text}" if hca.capable is not None else ""
    if not current.carries(h.rate_gbps):
        observed = f"{current.arithmetic()} < {h.rate_gbps:g} Gb/s {h.rate_text.split(' (')[0]}{capable}"
        return PCIE.finding(h.name, need_text, observed)
    if h.explicit and (current.generation < h.need.generation or current.width < h.need.width):
        return PCIE.finding(h.name, need_text, f"{current.arithmetic()}{capable}")
    for hop in hops[1:]:
        if hop.current is not None and not hop.current.carries(h.rate_gbps):
            observed = f"{current.text} at the HCA, but limited by {hop.current.arithmetic()} at {hop.bdf}"
            return PCIE.finding(h.name, need_text, observed)
    parent = hops[1].capable if len(hops) > 1 else None
    if hca.capable is not None and parent is not None:
        best = (min(hca.capable.generation, parent.generation), min(hca.capable.width, parent.width))
        if current.generation < best[0] or current.width < best[1]:
            return PCIE.finding(
                h.name,
                f"Gen{best[0]} x{best[1]} (what the card and its slot both can do)",
                f"{current.arithmetic()} (carries {h.rate_text}, but trained down)",
                severity=Severity.WARNING,
            )
    return None


def _gpu_locality(plan: Plan, obs: Obs) -> list[Finding]:
    if plan.twin is not None:
        return []
    allowed = plan.limits.gpu_locality
    out = []
    for h, dev, _why in hca_devices(plan, obs):
        if h.gpu is None or dev is None:
            continue
        seen = obs.hosts[h.host]
        expected = f"GPU{h.gpu} at {allowed} or nearer ({h.gpu_from})"
        topo = seen.topology
        if topo is not None:
            if h.gpu not in topo.gpus:
                out.append(
                    GPU_LOCALITY.finding(h.name, expected, f"no GPU{h.gpu} (nvidia-smi shows {len(topo.gpus)} GPUs)")
                )
                continue
            relation = topo.relation.get((h.gpu, h.device))
            if relation is None:
                out.append(GPU_LOCALITY.finding(h.name, expected, f"nvidia-smi topo -m does not list {h.device}"))
                continue
            if DISTANCE.get(relation, 9) > DISTANCE[allowed]:
                near = [f"{nic} {rel}" for nic, rel in topo.nearest(h.gpu) if DISTANCE.get(rel, 9) <= DISTANCE[allowed]]
                nearest = f"; local to GPU{h.gpu}: {', '.join(near)}" if near else f"; no NIC is local to GPU{h.gpu}"
                out.append(GPU_LOCALITY.finding(h.name, expected, f"{relation} to GPU{h.gpu}{nearest}"))
            continue
        if dev.pcie is None or dev.pcie.numa_node is None or not seen.gpus:
            continue
        if h.gpu >= len(seen.gpus):
            out.append(GPU_LOCALITY.finding(h.name, expected, f"no GPU{h.gpu} ({len(seen.gpus)} NVIDIA GPUs in sysfs)"))
            continue
        bdf, numa = seen.gpus[h.gpu]
        if numa is not None and numa != dev.pcie.numa_node:
            out.append(
                GPU_LOCALITY.finding(
                    h.name,
                    f"GPU{h.gpu}'s NUMA node ({h.gpu_from}; no nvidia-smi: judged by NUMA node)",
                    f"NUMA node {dev.pcie.numa_node}; GPU{h.gpu} ({bdf}) is on NUMA node {numa}",
                )
            )
    return out


def _numa(plan: Plan, obs: Obs) -> list[Finding]:
    if plan.twin is not None:
        return []
    out = []
    for h, dev, _why in hca_devices(plan, obs):
        if h.numa_node is None:
            continue
        found = dev.pcie.numa_node if dev is not None and dev.pcie is not None else None
        if found is not None and found != h.numa_node:
            out.append(NUMA.finding(h.name, f"NUMA node {h.numa_node}", f"NUMA node {found}"))
    return out


# ------------------------------------------------------------------------------------------ firmware
def firmware_kinds(plan: Plan, obs: Obs) -> dict[str, dict[str, str]]:
    """Kind -> object -> firmware: HCAs by board id (hca type where none), modules by part number, switches."""
    return _memo("firmware", plan, obs, lambda: _firmware_kinds(plan, obs))


def _firmware_kinds(plan: Plan, obs: Obs) -> dict[str, dict[str, str]]:
    kinds: dict[str, dict[str, str]] = defaultdict(dict)
    if plan.twin is not None:
        return kinds
    for h, dev, _why in hca_devices(plan, obs):
        if dev is not None and dev.firmware:
            kinds[f"HCA {dev.board_id or dev.hca_type or '?'}"][h.name] = dev.firmware
    for name, (_p, read) in port_readings(plan, obs).items():
        m = read.reading.module if read.reading is not None else None
        if m is not None and m.firmware and m.part_number:
            kinds[f"module {m.part_number}"][name] = m.firmware
    for switch, version in obs.switch_firmware.items():
        kinds["switch"][switch] = version
    return kinds


def _firmware_objects(plan: Plan, obs: Obs) -> Sequence[str]:
    return [o for objects in firmware_kinds(plan, obs).values() for o in objects]


def _firmware(plan: Plan, obs: Obs) -> list[Finding]:
    out = []
    for kind, versions in firmware_kinds(plan, obs).items():
        counts = Counter(versions.values())
        if len(counts) < 2:
            continue
        common, n = counts.most_common(1)[0]
        for obj, version in versions.items():
            if version != common:
                out.append(FIRMWARE.finding(obj, f"{common} (as {n} of {len(versions)} {kind})", version))
    return out


FAMILIES: tuple[CheckFamily[Plan, Obs], ...] = (
    CheckFamily(_unreachable, (UNREACHABLE,)),
    CheckFamily(_ber, (BER_EFFECTIVE,)),
    CheckFamily(_raw, (BER_RAW,)),
    CheckFamily(_link_errors, (LINK_ERRORS,)),
    CheckFamily(_troubleshooting, (TROUBLESHOOTING,)),
    CheckFamily(_cable, (CABLE,)),
    CheckFamily(_temperature, (TEMPERATURE,)),
    CheckFamily(_pcie, (PCIE,)),
    CheckFamily(_gpu_locality, (GPU_LOCALITY,)),
    CheckFamily(_numa, (NUMA,)),
    CheckFamily(_firmware, (FIRMWARE,)),
)
