"""Slurm's topology/block in a Debian 13 twin rack (issue 39): `twin up` on trixie's node image runs its ibsim
0.12 with NDR links as NDR (verify --fabric finds them so, no stand-in) and Slurm 24.11.5 with the spec's
plugin, `apply` (role ib_slurm_topology) writes the planned blocks, slurmctld reads them, `verify --scheduler`
reads them back (and finds a node moved to another block), and `twin down` leaves nothing.

The rack of test_twin_slurm.py (five compute nodes on two leaves: blocks of three and two nodes), its scheduler
asking for topology/block. Needs podman; the trixie node image is built (debootstrap) or loaded from the cache.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from test_twin_slurm import SPEC, cn03_moved_to_leaf02, on_controller, slurm_twin, wait_states

from ibprov.clusterspec import LoadedSpec
from ibprov.twin.rack import RackState, verify_target
from ibprov.verify.registry import VerifyOptions, run_sections, section_info

pytestmark = pytest.mark.twin
# NDR: Debian 13's ibsim 0.12 runs NDR links (0.10 runs them at HDR): the rack's fabric is verified at NDR
BLOCK_SPEC = SPEC.replace(
    "scheduler: {controller: sm01, group: compute}",
    "scheduler: {controller: sm01, group: compute, version: '24.11', topology: {plugin: block}}",
).replace("speed: HDR", "speed: NDR")
COMPUTE = ["cn01", "cn02", "cn03", "cn04", "cn05"]


@pytest.fixture(scope="module")
def block_twin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LoadedSpec, RackState]]:
    assert BLOCK_SPEC.count("NDR") == 1, "the fabric speed line of test_twin_slurm.py's spec changed"
    assert "plugin: block" in BLOCK_SPEC, "the scheduler line of test_twin_slurm.py's spec changed"
    text = BLOCK_SPEC % {"run": os.getpid() % 10000 + 1}
    with slurm_twin(tmp_path_factory.mktemp("slurm-block-twin"), text, env={"IBPROV_SUITE": "trixie"}) as running:
        loaded, state, _spec = running
        assert "trixie" in state.image, state.image
        yield loaded, state


def test_debian_13s_ibsim_runs_ndr_links_at_ndr_and_verify_finds_the_fabric_as_planned(
    block_twin: tuple[LoadedSpec, RackState],
) -> None:
    loaded, state = block_twin
    limits = state.limits
    assert limits.simulator == "ibsim 0.12", limits.simulator
    assert "NDR" in limits.speeds
    assert limits.links == (), "no link stands in for another speed"
    report = run_sections(loaded, [section_info("fabric")], VerifyOptions(target=verify_target(state)))
    assert report.findings == [], [f.text for f in report.findings]
    assert not any("run at" in note for s in report.sections for note in s.notes), report.sections[0].notes


def test_slurm_24_11_runs_the_planned_blocks_and_verify_reads_them_back(
    block_twin: tuple[LoadedSpec, RackState],
) -> None:
    loaded, state = block_twin
    assert on_controller(state, "sinfo --version").strip() == "slurm-wlm 24.11.5"
    assert on_controller(state, "scontrol show config | grep ^TopologyPlugin").split() == [
        "TopologyPlugin",
        "=",
        "topology/block",
    ]
    shown = on_controller(state, "scontrol show topology").splitlines()
    assert [line.split(" BlockIndex=")[0] for line in shown if line.startswith("BlockName=")] == [
        "BlockName=leaf01",
        "BlockName=leaf02",
    ], shown
    assert any("Nodes=cn[01-03]" in line for line in shown if line.startswith("BlockName=leaf01")), shown
    assert wait_states(state, dict.fromkeys(COMPUTE, "idle")) == {n: ("idle", "none") for n in COMPUTE}

    scheduler = [section_info("scheduler")]
    options = VerifyOptions(target=verify_target(state))
    clean = run_sections(loaded, scheduler, options)
    assert clean.findings == [], [f.text for f in clean.findings]
    checks = {c.id: c for c in clean.checks}
    assert checks["scheduler.blocks"].objects == ("leaf01", "leaf02")
    assert len(checks["scheduler.node_leaf"].objects) == 5

    with cn03_moved_to_leaf02(state):
        moved = run_sections(loaded, scheduler, options)
        got = {(f.check, f.object, f.observed) for f in moved.findings}
        assert ("scheduler.node_leaf", "cn03", "in leaf02") in got, got
        assert ("scheduler.blocks", "leaf02", "Nodes=cn[03-05]") in got, got
    deadline = time.monotonic() + 60
    while (findings := run_sections(loaded, scheduler, options).findings) and time.monotonic() < deadline:
        time.sleep(2)
    assert findings == [], [f.text for f in findings]
