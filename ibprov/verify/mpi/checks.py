"""The checks of ``verify --mpi``: pure functions of (plan, observation) -> findings.

Objects are hosts ("node01"), a host's Open MPI flavour ("node01 openmpi"), an MPI run ("node01 -> node02
(as configured)") or the pair ("node01 <-> node02"). A host that could not be reached is one
``mpi.unreachable`` finding; the other checks skip it. Where the plan says the hosts have no RDMA device at
all (the twin), a fall-back to TCP is what must happen: those objects are *skipped* with the reason, never
passed, and the numbers measured over TCP are shown, not judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ibprov.report.model import Finding, Severity
from ibprov.verify.judge import Check, CheckFamily
from ibprov.verify.mpi.observation import HostMpi, MpiObservation, MpiRun, Transport
from ibprov.verify.mpi.plan import MpiPlan

__all__ = ["FAMILIES", "TRANSPORT_LABEL", "fallback_text", "pair_object", "reached", "run_object"]

TRANSPORT_LABEL: dict[Transport, str] = {"configured": "as configured", "tcp": "forced onto TCP"}
_REAPPLY = "re-apply the ib_mpi role (ibprov apply SPEC)"


def _reached(obs: MpiObservation, host: str) -> HostMpi | None:
    h = obs.hosts.get(host)
    return h if h is not None and h.reachable else None


def _hosts(plan: MpiPlan, _obs: MpiObservation) -> Sequence[str]:
    return list(plan.hosts)


def _flavour_objects(plan: MpiPlan, _obs: MpiObservation) -> Sequence[str]:
    return [f"{h} {f}" for h in plan.hosts for f in plan.mca_files]


def _nccl_hosts(plan: MpiPlan, _obs: MpiObservation) -> Sequence[str]:
    return list(plan.hosts) if plan.nccl else []


def pair_object(plan: MpiPlan) -> str:
    return f"{plan.pair[0]} <-> {plan.pair[1]}" if plan.pair else ""


def run_object(plan: MpiPlan, transport: Transport) -> str:
    return f"{plan.pair[0]} -> {plan.pair[1]} ({TRANSPORT_LABEL[transport]})" if plan.pair else ""


def _run_objects(plan: MpiPlan, obs: MpiObservation) -> Sequence[str]:
    return [run_object(plan, r.transport) for r in obs.runs] if plan.pair else []


def _pair_objects(plan: MpiPlan, _obs: MpiObservation) -> Sequence[str]:
    return [pair_object(plan)] if plan.pair else []


UNREACHABLE = Check(
    "mpi.unreachable",
    "Every planned host answers through Ansible",
    Severity.ERROR,
    "check that the host is up, its address and SSH user in the spec/inventory, and `ansible HOST -m ping`",
    _hosts,
    object_kind="the host",
)
UCX_CONFIG = Check(
    "mpi.ucx_config",
    "UCX's configuration (/etc/ucx/ucx.conf) names the spec's transports and rail devices",
    Severity.ERROR,
    _REAPPLY + "; `ucx_info -c` shows what UCX reads",
    _hosts,
    object_kind="the host",
)
MCA_PARAMS = Check(
    "mpi.mca_params",
    "Each Open MPI flavour's openmpi-mca-params.conf selects UCX as the spec says (pml, osc, TCP BTL)",
    Severity.ERROR,
    _REAPPLY + "; `ompi_info --param pml all --level 9 --parsable` shows the values and their file",
    _flavour_objects,
    object_kind="`host flavour` (`node01 openmpi`)",
)
NCCL_ENV = Check(
    "mpi.nccl_env",
    "NCCL's /etc/nccl.conf has the spec's NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME (and NCCL_NET)",
    Severity.ERROR,
    _REAPPLY + " (mpi.nccl in the spec)",
    _nccl_hosts,
    object_kind="the host (only when the spec plans NCCL)",
)
ENV_OVERRIDE = Check(
    "mpi.env_override",
    "No UCX_* / OMPI_MCA_* variable of a login overrides the configuration with other values",
    Severity.ERROR,
    "remove the variable from the shell start-up files (/etc/environment, /etc/profile.d, ~/.bashrc) or set it "
    "in the spec's mpi section instead",
    _hosts,
    object_kind="the host",
)
VERBS = Check(
    "mpi.verbs_transports",
    "ucx_info -d lists InfiniBand verbs transports (rc/ud/dc) on the configured devices",
    Severity.ERROR,
    "check the HCA and its driver (ibv_devinfo), that the UCX build has verbs (Debian: libucx0; EL: ucx-ib) "
    "and the rails' DEVICE:PORT names in the spec",
    _hosts,
    object_kind="the host",
    severity_note="warning when the spec allows TCP (mpi.forbid_tcp: false)",
    skips=lambda plan, obs: _verbs_skips(plan, obs),
)
RUN = Check(
    "mpi.run",
    "An MPI job starts between two nodes under mpirun and completes the benchmark",
    Severity.ERROR,
    "try `mpirun -np 2 --host A,B --map-by node hostname` on the first node; the nodes need passwordless SSH to "
    "each other, Open MPI and a benchmark (mpi.install_openmpi, mpi.benchmark_tools)",
    _run_objects,
    object_kind="the run (`node01 -> node02 (as configured)`, with --contrast-tcp also `(forced onto TCP)`)",
    skips=lambda plan, obs: _run_skips(plan, obs),
)
LATENCY = Check(
    "mpi.latency",
    "MPI point-to-point latency between the pair is within mpi.latency_us",
    Severity.ERROR,
    "a latency of tens of microseconds means TCP: see mpi.verbs_transports; else check the HCAs' PCIe and NUMA "
    "placement and the link (verify --perf)",
    _pair_objects,
    object_kind="the pair (`node01 <-> node02`)",
    skips=lambda plan, obs: _measure_skips(plan, obs, "latency"),
)
BANDWIDTH = Check(
    "mpi.bandwidth",
    "MPI point-to-point bandwidth between the pair is at least mpi.bandwidth_fraction x the line rate",
    Severity.ERROR,
    "a few hundred MB/s means TCP: see mpi.verbs_transports; else check the link rate and errors (verify --fabric, "
    "--perf)",
    _pair_objects,
    object_kind="the pair",
    skips=lambda plan, obs: _measure_skips(plan, obs, "bandwidth"),
)


def _unreachable(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    out = []
    for host in plan.hosts:
        h = obs.hosts.get(host)
        if h is None or h.error is not None:
            out.append(
                UNREACHABLE.finding(host, "reachable", h.error if h is not None and h.error else "not collected")
            )
    return out


def _settings_text(values: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "nothing"


def _compare(expected: Mapping[str, str], seen: Mapping[str, str], keys: Sequence[str]) -> dict[str, str]:
    """key -> what the file says instead ('unset'), for every key that differs from the plan."""
    out = {}
    for key in keys:
        want, have = expected.get(key), seen.get(key)
        if want != have:
            out[key] = "unset" if have is None else have
    return out


def _ucx_config(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    out = []
    for host in plan.hosts:
        h = _reached(obs, host)
        if h is None:
            continue
        expected = _settings_text(plan.ucx)
        if plan.ucx_conf in h.unreadable:
            out.append(UCX_CONFIG.finding(host, expected, f"{plan.ucx_conf} unreadable: {h.unreadable[plan.ucx_conf]}"))
        elif h.ucx_conf is None:
            out.append(UCX_CONFIG.finding(host, expected, f"no {plan.ucx_conf}"))
        else:
            wrong = _compare(plan.ucx, h.ucx_conf, ("UCX_TLS", "UCX_NET_DEVICES"))
            if wrong:
                shown = ", ".join(f"{k}={v}" for k, v in wrong.items())
                out.append(UCX_CONFIG.finding(host, expected, f"{shown} in {plan.ucx_conf}"))
    return out


def _mca_params(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    out = []
    for host in plan.hosts:
        h = _reached(obs, host)
        if h is None:
            continue
        for flavour in plan.mca_files:
            obj, expected = f"{host} {flavour}", _settings_text(plan.mca)
            seen = h.mca.get(flavour)
            if f"mca {flavour}" in h.unreadable:
                out.append(MCA_PARAMS.finding(obj, expected, f"unreadable: {h.unreadable[f'mca {flavour}']}"))
            elif seen is None:
                out.append(MCA_PARAMS.finding(obj, expected, "no openmpi-mca-params.conf"))
            else:
                wrong = _compare(plan.mca, seen, ("pml", "osc", "btl"))
                if wrong:
                    out.append(MCA_PARAMS.finding(obj, expected, ", ".join(f"{k}={v}" for k, v in wrong.items())))
    return out


def _nccl_env(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    out: list[Finding] = []
    if not plan.nccl:
        return out
    for host in plan.hosts:
        h = _reached(obs, host)
        if h is None:
            continue
        expected = _settings_text(plan.nccl)
        if h.nccl_conf is None:
            out.append(NCCL_ENV.finding(host, expected, "no /etc/nccl.conf"))
            continue
        wrong = _compare(plan.nccl, h.nccl_conf, list(plan.nccl))
        if wrong:
            out.append(NCCL_ENV.finding(host, expected, ", ".join(f"{k}={v}" for k, v in wrong.items())))
    return out


_OVERRIDES = {
    "UCX_TLS": "ucx",
    "UCX_NET_DEVICES": "ucx",
    "OMPI_MCA_pml": "mca",
    "OMPI_MCA_btl": "mca",
    "OMPI_MCA_osc": "mca",
}


def _env_override(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    out = []
    for host in plan.hosts:
        h = _reached(obs, host)
        if h is None:
            continue
        wrong = []
        for var, where in _OVERRIDES.items():
            if var not in h.env:
                continue
            key = var.removeprefix("OMPI_MCA_")
            planned = plan.ucx.get(var) if where == "ucx" else plan.mca.get(key)
            if h.env[var] != planned:
                wrong.append(f"{var}={h.env[var]}")
        if wrong:
            out.append(
                ENV_OVERRIDE.finding(host, "the configuration files' values", ", ".join(wrong) + " in the environment")
            )
    return out


def fallback_text(host: str, h: HostMpi) -> str:
    listed = ", ".join(h.ucx.transports) if h.ucx is not None else "nothing"
    return f"MPI traffic on {host} would fall back to TCP (ucx_info -d lists {listed})"


def _verbs_missing(plan: MpiPlan, h: HostMpi) -> str | None:
    """What is wrong with the host's UCX transports, or None when the configured devices have verbs."""
    if h.ucx is None:
        return f"no ucx_info -d ({h.ucx_problem or 'not collected'})"
    verbs = h.ucx.verbs
    if not verbs:
        return fallback_text(h.host, h)
    missing = [d for d in plan.devices if not any(r.device == d for r in verbs)]
    if missing:
        seen = ", ".join(sorted({r.device for r in verbs}))
        gone = ", ".join(missing)
        return f"no verbs transport on {gone} (verbs on {seen}): MPI traffic over those rails would fall back"
    return None


