"""Gathering for ``verify --mpi``, all through Ansible (:mod:`ibprov.run.adhoc`): one shell probe on every
planned host (the MPI configuration files, the environment of a non-interactive login, ``ucx_info -d``, the
installed benchmarks), then the MPI runs, launched with ``mpirun`` on the first node of the pair.

The benchmark is OSU's ``osu_latency`` and ``osu_bw`` when both nodes have them on their PATH (Debian packages
no OSU micro-benchmarks), else mpi4py's ``ringtest`` (Debian's python3-mpi4py, installed by the ib_mpi role with
``mpi.benchmark_tools``): real MPI point-to-point messages, timed by MPI_Wtime. Nothing is judged here: the
parsers (:mod:`ibprov.probes`) read, the checks judge.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ibprov.probes import mpi4py_bench, osu, ucx_info
from ibprov.probes._text import ParseError
from ibprov.probes.mpiconf import (
    MARK,
    Tools,
    first_reason,
    parse_env,
    parse_kv_file,
    parse_probe,
    parse_tools,
    probe_script,
)
from ibprov.run.adhoc import AdHoc, AnsibleRun, HostOutcome, ansible_runner_run, failure
from ibprov.verify.mpi.observation import HostMpi, MpiRun, Transport
from ibprov.verify.mpi.plan import MpiPlan

__all__ = ["AnsibleMpiCollector", "MpiCollector", "mpirun_script", "observe_host", "observe_run"]

OSU = "osu_latency + osu_bw"
RINGTEST = "mpi4py.bench ringtest"
LATENCY_SIZE = 8  # bytes: the ringtest message of the latency run
BANDWIDTH_SIZE = 4 << 20  # bytes: the ringtest message of the bandwidth run (osu_bw's largest default size)
TIMEOUT = 180  # seconds each mpirun may take (a hung launch is stopped and reported)
FORCE_TCP = "--mca pml ob1 --mca btl tcp,self"  # overrides the MCA file: ob1 with the TCP BTL only


class MpiCollector(Protocol):
    @property
    def where(self) -> str: ...

    def collect(self, plan: MpiPlan) -> dict[str, HostMpi]: ...

    def run(self, plan: MpiPlan, tools: Tools, transport: Transport) -> MpiRun: ...


def observe_host(plan: MpiPlan, host: str, done: HostOutcome | None) -> HostMpi:
    """One host's observation from its probe outcome (pure)."""
    error = failure(done, "the probe")
    if error is not None or done is None:
        return HostMpi(host, error=error or "not collected")
    sections = parse_probe(str(done.res.get("stdout", "")))
    unreadable: dict[str, str] = {}

    def kv(name: str, key: str) -> dict[str, str] | None:
        text = sections.get(name)
        if text is None:
            return None
        try:
            return parse_kv_file(name, text)
        except ParseError as exc:
            unreadable[key] = str(exc)
            return None

    ucx, problem = None, None
    text = sections.get("ucx_info")
    if text is None:
        problem = "ucx_info is not installed"
    else:
        try:
            ucx = ucx_info.parse(text)
        except ParseError as exc:
            problem = str(exc)
    return HostMpi(
        host,
        ucx_conf=kv("ucx.conf", plan.ucx_conf),
        mca={f: kv(f"mca {f}", f"mca {f}") for f in plan.mca_files},
        nccl_conf=kv("nccl.conf", "/etc/nccl.conf"),
        env=parse_env(sections.get("env") or ""),
        ucx=ucx,
        ucx_problem=problem,
        tools=parse_tools(sections.get("tools") or ""),
        unreadable=unreadable,
    )


def _mpirun(plan: MpiPlan, transport: Transport, program: str) -> str:
    assert plan.pair is not None
    hosts = ",".join(plan.addresses.get(h, h) for h in plan.pair)
    force = f" {FORCE_TCP}" if transport == "tcp" else ""
    env, agent = "", ""
    if plan.unset_env:  # here and in the daemon mpirun starts on the other node over SSH (ranks inherit both)
        env = "env " + " ".join(f"-u {shlex.quote(v)}" for v in plan.unset_env) + " "
        agent = f" --mca orte_launch_agent {shlex.quote(env + 'orted')}"
    return (
        f"timeout {TIMEOUT} {env}mpirun $ROOT -np 2 --host {shlex.quote(hosts)} --map-by node{agent}{force} "
        f'{program} 2>&1; echo "@@rc $?"'
    )


def mpirun_script(plan: MpiPlan, tools: Tools, transport: Transport) -> str:
    """The shell the first node of the pair runs: the latency run, then the bandwidth run."""
    if tools.osu:
        latency, bandwidth = shlex.quote(str(tools.osu_latency)), shlex.quote(str(tools.osu_bw))
    else:
        ring = "python3 -m mpi4py.bench ringtest"
        latency = f"{ring} -n {LATENCY_SIZE} -s 20 -l 500"
        bandwidth = f"{ring} -n {BANDWIDTH_SIZE} -s 2 -l 20"
    return "\n".join(
        [
            "cd /tmp",  # orted and the ranks need a working directory every node has
            'ROOT=""; [ "$(id -u)" = 0 ] && ROOT=--allow-run-as-root',
            f"echo '{MARK}latency'",
            _mpirun(plan, transport, latency),
            f"echo '{MARK}bandwidth'",
            _mpirun(plan, transport, bandwidth),
            "exit 0",
        ]
    )


