"""The twin rack's decisions, without podman: which nodes get a container, how a node is attached, where
diags run from, and the exact ibsim console commands each fault and its heal send."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec, load_spec_text
from ibprov.twin import faults
from ibprov.twin.rack import RackError, RackNode, RackState, _attach_script, _write_access, choose_containers

REPO = Path(__file__).resolve().parents[3]


def big_rack(n: int) -> LoadedSpec:
    names = [f"cn{i:02d}" for i in range(1, n + 1)]
    text = "\n".join(
        [
            "version: 1",
            "cluster: {name: big}",
            "nodes:",
            *(f"  - {{name: {x}, hcas: [{{device: mlx5_0}}]}}" for x in names),
            "switches: [{name: leaf01, role: leaf, ports: 40}]",
            "fabric:",
            "  speed: HDR",
            "  links:",
            *(f"    - leaf01:{i} <-> {x}/mlx5_0:1" for i, x in enumerate(names, 1)),
            "subnet_manager:",
            f"  instances: [{{node: {names[-1]}, priority: 15}}, {{node: {names[5]}, priority: 3}}]",
        ]
    )
    return load_spec_text(text + "\n", "big.yaml")


def rack_state(tmp_path: Path) -> RackState:
    state = RackState(
        cluster="rack1",
        run_id="abc123",
        directory=str(tmp_path),
        network="ibprov-twin-rack1-abc123",
        ibsim="ibprov-twin-rack1-abc123-ibsim",
        ibsim_address="10.89.0.2",
        image="localhost/ibprov-node:bookworm",
        sim_hosts={f"{n}/mlx5_0": f"H-{n}-mlx5_0" for n in ("sm01", "sm02", "node01", "node02", "node03", "node04")},
    )
    for i, name in enumerate(("sm01", "sm02", "node01", "node02")):
        state.nodes[name] = RackNode(name, f"{state.network}-{name}", f"10.89.0.{i + 3}", f"H-{name}-mlx5_0")
    state.simulated_only = ["node03", "node04"]
    return state


def test_the_sm_nodes_get_containers_first_and_nodes_beyond_the_limit_stay_simulated_hcas() -> None:
    boxed, simulated = choose_containers(big_rack(13))
    assert boxed == ["cn13", "cn06", "cn01", "cn02", "cn03", "cn04", "cn05", "cn07"]
    assert simulated == ["cn08", "cn09", "cn10", "cn11", "cn12"]
    assert choose_containers(load_spec(REPO / "examples" / "rack.yaml"))[1] == []


def test_a_node_is_attached_to_its_own_simulated_hca_for_services_and_logins(tmp_path: Path) -> None:
    state = rack_state(tmp_path)
    script = _attach_script(state, state.nodes["node01"], "ssh-ed25519 AAAA test")
    assert 'DefaultEnvironment="LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"' in script
    assert '"SIM_HOST=H-node01-mlx5_0" "IBSIM_SERVER_NAME=10.89.0.2" "IBSIM_SERVER_PORT=7070"' in script
    assert "SIM_HOST=H-node01-mlx5_0\nIBSIM_SERVER_NAME=10.89.0.2\n" in script  # /etc/environment
    assert "ssh-ed25519 AAAA test' > /root/.ssh/authorized_keys" in script
    assert "ib-opensm@.service.d" in script
    assert script.rstrip().endswith("systemctl daemon-reexec")


def test_the_inventory_names_the_spec_nodes_at_their_container_addresses(tmp_path: Path) -> None:
    state = rack_state(tmp_path)
    _write_access(state)
    inventory = state.inventory.read_text()
    assert '"node02": {\n        "ansible_host": "10.89.0.6"' in inventory
    assert "node03" not in inventory, "a simulated HCA has no host to reach"
    assert f"-F {state.ssh_config}" in inventory
    assert "Host node01 ibprov-twin-rack1-abc123-node01\n  HostName 10.89.0.5\n" in state.ssh_config.read_text()


def test_diags_run_as_a_free_hca_and_never_as_one_a_fault_cut_off(tmp_path: Path) -> None:
    state = rack_state(tmp_path)
    assert state.probe_host() == "H-node03-mlx5_0"
    state.faults.append({"kind": "unlink", "args": ["node03/mlx5_0:1"], "text": "", "undo": []})
    assert state.probe_host() == "H-node04-mlx5_0"
    state.sim_hosts = {f"{n}/mlx5_0": f"H-{n}-mlx5_0" for n in state.nodes}  # every HCA has a container
    state.faults = [{"kind": "unlink", "args": ["node02/mlx5_0:1"], "text": "", "undo": []}]
    assert state.probe_host() == "H-node01-mlx5_0", "the last container node that no fault touched"


def test_diags_never_run_as_an_hca_at_the_far_end_of_a_swapped_switch_port(tmp_path: Path) -> None:
    state = rack_state(tmp_path)
    state.sim_hosts = {f"{n}/mlx5_0": f"H-{n}-mlx5_0" for n in state.nodes}
    # a swap is given by its switch ends: the HCAs it moved are recorded by inject as the fault's nodes
    state.faults = [{"kind": "swap", "args": ["leaf01:1", "leaf01:2"], "text": "", "undo": [], "nodes": ["node02"]}]
    assert state.probe_host() != "H-node02-mlx5_0"


class FakePodman:
    """``podman`` for the fault steps: records what is sent into the containers and the SM units stopped and
    started; the SM "sweeps" (rewrites its subnet dump: a new mtime) after each command when ``sweeps`` is
    "always", never when "never", and only once started again from cold when "after-restart"."""

    UNIT = "ib-opensm@0x0c42a10300d8e2a0.service"

    def __init__(self, sweeps: str) -> None:
        self.sent: list[str] = []
        self.sweeps = sweeps
        self.subnet_ups = 0
        self.units: list[str] = []

    def __call__(self, *argv: str, **_kw: Any) -> str:
        if argv[:1] != ("exec",):
            return ""
        if argv[-1].startswith("stat -c %y /var/log/opensm-subnet.lst"):
            return f"2026-12-06 02:23:{self.subnet_ups:02d}.603800742 +0000\n0\n"
        if argv[-1].startswith("tail "):
            return "Dec 05 18:20:01 000001 [AA78A6C0] 0x80 -> Entering MASTER state\n"
        if argv[2:4] == ("systemctl", "list-units"):
            return f"{self.UNIT} loaded active running OpenSM for port 0x0c42a10300d8e2a0\n"
        if argv[2:3] == ("systemctl",) and argv[3] in ("stop", "start"):
            self.units.append(f"{argv[3]} {argv[1].rsplit('-', 1)[1]}: {' '.join(argv[4:])}")
            self.subnet_ups += 1 if argv[3] == "start" and self.sweeps == "after-restart" else 0
            return ""
        self.sent.append(argv[-1])
        self.subnet_ups += 1 if self.sweeps == "always" else 0
        return ""


@pytest.fixture
def console(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    fake = FakePodman(sweeps="always")
    monkeypatch.setattr(faults, "podman", fake)
    monkeypatch.setattr(faults.time, "sleep", lambda _s: None)
    return fake.sent


def hung_sm(monkeypatch: pytest.MonkeyPatch, sweeps: str) -> tuple[FakePodman, list[float]]:
    """A rack whose SM does not finish a sweep after a fault step; the clock is the test's (no real time)."""
    fake = FakePodman(sweeps=sweeps)
    now = [0.0]
    monkeypatch.setattr(faults, "podman", fake)
    monkeypatch.setattr(faults.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    monkeypatch.setattr(faults.time, "monotonic", lambda: now[0])
    return fake, now


COLD_RESTART = [f"stop sm01: {FakePodman.UNIT}", f"stop sm02: {FakePodman.UNIT}"]
COLD_RESTART += [f"start sm01: {FakePodman.UNIT}", f"start sm02: {FakePodman.UNIT}"]


def test_a_sweep_that_never_ends_restarts_the_sms_from_cold_master_first_and_the_fault_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """umad2sim strips MAD timeouts, so a lost MAD hangs OpenSM's sweep for ever: after the bounded wait
    every planned SM is stopped, the highest priority started alone, and the others once it has swept."""
    fake, now = hung_sm(monkeypatch, "after-restart")
    loaded = load_spec(REPO / "examples" / "rack.yaml")
    state = rack_state(tmp_path)
    state.save()
    assert faults.inject(state, loaded, "unlink", ["node03/mlx5_0:1"]) == "unlinked the cable at node03/mlx5_0:1"
    assert fake.units == COLD_RESTART
    assert 90 <= now[0] < 100, "one bounded wait, then the restarted master's sweep at once"
    assert [f["kind"] for f in RackState.load(tmp_path).faults] == ["unlink"]


def test_a_sweep_step_gives_up_after_the_cold_restart_naming_both_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, now = hung_sm(monkeypatch, "never")
    loaded = load_spec(REPO / "examples" / "rack.yaml")
    state = rack_state(tmp_path)
    state.save()
    with pytest.raises(
        RackError, match=r"finish a sweep \(/var/log/opensm-subnet.lst rewritten.* 90 s, then 90 s more after"
    ) as caught:
        faults.inject(state, loaded, "unlink", ["node03/mlx5_0:1"])
    assert fake.units == COLD_RESTART, "restarted once, not in a loop"
    assert "the log's last lines:\nDec 05 18:20:01 000001 [AA78A6C0] 0x80 -> Entering MASTER state" in str(caught.value)
    assert 180 <= now[0] < 200, "both waits are bounded by SWEEP_WAIT_S"
    assert "(the fault is partly in place: `ibprov twin heal` undoes it)" in str(caught.value)
    assert [f["kind"] for f in RackState.load(tmp_path).faults] == ["unlink"], "the cable was unlinked: heal relinks it"


def test_each_console_fault_sends_exactly_its_commands_and_heal_undoes_them_newest_first(
    tmp_path: Path, console: list[str]
) -> None:
    loaded = load_spec(REPO / "examples" / "rack.yaml")
    state = rack_state(tmp_path)
    state.save()
    assert faults.inject(state, loaded, "unlink", ["node03/mlx5_0:1"]) == "unlinked the cable at node03/mlx5_0:1"
    faults.inject(state, loaded, "swap", ["leaf01:1", "leaf01:2"])
    faults.inject(state, loaded, "counters", ["node02/mlx5_0:1", "LinkDownedCounter=3"])
    sent = "\n".join(console).replace("'\"'\"'", "'")
    assert 'Unlink "H-node03-mlx5_0"[1]' in sent
    assert (
        'Link \\"S-leaf01\\"[1] \\"H-node02-mlx5_0\\"[1]' in sent or 'Link "S-leaf01"[1] "H-node02-mlx5_0"[1]' in sent
    )
    assert "PortCounters.LinkDownedCounter=3" in sent
    assert [f["kind"] for f in RackState.load(tmp_path).faults] == ["unlink", "swap", "counters"]
    assert [f["nodes"] for f in RackState.load(tmp_path).faults] == [
        ["leaf01", "node03"],
        ["leaf01", "node01", "node02"],
        [],
    ], "the nodes at both ends of each changed cable: host-side diags avoid them"
    console.clear()
    healed = faults.heal(state)
    assert healed == [
        "set LinkDownedCounter=3 on node02/mlx5_0:1",
        "swapped the cables at leaf01:1 and leaf01:2",
        "unlinked the cable at node03/mlx5_0:1",
    ]
    undone = "\n".join(console)
    assert undone.index("LinkDownedCounter=0") < undone.index("ReLink")
    assert RackState.load(tmp_path).faults == []


def test_a_fault_that_cannot_be_done_is_a_clear_error(tmp_path: Path, console: list[str]) -> None:
    loaded = load_spec(REPO / "examples" / "rack.yaml")
    state = rack_state(tmp_path)
    with pytest.raises(RackError, match="no planned cable ends there"):
        faults.inject(state, loaded, "unlink", ["leaf01:30"])
    with pytest.raises(RackError, match="runs no planned SM"):
        faults.inject(state, loaded, "rogue-sm", ["sm01"])
    with pytest.raises(RackError, match="unknown fault or wrong arguments"):
        faults.inject(state, loaded, "melt", [])
    with pytest.raises(RackError, match="nobody: pick a node of the spec"):
        faults.inject(state, loaded, "rogue-sm", ["nobody"])
    with pytest.raises(RackError, match="node03 has no container on the twin"):
        faults._container(state, "node03")
    assert console == []
    assert state.faults == []


def test_a_rogue_with_the_planned_key_is_started_with_that_key_one_without_with_opensm_s_default(
    tmp_path: Path, console: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_spec(REPO / "examples" / "rack.yaml")  # sm_key: env:IBPROV_SM_KEY
    state = rack_state(tmp_path)
    state.save()
    steps: list[dict[str, Any]] = []
    monkeypatch.setattr(faults, "_run", lambda _state, op: steps.append(op))
    monkeypatch.setattr(faults, "rogue_state", lambda _path: "STANDBY")
    monkeypatch.setenv("IBPROV_SM_KEY", "0x00000000000000ab")
    text = faults.inject(state, loaded, "rogue-sm", ["node02", "planned-key"])
    assert text == "started a rogue OpenSM (priority 0, the planned sm_key) on node02's HCA: it entered STANDBY"
    assert steps[-1] == {"rogue": state.sim_hosts["node02/mlx5_0"], "sm_key": "0x00000000000000ab"}
    faults.inject(state, loaded, "rogue-sm", ["node02"])
    assert steps[-1] == {"rogue": state.sim_hosts["node02/mlx5_0"]}, "no -k: OpenSM's default key"

    monkeypatch.delenv("IBPROV_SM_KEY")
    with pytest.raises(RackError, match="sm_key env:IBPROV_SM_KEY is not an env: variable that is set here"):
        faults.inject(state, loaded, "rogue-sm", ["node02", "planned-key"])
    with pytest.raises(RackError, match="unknown fault or wrong arguments"):
        faults.inject(state, loaded, "rogue-sm", ["node02", "other-key"])


def test_a_fault_whose_first_step_failed_is_not_recorded_one_that_changed_the_fabric_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ibsim's console not answering: nothing was changed, so nothing is left for heal; a pkey-drift whose
    partitions.conf was changed but whose sweep never came is recorded, so that heal puts the file back."""
    loaded = load_spec(REPO / "examples" / "rack.yaml")
    state = rack_state(tmp_path)
    state.save()

    def dead_console(*argv: str, **_kw: Any) -> str:
        raise RackError("podman exec ibsim failed (125): no such container")

    monkeypatch.setattr(faults, "podman", dead_console)
    with pytest.raises(RackError, match="ibsim's console does not answer") as caught:
        faults.inject(state, loaded, "unlink", ["node03/mlx5_0:1"])
    assert "partly in place" not in str(caught.value)
    assert RackState.load(tmp_path).faults == []

    hung_sm(monkeypatch, "never")
    with pytest.raises(RackError, match="partly in place: `ibprov twin heal` undoes it"):
        faults.inject(state, loaded, "pkey-drift", ["node02"])
    (drift,) = RackState.load(tmp_path).faults
    assert drift["kind"] == "pkey-drift"
    assert "partitions.conf.ibprov-heal /etc/opensm/partitions.conf" in drift["undo"][0]["exec"][1]


@pytest.mark.parametrize(
    ("end", "change", "field", "planned", "degraded"),
    [
        ("node01/mlx5_0:1", "width=1x", "width", 2, 1),  # 4x -> 1x: LinkWidthEnabled masks
        ("node01/mlx5_0:1", "speed=EDR", "espeed", 4, 2),  # HDR -> EDR: LinkSpeedExtEnabled masks
    ],
)
def test_a_degraded_cable_s_two_ends_share_a_width_or_speed_at_every_step(
    tmp_path: Path,
    console: list[str],
    monkeypatch: pytest.MonkeyPatch,
    end: str,
    change: str,
    field: str,
    planned: int,
    degraded: int,
) -> None:
    """ibsim panics (and the twin is gone) when the two ends of a link enable nothing in common; the
    degrade fault and its heal move both ends through masks that always overlap."""
    loaded = load_spec(REPO / "examples" / "rack.yaml")
    state = rack_state(tmp_path)
    state.save()
    lids = {faults.switch_id("leaf01"): 10, faults.hca_id("node01", "mlx5_0"): 21}
    monkeypatch.setattr(faults, "_lids", lambda _state, _loaded: lids)
    smps: list[list[str]] = []
    monkeypatch.setattr(faults, "_diag", lambda _state, argv: smps.append(list(argv)) or "")
    monkeypatch.setattr(faults, "_cable_rate", lambda *_a: {"width": "1x HDR", "espeed": "4x EDR"}[field])
    peer = next(link for link in loaded.topology.links if str(link.b) == end or str(link.a) == end)
    assert (str(peer.width), str(peer.speed)) == ("4x", "HDR"), "the example cables node01 at 4x HDR"

    def walk(masks: dict[tuple[str, str], int]) -> list[dict[tuple[str, str], int]]:
        seen = []
        for argv in smps:
            assert argv[0] == "ibportstate"
            assert argv[3] == field
            masks[(argv[1], argv[2])] = int(argv[4])
            seen.append(dict(masks))
        return seen

    faults.inject(state, loaded, "degrade", [end, change])
    assert not any("Link" in sent for sent in console), "no Unlink/ReLink: ibsim panics on a ReLink of ends apart"
    start = {("10", str(peer.a.port if peer.a.hca is None else peer.b.port)): planned, ("21", "1"): planned}
    steps = walk(dict(start))
    assert len(steps) == 4
    assert all(a & b for a, b in (tuple(s.values()) for s in steps)), steps
    assert set(steps[-1].values()) == {degraded}
    smps.clear()
    faults.heal(state)
    steps = walk(dict(steps[-1]))
    assert all(a & b for a, b in (tuple(s.values()) for s in steps)), steps
    assert set(steps[-1].values()) == {planned}


def test_a_degrade_is_read_back_and_sent_again_until_the_cable_runs_degraded_else_a_clear_error(
    tmp_path: Path, console: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """inject returns once the cable runs at the degraded rate (read back as verify reads it), not once the
    SMPs were sent: a round that did not take is sent again; one that never takes is an error naming the
    rate found, and the fault is recorded for heal."""
    loaded = load_spec(REPO / "examples" / "rack.yaml")
    state = rack_state(tmp_path)
    state.save()
    monkeypatch.setattr(faults, "_lids", lambda _state, _loaded: {faults.switch_id("leaf01"): 10, "H-x": 1} | {
        faults.hca_id("node01", "mlx5_0"): 21})  # fmt: skip
    smps: list[list[str]] = []
    monkeypatch.setattr(faults, "_diag", lambda _state, argv: smps.append(list(argv)) or "")
    rates = ["4x HDR", "1x HDR"]
    monkeypatch.setattr(faults, "_cable_rate", lambda *_a: rates.pop(0) if len(rates) > 1 else rates[0])

    faults.inject(state, loaded, "degrade", ["node01/mlx5_0:1", "width=1x"])
    assert len(smps) == 8, "the four SMPs, sent twice: the first round did not take"
    assert [f["kind"] for f in RackState.load(tmp_path).faults] == ["degrade"]

    smps.clear()
    rates[:] = ["4x HDR"]
    with pytest.raises(RackError, match=r"node01/mlx5_0:1 runs at 4x HDR after 3 rounds .* not 1x .*twin heal"):
        faults.inject(state, loaded, "degrade", ["node01/mlx5_0:1", "width=1x"])
    assert len(smps) == 12, "three rounds, then the error"
    assert [f["kind"] for f in RackState.load(tmp_path).faults] == ["degrade", "degrade"]


def test_a_sweep_is_seen_by_the_rewritten_subnet_dump_or_an_errors_box_never_by_buffered_log_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenSM 3.3.23 flushes its log only after an ERROR or SYS line, so the INFO SUBNET UP of a sweep can
    reach the file minutes later (a rack fault waited 90 s for one, then cold-restarted the SMs, on an idle
    machine). A sweep that succeeded rewrites opensm-subnet.lst (osm_dump_all, before SUBNET UP); one that
    failed logs the ERRORS DURING INITIALIZATION box (an ERROR: flushed). The mark is the container's own
    shell pipeline, run here on the files."""
    up = (REPO / "tests/fixtures/routing/opensm-log-ring5-minhop.txt").read_text().splitlines()[1:]
    box = "*" * 66  # libopensm/osm_log.c osm_log_msg_box: a line of stars, the message between stars
    errors = [
        "Dec 05 19:10:01 000001 [487C46C0] 0x01 -> do_sweep: ",
        box,
        "**************** ERRORS DURING INITIALIZATION ****************",
        box,
    ]
    log, dump = tmp_path / "opensm.0x0c42a10300d8e2a0.log", tmp_path / "opensm-subnet.lst"
    monkeypatch.setattr(faults, "SM_LOGS", str(tmp_path / "opensm.*.log"))
    monkeypatch.setattr(faults, "SM_DUMP", str(dump))

    def podman(*argv: str, **_kw: Any) -> str:
        assert argv[:3] == ("exec", "c", "sh")
        return subprocess.run(["sh", "-c", argv[-1]], capture_output=True, text=True, check=False).stdout

    monkeypatch.setattr(faults, "podman", podman)
    assert faults._sweep_mark("c") == "no-dump 0", "no sweep yet: no dump, no log"
    log.write_text("\n".join(up) + "\n")
    dump.write_text("subnet\n")
    os.utime(dump, ns=(1_796_000_000_000_000_001, 1_796_000_000_000_000_001))
    first = faults._sweep_mark("c")
    assert first.startswith(time.strftime("%Y-%m-%d %H:%M:%S.000000001 ", time.localtime(1_796_000_000)))
    assert first.endswith(" 0")
    with log.open("a") as more:
        more.write("\n".join(up) + "\n")
    assert faults._sweep_mark("c") == first, "a SUBNET UP line alone is no proof: it may be a late one"
    with log.open("a") as more:
        more.write("\n".join(errors) + "\n")
    failed = faults._sweep_mark("c")
    assert failed == first.removesuffix(" 0") + " 1", "a sweep that ended in errors has ended"
    os.utime(dump, ns=(1_796_000_000_000_000_002, 1_796_000_000_000_000_002))
    assert faults._sweep_mark("c") not in (first, failed), "a nanosecond later is another sweep"


def test_the_rogue_sm_s_state_is_the_last_one_its_log_entered(tmp_path: Path) -> None:
    log = tmp_path / "rogue-opensm.log"
    assert faults.rogue_state(tmp_path) is None, "no log yet"
    log.write_text("Dec 06 02:13:25 049224 [928FB740] 0x80 -> Entering DISCOVERING state\n")
    assert faults.rogue_state(tmp_path) is None, "still discovering"
    log.write_text(log.read_text() + "Dec 06 02:13:26 067625 [8F8F46C0] 0x80 -> Entering STANDBY state\n")
    assert faults.rogue_state(tmp_path) == "STANDBY"
    log.write_text(log.read_text() + "Dec 06 02:13:40 067625 [8F8F46C0] 0x80 -> Entering MASTER state\n")
    assert faults.rogue_state(tmp_path) == "MASTER", "it took over later: the last state counts"


def test_a_rogue_sm_that_never_settles_is_stopped_again_with_a_bounded_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake, now = hung_sm(monkeypatch, "always")
    stopped: list[Path] = []
    monkeypatch.setattr(faults, "stop_rogue", stopped.append)
    (tmp_path / "rogue-opensm.log").write_text("Dec 06 02:13:25 049224 [928FB740] 0x80 -> Entering DISCOVERING state\n")
    state = rack_state(tmp_path)
    with pytest.raises(RackError, match=r"gave up after 120 s waiting for the rogue OpenSM to enter STANDBY or MAS"):
        faults._rogue_settled(state, tmp_path / "rogue-opensm.log")
    assert stopped == [tmp_path]
    assert 120 <= now[0] < 125


def test_each_rack_container_gets_a_fixed_address_that_skips_the_gateway() -> None:
    from ibprov.twin.rack import fixed_addresses

    got = fixed_addresses("10.89.3.0/24", "10.89.3.1", ["ibsim", "sm01", "cn01"])
    assert got == {"ibsim": "10.89.3.2", "sm01": "10.89.3.3", "cn01": "10.89.3.4"}
    # a gateway that is not the first host is skipped where it falls
    assert fixed_addresses("10.0.0.0/29", "10.0.0.3", ["a", "b", "c"]) == {
        "a": "10.0.0.1",
        "b": "10.0.0.2",
        "c": "10.0.0.4",
    }


def test_a_rack_network_too_small_for_its_containers_is_refused_naming_the_first_left_out() -> None:
    from ibprov.twin.rack import fixed_addresses

    with pytest.raises(RackError, match=r"10.0.0.0/30 has no address left for b"):
        fixed_addresses("10.0.0.0/30", "10.0.0.1", ["a", "b", "c"])


class FakeHost:
    """podman and SSH as _restart_nodes sees them: which containers run after `start`, at which address, and
    which answer SSH."""

    def __init__(self, state: RackState, *, moved: str = "", silent: str = "", dead: str = "") -> None:
        self.address = {n.container: n.address for n in state.nodes.values()}
        if moved:
            self.address[moved] = "10.89.0.99"
        self.silent, self.dead = silent, dead
        self.started: list[str] = []
        self.running: set[str] = set()

    def podman(self, *argv: str, **_kw: object) -> str:
        assert argv[0] == "start", argv
        self.started.append(argv[1])
        if argv[1] != self.dead:
            self.running.add(argv[1])
        return ""

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from ibprov.twin import rack

        monkeypatch.setattr(rack, "podman", self.podman)
        monkeypatch.setattr(rack, "_running", lambda names: self.running & set(names))
        monkeypatch.setattr(rack, "_address", lambda container: self.address[container])
        monkeypatch.setattr(rack, "_ssh_ok", lambda _state, node: node.container != self.silent)
        monkeypatch.setattr(rack, "UP_WAIT_S", 0.0)


def test_stopped_node_containers_are_started_again_when_each_comes_back_where_it_was_and_answers_ssh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ibprov.twin.rack import _restart_nodes

    state = rack_state(tmp_path)
    two = [state.nodes["node01"].container, state.nodes["node02"].container]
    host = FakeHost(state)
    host.install(monkeypatch)
    assert _restart_nodes(state, two) is True
    assert host.started == two


@pytest.mark.parametrize("fault", ["moved", "silent", "dead"])
def test_a_node_that_comes_back_elsewhere_or_mute_or_not_at_all_makes_up_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    from ibprov.twin.rack import _restart_nodes

    state = rack_state(tmp_path)
    two = [state.nodes["node01"].container, state.nodes["node02"].container]
    FakeHost(state, **{fault: two[1]}).install(monkeypatch)
    assert _restart_nodes(state, two) is False


def test_ibsim_or_an_unknown_container_is_never_merely_restarted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ibprov.twin.rack import _restart_nodes

    state = rack_state(tmp_path)
    host = FakeHost(state)
    host.install(monkeypatch)
    assert _restart_nodes(state, [state.ibsim]) is False
    assert _restart_nodes(state, [state.nodes["sm01"].container, "someone-else"]) is False
    assert host.started == [], "nothing started when the rack must be rebuilt anyway"
