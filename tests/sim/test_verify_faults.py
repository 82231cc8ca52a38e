"""verify --fabric on the twin: the clean fabric passes with zero findings, and each injected fault is
found with the right check id and object.

Faults come from the ibsim console (Unlink, PerformanceSet), from net-file variants written before ibsim
starts (swapped cables, a node on the wrong leaf, degraded width/speed, an unplanned node), from
partitions.conf edits applied with SIGHUP, and from starting/stopping OpenSMs.
"""

from __future__ import annotations

import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec, load_spec_text
from ibprov.probes import collector, pkeytables
from ibprov.probes.runner import AnsibleRunner, LocalRunner
from ibprov.report.model import SectionReport, Severity
from ibprov.twin.bringup import TwinRun, hca_id  # (twin.netfile first is a circular import)
from ibprov.twin.sim import SM_WAIT_S, OpenSM, SimError
from ibprov.verify.fabric.collect import collect
from ibprov.verify.fabric.section import verify_fabric

from .simkit import NetFile, probe, twin

pytestmark = pytest.mark.sim
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


# ----------------------------------------------------------------------------------------- harness
def example(name: str) -> LoadedSpec:
    return load_spec(EXAMPLES / f"{name}.yaml")


def verify(loaded: LoadedSpec, run: TwinRun, *, soak: float = 0.0) -> SectionReport:
    runner = LocalRunner(env=run.sim.env(probe(run)))
    try:
        return verify_fabric(loaded, runner, soak=soak, synthetic_guids=True)
    finally:
        runner.close()


def found(report: SectionReport) -> set[tuple[str, str]]:
    return {(f.check, f.object) for f in report.findings}


