"""verify --perf's orchestration against a scripted Remote (a TEST DOUBLE of the SSH layer): the server is
confirmed listening before the client starts, a port conflict is retried on another port, a server that
never listens and a missing tool are reasons, Ctrl-C stops every server started, and the commands carry the
HCA's port, GID index and NUMA node. End to end over real SSH: tests/twin/test_twin_perf.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from captures import read_capture

from ibprov.clusterspec import load_spec_text
from ibprov.probes.perfprobe import script
from ibprov.verify.perf.collect import collect, perftest_command
from ibprov.verify.perf.plan import PerfPlan, build_perf_plan, schedule_for
from ibprov.verify.perf.remote import Completed, RemoteError

SPEC = """\
version: 1
cluster: {name: orch}
nodes:
  - {name: n1, hcas: [{device: mlx5_0, numa_node: 1, gid_index: 3}]}
  - {name: n2, hcas: [{device: mlx5_0}]}
switches: [{name: leaf01, role: leaf, ports: 8}]
fabric:
  speed: NDR
  links: [leaf01:1 <-> n1/mlx5_0:1, leaf01:2 <-> n2/mlx5_0:1]
subnet_manager: {instances: [{node: n1}]}
acceptance:
  latency_tests: []
  bandwidth_sizes: [65536]
  tcp_probe: false
