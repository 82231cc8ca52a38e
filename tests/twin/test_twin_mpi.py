"""verify --mpi on the twin rack, for real: up, apply (the ib_mpi role installs UCX, Open MPI and mpi4py and
writes their configuration), then what `ibprov verify SPEC --mpi --contrast-tcp --target twin` runs.

The twin's containers have no RDMA device: ucx_info -d really lists no verbs transport, which verify reports
as the expected fall-back; with forbid_tcp the configured run really stops in MPI_Init (the configuration
forbids the only transport there is); the run forced onto TCP really runs between two containers (mpirun
starts its daemon on the other node over SSH), and what it measured is shown, not judged. Needs podman and
the local node image (`scripts/molecule.sh` installs both in `make test`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.report import to_dict
from ibprov.twin.rack import apply_target, down, load_state, up, verify_target
from ibprov.verify.registry import VerifyOptions, run_sections, section_info

pytestmark = pytest.mark.twin

SPEC = """\
version: 1
cluster: {name: twmpi%(run)s, ssh_user: root}
nodes:
  - {name: sm01, groups: [infra], hcas: [{device: mlx5_0}]}
  - {name: cn01, groups: [compute], hcas: [{device: mlx5_0}]}
  - {name: cn02, groups: [compute], hcas: [{device: mlx5_0}]}
switches:
  - {name: leaf01, role: leaf, ports: 36}
fabric:
  speed: HDR
  width: 4x
  links:
    - leaf01:1 <-> cn01/mlx5_0:1
    - leaf01:2 <-> cn02/mlx5_0:1
    - leaf01:36 <-> sm01/mlx5_0:1
stack: {kind: inbox}
subnet_manager:
  routing_engine: minhop
  instances: [{node: sm01, priority: 15}]
mpi:
  ucx_tls: [rc, ud, sm, self]
  rails: [{name: rail0, devices: ["mlx5_0:1"]}]
"""


@pytest.fixture
def mpi_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LoadedSpec:
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/molecule.sh installs it)")
    monkeypatch.setenv("IBPROV_TWIN_DIR", str(tmp_path / "twins"))
    return load_spec_text(SPEC % {"run": os.getpid() % 10000}, str(tmp_path / "mpi.yaml"))


def test_verify_mpi_on_the_twin_reports_the_fall_back_and_really_runs_mpi_over_tcp(
    mpi_spec: LoadedSpec, tmp_path: Path
) -> None:
    from ibprov.run import apply_spec

    loaded = mpi_spec
    state = up(loaded)
    try:
        applied = apply_spec(loaded, tmp_path / "run", target=apply_target(state))
        assert (applied.rc, applied.failed_hosts) == (0, [])

        options = VerifyOptions(target=verify_target(load_state(loaded)), contrast_tcp=True)
        report = run_sections(loaded, [section_info("mpi")], options)
        assert report.findings == [], [f.text for f in report.findings]
        mpi = report.section("mpi")
        checks = {c.id: c for c in mpi.checks}
        for passed in ("mpi.unreachable", "mpi.ucx_config", "mpi.mca_params", "mpi.env_override"):
            assert checks[passed].status == "pass", passed  # the role's files, read back from the containers
        fallbacks = dict(checks["mpi.verbs_transports"].skipped)
        assert set(fallbacks) == set(state.nodes)
        for node, why in fallbacks.items():
            assert why.startswith(f"MPI traffic on {node} would fall back to TCP (ucx_info -d lists self, tcp")
            assert why.endswith("expected, the twin's containers have no RDMA device")

        facts = to_dict(report)["sections"]["mpi"]["facts"]
        assert (facts["hosts_reached"], facts["hosts_with_verbs"], facts["pair"]) == (3, 0, ["cn01", "cn02"])
        assert facts["benchmark"] == "mpi4py.bench ringtest", "Debian packages no OSU: mpi4py's ringtest ran"
        configured, tcp = facts["runs"]
        assert configured["transport"] == "configured"
        assert configured["status"] == "failed"
        assert "PML ucx cannot be selected" in configured["reason"], "forbid_tcp stops MPI_Init without RDMA"
        assert dict(checks["mpi.run"].skipped)["cn01 -> cn02 (as configured)"].startswith("expected: MPI_Init stops")
        assert (tcp["transport"], tcp["status"]) == ("tcp", "ok"), tcp
        assert tcp["latency_us"] > 0
        assert tcp["bandwidth_mbs"] > 0
        assert tcp["bandwidth_size"] == 4 << 20
        assert checks["mpi.latency"].status == checks["mpi.bandwidth"].status == "skipped"
        assert report.exit_code == 0
    finally:
        down(loaded)
