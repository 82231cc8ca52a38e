"""`ibprov discover` against the twin: real ibnetdiscover output of examples/fat-tree.yaml on ibsim."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.clusterspec import LoadedSpec, load_spec
from ibprov.identity.guids import GuidBook, LockFile
from ibprov.render import render_files
from ibprov.twin.bringup import start_twin
from ibprov.twin.sim import sim_available

pytestmark = pytest.mark.sim
FAT_TREE = Path(__file__).resolve().parents[2] / "examples" / "fat-tree.yaml"


@dataclass
class Capture:
    plan: LoadedSpec
    output: Path  # what ibnetdiscover printed on the twin
    live_spec: Path  # the skeleton `ibprov discover` wrote running ibnetdiscover itself under libumad2sim
    live: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Capture:
    reason = sim_available()
    if reason:
        pytest.skip(f"simulated fabric unavailable: {reason}")
    workdir = tmp_path_factory.mktemp("discover-twin")
    plan = load_spec(FAT_TREE)
    run = start_twin(plan, workdir)
    try:
        run.master.expect("SUBNET UP")
        for _node, _priority, sm in run.sms:
            if sm is not run.master:  # the live skeleton records the standbys too
                sm.expect("Entering STANDBY state")
        host = run.sim_hosts["node01/mlx5_0"]
        out = run.sim.run(["ibnetdiscover"], host)
        assert out.returncode == 0, out.stderr
        live_spec = workdir / "live.yaml"
        live = subprocess.run(
            [sys.executable, "-m", "ibprov", "discover", "-o", str(live_spec)],
            env=run.sim.env(host),
            cwd=run.sim.workdir / "clients",  # where umad2sim keeps its fake sysfs (made by run())
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        run.stop()
    output = workdir / "ibnetdiscover.txt"
    output.write_text(out.stdout)
    return Capture(plan, output, live_spec, live)


def discover(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["discover", *args])
    return result.exit_code, result.stdout, result.stderr


def test_skeleton_from_the_twin_validates_and_has_the_planned_fabric(capture: Capture, tmp_path: Path) -> None:
    spec = tmp_path / "found.yaml"
    code, _out, err = discover("-o", str(spec), "--from", str(capture.output))
    assert code == 0, err
    found = load_spec(spec)
    plan = capture.plan
    assert len(found.spec.switches) == len(plan.topology.switches) == 6
    assert len(found.spec.nodes) == len(plan.spec.nodes) == 34
    assert len(found.topology.links) == len(plan.topology.links) == 74
    assert {str(link) for link in found.topology.links} == {str(link) for link in plan.topology.links}
    assert {sw.name: sw.role for sw in found.spec.switches} == {n: s.role for n, s in plan.topology.switches.items()}


def test_discover_against_the_plan_locks_every_device_and_render_uses_the_guids(
    capture: Capture, tmp_path: Path
) -> None:
    spec = tmp_path / "fat-tree.yaml"
    shutil.copy(FAT_TREE, spec)
    code, out, err = discover("-o", str(spec), "--from", str(capture.output))
    assert code == 0, out + err
    assert "matched 40 of 40 planned devices (40 by description)" in out
    assert spec.read_bytes() == FAT_TREE.read_bytes()
    lock = LockFile.read(LockFile.path_for(spec))
    twin = GuidBook.for_spec(capture.plan, allow_synthetic=True, twin=True)  # the GUIDs the twin ran with
    assert lock.switches == {name: twin.switch_guid(name) for name in capture.plan.topology.switches}
    assert lock.hca_ports == {
        (n.name, h.device, 1): twin.port_guid(n.name, h.device, 1) for n in capture.plan.spec.nodes for h in n.hcas
    }
    rendered = render_files(load_spec(spec))
    assert rendered.synthetic == []
    assert f"switchguid=0x{lock.switches['leaf04']:016x}" in rendered.files["fabric/topology.ibnd"]
    sm01 = lock.hca_ports[("sm01", "mlx5_0", 1)]
    assert f"0x{sm01:016x}" in rendered.files["opensm/sm01/opensm.mlx5_0-1.conf"]


def test_discover_runs_ibnetdiscover_itself_in_the_environment_it_inherits(capture: Capture) -> None:
    assert capture.live.returncode == 0, capture.live.stderr
    assert "6 switches, 34 HCAs on 34 nodes, 74 links" in capture.live.stdout
    assert len(load_spec(capture.live_spec).topology.links) == 74


def test_the_live_skeleton_has_the_planned_sms_the_twin_runs_not_a_placeholder(capture: Capture) -> None:
    live = load_spec(capture.live_spec).spec.subnet_manager.instances
    assert [(i.node, i.hca, i.port, i.priority) for i in live] == [("sm01", "mlx5_0", 1, 15), ("sm02", "mlx5_0", 1, 14)]
    assert capture.live.stdout.splitlines()[-1] == (
        "subnet managers found: sm01/mlx5_0:1 MASTER (priority 15), sm02/mlx5_0:1 STANDBY (priority 14)"
    )
    text = capture.live_spec.read_text()
    assert "{node: sm02, hca: mlx5_0, port: 1, priority: 14}   # REVIEW: found STANDBY" in text


def test_a_skeleton_from_saved_output_keeps_the_sm_placeholder_and_says_why(capture: Capture, tmp_path: Path) -> None:
    spec = tmp_path / "found.yaml"
    code, out, err = discover("-o", str(spec), "--from", str(capture.output))
    assert code == 0, err
    assert out.splitlines()[-1] == (
        "subnet_manager is a placeholder: the fabric was read from a saved ibnetdiscover output, so no SM "
        "could be asked"
    )
    assert [(i.node, i.priority) for i in load_spec(spec).spec.subnet_manager.instances] == [("node01", 15)]