def finding(report: SectionReport, check: str) -> str:
    (match,) = [f for f in report.findings if f.check == check]
    return match.text


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    """Wait (bounded) until ``predicate`` holds; on giving up, say what was awaited and for how long."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"gave up after {timeout:g} s waiting for {what}"
        time.sleep(0.2)


def resweep(sm: OpenSM, timeout: float = SM_WAIT_S) -> None:
    """SIGHUP the SM (re-read partitions.conf, heavy sweep) and wait until that sweep is done."""
    offset = len(sm.log_text())
    sm.signal(signal.SIGHUP)
    sm.expect("SUBNET UP", timeout, after=offset)


# ------------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("name", ["rack", "qos-partitions", "fat-tree"])
def test_the_clean_twin_passes_with_zero_findings(name: str, tmp_path: Path) -> None:
    loaded = example(name)
    with twin(loaded, tmp_path) as run:
        report = verify(loaded, run)
    assert report.findings == [], [f.text for f in report.findings]
    assert report.exit_code == 0
    master = report.facts.as_dict()["master_sm"]
    assert master is not None
    assert master["planned"]
    assert master["priority"] == 15


def test_an_unlinked_cable_is_a_missing_link(tmp_path: Path) -> None:
    loaded = example("rack")
    with twin(loaded, tmp_path) as run:
        run.sim.console('Unlink "H-node03-mlx5_0"[1]')
        wait_until(
            lambda: "node03" not in run.sim.run(["ibnetdiscover"], probe(run)).stdout, "node03 to leave the fabric"
        )
        report = verify(loaded, run)
    assert found(report) == {("cabling.missing", "node03 mlx5_0 port 1")}
    assert finding(report, "cabling.missing").startswith("node03 mlx5_0 port 1: planned leaf01 port 3, found no link")
    assert report.exit_code == 1


def test_two_swapped_cables_are_one_swap_finding(tmp_path: Path) -> None:
    def swap(net: NetFile) -> None:
        net.connect(("H-node01-mlx5_0", 1), ("S-leaf01", 2))
        net.connect(("H-node02-mlx5_0", 1), ("S-leaf01", 1))

    loaded = example("rack")
    with twin(loaded, tmp_path, net=swap) as run:
        report = verify(loaded, run)
    assert found(report) == {("cabling.swapped", "node01 mlx5_0 port 1 and node02 mlx5_0 port 1")}
    assert finding(report, "cabling.swapped").endswith(
        "planned leaf01 port 1 and leaf01 port 2, found leaf01 port 2 and leaf01 port 1"
    )


def test_a_node_on_the_wrong_leaf_is_a_miswire_naming_both_ports(tmp_path: Path) -> None:
    def move(net: NetFile) -> None:  # node05 is planned on leaf01:6; leaf04 has free host ports
        net.disconnect("H-node05-mlx5_0", 1)
        net.connect(("H-node05-mlx5_0", 1), ("S-leaf04", 8))

    loaded = example("fat-tree")
    with twin(loaded, tmp_path, net=move) as run:
        report = verify(loaded, run)
    assert found(report) == {("cabling.miswire", "node05 mlx5_0 port 1")}
    assert finding(report, "cabling.miswire") == "node05 mlx5_0 port 1: planned leaf01 port 6, found leaf04 port 8"


def test_degraded_width_and_speed_name_the_planned_and_found_rates(tmp_path: Path) -> None:
    def degrade(net: NetFile) -> None:
        net.connect(("S-leaf01", 1), ("H-node01-mlx5_0", 1), "w=1 e=4")  # one lane
        net.connect(("S-leaf01", 2), ("H-node02-mlx5_0", 1), "w=2 e=2")  # EDR

    loaded = example("rack")
    with twin(loaded, tmp_path, net=degrade) as run:
        report = verify(loaded, run)
    assert found(report) == {("link.width", "node01 mlx5_0 port 1"), ("link.speed", "node02 mlx5_0 port 1")}
    assert finding(report, "link.width") == "node01 mlx5_0 port 1: planned 4x HDR, found 1x HDR"
    assert finding(report, "link.speed") == "node02 mlx5_0 port 1: planned 4x HDR, found 4x EDR"


def test_symbol_errors_and_link_downs_above_threshold_are_counter_findings(tmp_path: Path) -> None:
    loaded = example("rack")
    with twin(loaded, tmp_path) as run:
        # ask: each command is done (ibsim printed its next prompt) before verify reads the counters
        run.sim.ask('PerformanceSet "H-node02-mlx5_0"[1] PortCounters.SymbolErrorCounter=42')
        run.sim.ask('PerformanceSet "S-leaf01"[4] PortCounters.LinkDownedCounter=12')
        run.sim.ask('PerformanceSet "S-leaf01"[3] PortCounters.SymbolErrorCounter=10')  # at the limit: fine
        report = verify(loaded, run)
    assert found(report) == {("counters.threshold", "node02 mlx5_0 port 1"), ("counters.threshold", "leaf01 port 4")}
    texts = {f.object: f.text for f in report.findings}
    assert texts["node02 mlx5_0 port 1"].endswith("planned SymbolErrorCounter <= 10, found SymbolErrorCounter = 42")
    assert texts["leaf01 port 4"].endswith("planned LinkDownedCounter <= 10, found LinkDownedCounter = 12")


def test_errors_during_a_soak_are_reported_with_their_rate(tmp_path: Path) -> None:
    loaded = example("rack")
    with twin(loaded, tmp_path) as run:
        run.sim.ask('PerformanceSet "H-node04-mlx5_0"[1] PortCounters.SymbolErrorCounter=500')
        stop = threading.Event()

        def burst_once_the_soak_has_cleared() -> None:
            """Errors on leaf01:2 as soon as the soak's first read cleared node04's counters (not at a fixed
            time: on a loaded machine the first read can take longer than the soak)."""
            while not stop.is_set():
                own = run.sim.run(["perfquery"], "H-node04-mlx5_0").stdout  # node04's own port
                if re.search(r"^SymbolErrorCounter:\.*0$", own, re.M):
                    run.sim.console('PerformanceSet "S-leaf01"[2] PortCounters.SymbolErrorCounter=6')
                    return
                stop.wait(0.2)

        burst = threading.Thread(target=burst_once_the_soak_has_cleared)
        burst.start()
        try:
            report = verify(loaded, run, soak=5.0)
        finally:
            stop.set()
            burst.join(timeout=120)
    # node04's old errors are over the threshold; the soak cleared them, and only leaf01:2 rose during it
    assert found(report) == {
        ("counters.threshold", "node04 mlx5_0 port 1"),
        ("counters.soak_rate", "leaf01 port 2"),
    }
    assert report.facts.as_dict()["soak_seconds"] is not None
    assert report.facts.as_dict()["soak_seconds"] >= 5.0
    assert re.search(r"found SymbolErrorCounter \+6 \(\d+\.\d+/s\)$", finding(report, "counters.soak_rate"))


def test_a_rogue_sm_on_an_unplanned_node_is_a_security_finding(tmp_path: Path) -> None:
    def add_rogue(net: NetFile) -> None:
        net.add_ca("H-rogue-mlx5_0", 0x0C42A10300D8F000, "rogue mlx5_0")
        net.connect(("H-rogue-mlx5_0", 1), ("S-leaf01", 20))

    loaded = example("rack")
    with twin(loaded, tmp_path, net=add_rogue) as run:
        conf = tmp_path / "rogue.conf"
        conf.write_text(f"sm_priority 15\npartition_config_file {tmp_path / 'none.conf'}\n")
        rogue = run.sim.start_opensm("H-rogue-mlx5_0", conf, name="opensm-rogue")
        rogue.expect("Entering STANDBY state")
        report = verify(loaded, run)
    rogue_port = '0x0c42a10300d8f000 "rogue mlx5_0" port 1'
    assert found(report) == {("sm.rogue", rogue_port), ("cabling.unplanned", "leaf01 port 20")}
    assert finding(report, "cabling.unplanned") == f"leaf01 port 20: planned no cable, found a cable to {rogue_port}"
    (sm_finding,) = [f for f in report.findings if f.check == "sm.rogue"]
    assert sm_finding.severity is Severity.SECURITY
    assert "STANDBY SM with priority 15" in sm_finding.observed
    assert report.findings[0].check == "sm.rogue"  # worst first: security before error


def _edit_partitions(opensm_dir: Path, edit: Callable[[str], str]) -> None:
    conf = opensm_dir / "partitions.conf"
    text = conf.read_text()
    changed = edit(text)
    assert changed != text
    conf.write_text(changed)


def test_a_partition_missing_from_a_member_port_is_found_after_the_sm_applied_it(tmp_path: Path) -> None:
    loaded = example("qos-partitions")
    with twin(loaded, tmp_path) as run:  # node01 (0x043f720300a4b228) leaves compute
        _edit_partitions(tmp_path / "opensm", lambda t: t.replace("    0x043f720300a4b228=full,\n", "", 1))
        resweep(run.master)
        report = verify(loaded, run)
    assert found(report) == {("pkey.missing", "node01 mlx5_0 port 1")}
    assert "planned 0x8010 (compute, full), found not in the table" in finding(report, "pkey.missing")


def test_an_extra_pkey_on_a_port_is_a_security_finding(tmp_path: Path) -> None:
    loaded = example("qos-partitions")
    with twin(loaded, tmp_path) as run:  # stor01 (0x043f720300a4c300) joins compute as a full member
        _edit_partitions(
            tmp_path / "opensm",
            lambda t: t.replace(
                "    0x043f720300a4b228=full,\n", "    0x043f720300a4c300=full,\n    0x043f720300a4b228=full,\n", 1
            ),
        )
        resweep(run.master)
        report = verify(loaded, run)
    assert found(report) == {("pkey.extra", "stor01 mlx5_0 port 1")}
    (extra,) = report.findings
    assert extra.severity is Severity.SECURITY
    assert extra.observed == "0x8010 (compute, full) in the table"


def test_the_pkey_probe_reads_what_smpquery_reads_with_and_without_the_cache_capacity(tmp_path: Path) -> None:
    loaded = example("qos-partitions")
    with twin(loaded, tmp_path) as run:
        runner = LocalRunner(env=run.sim.env(probe(run)))
        try:
            obs = collect(runner)
            ports = sorted(
                (lid, number)
                for node in obs.nodes.values()
                if node.type == "CA"
                for number, (_guid, lid) in node.ports.items()
                if lid
            )
            (asked,) = runner.run_batch([pkeytables.argv([(lid, port, None) for lid, port in ports])])
            read = pkeytables.parse(asked.stdout)
            caps = [(lid, port, read[(lid, port)].capacity) for lid, port in ports]
            (told,) = runner.run_batch([pkeytables.argv(caps)])
            smpquery = runner.run_batch([("smpquery", "pkeys", str(lid), str(port)) for lid, port in ports])
        finally:
            runner.close()
    assert len(ports) == len(loaded.spec.nodes)
    assert all(r.error is None and r.capacity for r in read.values()), asked.stdout
    assert pkeytables.parse(told.stdout) == read
    for (lid, port), result in zip(ports, smpquery, strict=True):
        assert read[(lid, port)].pkeys == collector("smpquery pkeys").parse(result.stdout).pkeys
    assert sorted(obs.pkeys.values()) == sorted(r.pkeys for r in read.values())


def test_after_failover_the_new_master_passes_because_the_plan_allows_it(tmp_path: Path) -> None:
    def fast_failover(opensm_dir: Path) -> None:  # notice a dead master in ~2 s, not the default ~50 s
        for conf in opensm_dir.glob("*/opensm.*.conf"):
            conf.write_text(conf.read_text() + "sminfo_polling_timeout 1000\npolling_retry_number 2\n")

    loaded = example("rack")
    with twin(loaded, tmp_path, opensm=fast_failover) as run:
        master, (_node, _prio, standby) = run.master, run.sms[1]
        offset = len(standby.log_text())
        master.stop()
        standby.expect("Entering MASTER state", after=offset)
        standby.expect("SUBNET UP", after=offset)
        report = verify(loaded, run)
    assert report.facts.as_dict()["master_sm"]["object"] == "sm02 mlx5_0 port 1"
    assert found(report) == {("sm.standby_missing", "sm01 mlx5_0 port 1")}
    (stopped,) = report.findings
    assert stopped.severity is Severity.WARNING
    assert "took over as MASTER" in stopped.observed
    assert report.exit_code == 0  # the plan allows sm02 as master while sm01 is down


def test_with_a_limited_default_partition_every_sm_port_stays_full_through_a_failover(tmp_path: Path) -> None:
    def fast_failover(opensm_dir: Path) -> None:
        for conf in opensm_dir.glob("*/opensm.*.conf"):
            conf.write_text(conf.read_text() + "sminfo_polling_timeout 1000\npolling_retry_number 2\n")

    text = (
        (EXAMPLES / "rack.yaml")
        .read_text()
        .replace("default_partition:\n  membership: full", "default_partition:\n  membership: limited")
    )
    assert "membership: limited" in text
    loaded = load_spec_text(text, str(tmp_path / "limited.yaml"))
    with twin(loaded, tmp_path / "twin", opensm=fast_failover) as run:
        before = verify(loaded, run)
        master, (_node, _prio, standby) = run.master, run.sms[1]
        offset = len(standby.log_text())
        master.stop()
        standby.expect("SUBNET UP", after=offset)
        after = verify(loaded, run)
    assert before.findings == [], [f.text for f in before.findings]  # the standby's port is full too
    assert found(after) == {("sm.standby_missing", "sm01 mlx5_0 port 1")}, "no PKey table changed"


def notice_a_dead_master_fast(opensm_dir: Path) -> None:  # in ~2 s, not the default ~50 s
    for conf in opensm_dir.glob("*/opensm.*.conf"):
        conf.write_text(conf.read_text() + "sminfo_polling_timeout 1000\npolling_retry_number 2\n")


def pkey_tables(run: TwinRun) -> dict[int, tuple[int, ...]]:
    """Every CA port's PKey table as the fabric shows it now (port GUID -> entries)."""
    runner = LocalRunner(env=run.sim.env(probe(run)))
    try:
        return collect(runner).pkeys
    finally:
        runner.close()


