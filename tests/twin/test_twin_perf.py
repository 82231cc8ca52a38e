"""``verify --perf`` end to end over real SSH to the twin rack's containers, with a TEST DOUBLE of perftest.

The twin has no RDMA device, so its perf report must skip every perftest run ("no RDMA device on <node>",
found by looking) -- tests/twin/test_twin_rack.py checks that, with the real perftest and iperf3 the roles
install. Here a double (tests/doubles/perftest_double.py) stands in for perftest and ibv_devices on the
containers: its server really listens on its TCP port and its client really connects, and it prints real
captures from tests/fixtures/perftest, so that the orchestration is exercised for real: servers
confirmed listening before the client, one TCP port per concurrent pair, judging against the line rate,
culprit analysis, a hung client stopped and retried, every server stopped, and a node with no RDMA device
skipped. A rack no example has: five nodes, two leaves, an odd number of pairs per round.

And a scaled-down rail-optimized design whose rails are ``mpi.rails`` (4 nodes x 2 rail HCAs, one scalable
unit of 2 leaves and a spine, two nodes with a storage HCA outside the rails cabled by hand to a storage
leaf): rail-aware pairs only ports of one rail on that rail's leaf and tests every rail port, and a dry run
of route-aware on the LFTs the twin's real OpenSM programmed covers every link direction.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from captures import capture_path
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.rails import Rails
from ibprov.clusterspec.topology import rail_plan
from ibprov.clusterspec.types import Endpoint
from ibprov.report.model import Report
from ibprov.twin.rack import RackState, down, load_state, up, verify_target
from ibprov.verify.perf.baseline import load_baseline
from ibprov.verify.perf.facts import PerfFacts
from ibprov.verify.perf.section import save_baseline
from ibprov.verify.registry import VerifyOptions, run_sections, section_info

pytestmark = pytest.mark.twin

ROOT = Path(__file__).resolve().parents[2]
DOUBLE = ROOT / "tests" / "doubles" / "perftest_double.py"
CAPTURE = {
    "bw": "hdr200-ib_write_bw-a-gbits-client-partial-azure-aks.txt",  # 190.24 Gb/s at 64 KiB
    "lat": "edr100-ib_send_lat-server.txt",  # 1.01 us
    "slow_bw": "roce10g-cx4lx-ib_send_bw-a-client.txt",  # 9.2 Gb/s
    "slow_lat": "hdr200-ib_read_lat-client-partial-azure-aks.txt",  # 5.50 us
}

SPEC = """\
version: 1
cluster: {name: tp%(run)s, ssh_user: root}
nodes:
  - {name: sm01, hcas: [{device: mlx5_0}]}
  - {name: cn01, hcas: [{device: mlx5_0}]}
  - {name: cn02, hcas: [{device: mlx5_0}]}
  - {name: cn03, hcas: [{device: mlx5_0}]}
  - {name: cn04, hcas: [{device: mlx5_0}]}
switches:
  - {name: leaf01, role: leaf, ports: 36}
  - {name: leaf02, role: leaf, ports: 36}
  - {name: spine01, role: spine, ports: 36}
fabric:
  speed: HDR
  width: 4x
  links:
    - leaf01:1 <-> sm01/mlx5_0:1
    - leaf01:2 <-> cn01/mlx5_0:1
    - leaf01:3 <-> cn02/mlx5_0:1
    - leaf02:1 <-> cn03/mlx5_0:1
    - leaf02:2 <-> cn04/mlx5_0:1
    - leaf01:33 <-> spine01:1
    - leaf02:33 <-> spine01:2
subnet_manager:
  routing_engine: minhop
  instances: [{node: sm01, priority: 15}]
acceptance:
  latency_tests: [ib_write_lat]
  bandwidth_sizes: [65536, 8388608]
  perftest_timeout_seconds: 5
  tcp_probe: false
"""
TOOLS = ("ib_write_lat", "ib_write_bw", "ibv_devices")

# mlx5_0 is the storage HCA (on no rail: positions would have made it rail 0); the rails are mlx5_1 and mlx5_2
RAIL_SPEC = """\
version: 1
cluster: {name: trp%(run)s, ssh_user: root}
nodes:
  - {name: gpu01, groups: [gpu], hcas: [{device: mlx5_0}, {device: mlx5_1}, {device: mlx5_2}]}
  - {name: gpu02, groups: [gpu], hcas: [{device: mlx5_0}, {device: mlx5_1}, {device: mlx5_2}]}
  - {name: gpu03, groups: [gpu], hcas: [{device: mlx5_1}, {device: mlx5_2}]}
  - {name: gpu04, groups: [gpu], hcas: [{device: mlx5_1}, {device: mlx5_2}]}
