"""Run ``verify --perf``'s tests on the nodes: probe every node, then the schedule round by round, then the
TCP probe; the result is a :class:`~.observation.PerfObservation` (nothing is judged here).

For each pair and test: the server is started on the server node and confirmed listening on its TCP port
(``ss``) before the client starts; the client runs with a time limit; the server's PID is stopped on
every way out (normal end, error, timeout, Ctrl-C). A run that fails is retried once (a port conflict
on another port). Pairs of one round run at once (``acceptance.max_parallel_pairs`` at most), each on its
own TCP port. A node that cannot be reached, has no RDMA device, or lacks the tool makes its runs
*skipped* with that reason; nothing hangs: every remote command has a limit here and on the node.

Progress goes to the ``ibprov.progress`` logger (the CLI shows it on a terminal).
"""

from __future__ import annotations

import functools
import logging
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from ibprov.probes import iperf3, perfprobe, perftest
from ibprov.probes._text import ParseError
from ibprov.verify.perf.checks import needed_tools
from ibprov.verify.perf.observation import NodeState, PerfObservation, PerfRun, TcpRun
from ibprov.verify.perf.plan import PerfPlan, PerfTest
from ibprov.verify.perf.remote import Completed, Remote, RemoteError, Started
from ibprov.verify.perf.schedule import Pair

__all__ = ["collect", "perftest_command", "tcp_pairs"]

log = logging.getLogger("ibprov.progress")
T = TypeVar("T")

_LISTEN_SECONDS = 10.0  # a server that is not listening by then failed to start
_PROBE_SECONDS = 30.0
_RETRY_PORT_OFFSET = 500  # a retry after a port conflict uses this much higher a port
_PORT_IN_USE = ("address already in use", "couldn't bind", "unable to bind", "couldn't listen")


@dataclass(frozen=True)
class _Ctx:
    plan: PerfPlan
    remote: Remote
    nodes: dict[str, NodeState]
    stop: threading.Event
    servers: set[Started]
    lock: threading.Lock


def perftest_command(plan: PerfPlan, test: PerfTest, pair: Pair, *, server: str | None, port: int) -> str:
    """The shell command of one side (the server without ``server``), bounded by ``timeout`` on the node and
    bound to the HCA's NUMA node when the spec gives one."""
    end = pair.client if server is not None else pair.server
    info = plan.endpoints.get(end)
    run = perftest.PerftestRun(
        test.tool,
        size=test.size,
        port=port,
        device=end.hca,
        ib_port=end.port,
        gid_index=info.gid_index if info is not None else None,
        bidirectional=plan.bidirectional and test.kind == "bw",
        report_gbits=test.kind == "bw",
        ignore_cpu_freq=True,
    )
    args = perftest.argv(run, server=server)
    prefix = ["timeout", str(plan.timeout_seconds)]
    if info is not None and info.numa_node is not None:
        prefix += ["numactl", f"--cpunodebind={info.numa_node}", f"--membind={info.numa_node}"]
    return shlex.join([*prefix, *args])


def tcp_pairs(plan: PerfPlan) -> list[list[Pair]]:
    """The schedule's rounds with one pair per (client node, server node): TCP runs between nodes."""
    seen: set[tuple[str, str]] = set()
    rounds = []
    for pairs in plan.schedule.rounds:
        kept = []
        for pair in pairs:
            key = (pair.client.device, pair.server.device)
            if key not in seen and key[0] != key[1]:
                seen.add(key)
                kept.append(pair)
        if kept:
            rounds.append(kept)
    return rounds