def master_priority(run: TwinRun) -> int | None:
    """The priority of the master SM as ``sminfo`` from a non-SM port shows it (None: no answer)."""
    done = run.sim.run(["sminfo"], probe(run))
    return collector("sminfo").parse(done.stdout).priority if done.returncode == 0 else None


def sm_conf(loaded: LoadedSpec, run: TwinRun, node: str) -> Path:
    """The opensm.conf the twin started the planned instance on ``node`` with."""
    inst = next(i for i in loaded.spec.subnet_manager.instances if i.node == node)
    device = inst.hca or next(n for n in loaded.spec.nodes if n.name == node).hcas[0].device
    return run.sim.workdir.parent / "opensm" / node / f"opensm.{device}-{inst.port}.conf"


def restart_sm(loaded: LoadedSpec, run: TwinRun, node: str) -> tuple[OpenSM, int]:
    """Start the planned OpenSM on ``node`` again (its conf, cache and log: a `systemctl start opensm`);
    returns it and where its log stood before (OpenSM appends to its log)."""
    inst = next(i for i in loaded.spec.subnet_manager.instances if i.node == node)
    device = inst.hca or next(n for n in loaded.spec.nodes if n.name == node).hcas[0].device
    name = f"opensm-{node}-{device}"
    log = run.sim.workdir / name / "opensm.log"
    offset = len(log.read_text(errors="replace")) if log.exists() else 0
    sm = run.sim.start_opensm(hca_id(node, device), sm_conf(loaded, run, node), name=name)
    run.sms[:] = [(n, p, sm if n == node else s) for n, p, s in run.sms]
    return sm, offset


