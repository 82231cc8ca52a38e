"""The checks of ``verify --nodes``: pure functions of (plan, host observations) -> findings.

Objects are hosts ("node01") or HCA ports ("node01 mlx5_0 port 1"). A host that could not be reached is
one ``node.unreachable`` finding; every other check skips it (it cannot judge what it did not see).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ibprov.report.model import FABRIC, CheckResult, Finding, Report, Severity
from ibprov.spec import LoadedSpec
from ibprov.spec.units import data_rate_gbps
from ibprov.verify.checks.base import Check
from ibprov.verify.nodes.observation import HostObservation, PortFacts

__all__ = ["NODE_CHECKS", "NodePlan", "PlannedPort", "build_node_plan", "check_nodes", "run_node_checks"]


@dataclass(frozen=True)
class PlannedPort:
    host: str
    device: str
    port: int
    rate_gbps: float
    rate_text: str  # "HDR 4x (200 Gb/s)"
    firmware: str | None

    @property
    def name(self) -> str:
        return f"{self.host} {self.device} port {self.port}"


@dataclass(frozen=True)
class NodePlan:
    """What verify --nodes compares with: per host its HCA ports, IPoIB interfaces and whether it runs an SM."""

    cluster: str
    spec: str
    hosts: tuple[str, ...]
    ports: tuple[PlannedPort, ...]
    sm_hosts: frozenset[str] = frozenset()
    stack_version: str | None = None
    ipoib: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # host -> interface -> "addr/prefix"


def build_node_plan(loaded: LoadedSpec) -> NodePlan:
    from ibprov.render.inventory import ipoib_vars

    spec = loaded.spec
    ports = []
    for node in spec.nodes:
        for hca in node.hcas:
            speed, width = hca.speed or spec.fabric.speed, hca.width or spec.fabric.width
            rate = data_rate_gbps(speed, width)
            for port in hca.ports:
                text = f"{speed} {width} ({rate:g} Gb/s)"
                ports.append(PlannedPort(node.name, hca.device, port, rate, text, hca.firmware))
    ipoib = {host: {str(i["name"]): str(i["address"]) for i in ifaces} for host, ifaces in ipoib_vars(loaded).items()}
    return NodePlan(
        cluster=spec.cluster.name,
        spec=str(loaded.path) if loaded.path else "",
        hosts=tuple(n.name for n in spec.nodes),
        ports=tuple(ports),
        sm_hosts=frozenset(i.node for i in spec.subnet_manager.instances),
        stack_version=spec.stack.version,
        ipoib=ipoib,
    )


Hosts = Mapping[str, HostObservation]
_Fn = Callable[[NodePlan, Hosts], list[Finding]]


def _reached(hosts: Hosts, host: str) -> HostObservation | None:
    obs = hosts.get(host)
    return obs if obs is not None and obs.reachable else None


def _all_hosts(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return list(plan.hosts)


def _all_ports(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return [p.name for p in plan.ports]


def _ipoib_hosts(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return [f"{h} {i}" for h in plan.hosts for i in plan.ipoib.get(h, {})]


def _stack_hosts(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return list(plan.hosts) if plan.stack_version else []


def _c(id_: str, title: str, severity: Severity, fix: str) -> Check:
    return Check(id_, title, severity, fix, lambda _p, _o: [FABRIC])  # objects come from NodeCheck


UNREACHABLE = _c(
    "node.unreachable",
    "Every planned host answers through Ansible",
    Severity.ERROR,
    "check that the host is up, its address and SSH user in the spec/inventory, and `ansible HOST -m ping`",
)
HCA_MISSING = _c(
    "node.hca_missing",
    "Every planned HCA and port is present",
    Severity.ERROR,
    "check the card is seated and its driver loaded (ls /sys/class/infiniband; lspci | grep -i mellanox; "
    "modprobe mlx5_ib); the device name in the spec",
)
PORT_STATE = _c(
    "node.port_state",
    "Every planned HCA port is ACTIVE and LinkUp",
    Severity.ERROR,
    "check the cable and the switch port (ibstat); ACTIVE needs a running master SM (verify --fabric)",
)
RATE = _c(
    "node.rate",
    "Every planned HCA port runs at least at the planned speed and width",
    Severity.ERROR,
    "reseat or replace the cable; check the cable's and the switch port's speed; mlxlink -d DEV for details",
)
FIRMWARE = _c(
    "node.firmware",
    "HCA firmware is the planned version (or, with none planned, the same across the rack)",
    Severity.ERROR,
    "update the firmware (mlxfwmanager / mstflint) and reboot or mlxfwreset the card",
)
STACK = _c(
    "node.stack_version",
    "The RDMA stack (rdma-core) is the planned version",
    Severity.ERROR,
    "re-apply the ib_stack role (ibprov apply) to install the planned stack version",
)
MEMLOCK = _c(
    "node.memlock",
    "Locked memory is unlimited (RDMA registers memory)",
    Severity.ERROR,
    "re-apply the ib_stack role (ib_stack_memlock: unlimited, in /etc/security/limits.d), then log in again",
)
IPOIB = _c(
    "node.ipoib",
    "Every planned IPoIB interface exists with its planned address",
    Severity.ERROR,
    "re-apply the ib_ipoib role; check `ip addr` and the interface's parent and PKey",
)
STRAY_SM = _c(
    "node.stray_sm",
    "OpenSM runs only on hosts the plan gives an SM instance",
    Severity.SECURITY,
    "stop and disable opensm on this host (systemctl disable --now opensm), or add it to "
    "subnet_manager.instances if it belongs there",
)


def _unreachable(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for host in plan.hosts:
        obs = hosts.get(host)
        if obs is None:
            out.append(UNREACHABLE.finding(host, "reachable", "not collected"))
        elif obs.error is not None:
            out.append(UNREACHABLE.finding(host, "reachable", obs.error))
    return out


def _hca_missing(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for p in plan.ports:
        obs = _reached(hosts, p.host)
        if obs is None:
            continue
        dev = obs.devices.get(p.device)
        if dev is None:
            seen = ", ".join(sorted(obs.devices)) or "no RDMA device"
            out.append(HCA_MISSING.finding(p.name, f"{p.device} present", f"no {p.device} ({seen})"))
        elif p.port not in dev.ports:
            seen = ", ".join(map(str, sorted(dev.ports))) or "none"
            out.append(HCA_MISSING.finding(p.name, f"port {p.port} present", f"{p.device} has ports {seen}"))
    return out


def _port(hosts: Hosts, p: PlannedPort) -> PortFacts | None:
    obs = _reached(hosts, p.host)
    dev = obs.devices.get(p.device) if obs is not None else None
    return dev.ports.get(p.port) if dev is not None else None


def _port_state(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for p in plan.ports:
        port = _port(hosts, p)
        if port is None:
            continue
        state, phys = (port.state or "unknown"), (port.phys_state or "unknown")
        if state.upper() != "ACTIVE" or phys.replace(" ", "").lower() != "linkup":
            out.append(PORT_STATE.finding(p.name, "ACTIVE / LinkUp", f"{state} / {phys}"))
    return out


def _rate(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for p in plan.ports:
        port = _port(hosts, p)
        if port is None or (port.state or "").upper() != "ACTIVE":
            continue  # a port that is down has no meaningful rate: node.port_state says so
        if port.rate_gbps is None:
            out.append(RATE.finding(p.name, p.rate_text, "no rate reported"))
        elif port.rate_gbps + 0.01 < p.rate_gbps:
            out.append(RATE.finding(p.name, p.rate_text, port.rate_text or f"{port.rate_gbps:g} Gb/s"))
    return out


def _firmware(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out: list[Finding] = []
    seen: dict[tuple[str, str], str] = {}  # (host, device) -> fw, for devices the spec names no version for
    for p in plan.ports:
        obs = _reached(hosts, p.host)
        dev = obs.devices.get(p.device) if obs is not None else None
        if dev is None or (p.host, p.device) in seen:
            continue
        fw = dev.fw_ver or "unknown"
        obj = f"{p.host} {p.device}"
        if p.firmware is not None:
            seen[(p.host, p.device)] = ""
            if fw != p.firmware:
                out.append(FIRMWARE.finding(obj, f"firmware {p.firmware}", f"firmware {fw}"))
        else:
            seen[(p.host, p.device)] = fw
    unplanned = {k: v for k, v in seen.items() if v}
    counts = Counter(unplanned.values())
    if len(counts) > 1:
        top = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        majority, n = top
        if list(counts.values()).count(n) > 1:  # a tie: no majority to name the odd ones out against
            versions = ", ".join(f"{v} on {c}" for v, c in sorted(counts.items()))
            for host, device in sorted(unplanned):
                fw = unplanned[(host, device)]
                out.append(
                    FIRMWARE.finding(f"{host} {device}", "the same firmware across the rack", f"{fw} ({versions})")
                )
        else:
            for (host, device), fw in sorted(unplanned.items()):
                if fw != majority:
                    expected = f"firmware {majority} (as on {n} other HCAs; the spec names none)"
                    out.append(FIRMWARE.finding(f"{host} {device}", expected, f"firmware {fw}"))
    return out


def _firmware_objects(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return list(dict.fromkeys(f"{p.host} {p.device}" for p in plan.ports))


def version_matches(planned: str, found: str) -> bool:
    """The installed version is the planned one, or starts with it ("50.0" matches "50.0-2ubuntu1"); an
    epoch ("1:") is ignored."""
    found = found.split(":", 1)[1] if ":" in found and found.split(":", 1)[0].isdigit() else found
    return found == planned or (found.startswith(planned) and not found[len(planned)].isalnum())


def _stack(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    if not plan.stack_version:
        return []
    out = []
    for host in plan.hosts:
        obs = _reached(hosts, host)
        if obs is None:
            continue
        found = obs.stack_version
        if found is None or not version_matches(plan.stack_version, found):
            shown = f"rdma-core {found}" if found else "rdma-core not installed"
            out.append(STACK.finding(host, f"rdma-core {plan.stack_version}", shown))
    return out


def _memlock(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for host in plan.hosts:
        obs = _reached(hosts, host)
        if obs is not None and obs.memlock != "unlimited":
            shown = f"{obs.memlock} KiB" if obs.memlock else "unknown (ulimit -l printed nothing)"
            out.append(MEMLOCK.finding(host, "memlock unlimited", shown))
    return out


def _ipoib(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for host in plan.hosts:
        obs = _reached(hosts, host)
        if obs is None:
            continue
        for iface, address in plan.ipoib.get(host, {}).items():
            obj = f"{host} {iface}"
            if iface not in obs.addresses:
                out.append(IPOIB.finding(obj, f"{iface} with {address}", f"no interface {iface}"))
            elif address not in obs.addresses[iface]:
                have = ", ".join(obs.addresses[iface]) or "no address"
                out.append(IPOIB.finding(obj, f"{iface} with {address}", f"{iface} with {have}"))
    return out


def _stray_sm(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for host in plan.hosts:
        obs = _reached(hosts, host)
        if obs is not None and obs.opensm and host not in plan.sm_hosts:
            out.append(STRAY_SM.finding(host, "no OpenSM", "OpenSM running (" + "; ".join(obs.opensm) + ")"))
    return out


NODE_CHECKS: tuple[tuple[Check, _Fn, Callable[[NodePlan, Hosts], Sequence[str]]], ...] = (
    (UNREACHABLE, _unreachable, _all_hosts),
    (HCA_MISSING, _hca_missing, _all_ports),
    (PORT_STATE, _port_state, _all_ports),
    (RATE, _rate, _all_ports),
    (FIRMWARE, _firmware, _firmware_objects),
    (STACK, _stack, _stack_hosts),
    (MEMLOCK, _memlock, _all_hosts),
    (IPOIB, _ipoib, _ipoib_hosts),
    (STRAY_SM, _stray_sm, _all_hosts),
)


def run_node_checks(plan: NodePlan, hosts: Hosts) -> list[CheckResult]:
    """Every node check, in catalogue order, with the objects it examined and its findings."""
    results = []
    for check, fn, objects in NODE_CHECKS:
        findings = fn(plan, hosts)
        stray = {f.check for f in findings} - {check.id}
        if stray:
            raise AssertionError(f"{check.id} reported other check ids {sorted(stray)}")
        mine = tuple(sorted(findings, key=lambda f: f.object))
        results.append(CheckResult(check.id, check.title, tuple(objects(plan, hosts)), mine))
    return results


def check_nodes(
    plan: NodePlan,
    hosts: Hosts,
    *,
    started: str = "",
    duration: float = 0.0,
    collected_from: str = "",
    notes: Sequence[str] = (),
) -> Report:
    """The report of the hosts' observations against the plan (no I/O)."""
    reached = sum(1 for h in plan.hosts if _reached(hosts, h) is not None)
    return Report(
        command="verify --nodes",
        cluster=plan.cluster,
        spec=plan.spec,
        started=started,
        duration_seconds=duration,
        collected_from=collected_from,
        checks=tuple(run_node_checks(plan, hosts)),
        fabric={"hosts": len(plan.hosts), "hosts_reached": reached},
        notes=tuple(notes),
    )