switches:
  - {name: stor01, role: leaf, ports: 8}
fabric:
  speed: HDR
  width: 4x
  fat_tree:
    radix: 8
    leaves: 2
    spines: 1
    hosts_per_leaf: 4
    uplinks_per_leaf: 2
    rails: rail-optimized
    unit_nodes: 4
  links:
    - stor01:1 <-> gpu01/mlx5_0:1
    - stor01:2 <-> gpu02/mlx5_0:1
    - stor01:8 <-> spine01:5
subnet_manager:
  routing_engine: updn
  instances: [{node: gpu01, priority: 15}]
mpi:
  rails:
    - {name: rail0, devices: ["mlx5_1:1"]}
    - {name: rail1, devices: ["mlx5_2:1"]}
acceptance:
  latency_tests: [ib_write_lat]
  bandwidth_sizes: [65536]
  perftest_timeout_seconds: 5
  tcp_probe: false
"""


def podman(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CONTAINERS_CONF=str(ROOT / "images" / "containers.conf"))
    return subprocess.run(["podman", *args], capture_output=True, text=True, env=env, check=False)


def install_double(
    state: RackState,
    node: str,
    *,
    devices: bool = True,
    slow: bool = False,
    hang: bool = False,
    hcas: tuple[str, ...] = ("mlx5_0",),
) -> None:
    captures = CAPTURE
    box = state.nodes[node].container
    assert podman("cp", str(DOUBLE), f"{box}:/usr/local/bin/perftest_double").returncode == 0
    for name in captures.values():
        assert podman("cp", str(capture_path(f"perftest/{name}")), f"{box}:/usr/local/share/{name}").returncode == 0
    config: dict[str, object] = {kind: f"/usr/local/share/{name}" for kind, name in captures.items()}
    config |= {"slow": slow, "hang": hang, "devices": list(hcas)}
    links = [t for t in TOOLS if devices or t != "ibv_devices"]
    script = (
        "chmod 755 /usr/local/bin/perftest_double && "
        + " && ".join(f"ln -sf perftest_double /usr/local/bin/{t}" for t in links)
        + f" && printf '%s' {json.dumps(json.dumps(config))} > /etc/ibprov-perftest-double.json"
    )
    done = podman("exec", box, "sh", "-c", script)
    assert done.returncode == 0, done.stderr


def doubles_running(state: RackState) -> dict[str, str]:
    """node -> the double's processes still running there (none after a run)."""
    out = {}
    for node, box in state.nodes.items():
        ps = podman("exec", box.container, "sh", "-c", "ps -eo pid,args | grep '[p]erftest_double' || true")
        if ps.stdout.strip():
            out[node] = ps.stdout.strip()
    return out


@contextlib.contextmanager
def opensm_on_this_host(state: RackState, hca: str, engine: str) -> Iterator[None]:
    """The real OpenSM, run on this host as ``hca`` (NODE/DEVICE) of the rack (ibsim remote mode, as the twin's
    rogue-sm fault runs it) until the subnet is up; stopped by its PID afterwards. (``apply`` starts the
    planned SMs in the containers; this test needs only the routes they program.)"""
    log = Path(state.directory) / "test-opensm.log"
    argv = ["opensm", "-R", engine, "-p", "15", "-f", str(log), "-d2"]
    sm = subprocess.Popen(argv, env=state.diag_env(state.sim_hosts[hca]), cwd=state.directory)
    try:
        deadline = time.monotonic() + 60
        while "SUBNET UP" not in (log.read_text(errors="replace") if log.is_file() else ""):
            assert sm.poll() is None, f"opensm exited {sm.returncode}"
            assert time.monotonic() < deadline, "OpenSM did not bring the subnet up within 60 s"
            time.sleep(0.5)
        yield
    finally:
        sm.terminate()
        try:
            sm.wait(10)
        except subprocess.TimeoutExpired:
            sm.kill()
            sm.wait()


def perf(loaded: LoadedSpec, **options: object) -> Report:
    twin = verify_target(load_state(loaded))
    return run_sections(loaded, [section_info("perf")], VerifyOptions(target=twin, **options))  # type: ignore[arg-type]


def rack_of(spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LoadedSpec, RackState]]:
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/molecule.sh installs it)")
    monkeypatch.setenv("IBPROV_TWIN_DIR", str(tmp_path / "twins"))
    path = tmp_path / "perf.yaml"
    path.write_text(spec % {"run": os.getpid() % 10000})
    loaded = load_spec_text(path.read_text(), str(path))
    state = up(loaded)
    try:
        yield loaded, state
    finally:
        down(loaded)


@pytest.fixture
def rack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LoadedSpec, RackState]]:
    yield from rack_of(SPEC, tmp_path, monkeypatch)