NUDGE_S = 30.0  # a master that has not handed over by then gets a SIGHUP
SWEEP_S = 60.0  # a sweep that has started ends well within this, loaded or not


def take_back(loaded: LoadedSpec, run: TwinRun, node: str, master: OpenSM) -> OpenSM:
    """Restart the planned SM on ``node``; ``master`` hands the subnet over to it (it goes STANDBY) and the
    returning SM sweeps as master (SUBNET UP). The master hands over in a heavy sweep, which the returning
    SM's trap (IS_SM set) asks for; on a loaded machine it was seen not to come in 120 s (twice in a row,
    the master logging the trap every second and nothing else), so after :data:`NUDGE_S` the master gets
    the SIGHUP an admin's reload sends (a heavy sweep).

    One simulator artefact is retried, twice, wherever it stops the handover: umad2sim drops a MAD's timeout_ms
    and retries (ibsim's umad2sim_write), so a response ibsim loses is never timed out as the kernel
    would, and OpenSM's sweep waits for it for ever (seen in about 1 run in 4 on a loaded machine: MASTER,
    then silence, and at exit "clear_madw: ERR 5401: evicting entry ... mgmt class 0x1"). It strikes the
    returning SM's discovery or the master's sweep (then neither the trap nor SIGHUP starts a new one, as in
    a CI run with four workers). Both SMs are then stopped, ``master``'s node alone is started again and
    sweeps as master (the state before the handover), and the handover is tried again from there."""
    master_node = next(n for n, _p, sm in run.sms if sm is master)
    for attempt in (1, 2, 3):
        offset = len(master.log_text())
        back, back_offset = restart_sm(loaded, run, node)
        try:
            if not master.wait_for("Entering STANDBY state", NUDGE_S, after=offset):
                back.expect("Entering STANDBY state", after=back_offset)  # it found the master, which has not
                master.signal(signal.SIGHUP)  # swept since: a heavy sweep (the role's reload) hands over
                master.expect("Entering STANDBY state", SWEEP_S, after=offset)
            back.expect("Entering MASTER state", after=back_offset)
            back.expect("SUBNET UP", SWEEP_S, after=back_offset)
            return back
        except SimError as exc:
            problem = str(exc)
        assert attempt < 3, f"{problem} (3 times); {node}'s log: {back.log_text()[back_offset:][-2000:]}"
        back.stop()
        master = master_alone(loaded, run, master_node)
    raise AssertionError("unreachable")