def _split_rc(text: str | None) -> tuple[list[str], int | None]:
    lines = (text or "").splitlines()
    if lines and lines[-1].startswith("@@rc "):
        return lines[:-1], int(lines[-1].split()[1])
    return lines, None


def observe_run(transport: Transport, tools: Tools, done: HostOutcome | None) -> MpiRun:
    """The run's result from the launching node's outcome (pure)."""
    benchmark = OSU if tools.osu else RINGTEST
    if done is None or not done.ok:
        why = "no answer" if done is None else done.reason()
        return MpiRun(transport, benchmark, "failed", f"could not launch on the first node: {why}")
    sections = parse_probe(str(done.res.get("stdout", "")))
    results: dict[str, tuple[float, int]] = {}
    notes: list[str] = []  # lines besides the benchmark's output (UCX and Open MPI warnings): read past, noted
    for what in ("latency", "bandwidth"):
        lines, rc = _split_rc(sections.get(what))
        if rc is None or rc != 0:
            reason = first_reason(lines)
            if rc == 124:
                reason = f"stopped after {TIMEOUT} s: {reason}"
            return MpiRun(transport, benchmark, "failed", f"{what} run: {reason}")
        text = "\n".join(lines)
        try:
            if tools.osu:
                result = osu.parse(text)
                size, value = result.smallest if what == "latency" else result.largest
                results[what] = (value, size)
                notes += [f"{what} run: {n}" for n in result.notes]
            else:
                ring = mpi4py_bench.parse(text)
                value = ring.latency_us if what == "latency" else ring.pingpong_mbs
                results[what] = (value, ring.size)
                notes += [f"{what} run: {n}" for n in ring.notes]
        except ParseError as exc:
            return MpiRun(transport, benchmark, "failed", f"{what} run: {exc}")
    (lat, lat_size), (bw, bw_size) = results["latency"], results["bandwidth"]
    return MpiRun(
        transport,
        benchmark,
        "ok",
        latency_us=lat,
        latency_size=lat_size,
        bandwidth_mbs=bw,
        bandwidth_size=bw_size,
        bandwidth_kind="streamed (osu_bw)" if tools.osu else "ping-pong",
        notes=tuple(notes),
    )


class AnsibleMpiCollector:
    """The probe and the runs through :class:`~ibprov.run.adhoc.AdHoc`. ``inventory`` is a path (a rendered
    inventory directory, the twin's inventory) or an inventory mapping; ``run`` stands in for
    ``ansible_runner.run`` (tests)."""

    def __init__(
        self, inventory: Mapping[str, Any] | str, *, run: AnsibleRun = ansible_runner_run, forks: int = 20
    ) -> None:
        self.ansible = AdHoc(inventory, run, forks)

    @property
    def where(self) -> str:
        return "each host (ansible); mpirun on the first node of the pair"

    def collect(self, plan: MpiPlan) -> dict[str, HostMpi]:
        args = {"cmd": probe_script(plan.mca_files, plan.ucx_conf)}
        done = self.ansible.module(plan.hosts, "ansible.builtin.shell", args)
        return {h: observe_host(plan, h, done.get(h)) for h in plan.hosts}

    def run(self, plan: MpiPlan, tools: Tools, transport: Transport) -> MpiRun:
        assert plan.pair is not None
        first = plan.pair[0]
        args = {"cmd": mpirun_script(plan, tools, transport)}
        done = self.ansible.module([first], "ansible.builtin.shell", args)
        return observe_run(transport, tools, done.get(first))


def pair_tools(hosts: Mapping[str, HostMpi], pair: Sequence[str]) -> tuple[Tools, str]:
    """The benchmark both nodes of the pair have (OSU on both, else mpi4py on both), or why none can run."""
    seen = [hosts.get(h) for h in pair]
    if any(h is None or not h.reachable for h in seen):
        return Tools(), "a node of the pair did not answer"
    tools = [h.tools for h in seen if h is not None]
    missing = [p for p, t in zip(pair, tools, strict=True) if t.mpirun is None]
    if missing:
        return Tools(), f"no mpirun on {', '.join(missing)} (mpi.install_openmpi)"
    if all(t.osu for t in tools):
        return tools[0], ""
    lacking = [p for p, t in zip(pair, tools, strict=True) if t.mpi4py is None]
    if lacking:
        return (
            Tools(),
            f"no MPI benchmark on {', '.join(lacking)}: neither osu_latency/osu_bw nor mpi4py (mpi.benchmark_tools)",
        )
    first = tools[0]
    return Tools(mpirun=first.mpirun, mpi4py=first.mpi4py), ""
