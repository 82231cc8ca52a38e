"""The twin rack end to end: up, apply, a second apply that changes nothing, verify clean (fabric and nodes),
every fault kind found by verify, heal, down, and nothing of the twin left behind.

A rack no example has: five nodes (odd), two leaves under a spine, the standby SM on the other leaf, two
partitions besides the default, no GUIDs in the spec (the twin's stand-ins). Needs podman and the local
node image (`scripts/molecule.sh` installs both in `make test` before this runs).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.report.model import Report
from ibprov.twin.faults import heal, inject
from ibprov.twin.rack import LABEL, RackState, apply_target, down, load_state, up, verify_target
from ibprov.verify.registry import SECTIONS, VerifyOptions, run_sections, section_info

pytestmark = pytest.mark.twin
ARTIFACTS = Path(__file__).resolve().parents[2] / "out" / "test-artifacts"

SPEC = """\
version: 1
cluster: {name: tw%(run)s, ssh_user: root}
nodes:
  - {name: sm01, groups: [infra], hcas: [{device: mlx5_0}]}
  - {name: sm02, groups: [infra], hcas: [{device: mlx5_0}]}
  - {name: cn01, groups: [compute], hcas: [{device: mlx5_0}]}
  - {name: cn02, groups: [compute], hcas: [{device: mlx5_0}]}
  - {name: cn03, groups: [compute], hcas: [{device: mlx5_0}]}
switches:
  - {name: leaf01, role: leaf, ports: 36}
  - {name: leaf02, role: leaf, ports: 36}
  - {name: spine01, role: spine, ports: 36}
fabric:
  speed: HDR
  width: 4x
  links:
    - leaf01:1 <-> cn01/mlx5_0:1
    - leaf01:2 <-> cn02/mlx5_0:1
    - leaf02:1 <-> cn03/mlx5_0:1
    - leaf01:36 <-> sm01/mlx5_0:1
    - leaf02:36 <-> sm02/mlx5_0:1
    - leaf01:33 <-> spine01:1
    - leaf02:33 <-> spine01:2
stack: {kind: inbox}
subnet_manager:
  routing_engine: minhop
  sm_key: env:IBPROV_TWIN_TEST_SM_KEY
  instances:
    - {node: sm01, priority: 15}
    - {node: sm02, priority: 7}
default_partition: {membership: full, ipoib: true}
partitions:
  - {name: compute, pkey: 0x0010, ipoib: true, members: [{group: compute}, {group: infra, membership: limited}]}
  - {name: storage, pkey: 0x0020, members: [{all: true, membership: limited}, {node: cn03}]}
ipoib:
  - {partition: default, subnet: 10.40.0.0/24, pool_start: 10.40.0.11}
"""


def podman_names(kind: str, run_id: str) -> list[str]:
    env = dict(os.environ, CONTAINERS_CONF=str(Path(__file__).resolve().parents[2] / "images" / "containers.conf"))
    argv = ["podman", "network", "ls"] if kind == "network" else ["podman", "ps", "-a"]
    name = "{{.Name}}" if kind == "network" else "{{.Names}}"
    out = subprocess.run(
        [*argv, "--filter", f"label={LABEL}.run={run_id}", "--format", name],
        capture_output=True, text=True, env=env, check=True,
    ).stdout  # fmt: skip
    return out.split()


def keep_ibsim_log(state: RackState) -> None:
    """ibsim's console log, kept as a test artifact: when the simulator panics, its last words are there."""
    from ibprov.twin.rack import CONSOLE_LOG, podman

    log = podman("exec", state.ibsim, "cat", CONSOLE_LOG, check=False, timeout=30)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "twin-rack-ibsim.log").write_text(log)


def a_killed_diag_gives_its_slot_back(state: RackState) -> None:
    """A diag killed inside a node container (SIGKILL: umad2sim never says goodbye) holds its ibsim slot until
    the rack's keeper sees its process gone and takes the slot back; the SMs' slots stay theirs."""
    from ibprov.twin.keeper import INTERVAL_S, slot_report
    from ibprov.twin.rack import podman
    from ibprov.twin.slots import Client

    node = state.nodes["cn01"]
    start = "set -a; . /etc/environment; cd /tmp; ibping -S >/dev/null 2>&1 & echo $!"
    pid = int(podman("exec", node.container, "sh", "-c", start, timeout=60).strip())

    def ibping() -> list[Client]:  # remote mode: ibsim knows a client by its UDP port; the keeper finds its process
        report = slot_report(state, free=False)
        held = {slot: h.comm for slot, h in report.holders.items()}
        return [c for c in report.clients if c.node == node.sim_host and held.get(c.slot) == "ibping"]

    wait_until(lambda: bool(ibping()), 30, f"ibping -S (pid {pid} in {node.container}) to attach to ibsim")
    (client,) = ibping()
    assert f"slot {client.slot}: ibping (pid " in "\n".join(slot_report(state, free=False).lines())
    podman("exec", node.container, "kill", "-9", str(pid), timeout=30)
    wait_until(
        lambda: client not in slot_report(state, free=False).clients,
        10 * INTERVAL_S + 30,
        f"the keeper to take back slot {client.slot} of the killed ibping",
    )
    assert f"client id {client.pid} on {node.sim_host} was gone" in (state.path / "keeper.log").read_text()
    shown = slot_report(state, free=False).lines()
    assert sum(" as SM" in line and "opensm" in line for line in shown) == 2, shown  # sm01's and sm02's