def collect(plan: PerfPlan, remote: Remote, *, routes: str = "") -> PerfObservation:
    """Probe, run every round, run the TCP probe; Ctrl-C stops the remote servers and returns what was done."""
    ctx = _Ctx(plan, remote, {}, threading.Event(), set(), threading.Lock())
    runs: list[PerfRun] = []
    tcp: list[TcpRun] = []
    interrupted = False
    executor = ThreadPoolExecutor(max_workers=max(1, min(32, _widest(plan))), thread_name_prefix="perf")
    try:
        _probe_all(ctx, executor)
        total = len(plan.schedule.pairs)
        done = failed = 0
        for r, pairs in enumerate(plan.schedule.rounds, start=1):
            log.info(
                "perf: round %d/%d, %d pairs; %d/%d pairs done, %d failed",
                r,
                len(plan.schedule.rounds),
                len(pairs),
                done,
                total,
                failed,
            )
            results = _round(ctx, executor, pairs, functools.partial(_pair_runs, ctx, round_no=r))
            for pair_runs in results:
                runs.extend(pair_runs)
                done += 1
                failed += any(x.status == "failed" for x in pair_runs)
        log.info("perf: %d/%d pairs done, %d failed", done, total, failed)
        if plan.tcp.enabled:
            tcp_rounds = tcp_pairs(plan)
            for r, tcp_round in enumerate(tcp_rounds, start=1):
                log.info("perf: TCP probe round %d/%d, %d pairs", r, len(tcp_rounds), len(tcp_round))
                tcp.extend(_round(ctx, executor, tcp_round, functools.partial(_tcp_run, ctx)))
    except KeyboardInterrupt:
        interrupted = True
        ctx.stop.set()
        log.info("perf: interrupted; stopping the servers started on the nodes")
    finally:
        ctx.stop.set()
        with ctx.lock:
            leftover = list(ctx.servers)
        for started in leftover:
            remote.stop(started)
        executor.shutdown(wait=not interrupted, cancel_futures=True)
    return PerfObservation(
        nodes=dict(ctx.nodes), runs=tuple(runs), tcp=tuple(tcp), routes=routes, interrupted=interrupted
    )


def _widest(plan: PerfPlan) -> int:
    widest = max((len(r) for r in plan.schedule.rounds), default=1)
    return min(widest, plan.max_parallel) if plan.max_parallel else widest


def _round(ctx: _Ctx, executor: ThreadPoolExecutor, pairs: Sequence[Pair], work: Callable[[Pair, int], T]) -> list[T]:
    """``work(pair, slot)`` for each pair, at most max_parallel at once; slot k uses TCP port first_port + k."""
    width = ctx.plan.max_parallel or len(pairs)
    out: list[T] = []
    for start in range(0, len(pairs), width):
        batch = pairs[start : start + width]
        futures: list[Future[T]] = [executor.submit(work, pair, k) for k, pair in enumerate(batch)]
        out.extend(f.result() for f in futures)
    return out


# ----------------------------------------------------------------------------------------------- probing
def _probe_all(ctx: _Ctx, executor: ThreadPoolExecutor) -> None:
    plan = ctx.plan
    futures = {node: executor.submit(_probe, ctx, node) for node in plan.nodes}
    for node, future in futures.items():
        ctx.nodes[node] = future.result()
    reached = sum(1 for s in ctx.nodes.values() if s.reached)
    log.info("perf: %d of %d nodes reached", reached, len(plan.nodes))


def _probe(ctx: _Ctx, node: str) -> NodeState:
    ports = [(e.hca or "", e.port) for e in ctx.plan.endpoints if e.device == node]
    try:
        ctx.remote.connect(node)
        done = ctx.remote.run(node, perfprobe.script(needed_tools(ctx.plan, node), ports), _PROBE_SECONDS)
    except RemoteError as err:
        return NodeState(False, str(err))
    if done.timed_out:
        return NodeState(False, f"the probe did not answer within {_PROBE_SECONDS:.0f} s")
    try:
        return NodeState(True, probe=perfprobe.parse(done.stdout))
    except ParseError as err:
        return NodeState(False, f"unexpected probe output: {err}")


def _skip_reason(ctx: _Ctx, pair: Pair, tools: Sequence[str], *, rdma: bool) -> str:
    """Why this pair cannot run these tools, or ""."""
    if rdma:
        bare = [
            end.device
            for end in (pair.client, pair.server)
            if (state := ctx.nodes.get(end.device)) is not None and state.probe is not None and not state.probe.devices
        ]
        if bare:
            return f"no RDMA device on {' and '.join(bare)}"
    for end in (pair.client, pair.server):
        state = ctx.nodes.get(end.device)
        if state is None or not state.reached:
            return f"{end.device} not reached" + (f" ({state.error})" if state is not None and state.error else "")
        probe = state.probe
        if probe is None:
            return f"{end.device} not probed"
        if rdma and not probe.devices:
            return f"no RDMA device on {end.device}"
        if rdma and end.hca not in probe.devices:
            return f"{end.hca} is not an RDMA device of {end.device} (found {', '.join(probe.devices)})"
        missing = probe.missing_tools(tools)
        if missing:
            return f"{', '.join(missing)} not installed on {end.device}"
    return ""


