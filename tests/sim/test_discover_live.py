"""`ibprov discover` on a live fabric, then `verify --fabric` of the spec it wrote against that same fabric:
zero findings. The SMs running there are in the spec (port, priority, state in a REVIEW comment), and an
HCA port without a cable (no GUID visible) does not make verify say the device has no GUID.

The fabrics are the twins of the ibnetdiscover captures in tests/fixtures: ibsim's net file format is
ibnetdiscover's topology output, so a capture is fed to ibsim as it is, minus what the capture script added
(its ``# source:`` and ``[exit=N]`` lines) and minus cables to devices the capture has no block for
(ibsim: ``can't find remote node``). Which captures that loads is asserted below; on each of them one
OpenSM runs as master (priority 14) and a second one as standby (priority 3), and the diags run as a third
CA port, the way an admin's login node would.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from captures import capture_names, capture_path

from ibprov.clusterspec import load_spec
from ibprov.probes.runner import LocalRunner
from ibprov.report.model import SectionReport
from ibprov.twin.sim import SimError, SimFabric, start_sim
from ibprov.verify.fabric.section import verify_fabric

pytestmark = pytest.mark.sim

_EXIT = re.compile(r"^\[exit=\d+\]$")
_NODE = re.compile(r'^(?:Switch|Ca|Rt)\s+\d+\s+"([^"]+)"')
_PORT = re.compile(r'^\[\d+\](?:\([0-9a-fA-F]+\))?\s+"([^"]+)"\[\d+\]')

SimSm = tuple[str, str, int, int]  # (node, hca, port, priority) as the spec has it


@dataclass(frozen=True)
class Case:
    master: str  # sim host (the net file's node id) of the master SM
    standby: str  # ... of the standby SM
    probe: str  # ... the diags run as
    sms: tuple[SimSm, SimSm]  # what the skeleton must say
    probe_desc: str


SIM_CASE = Case(
    "H-0000000000100000",
    "H-0000000000100006",
    "H-0000000000100002",
    (("node01", "mlx5_0", 1, 14), ("node04", "mlx5_0", 1, 3)),
    "node02 mlx5_0",
)
# every capture ibsim loads, with the SMs started on its twin
LOADS = {
    "sim/ibnetdiscover-sim-v44.txt": SIM_CASE,
    "sim/ibnetdiscover-f-sim-v44.txt": SIM_CASE,
    "ibnetdiscover/hdr-full-f-faked-superbench.txt": Case(
        "H-0ff08c4321664e96",
        "H-1c34da03005baca4",
        "H-0ff08c43217299f2",
        (("RMD701091901003", "ibp11s0f0", 1, 14), ("RMD701091902003", "ibp11s0f0", 1, 3)),
        "RMD701091901019 ibp11s0f0",
    ),
}
# -p and -l output is not a topology file
REFUSED_BY_IBSIM = {
    "ibnetdiscover/edr-ports-p-mode-excerpt-treydock.txt",
    "ibnetdiscover/hdr-ports-p-mode-excerpt-edited-treydock.txt",
    "sim/ibnetdiscover-l-sim-v44.txt",
    "sim/ibnetdiscover-p-sim-v44.txt",
}
# every cable of the NDR excerpt leads to an HCA it leaves out ("...omitted"): a lone switch, no CA to run
# an SM on or to discover from (and its 2xNDR links are more than ibsim 0.10 runs)
NO_CA_LEFT = {"ibnetdiscover/ndr200-2x-ndr-qm9700-partial-redacted.txt"}


def captures() -> list[str]:
    return capture_names("ibnetdiscover/*.txt", "sim/ibnetdiscover*.txt")


def twin_net(capture: str) -> str:
    """The capture as an ibsim net file."""
    lines = capture_path(capture).read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("# source:")
    lines = [line for line in lines[1:] if not _EXIT.match(line)]
    blocks = {m[1] for line in lines if (m := _NODE.match(line))}
    kept = [line for line in lines if not ((m := _PORT.match(line)) and m[1] not in blocks)]
    return "\n".join(kept) + "\n"


def has_ca(net: str) -> bool:
    return any(line.startswith("Ca\t") or line.startswith("Ca ") for line in net.split("\n"))


def write_net(text: str, workdir: Path) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    net = workdir / "capture.net"
    net.write_text(text)
    return net


@contextmanager
def live(net: str, workdir: Path, case: Case | None) -> Iterator[SimFabric]:
    """ibsim on ``net``; with ``case``, its master and standby OpenSMs settled."""
    sim = start_sim(write_net(net, workdir), workdir / "sim")
    try:
        if case is not None:
            master = sim.start_opensm(case.master, args=["-p", "14"], name="sm-master")
            master.expect("SUBNET UP")
            standby = sim.start_opensm(case.standby, args=["-p", "3"], name="sm-standby")
            standby.expect("Entering STANDBY state")
        yield sim
    finally:
        sim.stop()


def discover(sim: SimFabric, host: str, spec: Path) -> subprocess.CompletedProcess[str]:
    """`ibprov discover -o SPEC` as a user runs it on the node ``host`` (its diags under libumad2sim)."""
    clients = sim.workdir / "clients"
    clients.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "ibprov", "discover", "-o", str(spec)],
        env=sim.env(host),
        cwd=clients,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def verify(sim: SimFabric, host: str, spec: Path) -> SectionReport:
    """`ibprov verify --fabric SPEC` from ``host``: the spec's GUIDs only (nothing synthetic)."""
    runner = LocalRunner(env=sim.env(host))
    try:
        return verify_fabric(load_spec(spec), runner, soak=0.0, synthetic_guids=False)
    finally:
        runner.close()