def verify_collected(loaded: LoadedSpec, attempts: int = 3) -> Report:
    """verify, again (at most 3 times) while it could not read every port: two MASTERs that both sweep (a
    rogue OpenSM beside the planned one) move LIDs and PKey tables under a diag, more often on a loaded
    machine; an admin re-runs verify then too."""
    for _attempt in range(attempts - 1):
        report = verify(loaded)
        if not any(f.check == "collect.incomplete" for f in report.findings):
            return report
    return verify(loaded)


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait for ``predicate`` (bounded); on giving up, say what was waited for and how long."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"gave up after {timeout:g} s waiting for {what}"
        time.sleep(0.5)


def verify(loaded: LoadedSpec) -> Report:
    """What `ibprov verify SPEC --target twin` runs: every section but those run only when asked for, on the
    rack as it is now (its faults decide where the diags run from)."""
    twin = VerifyOptions(target=verify_target(load_state(loaded)))
    return run_sections(loaded, [i for i in SECTIONS if i.default], twin)


SETTLED = ("STANDBY", "MASTER")
SM_KEY = "0x5ec2e70000c0ffee"  # the spec's env:IBPROV_TWIN_TEST_SM_KEY: searched for in every file written here


def files_holding(root: Path, value: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and not p.is_symlink() and value.encode() in p.read_bytes()]


def found(report: Report) -> set[tuple[str, str]]:
    return {(f.check, f.object) for f in report.findings}


@pytest.fixture
def rack_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LoadedSpec:
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/molecule.sh installs it)")
    monkeypatch.setenv("IBPROV_TWIN_DIR", str(tmp_path / "twins"))
    monkeypatch.setenv("IBPROV_TWIN_TEST_SM_KEY", SM_KEY)
    return load_spec_text(SPEC % {"run": os.getpid() % 10000}, str(tmp_path / "rack.yaml"))


def kill_an_apply_mid_play(loaded: LoadedSpec, state: RackState, tmp_path: Path, *, stopped: str) -> Path:
    """`ibprov apply --target twin` in its own process: once its play is under way, ``stopped``'s container is
    stopped (a node lost mid-play), then ibprov is killed (SIGKILL). Its ansible-playbook outlives it
    (ansible-runner starts it with SIGHUP ignored) until it next writes to the terminal that is gone; while it
    runs, the next apply of that run directory is refused, naming it. Returns the run directory."""
    from ibprov.run.lock import RunLockHeld, run_lock
    from ibprov.twin.rack import podman

    spec = tmp_path / "rack.yaml"
    spec.write_text(SPEC % {"run": loaded.spec.cluster.name.removeprefix("tw")})
    killed = tmp_path / "killed"
    events = killed / "runner" / "artifacts"
    argv = [sys.executable, "-m", "ibprov", "apply", str(spec), "--target", "twin", "--run-dir", str(killed)]
    output = tmp_path / "killed-apply.log"
    with (
        output.open("wb") as log,
        subprocess.Popen([*argv, "--no-diff"], stdout=log, stderr=subprocess.STDOUT) as ibprov,
    ):

        def still_running() -> bool:
            return ibprov.poll() is None

        def what_it_said() -> str:
            said = output.read_text()[-3000:]
            return f"the apply ended (exit {ibprov.returncode}) before it could be killed:\n{said}"

        try:
            deadline = time.monotonic() + 600
            while len(list(events.glob("*/job_events/*.json"))) < 40 and time.monotonic() < deadline:
                assert still_running(), what_it_said()
                time.sleep(0.5)
            podman("stop", "-t", "2", state.nodes[stopped].container, timeout=60)
            while len(list(events.glob("*/job_events/*.json"))) < 60 and time.monotonic() < deadline:
                assert still_running(), what_it_said()
                time.sleep(0.5)
            ibprov.send_signal(signal.SIGKILL)
        finally:
            if ibprov.poll() is None:
                ibprov.kill()
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:  # the orphaned play ends by itself
        try:
            with run_lock(killed, "the test"):
                break
        except RunLockHeld as held:
            assert "still runs" in str(held)  # noqa: PT017 -- the refusal names the play, while it runs
            time.sleep(2)
    else:
        raise AssertionError("the killed apply's play never ended")
    return killed


