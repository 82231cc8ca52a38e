"""The checks of ``verify --perf``: pure functions of (plan, observation) -> findings.

Objects: nodes (``node01``), perftest runs (``node01/mlx5_0:1 -> node02/mlx5_0:1 ib_write_bw 64KiB``: the
pair, client first, then the tool and message size), TCP probes (``... iperf3``), and the fabric as a whole
for the culprit analysis. A run that could not be judged here (its node has no RDMA device, was not
reached, lacks the tool, or the run was interrupted) is *skipped* with its reason, never passed and never
given a number; a run that was tried and gave no result is a finding with perftest's reason.

Bandwidth is judged against ``bandwidth_fraction`` x the pair's line rate: the lower of the two ports'
rates, each the rate the port trained to (sysfs ``rate``) capped by its HCA's PCIe link where the node
shows them, else the planned rate of its cable (a caveat says so); twice that for bidirectional runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ibprov.clusterspec.types import Endpoint
from ibprov.report.model import FABRIC, Finding, Severity
from ibprov.verify.judge import Check, CheckFamily
from ibprov.verify.perf.baseline import worse_by
from ibprov.verify.perf.culprits import suspects
from ibprov.verify.perf.observation import PerfObservation, PerfRun
from ibprov.verify.perf.plan import PerfPlan, PerfTest
from ibprov.verify.perf.schedule import Pair

__all__ = ["FAMILIES", "line_rate", "needed_tools", "pair_verdicts", "run_object", "run_verdict", "tcp_object"]


def run_object(pair: Pair, test: PerfTest | str) -> str:
    return f"{pair} {test if isinstance(test, str) else test.name}"


def tcp_object(pair: Pair) -> str:
    return f"{pair} iperf3"


def _port_rate(plan: PerfPlan, obs: PerfObservation, end: Endpoint) -> tuple[float | None, bool]:
    """(data rate in Gb/s, whether the node showed it) of one HCA port."""
    state = obs.nodes.get(end.device)
    probe = state.probe if state is not None else None
    port = probe.ports.get((end.hca or "", end.port)) if probe is not None else None
    planned = plan.endpoints.get(end)
    rate = port.rate_gbps if port is not None else None
    shown = rate is not None
    if rate is None:
        rate = planned.planned_gbps if planned is not None else None
    pcie = port.pcie_gbps if port is not None else None
    if rate is not None and pcie is not None:
        rate = min(rate, pcie)
    return rate, shown


def line_rate(plan: PerfPlan, obs: PerfObservation, pair: Pair) -> tuple[float | None, bool]:
    """(the pair's line rate in Gb/s, x2 when bidirectional; whether both nodes showed their ports' rate)."""
    rates = [_port_rate(plan, obs, end) for end in (pair.client, pair.server)]
    known = [r for r, _ in rates if r is not None]
    if not known:
        return None, False
    return min(known) * (2 if plan.bidirectional else 1), all(shown for _, shown in rates)


def run_verdict(plan: PerfPlan, obs: PerfObservation, run: PerfRun, test: PerfTest) -> bool | None:
    """True: met its threshold; False: missed it or gave no result; None: not judged (skipped)."""
    if run.status == "skipped":
        return None
    if run.status == "failed" or run.value is None:
        return False
    if test.kind == "lat":
        return test.limit_us is None or run.value <= test.limit_us
    rate, _ = line_rate(plan, obs, run.pair)
    return rate is None or run.value >= plan.bandwidth_fraction * rate


def pair_verdicts(plan: PerfPlan, obs: PerfObservation) -> dict[Pair, bool]:
    """pair -> passed every test it ran (pairs with no judged test are left out)."""
    out: dict[Pair, bool] = {}
    tests = {t.name: t for t in plan.tests}
    for run in obs.runs:
        test = tests.get(run.test)
        verdict = run_verdict(plan, obs, run, test) if test is not None else None
        if verdict is not None:
            out[run.pair] = out.get(run.pair, True) and verdict
    return out


# ------------------------------------------------------------------------------------------------ objects
def _nodes(plan: PerfPlan, _obs: PerfObservation) -> Sequence[str]:
    return list(plan.nodes)


def _reached(plan: PerfPlan, obs: PerfObservation) -> Sequence[str]:
    return [n for n in plan.nodes if (s := obs.nodes.get(n)) is not None and s.reached]


def _runs(kind: str) -> Callable[[PerfPlan, PerfObservation], Sequence[str]]:
    def objects(plan: PerfPlan, _obs: PerfObservation) -> Sequence[str]:
        return [run_object(p, t) for p in plan.schedule.pairs for t in plan.tests if t.kind == kind]

    return objects


def _run_skips(kind: str) -> Callable[[PerfPlan, PerfObservation], Mapping[str, str]]:
    def skips(plan: PerfPlan, obs: PerfObservation) -> Mapping[str, str]:
        names = {t.name for t in plan.tests if t.kind == kind}
        out = {run_object(r.pair, r.test): r.reason for r in obs.runs if r.status == "skipped" and r.test in names}
        done = {run_object(r.pair, r.test) for r in obs.runs}
        for pair in plan.schedule.pairs:
            for test in plan.tests:
                name = run_object(pair, test)
                if test.kind == kind and name not in done:
                    out[name] = "not run" + (" (interrupted)" if obs.interrupted else "")
        return out

    return skips


def _bandwidth_caveats(plan: PerfPlan, obs: PerfObservation) -> Mapping[str, str]:
    out = {}
    bandwidth = {t.name for t in plan.tests if t.kind == "bw"}
    for run in obs.runs:
        if run.status == "ok" and run.test in bandwidth:
            _, shown = line_rate(plan, obs, run.pair)
            if not shown:
                out[run_object(run.pair, run.test)] = (
                    "judged against the planned rate of the cables: the nodes did not show the ports' active rate"
                )
    return out


def _baseline_objects(plan: PerfPlan, obs: PerfObservation) -> Sequence[str]:
    if plan.baseline is None:
        return []
    return [o for r in obs.runs if r.status == "ok" and (o := run_object(r.pair, r.test)) in plan.baseline.results]


def _tcp_objects(plan: PerfPlan, _obs: PerfObservation) -> Sequence[str]:
    return [tcp_object(p) for p in plan.schedule.pairs] if plan.tcp.enabled else []


def _tcp_skips(plan: PerfPlan, obs: PerfObservation) -> Mapping[str, str]:
    done = {tcp_object(t.pair): t for t in obs.tcp}
    out = {}
    for name in _tcp_objects(plan, obs):
        run = done.get(name)
        if run is None:
            out[name] = "not run" + (" (interrupted)" if obs.interrupted else "")
        elif run.status == "skipped":
            out[name] = run.reason
    return out


def _tcp_caveats(_plan: PerfPlan, obs: PerfObservation) -> Mapping[str, str]:
    return {
        tcp_object(t.pair): f"measured over {t.over}" for t in obs.tcp if t.status == "ok" and "IPoIB" not in t.over
    }


def _device_skips(plan: PerfPlan, obs: PerfObservation) -> Mapping[str, str]:
    if not plan.twin:
        return {}
    return {
        n: f"no RDMA device on {n} (the twin's containers have none)"
        for n in _reached(plan, obs)
        if (p := obs.nodes[n].probe) is not None and not p.devices
    }


# ------------------------------------------------------------------------------------------------- checks
REACH = Check(
    "perf.reach",
    "Every node of the schedule answers over SSH",
    Severity.ERROR,
    "check the node is up and that `ssh NODE` works non-interactively (key, user, known host) from here",
    _nodes,
    object_kind="the node",
)
RDMA_DEVICE = Check(
    "perf.rdma_device",
    "Every node of the schedule has the RDMA devices the plan names (ibv_devices, /sys/class/infiniband)",
    Severity.ERROR,
    "load the HCA driver (modprobe mlx5_ib; ibprov apply --tags ib_stack), check the card (lspci), then `ibv_devices`",
    _reached,
    object_kind="the node",
    severity_note="skipped on the twin, whose containers have no RDMA device",
    skips=_device_skips,
)
TOOLS = Check(
    "perf.tools",
    "The test tools are installed: perftest (and iperf3 for the TCP probe, numactl where a NUMA node is set)",
    Severity.ERROR,
    "re-apply the ib_stack role (ib_stack_acceptance_tools) or install perftest / iperf3 / numactl",
    _reached,
    object_kind="the node",
)
LATENCY = Check(
    "perf.latency",
    "Each pair's average latency is within the limit of its test (acceptance.latency_us)",
    Severity.ERROR,
    "rerun the pair alone; check both nodes' HCA firmware, NUMA placement (acceptance runs on the HCA's node) "
    "and the links between them (verify --fabric)",
    _runs("lat"),
    object_kind="the pair and test (`a/mlx5_0:1 -> b/mlx5_0:1 ib_write_lat 2B`)",
    skips=_run_skips("lat"),
)
BANDWIDTH = Check(
    "perf.bandwidth",
    "Each pair's average bandwidth reaches bandwidth_fraction x its line rate",
    Severity.ERROR,
    "rerun the pair alone; check the links' width and speed and their error counters (verify --fabric), the "
    "HCA's PCIe link (lspci -vv: LnkSta) and NUMA placement",
    _runs("bw"),
    object_kind="the pair and test (`a/mlx5_0:1 -> b/mlx5_0:1 ib_write_bw 64KiB`)",
    caveats=_bandwidth_caveats,
    skips=_run_skips("bw"),
)
BASELINE = Check(
    "perf.baseline",
    "No result is more than baseline_tolerance worse than the site's baseline (--baseline FILE)",
    Severity.ERROR,
    "compare with the baseline run: what changed (firmware, cables, routing, BIOS settings)? Save a new "
    "baseline with --save-baseline once the change is accepted",
    _baseline_objects,
    object_kind="the pair and test",
)
SUSPECT: Check[PerfPlan, PerfObservation] = Check(
    "perf.suspect",
    "No HCA port or link is common to every failing pair",
    Severity.ERROR,
    "a port: reseat or swap its cable, then its HCA (ibstat, mlxlink); a link: check that cable "
    "(iblinkinfo, ibqueryerrors), then rerun verify --perf",
    lambda plan, obs: [FABRIC],
    object_kind="the fabric (a finding names the suspect port or link)",
)
TCP = Check(
    "perf.tcp",
    "The TCP probe (iperf3 over IPoIB) runs between each pair, above tcp_min_gbps when set",
    Severity.WARNING,
    "check the IPoIB interfaces (verify --nodes) and that nothing blocks the iperf3 port; TCP over IPoIB is "
    "what applications get when they fall back from RDMA",
    _tcp_objects,
    object_kind="the pair (`a/mlx5_0:1 -> b/mlx5_0:1 iperf3`)",
    severity_note="error when below acceptance.tcp_min_gbps",
    caveats=_tcp_caveats,
    skips=_tcp_skips,
)


# ----------------------------------------------------------------------------------------------- families
def _reach(plan: PerfPlan, obs: PerfObservation) -> list[Finding]:
    out = []
    for node in plan.nodes:
        state = obs.nodes.get(node)
        if state is None:
            out.append(REACH.finding(node, "reachable over SSH", "not tried" + (" (interrupted)" * obs.interrupted)))
        elif not state.reached:
            out.append(REACH.finding(node, "reachable over SSH", state.error or "unreachable"))
    return out


def _devices(plan: PerfPlan, obs: PerfObservation) -> list[Finding]:
    out = []
    for node in _reached(plan, obs):
        probe = obs.nodes[node].probe
        if probe is None:
            continue
        wanted = sorted({e.endpoint.hca or "" for e in plan.endpoints.values() if e.node == node})
        if not probe.devices:
            if plan.twin:
                continue  # skipped (see _device_skips)
            why = f"; {probe.ibv_devices_error}" if probe.ibv_devices_error else ""
            out.append(
                RDMA_DEVICE.finding(
                    node, ", ".join(wanted) or "an RDMA device", f"no RDMA device (ibv_devices and sysfs){why}"
                )
            )
            continue
        missing = [d for d in wanted if d not in probe.devices]
        if missing:
            out.append(
                RDMA_DEVICE.finding(
                    node, ", ".join(wanted), f"{', '.join(missing)} missing; found {', '.join(probe.devices)}"
                )
            )
    return out


def needed_tools(plan: PerfPlan, node: str) -> list[str]:
    tools = list(plan.tools)
    if plan.tcp.enabled:
        tools.append("iperf3")
    if plan.needs_numactl(node):
        tools.append("numactl")
    return tools


def _tools(plan: PerfPlan, obs: PerfObservation) -> list[Finding]:
    out = []
    for node in _reached(plan, obs):
        probe = obs.nodes[node].probe
        if probe is None:
            continue
        missing = probe.missing_tools(needed_tools(plan, node))
        if missing:
            out.append(TOOLS.finding(node, ", ".join(needed_tools(plan, node)), f"not installed: {', '.join(missing)}"))
    return out


def _judge(plan: PerfPlan, obs: PerfObservation, kind: str) -> list[Finding]:
    out = []
    tests = {t.name: t for t in plan.tests if t.kind == kind}
    check = LATENCY if kind == "lat" else BANDWIDTH
    for run in obs.runs:
        test = tests.get(run.test)
        if test is None or run.status == "skipped":
            continue
        name = run_object(run.pair, run.test)
        if kind == "lat":
            expected = f"<= {test.limit_us:g} us average" if test.limit_us is not None else "a result"
        else:
            rate, _ = line_rate(plan, obs, run.pair)
            expected = (
                f">= {plan.bandwidth_fraction:g} x {rate:g} Gb/s = {plan.bandwidth_fraction * rate:.1f} Gb/s"
                if rate is not None
                else "a result"
            )
        if run.status == "failed" or run.value is None:
            out.append(check.finding(name, expected, f"no result: {run.reason or 'perftest failed'}"))
            continue
        if run_verdict(plan, obs, run, test) is False:
            if kind == "lat":
                out.append(check.finding(name, expected, f"{run.value:.2f} us"))
            else:
                rate, _ = line_rate(plan, obs, run.pair)
                share = f" ({100 * run.value / rate:.0f} % of line rate)" if rate else ""
                out.append(check.finding(name, expected, f"{run.value:.1f} Gb/s{share}"))
    return out


def _latency(plan: PerfPlan, obs: PerfObservation) -> list[Finding]:
    return _judge(plan, obs, "lat")


def _bandwidth(plan: PerfPlan, obs: PerfObservation) -> list[Finding]:
    return _judge(plan, obs, "bw")


def _baseline(plan: PerfPlan, obs: PerfObservation) -> list[Finding]:
    if plan.baseline is None:
        return []
    out = []
    for run in obs.runs:
        name = run_object(run.pair, run.test)
        entry = plan.baseline.results.get(name)
        if entry is None or run.status != "ok" or run.value is None:
            continue
        worse = worse_by(entry, run.value)
        if worse > plan.baseline_tolerance:
            unit = "us" if entry.unit == "us" else "Gb/s"
            out.append(
                BASELINE.finding(
                    name,
                    f"within {100 * plan.baseline_tolerance:g} % of {entry.value:g} {unit} ({plan.baseline.source})",
                    f"{run.value:g} {unit}, {100 * worse:.1f} % worse",
                )
            )
    return out


def _suspects(plan: PerfPlan, obs: PerfObservation) -> list[Finding]:
    out = []
    for s in suspects(pair_verdicts(plan, obs), plan.paths):
        what = "suspect its HCA or cable" if s.kind == "port" else "suspect this link (cable or switch port)"
        out.append(
            SUSPECT.finding(
                s.object,
                "some of its pairs pass",
                f"{s.text} (below threshold or no result): {what}",
            )
        )
    return out


def _tcp(plan: PerfPlan, obs: PerfObservation) -> list[Finding]:
    if not plan.tcp.enabled:
        return []
    out = []
    limit = plan.tcp.min_gbps
    expected = f">= {limit:g} Gb/s" if limit is not None else "a result"
    for run in obs.tcp:
        name = tcp_object(run.pair)
        if run.status == "failed" or (run.status == "ok" and run.gbps is None):
            severity = Severity.ERROR if limit is not None else None
            out.append(TCP.finding(name, expected, f"no result: {run.reason}", severity=severity))
        elif run.status == "ok" and limit is not None and run.gbps is not None and run.gbps < limit:
            out.append(TCP.finding(name, expected, f"{run.gbps:.2f} Gb/s over {run.over}", severity=Severity.ERROR))
    return out


FAMILIES: tuple[CheckFamily[PerfPlan, PerfObservation], ...] = (
    CheckFamily(_reach, (REACH,)),
    CheckFamily(_devices, (RDMA_DEVICE,)),
    CheckFamily(_tools, (TOOLS,)),
    CheckFamily(_latency, (LATENCY,)),
    CheckFamily(_bandwidth, (BANDWIDTH,)),
    CheckFamily(_baseline, (BASELINE,)),
    CheckFamily(_suspects, (SUSPECT,)),
    CheckFamily(_tcp, (TCP,)),
)