@pytest.fixture
def rail_rack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LoadedSpec, RackState]]:
    yield from rack_of(RAIL_SPEC, tmp_path, monkeypatch)


def test_perf_runs_pairs_over_ssh_judges_them_names_the_culprit_and_leaves_no_server(
    rack: tuple[LoadedSpec, RackState], tmp_path: Path
) -> None:
    loaded, state = rack
    for node in ("sm01", "cn01", "cn03"):
        install_double(state, node)
    install_double(state, "cn02", slow=True)  # every pair with cn02 is slow: the culprit
    install_double(state, "cn04", devices=False)  # no ibv_devices, no sysfs: no RDMA device

    report = perf(loaded, pairs="all-pairs")
    section = report.section("perf")
    facts = section.facts.as_dict()
    assert facts["schedule"]["kind"] == "all-pairs"
    assert facts["schedule"]["rounds"] == 5  # odd n: n rounds with a bye
    assert facts["nodes_reached"] == 5
    assert facts["nodes_with_rdma"] == 4

    checks = {c.id: c for c in section.checks}
    assert dict(checks["perf.rdma_device"].skipped) == {
        "cn04": "no RDMA device on cn04 (the twin's containers have none)"
    }
    skipped = dict(checks["perf.bandwidth"].skipped)
    assert skipped
    assert all(reason == "no RDMA device on cn04" for reason in skipped.values())
    assert all("cn04" in obj for obj in skipped)

    results = {(r["client"].split("/")[0], r["server"].split("/")[0], r["test"]): r for r in facts["results"]}
    good = results.get(("sm01", "cn01", "ib_write_bw 64KiB")) or results[("cn01", "sm01", "ib_write_bw 64KiB")]
    assert (good["status"], good["value"], good["limit"]) == ("ok", 190.24, 180.0)  # 0.9 x HDR 4x, from the plan
    lat = results.get(("sm01", "cn01", "ib_write_lat 2B")) or results[("cn01", "sm01", "ib_write_lat 2B")]
    assert (lat["status"], lat["value"]) == ("ok", 1.01)

    found = {(f.check, f.object): f for f in report.findings}
    slow = [f for (check, obj), f in found.items() if check == "perf.bandwidth" and "cn02" in obj]
    assert len(slow) == 2 * 3  # two sizes x its three pairs with a device
    assert all(f.observed == "9.2 Gb/s (5 % of line rate)" for f in slow), [f.observed for f in slow]
    assert len([o for (c, o) in found if c == "perf.latency" and "cn02" in o]) == 3  # 5.50 us > 2.5 us
    assert not [o for (c, o) in found if c in ("perf.bandwidth", "perf.latency") and "cn02" not in o]
    suspect = found[("perf.suspect", "cn02 mlx5_0 port 1")]
    assert suspect.observed.startswith("3/3 pairs failed")
    assert doubles_running(state) == {}, "every server stopped"
    assert report.exit_code == 1

    baseline = tmp_path / "baseline.json"
    assert save_baseline(section, loaded.spec.cluster.name, baseline) == len(
        [r for r in facts["results"] if r["status"] == "ok"]
    )
    again = perf(loaded, pairs="all-pairs", baseline=baseline)
    assert not [f for f in again.findings if f.check == "perf.baseline"], "the same captures: nothing worse"
    assert load_baseline(baseline).results


def test_a_hung_client_is_stopped_retried_and_reported_and_nothing_is_left_running(
    rack: tuple[LoadedSpec, RackState],
) -> None:
    loaded, state = rack
    for node in state.nodes:
        install_double(state, node, hang=node == "cn01")
    report = perf(loaded, pairs="quick")
    hung = [f for f in report.findings if f.object.startswith("cn01/")]
    runs = [r for r in report.section("perf").facts.as_dict()["results"] if r["client"].startswith("cn01/")]
    assert runs, "cn01 is a client in the quick schedule"
    assert hung
    assert all("did not finish within 5 s (stopped)" in f.observed for f in hung), [f.observed for f in hung]
    assert doubles_running(state) == {}