# ------------------------------------------------------------------------------------------------ perftest
def _pair_runs(ctx: _Ctx, pair: Pair, slot: int, *, round_no: int) -> list[PerfRun]:
    out = []
    for test in ctx.plan.tests:
        reason = _skip_reason(ctx, pair, [test.tool], rdma=True)
        if ctx.stop.is_set():
            reason = "not run (interrupted)"
        if reason:
            out.append(PerfRun(pair, test.name, round_no, "skipped", reason=reason))
            continue
        out.append(_run_test(ctx, pair, test, round_no, ctx.plan.first_port + slot))
    return out


def _run_test(ctx: _Ctx, pair: Pair, test: PerfTest, round_no: int, port: int) -> PerfRun:
    t0 = time.monotonic()
    value, reason, notes = _attempt(ctx, pair, test, port)
    attempts = 1
    if value is None and not ctx.stop.is_set() and "not installed" not in reason:
        retry_port = port + _RETRY_PORT_OFFSET if _port_conflict(reason) else port
        value, second, notes = _attempt(ctx, pair, test, retry_port)
        attempts = 2
        reason = second if value is None else ""
    seconds = time.monotonic() - t0
    if value is None:
        return PerfRun(
            pair, test.name, round_no, "failed", reason=reason, attempts=attempts, seconds=seconds, notes=notes
        )
    return PerfRun(pair, test.name, round_no, "ok", value=value, attempts=attempts, seconds=seconds, notes=notes)


def _port_conflict(reason: str) -> bool:
    return any(p in reason.lower() for p in _PORT_IN_USE)


def _attempt(ctx: _Ctx, pair: Pair, test: PerfTest, port: int) -> tuple[float | None, str, tuple[str, ...]]:
    """(the measured value, "", notes) or (None, why not, notes): notes are the client's lines that are not
    perftest's report (warnings merged from stderr), as :attr:`PerftestResult.notes` gives them."""
    plan, remote = ctx.plan, ctx.remote
    server_node, client_node = pair.server.device, pair.client.device
    try:
        server = _start_server(ctx, server_node, perftest_command(plan, test, pair, server=None, port=port), port)
    except RemoteError as err:
        return None, str(err), ()
    if isinstance(server, str):
        return None, server, ()
    try:
        command = perftest_command(plan, test, pair, server=remote.address(server_node), port=port)
        client = remote.run(client_node, command, plan.timeout_seconds + 10)
        server_done = server.wait(5.0 if client.rc == 0 else 0.5)
    except RemoteError as err:
        return None, str(err), ()
    finally:
        _stop(ctx, server)
    return _read_result(test, client, server_done, plan.timeout_seconds)


def _start_server(ctx: _Ctx, node: str, command: str, port: int) -> Started | str:
    """The started server once it listens on ``port``, or why it did not."""
    started = ctx.remote.start(node, command)
    with ctx.lock:
        ctx.servers.add(started)
    deadline = time.monotonic() + _LISTEN_SECONDS
    probe = f"ss -Hltn 'sport = :{port}' 2>/dev/null || echo no-ss"
    while time.monotonic() < deadline and not ctx.stop.is_set():
        if started.exited():
            _stop(ctx, started)
            done = started.wait(0.1)
            return f"server on {node} exited {done.rc} before listening: {_last_words(done)}"
        listening = ctx.remote.run(node, probe, 10)
        if "no-ss" in listening.stdout:  # no ss(8): give the server a moment instead
            time.sleep(1.0)
            return started
        if listening.stdout.strip():
            return started
        time.sleep(0.2)
    _stop(ctx, started)
    return f"server on {node} was not listening on TCP port {port} after {_LISTEN_SECONDS:.0f} s"


def _stop(ctx: _Ctx, started: Started) -> None:
    with ctx.lock:
        if started not in ctx.servers:
            return
        ctx.servers.discard(started)
    ctx.remote.stop(started)


