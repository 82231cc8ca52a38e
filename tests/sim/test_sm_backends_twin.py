"""A switch or UFM SM on the twin: the real OpenSM 3.3.23 plays it where the vendor's SM runs (attached at the
switch's port 0 -- ibsim allows it -- or on the UFM server's port) with the partitions the back end carries
(the spec rendered to the switch's CLI or UFM's payload and parsed back), and verify judges the fabric as for
a host OpenSM. A host OpenSM started beside it is a second SM, and verify names it, with the double-SM fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibprov.clusterspec import load_spec
from ibprov.report.model import Report
from ibprov.twin.bringup import TwinRun
from ibprov.twin.prove import prove, verify_twin
from ibprov.twinnet.netfile import hca_id

pytestmark = pytest.mark.sim
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _findings(report: Report | None) -> list[tuple[str, str, str]]:
    assert report is not None
    return [(f.check, f.object, f.fix) for s in report.sections for f in s.findings]


def test_the_switch_sm_is_played_at_the_switch_port_and_the_fabric_verifies_clean(tmp_path: Path) -> None:
    result = prove(load_spec(EXAMPLES / "switch-sm.yaml"), tmp_path, verify=True)
    assert result.problems == []
    assert "master SM is leaf01 port 0 with priority 15" in result.lines
    assert any("played by OpenSM 3.3.23 attached at its port 0" in n for n in result.notes)
    assert _findings(result.report) == []


def test_a_host_opensm_beside_the_switch_sm_is_found_as_a_second_sm(tmp_path: Path) -> None:
    loaded = load_spec(EXAMPLES / "switch-sm.yaml")
    seen: list[Report] = []

    def start_host_sm(run: TwinRun, host: str) -> None:
        rogue = run.sim.start_opensm(hca_id("login01", "mlx5_0"), args=["-p", "7"], name="host-opensm")
        assert rogue.wait_for("Entering STANDBY state", 60), rogue.log_text()[-500:]
        seen.append(verify_twin(loaded, run, host))

    result = prove(loaded, tmp_path, while_up=start_host_sm)
    assert result.problems == []
    found = _findings(seen[0])
    rogue = [f for f in found if f[0] == "sm.rogue"]
    assert len(rogue) == 1, found
    assert rogue[0][1] == "login01 mlx5_0 port 1"
    assert "a second SM beside the embedded SM of switch leaf01" in rogue[0][2]
    assert {f[0] for f in found} == {"sm.rogue"}, found  # the switch SM stays master with its priority


def test_ufm_s_sm_is_played_on_the_ufm_server_with_the_partitions_of_ufm_s_payload(tmp_path: Path) -> None:
    result = prove(load_spec(EXAMPLES / "ufm.yaml"), tmp_path, verify=True)
    assert result.problems == []
    assert "master SM is mgmt01 mlx5_0:1 with priority 15" in result.lines
    assert any("UFM's SM is played by OpenSM 3.3.23" in n for n in result.notes)
    assert _findings(result.report) == []
