"""Shared pieces of the verify --mpi unit tests: a small spec, its plan, the real captures in tests/data/mpi (and
ucx_info -d's in tests/fixtures/ucx_info) and a perfect observation built from them."""

from __future__ import annotations

from pathlib import Path

from captures import read_capture

from ibprov.clusterspec import load_spec_text
from ibprov.probes import mpi4py_bench, osu, ucx_info
from ibprov.probes.mpiconf import Tools
from ibprov.verify.mpi.observation import HostMpi, MpiObservation, MpiRun
from ibprov.verify.mpi.plan import MpiPlan, build_mpi_plan

DATA = Path(__file__).resolve().parents[3] / "data" / "mpi"

SPEC = """\
version: 1
cluster: {name: mpi1}
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
subnet_manager:
  instances: [{node: sm01}]
mpi:
  ucx_tls: [rc, ud, sm, self]
  rails: [{name: rail0, devices: ["mlx5_0:1"]}]
%(extra)s
"""


def capture(name: str) -> str:
    return (DATA / name).read_text()


def plan_of(extra: str = "", **kw: object) -> MpiPlan:
    return build_mpi_plan(load_spec_text(SPEC % {"extra": extra}, "mpi.yaml"), **kw)  # type: ignore[arg-type]


RDMA_UCX_TEXT = read_capture("ucx_info/ucx1.16.0-rhel8.9-cx6-partial.txt")  # UCX 1.16, ConnectX-6
NO_RDMA_UCX_TEXT = read_capture("ucx_info/ucx1.13.1-debian12-no-rdma.txt")  # UCX 1.13.1, no RDMA device
RDMA_UCX = ucx_info.parse(RDMA_UCX_TEXT)
NO_RDMA_UCX = ucx_info.parse(NO_RDMA_UCX_TEXT)
TOOLS = Tools(mpirun="/usr/bin/mpirun", mpi4py="3.1.4")
OSU_TOOLS = Tools(mpirun="/usr/bin/mpirun", osu_latency="/opt/osu/osu_latency", osu_bw="/opt/osu/osu_bw")


def healthy_host(plan: MpiPlan, host: str) -> HostMpi:
    return HostMpi(
        host,
        ucx_conf=dict(plan.ucx),
        mca={f: dict(plan.mca) for f in plan.mca_files},
        nccl_conf=dict(plan.nccl) if plan.nccl else None,
        ucx=RDMA_UCX,
        tools=OSU_TOOLS,
    )


def osu_run() -> MpiRun:
    """The configured run as the real OSU captures (HDR, UCX rc) give it."""
    lat = osu.parse(capture("osu_latency_ucx_rc_hdr.txt"))
    bw = osu.parse(capture("osu_bw_ucx_rc_hdr.txt"))
    return MpiRun(
        "configured",
        "osu_latency + osu_bw",
        "ok",
        latency_us=lat.smallest[1],
        latency_size=lat.smallest[0],
        bandwidth_mbs=bw.largest[1],
        bandwidth_size=bw.largest[0],
        bandwidth_kind="streamed (osu_bw)",
    )


def ring_tcp_run() -> MpiRun:
    ring = mpi4py_bench.parse(capture("mpi4py_ringtest_twin_tcp.txt"))
    return MpiRun("tcp", "mpi4py.bench ringtest", "ok", latency_us=ring.latency_us, latency_size=ring.size)


def perfect(plan: MpiPlan) -> MpiObservation:
    return MpiObservation({h: healthy_host(plan, h) for h in plan.hosts}, (osu_run(),))