def _verbs(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    out = []
    severity = Severity.ERROR if plan.forbid_tcp else Severity.WARNING
    where = ", ".join(plan.devices) or "any device"
    for host in plan.hosts:
        h = _reached(obs, host)
        if h is None or host in _verbs_skips(plan, obs):
            continue
        problem = _verbs_missing(plan, h)
        if problem is not None:
            out.append(VERBS.finding(host, f"rc/ud/dc verbs transports on {where}", problem, severity=severity))
    return out


def _verbs_skips(plan: MpiPlan, obs: MpiObservation) -> dict[str, str]:
    if not plan.no_rdma:
        return {}
    out = {}
    for host in plan.hosts:
        h = _reached(obs, host)
        if h is not None and h.ucx is not None and not h.ucx.verbs:
            out[host] = f"{fallback_text(host, h)}: expected, {plan.no_rdma}"
    return out


def _runs(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    out = []
    skips = _run_skips(plan, obs)
    for run in obs.runs:
        obj = run_object(plan, run.transport)
        if run.status == "failed" and obj not in skips:
            out.append(RUN.finding(obj, f"{run.benchmark} completes", f"failed: {run.reason}"))
    return out


def _expected_init_failure(plan: MpiPlan, run: MpiRun) -> bool:
    """On hosts without RDMA, a configuration that forbids TCP must stop MPI_Init: Open MPI says so."""
    return (
        bool(plan.no_rdma) and plan.forbid_tcp and run.transport == "configured" and "cannot be selected" in run.reason
    )


def _run_skips(plan: MpiPlan, obs: MpiObservation) -> dict[str, str]:
    out = {}
    for run in obs.runs:
        obj = run_object(plan, run.transport)
        if run.status == "skipped":
            out[obj] = run.reason
        elif run.status == "failed" and _expected_init_failure(plan, run):
            out[obj] = (
                f"expected: MPI_Init stops ({run.reason}): mpi.forbid_tcp leaves no transport to MPI and {plan.no_rdma}"
            )
    return out


def _value(run: MpiRun, what: str) -> float | None:
    return run.latency_us if what == "latency" else run.bandwidth_mbs


def _measured(run: MpiRun, what: str) -> str:
    if what == "latency":
        return f"{run.latency_us:.2f} us ({run.latency_size} B)"
    return f"{run.bandwidth_mbs:.0f} MB/s ({run.bandwidth_size} B, {run.bandwidth_kind})"


def _measure_skips(plan: MpiPlan, obs: MpiObservation, what: str) -> dict[str, str]:
    if plan.pair is None:
        return {}
    run = obs.run("configured")
    obj = pair_object(plan)
    if run is None:
        return {obj: "no MPI run"}
    if run.status != "ok" or _value(run, what) is None:
        return {obj: f"no measurement: the run {'was skipped' if run.status == 'skipped' else 'failed'} (mpi.run)"}
    if plan.no_rdma:
        return {obj: f"not judged: {plan.no_rdma}, the run went over TCP ({_measured(run, what)} measured)"}
    if what == "bandwidth" and plan.bandwidth_mbs is None:
        return {obj: "no line rate planned for the pair"}
    return {}


def _latency(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    run = obs.run("configured")
    if plan.pair is None or run is None or _measure_skips(plan, obs, "latency") or run.latency_us is None:
        return []
    if run.latency_us > plan.latency_us:
        expected = f"at most {plan.latency_us:g} us ({run.benchmark})"
        return [LATENCY.finding(pair_object(plan), expected, _measured(run, "latency"))]
    return []


def _bandwidth(plan: MpiPlan, obs: MpiObservation) -> list[Finding]:
    run = obs.run("configured")
    if plan.pair is None or run is None or _measure_skips(plan, obs, "bandwidth") or run.bandwidth_mbs is None:
        return []
    assert plan.bandwidth_mbs is not None  # _measure_skips skips the pair without a limit
    if run.bandwidth_mbs < plan.bandwidth_mbs:
        expected = (
            f"at least {plan.bandwidth_mbs:.0f} MB/s ({plan.bandwidth_fraction:g} x {plan.line_rate_text}, "
            f"{run.benchmark})"
        )
        return [BANDWIDTH.finding(pair_object(plan), expected, _measured(run, "bandwidth"))]
    return []


FAMILIES: tuple[CheckFamily[MpiPlan, MpiObservation], ...] = (
    CheckFamily(_unreachable, (UNREACHABLE,)),
    CheckFamily(_ucx_config, (UCX_CONFIG,)),
    CheckFamily(_mca_params, (MCA_PARAMS,)),
    CheckFamily(_nccl_env, (NCCL_ENV,)),
    CheckFamily(_env_override, (ENV_OVERRIDE,)),
    CheckFamily(_verbs, (VERBS,)),
    CheckFamily(_runs, (RUN,)),
    CheckFamily(_latency, (LATENCY,)),
    CheckFamily(_bandwidth, (BANDWIDTH,)),
)


def reached(plan: MpiPlan, obs: MpiObservation) -> int:
    return sum(1 for h in plan.hosts if _reached(obs, h) is not None)