def master_alone(loaded: LoadedSpec, run: TwinRun, node: str) -> OpenSM:
    """Stop every SM, start ``node``'s alone and wait until it has swept as master: the state from which a
    handover is tried again after the hang artefact (see :func:`take_back`)."""
    for _n, _p, sm in run.sms:
        sm.stop()
    master, offset = restart_sm(loaded, run, node)
    master.expect("Entering MASTER state", after=offset)
    master.expect("SUBNET UP", after=offset)
    return master


def test_the_restarted_master_takes_over_again_by_priority_and_no_pkey_table_changes(tmp_path: Path) -> None:
    """OpenSM 3.3.23: after each heavy sweep a MASTER hands over (SubnSet(SMInfo) HANDOVER) to any SM that is
    not NOTACTIVE and is greater: higher sm_priority, or the same and a lower port GUID. sm01 (15) comes back
    while sm02 (14) is master: sm02 hands over to it and goes STANDBY."""
    loaded = example("rack")
    with twin(loaded, tmp_path, opensm=notice_a_dead_master_fast) as run:
        (first_node, _p, first), (_n, _q, second) = run.sms[0], run.sms[1]
        assert first_node == "sm01"
        tables = [pkey_tables(run)]
        offset = len(second.log_text())
        first.stop()
        second.expect("Entering MASTER state", after=offset)
        second.expect("SUBNET UP", after=offset)
        failed_over = verify(loaded, run)
        tables.append(pkey_tables(run))
        take_back(loaded, run, "sm01", second)
        handed_back = verify(loaded, run)
        tables.append(pkey_tables(run))
    assert failed_over.facts.as_dict()["master_sm"]["object"] == "sm02 mlx5_0 port 1"
    assert found(failed_over) == {("sm.standby_missing", "sm01 mlx5_0 port 1")}
    assert handed_back.findings == [], [f.text for f in handed_back.findings]
    assert handed_back.facts.as_dict()["master_sm"]["object"] == "sm01 mlx5_0 port 1"
    assert len(tables[0]) == sum(len(h.ports) for n in loaded.spec.nodes for h in n.hcas)
    assert tables[1] == tables[0], "the failover changed a PKey table"
    assert tables[2] == tables[0], "the handover back changed a PKey table"


