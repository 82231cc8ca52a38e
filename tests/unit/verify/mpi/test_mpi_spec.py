"""The spec's mpi section: what validate refuses (located, before the role would), and what render gives the
ib_mpi role."""

from __future__ import annotations

import pytest
import yaml
from mpikit import SPEC

from ibprov.clusterspec import load_spec_text
from ibprov.errors import SpecError
from ibprov.render import render_files

BASE = SPEC.split("mpi:")[0]


@pytest.mark.parametrize(
    ("mpi", "problem"),
    [
        ("mpi:\n  ucx_tls: [rc, tcp]\n", "mpi.yaml:19:3: mpi: forbid_tcp is true, but ucx_tls includes tcp"),
        ("mpi:\n  nccl: {ib_gid_index: 3}\n", "mpi.yaml:19:3: mpi: nccl needs HCA ports: list rails or nccl.ib_hca"),
        (
            "mpi:\n  flavours: [{name: hpcx}]\n",
            "mpi.yaml:19:14: mpi.flavours[0]: flavour hpcx needs mca_params_file (only openmpi has a known path)",
        ),
        (
            "mpi:\n  nccl: {ib_hca: [mlx5_0], socket_ifname: 'eth 0'}\n",
            "mpi.yaml:19:19: mpi.nccl.ib_hca[0]: 'mlx5_0' is not allowed: write DEVICE:PORT",
        ),
    ],
)
def test_validate_refuses_what_the_role_would(mpi: str, problem: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text(BASE + mpi, "mpi.yaml")
    assert any(str(p).startswith(problem) for p in caught.value.problems), [str(p) for p in caught.value.problems]


def test_render_gives_the_role_the_spec_s_mpi_settings() -> None:
    mpi = (
        "mpi:\n  ucx_tls: [dc, rc, sm, self]\n  rails: [{name: r0, devices: ['mlx5_0:1']}]\n  forbid_tcp: false\n"
        "  flavours: [{name: openmpi}, {name: hpcx, mca_params_file: /opt/hpcx/ompi/etc/openmpi-mca-params.conf}]\n"
        "  benchmark_tools: false\n  nccl: {ib_gid_index: 3, socket_ifname: '=eth0'}\n"
    )
    files = render_files(load_spec_text(BASE + mpi, "mpi.yaml"), synthetic_guids=True).files
    got = {
        k: v for k, v in yaml.safe_load(files["inventory/group_vars/ib_nodes.yml"]).items() if k.startswith("ib_mpi")
    }
    assert got == {
        "ib_mpi_ucx_tls": ["dc", "rc", "sm", "self"],
        "ib_mpi_rails": [{"name": "r0", "devices": ["mlx5_0:1"]}],
        "ib_mpi_forbid_tcp": False,
        "ib_mpi_flavours": [
            {"name": "openmpi"},
            {"name": "hpcx", "mca_params_file": "/opt/hpcx/ompi/etc/openmpi-mca-params.conf"},
        ],
        "ib_mpi_openmpi_install": True,
        "ib_mpi_benchmark_install": False,
        "ib_mpi_nccl_enabled": True,
        "ib_mpi_nccl_ib_gid_index": 3,
        "ib_mpi_nccl_socket_ifname": "=eth0",
    }