def instances(spec: Path) -> list[SimSm]:
    return [(i.node, i.hca or "", i.port, i.priority) for i in load_spec(spec).spec.subnet_manager.instances]


def test_which_captures_ibsim_loads(tmp_path: Path) -> None:
    loaded, refused, no_ca = set(), set(), set()
    for capture in captures():
        net = twin_net(capture)
        try:
            start_sim(write_net(net, tmp_path / Path(capture).stem), tmp_path / Path(capture).stem / "sim").stop()
        except SimError:
            refused.add(capture)
        else:
            (loaded if has_ca(net) else no_ca).add(capture)
    assert loaded == set(LOADS)
    assert refused == REFUSED_BY_IBSIM
    assert no_ca == NO_CA_LEFT


@pytest.mark.parametrize("capture", sorted(LOADS))
def test_a_discovered_spec_verifies_clean_against_the_fabric_it_came_from(capture: str, tmp_path: Path) -> None:
    case = LOADS[capture]
    net = twin_net(capture)
    spec = tmp_path / "spec.yaml"
    with live(net, tmp_path, case) as sim:
        done = discover(sim, case.probe, spec)
        assert done.returncode == 0, done.stderr
        report = verify(sim, case.probe, spec)
    (master, standby) = case.sms
    assert done.stdout.splitlines()[-1] == (
        f"subnet managers found: {master[0]}/{master[1]}:1 MASTER (priority 14), "
        f"{standby[0]}/{standby[1]}:1 STANDBY (priority 3)"
    )
    assert instances(spec) == list(case.sms)
    text = spec.read_text()
    assert f"{{node: {master[0]}, hca: {master[1]}, port: 1, priority: 14}}   # REVIEW: found MASTER" in text
    assert f"{{node: {standby[0]}, hca: {standby[1]}, port: 1, priority: 3}}   # REVIEW: found STANDBY" in text
    assert [(f.check, f.object, f.observed) for f in report.findings] == []
    assert report.notes == (f"diags ran from {case.probe_desc}",)
    examined = {check.id: check.objects for check in report.checks}
    assert examined["sm.priority"] == tuple(f"{n} {h} port {p}" for n, h, p, _prio in case.sms)


def test_an_uncabled_hca_port_gets_no_guid_note_and_the_spec_still_verifies_clean(tmp_path: Path) -> None:
    net = twin_net("sim/ibnetdiscover-sim-v44.txt")
    two_ports = 'Ca\t1 "H-0000000000100004"'  # node03 mlx5_0: a second port, no cable on it
    assert two_ports in net
    net = net.replace(two_ports, 'Ca\t2 "H-0000000000100004"')
    spec = tmp_path / "spec.yaml"
    with live(net, tmp_path, SIM_CASE) as sim:
        done = discover(sim, SIM_CASE.probe, spec)
        assert done.returncode == 0, done.stderr
        report = verify(sim, SIM_CASE.probe, spec)
    node03 = next(n for n in load_spec(spec).spec.nodes if n.name == "node03")
    (hca,) = node03.hcas
    assert (hca.ports, hca.port_guids) == ((1, 2), {1: 0x100005})  # port 2 shows no GUID
    assert load_spec(spec).spec.fabric.empty_ports == ("node03/mlx5_0:2",)
    assert [(f.check, f.object, f.observed) for f in report.findings] == []
    assert report.notes == ("diags ran from node02 mlx5_0",)  # and no "no GUID in the spec or lock file"


def test_with_no_sm_running_the_skeleton_keeps_the_placeholder_and_says_none_was_found(tmp_path: Path) -> None:
    net = twin_net("sim/ibnetdiscover-sim-v44.txt")
    spec = tmp_path / "spec.yaml"
    with live(net, tmp_path, None) as sim:
        done = discover(sim, SIM_CASE.probe, spec)
    assert done.returncode == 0, done.stderr
    why = "no subnet manager was found running on the fabric"
    assert done.stdout.splitlines()[-1] == f"subnet_manager is a placeholder: {why}"
    assert f"# REVIEW: a placeholder so that the spec validates ({why})." in spec.read_text()
    assert instances(spec) == [("node01", "", 1, 15)]
