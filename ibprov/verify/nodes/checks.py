"""The checks of ``verify --nodes``: pure functions of (plan, host observations) -> findings.

Objects are hosts ("node01") or HCA ports ("node01 mlx5_0 port 1"). A host that could not be reached is
one ``node.unreachable`` finding; every other check skips it (it cannot judge what it did not see).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ibprov.report.model import Finding, Severity
from ibprov.verify.judge import Check, CheckFamily
from ibprov.verify.nodes.observation import DeviceFacts, HostObservation, PortFacts
from ibprov.verify.nodes.plan import NodePlan, PlannedPort

__all__ = ["FAMILIES", "Hosts", "reached", "version_matches"]


Hosts = Mapping[str, HostObservation]


def _reached(hosts: Hosts, host: str) -> HostObservation | None:
    obs = hosts.get(host)
    return obs if obs is not None and obs.reachable else None


def _all_hosts(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return list(plan.hosts)


def _all_ports(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return [p.name for p in plan.ports]


def _ipoib_hosts(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return [f"{h} {i}" for h in plan.hosts for i in plan.ipoib.get(h, {})]


def _firmware_objects(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return list(dict.fromkeys(f"{p.host} {p.device}" for p in plan.ports))


def _stack_hosts(plan: NodePlan, _hosts: Hosts) -> Sequence[str]:
    return list(plan.hosts) if plan.stack_version else []


UNREACHABLE = Check(
    "node.unreachable",
    "Every planned host answers through Ansible",
    Severity.ERROR,
    "check that the host is up, its address and SSH user in the spec/inventory, and "
    "`ansible HOST -i INVENTORY -m ping` (the finding names the inventory verify used)",
    _all_hosts,
    object_kind="the host",
)
HCA_MISSING = Check(
    "node.hca_missing",
    "Every planned HCA and port is present",
    Severity.ERROR,
    "check the card is seated and its driver loaded (ls /sys/class/infiniband; lspci | grep -i mellanox; "
    "modprobe mlx5_ib); the device name in the spec",
    _all_ports,
    object_kind="the HCA port (`node01 mlx5_0 port 1`)",
    caveats=lambda plan, hosts: _device_caveats(plan, hosts),
)
PORT_STATE = Check(
    "node.port_state",
    "Every planned HCA port is ACTIVE and LinkUp",
    Severity.ERROR,
    "check the cable and the switch port (ibstat); ACTIVE needs a running master SM (verify --fabric)",
    _all_ports,
    object_kind="the HCA port",
    caveats=lambda plan, hosts: _device_caveats(plan, hosts),
)
RATE = Check(
    "node.rate",
    "Every planned HCA port runs at least at the planned speed and width",
    Severity.ERROR,
    "reseat or replace the cable; check the cable's and the switch port's speed; mlxlink -d DEV for details",
    _all_ports,
    object_kind="the HCA port",
    caveats=lambda plan, hosts: _rate_caveats(plan, hosts),
)
FIRMWARE = Check(
    "node.firmware",
    "HCA firmware is the planned version (or, with none planned, the same across the rack)",
    Severity.ERROR,
    "update the firmware (mlxfwmanager / mstflint) and reboot or mlxfwreset the card",
    _firmware_objects,
    object_kind="the HCA (`node01 mlx5_0`)",
    caveats=lambda plan, hosts: _firmware_caveats(plan, hosts),
)
STACK = Check(
    "node.stack_version",
    "The RDMA stack (rdma-core) is the planned version",
    Severity.ERROR,
    "re-apply the ib_stack role (ibprov apply) to install the planned stack version",
    _stack_hosts,
    object_kind="the host",
)
MEMLOCK = Check(
    "node.memlock",
    "Locked memory is unlimited (RDMA registers memory)",
    Severity.ERROR,
    "re-apply the ib_stack role (ib_stack_memlock: unlimited, in /etc/security/limits.d), then log in again",
    _all_hosts,
    object_kind="the host",
    caveats=lambda plan, hosts: _memlock_caveats(plan, hosts),
)
IPOIB = Check(
    "node.ipoib",
    "Every planned IPoIB interface exists with its planned address",
    Severity.ERROR,
    "re-apply the ib_ipoib role; check `ip addr` and the interface's parent and PKey",
    _ipoib_hosts,
    object_kind="`host interface`",
    caveats=lambda plan, hosts: _ipoib_caveats(plan, hosts),
)
STRAY_SM = Check(
    "node.stray_sm",
    "OpenSM runs only on hosts the plan gives an SM instance",
    Severity.SECURITY,
    "stop and disable opensm on this host (systemctl disable --now opensm), or add it to "
    "subnet_manager.instances if it belongs there",
    _all_hosts,
    object_kind="the host",
)


def _unreachable_fix(plan: NodePlan, host: str) -> str | None:
    """The fix naming the inventory verify used, as a command to paste (None: the generic fix)."""
    ping = plan.ping.get(host)
    if ping is None:
        return None
    return f"check that the host is up, its address and SSH user in the spec/inventory, and `{ping}`"


def _unreachable(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for host in plan.hosts:
        obs = hosts.get(host)
        error = "not collected" if obs is None else obs.error
        if error is not None:
            out.append(UNREACHABLE.finding(host, "reachable", error, fix=_unreachable_fix(plan, host)))
    return out


def _on_host(obs: HostObservation, p: PlannedPort) -> tuple[str, DeviceFacts] | None:
    """The host's device for a planned HCA: by name; a placeholder name (discover's ``hca3``) by node GUID."""
    dev = obs.devices.get(p.device_on_host)
    if dev is not None or p.placeholder_guid is None:
        return (p.device_on_host, dev) if dev is not None else None
    for name, facts in obs.devices.items():
        try:
            guid = int(facts.node_guid or "", 16)
        except ValueError:
            continue
        if guid == p.placeholder_guid:
            return name, facts
    return None


def _hca_missing(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for p in plan.ports:
        obs = _reached(hosts, p.host)
        if obs is None or p.hidden:
            continue
        found = _on_host(obs, p)
        dev = found[1] if found is not None else None
        if dev is None:
            seen = ", ".join(sorted(obs.devices)) or "no RDMA device"
            planned = p.device + (f" (as {p.seen_as} on the twin)" if p.seen_as else "")
            if p.placeholder_guid is not None:
                wanted = f"an HCA with node GUID 0x{p.placeholder_guid:016x}"
                out.append(HCA_MISSING.finding(p.name, f"{planned}: {wanted}", f"no such HCA ({seen})"))
                continue
            out.append(HCA_MISSING.finding(p.name, f"{planned} present", f"no {p.device_on_host} ({seen})"))
        elif p.port not in dev.ports:
            seen = ", ".join(map(str, sorted(dev.ports))) or "none"
            out.append(HCA_MISSING.finding(p.name, f"port {p.port} present", f"{p.device} has ports {seen}"))
    return out


def _device_caveats(plan: NodePlan, hosts: Hosts) -> dict[str, str]:
    out = {}
    for p in plan.ports:
        obs = _reached(hosts, p.host)
        found = _on_host(obs, p) if obs is not None and p.placeholder_guid is not None else None
        if found is not None and found[0] != p.device:
            out[p.name] = f"{p.device} is {found[0]} on the host (by node GUID): rename it in the spec"
        elif p.hidden:
            out[p.name] = "the twin attaches one simulated HCA per node container: this one is not on the host"
        elif p.seen_as:
            out[p.name] = f"the twin's simulated HCA is named {p.seen_as}: judged as {p.device}"
    return out


def _port(hosts: Hosts, p: PlannedPort) -> PortFacts | None:
    obs = _reached(hosts, p.host)
    if p.hidden or obs is None:
        return None
    found = _on_host(obs, p)
    dev = found[1] if found is not None else None
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
        planned = p.rate_text + (f" (the twin runs {p.twin_rate_text})" if p.twin_rate_text else "")
        if port.rate_gbps is None:
            out.append(RATE.finding(p.name, planned, "no rate reported"))
        elif port.rate_gbps + 0.01 < p.judged_gbps:
            out.append(RATE.finding(p.name, planned, port.rate_text or f"{port.rate_gbps:g} Gb/s"))
    return out


def _rate_caveats(plan: NodePlan, _hosts: Hosts) -> dict[str, str]:
    return {
        p.name: f"planned {p.rate_text}, which the twin cannot run: judged at {p.twin_rate_text}"
        for p in plan.ports
        if p.twin_rate_gbps is not None
    }


def _firmware(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out: list[Finding] = []
    if "firmware" in plan.unseen:
        return out  # the twin's simulated HCAs have no firmware to compare: a caveat on every HCA
    seen: dict[tuple[str, str], str] = {}  # (host, device) -> fw, for devices the spec names no version for
    for p in plan.ports:
        obs = _reached(hosts, p.host)
        found = _on_host(obs, p) if obs is not None and not p.hidden else None
        dev = found[1] if found is not None else None
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


def _firmware_caveats(plan: NodePlan, hosts: Hosts) -> dict[str, str]:
    if "firmware" not in plan.unseen:
        return {}
    return dict.fromkeys(
        _firmware_objects(plan, hosts), "the twin's simulated HCA reports no real firmware: not judged"
    )


def _memlock(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    files = "memlock" in plan.on_files
    for host in plan.hosts:
        obs = _reached(hosts, host)
        if obs is None:
            continue
        value = obs.memlock_configured if files else obs.memlock
        if value != "unlimited":
            shown = f"{value} KiB" if value else "unknown (ulimit -l printed nothing)"
            if files:
                shown = f"{value} KiB in the limits files" if value else "no memlock line for * in the limits files"
            out.append(MEMLOCK.finding(host, "memlock unlimited", shown))
    return out


def _memlock_caveats(plan: NodePlan, _hosts: Hosts) -> dict[str, str]:
    if "memlock" not in plan.on_files:
        return {}
    why = "the twin's containers cannot raise RLIMIT_MEMLOCK: judged on /etc/security/limits.d"
    return dict.fromkeys(plan.hosts, why)


def _ipoib(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for host in plan.hosts:
        obs = _reached(hosts, host)
        if obs is None:
            continue
        files = "ipoib" in plan.on_files
        seen = obs.ipoib_configured if files else obs.addresses
        where = " in the networkd files" if files else ""
        for iface, address in plan.ipoib.get(host, {}).items():
            obj = f"{host} {iface}"
            if iface not in seen:
                out.append(IPOIB.finding(obj, f"{iface} with {address}", f"no interface {iface}{where}"))
            elif address not in seen[iface]:
                have = ", ".join(seen[iface]) or "no address"
                out.append(IPOIB.finding(obj, f"{iface} with {address}", f"{iface} with {have}{where}"))
    return out


def _ipoib_caveats(plan: NodePlan, hosts: Hosts) -> dict[str, str]:
    if "ipoib" not in plan.on_files:
        return {}
    why = "no IB kernel on the twin (no ib0): judged on the systemd-networkd files"
    return dict.fromkeys(_ipoib_hosts(plan, hosts), why)


def _stray_sm(plan: NodePlan, hosts: Hosts) -> list[Finding]:
    out = []
    for host in plan.hosts:
        obs = _reached(hosts, host)
        if obs is not None and obs.opensm and host not in plan.sm_hosts:
            fix = (
                f"a double SM: {plan.sm_owner} runs this subnet (subnet_manager.backend); stop and disable opensm "
                "on this host (systemctl disable --now opensm)"
                if plan.sm_owner
                else None
            )
            found = "OpenSM running (" + "; ".join(obs.opensm) + ")"
            out.append(STRAY_SM.finding(host, "no OpenSM", found, fix=fix))
    return out


FAMILIES: tuple[CheckFamily[NodePlan, Hosts], ...] = (
    CheckFamily(_unreachable, (UNREACHABLE,)),
    CheckFamily(_hca_missing, (HCA_MISSING,)),
    CheckFamily(_port_state, (PORT_STATE,)),
    CheckFamily(_rate, (RATE,)),
    CheckFamily(_firmware, (FIRMWARE,)),
    CheckFamily(_stack, (STACK,)),
    CheckFamily(_memlock, (MEMLOCK,)),
    CheckFamily(_ipoib, (IPOIB,)),
    CheckFamily(_stray_sm, (STRAY_SM,)),
)


def reached(plan: NodePlan, hosts: Hosts) -> int:
    """How many planned hosts answered."""
    return sum(1 for h in plan.hosts if _reached(hosts, h) is not None)