def test_the_returning_sm_stays_standby_only_when_the_spec_gives_it_the_lower_priority(tmp_path: Path) -> None:
    """OpenSM 3.3.23 has no option that keeps a returning higher-priority SM in standby: priority decides.
    The spec says "stay standby" by giving the SM that is master now the highest priority; re-applied,
    the master's opensm.conf says so (sm_priority is re-read on SIGHUP) and the returning SM's too."""
    loaded = example("rack")
    text = (EXAMPLES / "rack.yaml").read_text()
    old = ("- node: sm01\n      priority: 15", "- node: sm02\n      priority: 14")
    assert all(o in text for o in old)
    swapped = load_spec_text(
        text.replace(old[0], "- node: sm01\n      priority: 14").replace(old[1], "- node: sm02\n      priority: 15"),
        str(tmp_path / "swapped.yaml"),
    )
    with twin(loaded, tmp_path / "twin", opensm=notice_a_dead_master_fast) as run:
        (_m, _p, first), (_n, _q, second) = run.sms[0], run.sms[1]
        tables = [pkey_tables(run)]
        offset = len(second.log_text())
        first.stop()
        second.expect("SUBNET UP", after=offset)
        for node, (was, now) in {"sm02": (14, 15), "sm01": (15, 14)}.items():  # the swapped spec, re-applied
            conf = sm_conf(loaded, run, node)
            assert f"sm_priority {was}\n" in conf.read_text()
            conf.write_text(conf.read_text().replace(f"sm_priority {was}\n", f"sm_priority {now}\n"))
        second.signal(signal.SIGHUP)  # what the role's reload does
        wait_until(lambda: master_priority(run) == 15, "the master to be the SM of priority 15 after the SIGHUP")
        for attempt in (1, 2, 3):  # the hang artefact (see take_back), retried from sm02 alone as master
            back, back_offset = restart_sm(loaded, run, "sm01")
            try:
                back.expect("Entering STANDBY state", after=back_offset)
                resweep(second, SWEEP_S)  # a heavy sweep with sm01 known: where a master hands over to a greater SM
                break
            except SimError:
                if attempt == 3:
                    raise
                back.stop()
                second = master_alone(loaded, run, "sm02")
        assert "Entering MASTER state" not in back.log_text()[back_offset:]
        report = verify(swapped, run)
        tables.append(pkey_tables(run))
    assert report.findings == [], [f.text for f in report.findings]
    master = report.facts.as_dict()["master_sm"]
    assert (master["object"], master["priority"]) == ("sm02 mlx5_0 port 1", 15)
    assert tables[1] == tables[0], "a PKey table changed"