def test_the_twin_rack_takes_apply_verify_faults_and_leaves_nothing_behind(
    rack_spec: LoadedSpec, tmp_path: Path
) -> None:
    from ibprov.run import apply_spec

    loaded = rack_spec
    lines: list[str] = []
    state = up(loaded, say=lines.append)
    try:
        assert set(state.nodes) == {"sm01", "sm02", "cn01", "cn02", "cn03"}
        assert up(loaded, say=lines.append).run_id == state.run_id, "a second up reuses the rack"
        assert any("(reused)" in line for line in lines)

        # an apply killed half-way: cn03's container stopped mid-play, then ibprov SIGKILLed; the node started
        # again (`twin up` finds it stopped: it comes back at its address, as a rebooted node), the next apply
        # of the same run directory completes the rack, cn03 included
        killed = kill_an_apply_mid_play(loaded, state, tmp_path, stopped="cn03")
        lines.clear()
        assert up(loaded, say=lines.append).run_id == state.run_id, "a stopped node is started, not rebuilt"
        assert any("started again: " + state.nodes["cn03"].container in line for line in lines), lines
        first = apply_spec(loaded, killed, target=apply_target(state))
        assert (first.rc, first.failed_hosts) == (0, [])
        assert first.hosts["cn03"].changed > 0, "cn03 missed the killed apply's tasks after it stopped"
        second = apply_spec(loaded, killed, target=apply_target(state))
        assert {h: r.changed for h, r in second.hosts.items()} == dict.fromkeys(state.nodes, 0), "idempotent"

        clean = verify(loaded)
        assert clean.findings == [], [f.text for f in clean.findings]
        assert [s.name for s in clean.sections] == ["fabric", "nodes"]
        nodes = clean.section("nodes")
        assert nodes.facts.as_dict() == {"hosts": 5, "hosts_reached": 5}
        assert any("judged on /etc/security/limits.d" in text for c in nodes.checks for _o, text in c.caveats)

        a_killed_diag_gives_its_slot_back(state)

        on_twin = VerifyOptions(target=verify_target(state))
        perf = run_sections(loaded, [section_info("perf")], on_twin).section("perf")
        checks = {c.id: c for c in perf.checks}
        assert dict(checks["perf.rdma_device"].skipped) == {
            n: f"no RDMA device on {n} (the twin's containers have none)" for n in state.nodes
        }, "found by looking: perftest and ibv_devices are installed, the containers have no device"
        assert checks["perf.tools"].passed, "ib_stack installed perftest and iperf3"
        assert checks["perf.bandwidth"].status == checks["perf.latency"].status == "skipped"
        tcp = perf.facts.as_dict()["tcp_results"]
        assert tcp, "the TCP probe ran"
        assert all(t["status"] == "ok" and t["gbps"] > 0 for t in tcp), tcp
        assert all("container network" in t["over"] and "not IPoIB" in t["over"] for t in tcp)
        assert perf.exit_code == 0

        routing = run_sections(loaded, [section_info("routing")], on_twin).section("routing")
        assert routing.findings == [], [f.text for f in routing.findings]
        audited = routing.facts.as_dict()
        assert audited["engine_used"] == "minhop", "read from sm01's OpenSM log through Ansible"
        assert audited["engine_log"].startswith("sm01:")
        assert audited["pairs"] == audited["delivered"] == 5 * 4
        assert audited["credit_loops"] == 0

        # each fault kind alone: the one cause is the fault, and every other finding (the host's view of a lost
        # port, a counter the lost link left behind) hangs under it
        alone = [
            ("unlink", ["cn03/mlx5_0:1"], ("cabling.missing", "cn03 mlx5_0 port 1")),
            ("swap", ["leaf01:1", "leaf01:2"], ("cabling.swapped", "cn01 mlx5_0 port 1 and cn02 mlx5_0 port 1")),
            ("counters", ["sm02/mlx5_0:1", "SymbolErrorCounter=99"], ("counters.threshold", "sm02 mlx5_0 port 1")),
            ("degrade", ["leaf01:33", "width=1x"], ("link.width", "leaf01 port 33")),
            ("pkey-drift", ["cn01"], ("pkey.extra", "cn01 mlx5_0 port 1")),
        ]
        for kind, args, cause in alone:
            inject(load_state(loaded), loaded, kind, args)
            one = verify(loaded)
            assert [(c.finding.check, c.finding.object) for c in one.causes] == [cause], (
                kind,
                [(c.finding.text, [s.text for s in c.symptoms]) for c in one.causes],
            )
            heal(load_state(loaded))

        state = load_state(loaded)
        inject(state, loaded, "unlink", ["cn03/mlx5_0:1"])
        inject(state, loaded, "swap", ["leaf01:1", "leaf01:2"])
        inject(state, loaded, "counters", ["sm02/mlx5_0:1", "SymbolErrorCounter=99"])
        inject(state, loaded, "degrade", ["leaf01:33", "width=1x"])
        inject(state, loaded, "pkey-drift", ["cn01"])
        broken = verify(loaded)
        fabric = {pair for pair in found(broken) if not pair[0].startswith("node.")}
        assert ("cabling.missing", "cn03 mlx5_0 port 1") in fabric
        assert ("cabling.swapped", "cn01 mlx5_0 port 1 and cn02 mlx5_0 port 1") in fabric
        assert ("counters.threshold", "sm02 mlx5_0 port 1") in fabric
        assert ("link.width", "leaf01 port 33") in fabric
        assert ("pkey.extra", "cn01 mlx5_0 port 1") in fabric
        # causes before symptoms: the five faults are the causes, every other finding hangs under one of them
        injected = {
            ("cabling.missing", "cn03 mlx5_0 port 1"),
            ("cabling.swapped", "cn01 mlx5_0 port 1 and cn02 mlx5_0 port 1"),
            ("counters.threshold", "sm02 mlx5_0 port 1"),
            ("link.width", "leaf01 port 33"),
            ("pkey.extra", "cn01 mlx5_0 port 1"),
        }
        causes = {(c.finding.check, c.finding.object): c for c in broken.causes}
        assert set(causes) == injected, [(c.finding.text, [s.text for s in c.symptoms]) for c in broken.causes]
        assert sum(1 + len(c.symptoms) for c in causes.values()) == len(broken.findings)

        assert len(heal(load_state(loaded))) == 5
        assert verify(loaded).findings == [], "heal undoes every fault"

        # a second OpenSM started with the site's own sm_key defers to the planned master: STANDBY, and
        # verify names it, nothing else
        entered = inject(load_state(loaded), loaded, "rogue-sm", ["cn02", "planned-key"])
        assert entered == "started a rogue OpenSM (priority 0, the planned sm_key) on cn02's HCA: it entered STANDBY"
        standby = verify(loaded)
        assert found(standby) == {("sm.rogue", "cn02 mlx5_0 port 1")}, [f.text for f in standby.findings]
        assert "STANDBY SM with priority 0" in standby.findings[0].observed
        heal(load_state(loaded))
        assert verify(loaded).findings == [], "heal stops the rogue"
        # two applies, verifies, faults with the key: it is in no file ibprov or what it drives wrote here
        # (ansible-runner's artifacts, the fact cache, the twin's state and logs)
        assert files_holding(tmp_path, SM_KEY) == []

        # with OpenSM's default key beside planned SMs that set their own, OpenSM 3.3.23 ignores them
        # ("non-matching sm_key"): it may enter STANDBY first, but makes itself a second MASTER sooner or later,
        # rewriting the PKey tables while both sweep (verify cannot read every port then, which ones changes
        # from run to run); whenever verify looks, it fails and names the SM fight or the rogue
        entered = inject(load_state(loaded), loaded, "rogue-sm", ["cn02"])
        assert entered in {f"started a rogue OpenSM (priority 0) on cn02's HCA: it entered {s}" for s in SETTLED}
        rogue = verify_collected(loaded)
        assert rogue.exit_code != 0
        assert {c for c, _o in found(rogue)} & {"sm.master", "sm.rogue"}, [f.text for f in rogue.findings]
        heal(load_state(loaded))
        # the fight leaves switch relay errors behind (packets dropped while routes moved): once it is over an
        # admin clears the counters, as counters.threshold's fix says, and verify passes
        healed = load_state(loaded)
        subprocess.run(
            ["ibqueryerrors", "-k"], env=healed.diag_env(healed.probe_host()), capture_output=True, check=False,
            timeout=120,
        )  # fmt: skip
        healed = verify(loaded)
        assert healed.findings == [], [f.text for f in healed.findings]
        assert not (Path(state.directory) / "rogue-opensm.pid").exists()
    finally:
        keep_ibsim_log(state)
        removed = down(loaded)
    assert state.ibsim in removed
    assert "the slot keeper" in removed
    assert podman_names("container", state.run_id) == []
    assert podman_names("network", state.run_id) == []
    assert not Path(state.directory).exists()


def test_twin_up_refuses_a_missing_rack_clearly(rack_spec: LoadedSpec) -> None:
    from ibprov.twin.rack import RackError

    with pytest.raises(RackError, match=r"no twin rack of cluster tw\d+ .*run `ibprov twin up SPEC`"):
        load_state(rack_spec)