def _last_words(done: Completed) -> str:
    lines = [ln.strip() for ln in (done.stderr + "\n" + done.stdout).splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"


def _read_result(
    test: PerfTest, client: Completed, server: Completed, limit: int
) -> tuple[float | None, str, tuple[str, ...]]:
    if client.timed_out or client.rc == 124:
        return None, f"client did not finish within {limit} s (stopped)", ()
    if client.rc == 127:
        return None, f"{test.tool} not installed on the client: {_last_words(client)}", ()
    try:
        result = perftest.parse(client.stdout + ("\n" + client.stderr if client.rc else ""), tool=test.tool)
    except ParseError as err:
        why = _last_words(client) if client.rc else str(err)
        server_why = f"; server: {_last_words(server)}" if server.rc not in (0, None) else ""
        return None, f"client exited {client.rc}: {why}{server_why}", ()
    value, reason = _value(test, result, client.rc)
    return value, reason, result.notes


def _value(test: PerfTest, result: perftest.PerftestResult, rc: int | None) -> tuple[float | None, str]:
    if result.errors:
        return None, f"{test.tool}: {result.errors[0].text}"
    if test.kind == "bw":
        rows = [row for row in result.bandwidth if row.bytes == test.size]
        if not rows:
            return None, f"{test.tool} printed no result row for {test.size} bytes (exit {rc})"
        return rows[-1].bw_average_gbps, ""
    lat = [row for row in result.latency if row.bytes == test.size]
    if not lat:
        return None, f"{test.tool} printed no result row for {test.size} bytes (exit {rc})"
    row = lat[-1]
    if row.unit != "usec":
        return None, f"{test.tool} reported {row.unit}, not microseconds"
    value = row.t_avg if row.t_avg is not None else row.t_typical
    if value is None:
        return None, f"{test.tool} printed no average latency"
    return value, ""


# ---------------------------------------------------------------------------------------------- TCP probe
def _tcp_run(ctx: _Ctx, pair: Pair, slot: int) -> TcpRun:
    plan = ctx.plan
    reason = _skip_reason(ctx, pair, ["iperf3"], rdma=False)
    if ctx.stop.is_set():
        reason = "not run (interrupted)"
    server_node = pair.server.device
    address = plan.tcp.addresses.get(server_node)
    if plan.twin:  # its IPoIB interfaces are files and units only: no data path
        address = ctx.remote.address(server_node)
        over = f"the twin's container network ({address}), not IPoIB: the twin has no IPoIB data path"
    elif address is not None:
        over = f"IPoIB {plan.tcp.interface} ({address})"
    else:
        reason = reason or f"no IPoIB address for {server_node} in the spec (ipoib:)"
        over = ""
    if reason or address is None:
        return TcpRun(pair, "skipped", reason=reason, over=over)
    port = plan.first_port + slot
    seconds = plan.tcp.seconds
    server_cmd = shlex.join(["timeout", str(seconds + 30), *iperf3.server_argv(port)])
    try:
        server = _start_server(ctx, server_node, server_cmd, port)
        if isinstance(server, str):
            return TcpRun(pair, "failed", reason=server, over=over)
        try:
            client_cmd = shlex.join(["timeout", str(seconds + 20), *iperf3.client_argv(address, port, seconds)])
            client = ctx.remote.run(pair.client.device, client_cmd, seconds + 30)
        finally:
            _stop(ctx, server)
    except RemoteError as err:
        return TcpRun(pair, "failed", reason=str(err), over=over)
    if client.timed_out or client.rc == 124:
        return TcpRun(pair, "failed", reason=f"iperf3 did not finish within {seconds + 20} s", over=over)
    try:
        result = iperf3.parse(client.stdout)
    except ParseError as err:
        return TcpRun(pair, "failed", reason=f"iperf3 exited {client.rc}: {_last_words(client) or err}", over=over)
    if not result.ok:
        return TcpRun(pair, "failed", reason=f"iperf3: {result.error}", over=over, notes=result.notes)
    return TcpRun(pair, "ok", gbps=result.received_gbps, over=over, retransmits=result.retransmits, notes=result.notes)