"""
PROBE = (
    "@@ibprov ibv_devices\n    device          \t   node GUID\n    ------          \t----------------\n"
    "    mlx5_0          \t248a0703009e5b72\n@@ibprov rc 0\n@@ibprov sysfs\nmlx5_0\n"
    "@@ibprov tool ib_write_bw /usr/bin/ib_write_bw\n@@ibprov tool numactl /usr/bin/numactl\n"
    "@@ibprov rate mlx5_0 1 400 Gb/sec (4X NDR)\n@@ibprov state mlx5_0 1 4: ACTIVE\n"
    "@@ibprov pcie_speed mlx5_0 1 32.0 GT/s PCIe\n@@ibprov pcie_width mlx5_0 1 16\n"
)


@dataclass(eq=False)
class FakeServer:
    node: str
    command: str
    pid: int | None
    exit_at_once: Completed | None = None

    def exited(self) -> bool:
        return self.exit_at_once is not None

    def wait(self, timeout: float) -> Completed:
        return self.exit_at_once or Completed(0, "", "")


@dataclass
class ScriptedRemote:
    """A TEST DOUBLE of :class:`ibprov.verify.perf.remote.SshRemote`: answers from a script, records calls."""

    client_output: str
    busy_ports: set[int] = field(default_factory=set)  # a server on these ports exits: address in use
    never_listens: bool = False
    interrupt_on_client: bool = False
    calls: list[tuple[str, str]] = field(default_factory=list)
    stopped: list[FakeServer] = field(default_factory=list)
    started: list[FakeServer] = field(default_factory=list)

    def connect(self, node: str) -> None:
        if node == "down":
            raise RemoteError("SSH to root@down:22: Connection refused")

    def address(self, node: str) -> str:
        return f"192.0.2.{len(node)}"

    def run(self, node: str, command: str, timeout: float) -> Completed:
        self.calls.append((node, command))
        if command.startswith("echo '@@ibprov ibv_devices'"):
            return Completed(0, PROBE, "")
        if command.startswith("ss "):
            listening = not self.never_listens and any(s.exit_at_once is None for s in self.started)
            return Completed(0, "LISTEN 0 1 0.0.0.0:18515 0.0.0.0:*\n" if listening else "", "")
        if self.interrupt_on_client:
            raise KeyboardInterrupt
        return Completed(0, self.client_output, "")

    def start(self, node: str, command: str) -> FakeServer:
        self.calls.append((node, "start " + command))
        port = int(command.split(" -p ")[1].split()[0])
        early = Completed(1, "", " Couldn't bind to port: Address already in use") if port in self.busy_ports else None
        server = FakeServer(node, command, 4242, early)
        self.started.append(server)
        return server

    def stop(self, started: FakeServer) -> None:  # type: ignore[override]
        self.stopped.append(started)

    def close(self) -> None:
        pass


@pytest.fixture
def plan() -> PerfPlan:
    loaded = load_spec_text(SPEC, "orch.yaml")
    schedule, routing = schedule_for(loaded, "all-pairs")
    return build_perf_plan(loaded, schedule, routing=routing)


@pytest.fixture
def client_output() -> str:
    return read_capture("perftest/ndr200-ib_send_bw-a-gbits-client-cx7.txt")


def test_the_server_listens_before_the_client_starts_and_is_stopped_after(plan: PerfPlan, client_output: str) -> None:
    remote = ScriptedRemote(client_output)
    obs = collect(plan, remote)
    (run,) = obs.runs
    assert (run.status, run.value, run.attempts) == ("ok", 108.83, 1)
    order = [c for _n, c in remote.calls if not c.startswith("echo")]
    assert order[0].startswith("start ")
    assert order[1].startswith("ss ")
    assert order[2].startswith("timeout ")
    assert remote.stopped == remote.started, "every server started is stopped"
    assert obs.nodes["n1"].probe is not None
    assert obs.nodes["n1"].probe.ports[("mlx5_0", 1)].rate_gbps == 400.0


def test_a_port_conflict_is_retried_on_another_port(plan: PerfPlan, client_output: str) -> None:
    remote = ScriptedRemote(client_output, busy_ports={plan.first_port})
    (run,) = collect(plan, remote).runs
    assert (run.status, run.attempts) == ("ok", 2)
    ports = [int(s.command.split(" -p ")[1].split()[0]) for s in remote.started]
    assert ports == [plan.first_port, plan.first_port + 500]


def test_a_server_that_never_listens_is_a_failed_run_with_its_reason(
    plan: PerfPlan, client_output: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = ScriptedRemote(client_output, never_listens=True)
    monkeypatch.setattr("ibprov.verify.perf.collect._LISTEN_SECONDS", 0.3)
    (run,) = collect(plan, remote).runs
    assert run.status == "failed"
    assert "was not listening on TCP port" in run.reason
    assert remote.stopped == remote.started


def test_ctrl_c_stops_every_server_started_and_returns_what_was_done(plan: PerfPlan, client_output: str) -> None:
    remote = ScriptedRemote(client_output, interrupt_on_client=True)
    obs = collect(plan, remote)
    assert obs.interrupted
    assert remote.started
    assert all(s in remote.stopped for s in remote.started)


def test_a_result_without_the_size_asked_for_is_no_result(plan: PerfPlan) -> None:
    partial = read_capture("perftest/hdr200-ib_write_bw-a-server-final-row-only.txt")  # one row: 8 MiB
    (run,) = collect(plan, ScriptedRemote(partial)).runs
    assert run.status == "failed"
    assert run.reason.startswith("ib_write_bw printed no result row for 65536 bytes")


def test_commands_carry_the_port_gid_index_numa_node_and_a_limit_on_the_node(plan: PerfPlan) -> None:
    (pair,) = plan.schedule.pairs
    test = plan.tests[0]
    n1_side = perftest_command(plan, test, pair, server=None if pair.server.device == "n1" else "x", port=18515)
    assert n1_side.startswith(f"timeout {plan.timeout_seconds} numactl --cpunodebind=1 --membind=1 ib_write_bw")
    assert "-d mlx5_0 -i 1 -x 3 -p 18515 -s 65536" in n1_side
    assert "--report_gbits" in n1_side
    assert "-F" in n1_side


def test_the_probe_script_runs_in_sh_and_reads_a_host_without_rdma(tmp_path: Path) -> None:
    import subprocess

    from ibprov.probes.perfprobe import parse

    done = subprocess.run(
        ["sh", "-c", script(["sh", "no-such-tool-ibprov"], [("mlx5_0", 1)])], capture_output=True, text=True, check=True
    )
    probe = parse(done.stdout)
    assert probe.tools["sh"]
    assert probe.tools["no-such-tool-ibprov"] is None
    assert probe.missing_tools(["sh", "no-such-tool-ibprov"]) == ["no-such-tool-ibprov"]
    if not Path("/sys/class/infiniband").exists():
        assert probe.devices == ()