def test_a_qos_table_that_differs_from_the_plan_is_a_qos_finding(tmp_path: Path) -> None:
    def change_sl2vl(opensm_dir: Path) -> None:
        for conf in opensm_dir.glob("*/opensm.*.conf"):
            conf.write_text(conf.read_text().replace("qos_sl2vl 0,1,2,3,4,5,6,7", "qos_sl2vl 1,0,2,3,4,5,6,7"))

    loaded = example("qos-partitions")
    with twin(loaded, tmp_path, opensm=change_sl2vl) as run:
        report = verify(loaded, run)
    # the default qos_sl2vl is also the switches' (the spec sets no switch_external/switch_port0 sl2vl)
    assert {check for check, _obj in found(report)} == {"qos.sl2vl", "qos.switch_sl2vl"}
    ca = [f for f in report.findings if f.check == "qos.sl2vl"]
    assert len(ca) == len(loaded.spec.nodes)
    assert all("found SL0-15 -> VL 1,0,2," in f.text for f in ca)
    switch = [f for f in report.findings if f.check == "qos.switch_sl2vl"]
    assert {f.object.split()[0] for f in switch} == set(loaded.topology.switches)
    assert all(f.observed.endswith(": SL0-15 -> VL 1,0,2,3,4,5,6,7,0,1,2,3,4,5,6,15") for f in switch)


FAT_TREE_QOS = """
qos:
  enabled: true
  max_vls: 8
  sl2vl: "0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,15"
  vlarb_high: "2:64"
  vlarb_low: "0:32,1:64,3:16,4:16,5:16,6:16,7:16"
  switch_external:
    max_vls: 4
    vlarb_low: "0:32,1:64,2:64,3:16"
"""


def fat_tree_with_qos(tmp_path: Path) -> LoadedSpec:
    """The fat-tree example (host-facing and switch-to-switch ports) with QoS tables for the switches."""
    text = (EXAMPLES / "fat-tree.yaml").read_text()
    assert "\nqos:" not in text
    return load_spec_text(text + FAT_TREE_QOS, str(tmp_path / "fat-tree-qos.yaml"))


def _checked(report: SectionReport, check: str) -> list[str]:
    (result,) = [c for c in report.checks if c.id == check]
    return list(result.objects)


def test_the_clean_qos_twin_judges_every_switch_egress_port(tmp_path: Path) -> None:
    loaded = fat_tree_with_qos(tmp_path)
    with twin(loaded, tmp_path / "twin") as run:
        report = verify(loaded, run)
    assert report.findings == [], [f.text for f in report.findings]
    cabled = {f"{e.device} port {e.port}" for link in loaded.topology.links for e in (link.a, link.b) if not e.hca}
    port0 = {f"{name} port 0" for name in loaded.topology.switches}
    assert set(_checked(report, "qos.switch_sl2vl")) == cabled | port0
    assert set(_checked(report, "qos.switch_vlarb")) == cabled | port0