def test_rail_aware_pairs_one_rail_on_its_leaf_tests_every_rail_port_and_route_aware_covers_every_link(
    rail_rack: tuple[LoadedSpec, RackState], tmp_path: Path
) -> None:
    loaded, state = rail_rack
    rails = Rails.of(loaded.spec)
    rail_of = {end: r for node in loaded.spec.nodes for end, r in rails.rail_of(node).items()}
    assert len(rail_of) == 8  # 4 nodes x 2 rails; the two storage ports are on none
    plan = rail_plan(loaded.spec, loaded.topology)
    assert plan is not None
    assert plan.port_rail == rail_of  # the generator cabled exactly the rails' ports
    assert {str(end) for end in plan.leaf_of} == {str(end) for end in rail_of}
    assert {plan.leaf_of[end] for end in rail_of if rail_of[end] == 0} == {"leaf01"}
    assert {plan.leaf_of[end] for end in rail_of if rail_of[end] == 1} == {"leaf02"}
    assert len(state.nodes) == 4  # every node has a container: every pair really runs
    for node in state.nodes:
        hcas = tuple(h.device for h in next(n for n in loaded.spec.nodes if n.name == node).hcas)
        install_double(state, node, hcas=hcas)

    report = perf(loaded, pairs="rail-aware")
    facts = report.section("perf").facts
    assert isinstance(facts, PerfFacts)
    pairs = facts.plan.schedule.pairs
    storage = {Endpoint("gpu01", "mlx5_0", 1), Endpoint("gpu02", "mlx5_0", 1)}
    for pair in pairs:
        if pair.client in storage:  # the ports on no rail meet only each other
            assert pair.server in storage - {pair.client}
            continue
        assert rail_of[pair.client] == rail_of[pair.server], f"{pair} crosses rails"
        assert plan.leaf_of[pair.client] == plan.leaf_of[pair.server], f"{pair} leaves its rail's leaf"
        assert pair.client.device != pair.server.device
    tested = {end for p in pairs for end in (p.client, p.server)}
    assert tested == set(rail_of) | storage  # every rail port (and both storage ports) tested
    assert facts.plan.schedule.untested == ()
    # all-pairs within each rail: 4 nodes, 3 rounds, each rail's two node pairs at once, rails in parallel
    assert len(facts.plan.schedule.rounds) == 3
    assert [len(r) for r in facts.plan.schedule.rounds] == [5, 4, 4]
    runs = facts.obs.runs
    assert len(runs) == len(pairs) * 2  # ib_write_lat 2B and ib_write_bw 64KiB, each pair
    assert {r.status for r in runs} == {"ok"}, [(str(r.pair), r.test, r.reason) for r in runs if r.status != "ok"]
    assert {str(end) for r in runs for end in (r.pair.client, r.pair.server)} == {str(e) for e in tested}
    assert doubles_running(state) == {}
    assert report.exit_code == 0, [(f.check, f.object, f.observed) for f in report.findings]

    # the route-aware dry run reads the LFTs the twin's OpenSM programmed (through the rack's probe HCA)
    argv = ["verify", str(tmp_path / "perf.yaml"), "--perf", "--dry-run", "--pairs", "route-aware", "--target", "twin"]
    with opensm_on_this_host(state, "gpu01/mlx5_0", loaded.spec.subnet_manager.routing_engine[0]):
        dry = CliRunner().invoke(cli, argv)
    assert dry.exit_code == 0, dry.output
    lines = dry.output.splitlines()
    assert lines[0].startswith("route-aware schedule: ")
    assert lines[0].endswith(" (routes: LFTs (dump_lfts))"), lines[0]
    # 2 rail leaves x 2 uplinks + the storage leaf's uplink, both ways: 10 inter-switch link directions
    assert lines[1] == "link coverage: 100.0 % (10 of 10 inter-switch link directions)", lines[:3]
    assert not [line for line in lines if line.startswith(("note:", "  not covered"))], lines
    assert lines[-1] == "dry run: nothing was started"


def test_nodes_behind_a_jump_host_or_a_proxy_command_are_reached_through_it(
    rack: tuple[LoadedSpec, RackState], tmp_path: Path
) -> None:
    """A rack behind a bastion: cn02 through `ProxyJump cn01`, cn03 through `ProxyCommand ssh -W %h:%p cn01`
    (the twin's own ssh_config completes each hop); each node sees its SSH connection come from cn01."""
    from ibprov.verify.perf.remote import SshRemote, ssh_targets

    _loaded, state = rack
    config = tmp_path / "ssh_config"
    config.write_text(
        "Host cn02\n  ProxyJump cn01\n"
        f"Host cn03\n  ProxyCommand ssh -F {state.ssh_config} -W %h:%p cn01\n" + state.ssh_config.read_text()
    )
    targets = ssh_targets([(n, n, "root") for n in ("cn02", "cn03")], config=config)
    assert targets["cn02"].jump is not None
    assert targets["cn03"].proxy_command is not None
    remote = SshRemote(targets)
    try:
        for node in ("cn02", "cn03"):
            done = remote.run(node, 'hostname; echo "$SSH_CONNECTION"', timeout=30)
            assert done.rc == 0, done.stderr
            name, connection = done.stdout.splitlines()[:2]
            assert name == node
            assert connection.split()[0] == state.nodes["cn01"].address, f"{node} is reached through cn01"
    finally:
        remote.close()