def test_switch_qos_tables_other_than_the_plan_are_findings_naming_switch_and_port(tmp_path: Path) -> None:
    def other_switch_tables(opensm_dir: Path) -> None:  # what an opensm.conf edited by hand on the SM might say
        for conf in opensm_dir.glob("*/opensm.*.conf"):
            text = conf.read_text()
            assert "qos_swe_vlarb_low 0:32,1:64,2:64,3:16\n" in text
            text = text.replace("qos_swe_vlarb_low 0:32,1:64,2:64,3:16", "qos_swe_vlarb_low 0:64,1:32,2:64,3:16")
            conf.write_text(text + "qos_sw0_sl2vl 0,0,2,3,4,5,6,7,0,1,2,3,4,5,6,15\n")

    loaded = fat_tree_with_qos(tmp_path)
    with twin(loaded, tmp_path / "twin", opensm=other_switch_tables) as run:
        report = verify(loaded, run)
    cabled = {f"{e.device} port {e.port}" for link in loaded.topology.links for e in (link.a, link.b) if not e.hca}
    port0 = {f"{name} port 0" for name in loaded.topology.switches}
    assert found(report) == {("qos.switch_vlarb", p) for p in cabled} | {("qos.switch_sl2vl", p) for p in port0}
    vlarb = [f for f in report.findings if f.check == "qos.switch_vlarb"]
    assert all(f.observed == "low 0:64,1:32,2:64,3:16" for f in vlarb)
    assert all(f.expected.startswith("low 0:32,1:64,2:64,3:16 (") for f in vlarb)
    kinds = {f.expected.split("(")[1] for f in vlarb}
    assert kinds == {"host-facing port, qos_swe_*)", "switch-to-switch port, qos_swe_*)"}
    sl2vl = [f for f in report.findings if f.check == "qos.switch_sl2vl"]
    assert all(f.expected.endswith("(port 0, qos_sw0_*)") for f in sl2vl)
    # OpenSM sets only the row from port 0 into port 0 from qos_sw0_*; the rows from the external ports: qos_swe_*
    assert all(f.observed == "from port 0: SL0-15 -> VL 0,0,2,3,4,5,6,7,0,1,2,3,4,5,6,15" for f in sl2vl)
    assert report.exit_code != 0


def test_verify_through_ansible_on_localhost_finds_what_a_local_run_finds(tmp_path: Path) -> None:
    inventory = {
        "all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}
    }
    loaded = example("rack")
    with twin(loaded, tmp_path) as run:
        run.sim.console('Unlink "H-node03-mlx5_0"[1]')
        wait_until(
            lambda: "node03" not in run.sim.run(["ibnetdiscover"], probe(run)).stdout, "node03 to leave the fabric"
        )
        env = {k: v for k, v in run.sim.env(probe(run)).items() if k in ("LD_PRELOAD", "IBSIM_SOCKNAME", "SIM_HOST")}
        runner = AnsibleRunner("localhost", inventory, env=env)
        try:
            remote = verify_fabric(loaded, runner, synthetic_guids=True)
        finally:
            runner.close()
        local = verify(loaded, run)
    assert remote.collected_from == "localhost (ansible)"
    assert found(remote) == found(local) == {("cabling.missing", "node03 mlx5_0 port 1")}
    assert remote.facts.as_dict()["master_sm"] == local.facts.as_dict()["master_sm"]


def test_a_spine_with_every_cable_pulled_is_one_cause_that_explains_every_other_finding(tmp_path: Path) -> None:
    from ibprov.report.model import Report
    from ibprov.twinnet.netfile import switch_id
    from ibprov.verify.causes import explain_report, fabric_of

    loaded = example("fat-tree")
    ports = sorted(e.port for link in loaded.topology.links for e in (link.a, link.b) if e.device == "spine02")
    assert len(ports) == 20
    with twin(loaded, tmp_path) as run:
        for port in ports:
            run.sim.console(f'Unlink "{switch_id("spine02")}"[{port}]')
        wait_until(
            lambda: "spine02" not in run.sim.run(["ibnetdiscover"], probe(run)).stdout, "spine02 to leave the fabric"
        )
        section = verify(loaded, run)
    report = explain_report(
        Report.from_sections(cluster="ft", spec="fat-tree.yaml", sections=[section]), fabric_of(loaded)
    )
    assert [(c.finding.check, c.finding.object) for c in report.causes] == [("cabling.switch_missing", "spine02")]
    (cause,) = report.causes
    assert len(cause.symptoms) == len(report.findings) - 1 >= 20
    assert {s.check for s in cause.symptoms} >= {"cabling.missing"}
    assert cause.finding.observed == "not on the fabric: none of its 20 planned cables is seen"
    assert report.summary.startswith(f"FAIL: 1 cause explains {len(report.findings)} findings")
