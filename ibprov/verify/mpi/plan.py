"""What ``verify --mpi`` compares with: the configuration the ib_mpi role writes from the spec's ``mpi:``
section, the transports UCX must find, the pair of nodes the MPI benchmark runs between and its limits.

The expected file contents are the role's own templates rendered with the variables ``ibprov render`` gives
the role (:func:`ibprov.render.inventory.mpi_vars`), then read back with the parser the nodes' files go
through: one source of truth for what the files say.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, cast

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.types import NON_HOST_GROUPS
from ibprov.clusterspec.units import data_rate_gbps
from ibprov.probes.mpiconf import DISTRIBUTION_MCA, parse_kv_file
from ibprov.render.inventory import mpi_vars
from ibprov.render.templates import render_role_template
from ibprov.resources import roles_dir

__all__ = ["NO_RDMA_ON_TWIN", "MpiPlan", "build_mpi_plan"]

NO_RDMA_ON_TWIN = "the twin's containers have no RDMA device"
UCX_KEYS = ("UCX_TLS", "UCX_NET_DEVICES")  # what ucx.conf must say (extra UCX_* options are the site's)
MCA_KEYS = ("pml", "osc", "btl")


@dataclass(frozen=True)
class MpiPlan:
    cluster: str
    hosts: tuple[str, ...]
    ucx_conf: str  # path
    ucx: Mapping[str, str]  # UCX_TLS, UCX_NET_DEVICES (absent: UCX picks) as ucx.conf must have them
    mca_files: Mapping[str, str]  # flavour -> path (DISTRIBUTION_MCA: the distribution's Open MPI)
    mca: Mapping[str, str]  # pml / osc / btl as every flavour's file must have them (absent: must not be set)
    nccl: Mapping[str, str]  # NCCL_* as /etc/nccl.conf must have them (empty: NCCL not planned)
    devices: tuple[str, ...]  # the rails' ports (DEVICE:PORT); empty: any device
    forbid_tcp: bool
    pair: tuple[str, str] | None  # the two nodes the MPI benchmark runs between
    addresses: Mapping[str, str] = field(default_factory=dict)  # host -> how the other node reaches it
    latency_us: float = 3.0
    bandwidth_mbs: float | None = None  # the bandwidth limit, MB/s (10^6 bytes)
    line_rate_text: str = ""  # "HDR 4x (200 Gb/s)"
    bandwidth_fraction: float = 0.7
    no_rdma: str = ""  # why the hosts have no RDMA device at all (the twin): fall-backs are expected there
    # variables kept out of the MPI processes: on the twin the umad2sim shim (LD_PRELOAD), which MPI does not
    # use and which would make every rank and daemon one of ibsim's 10 clients (a killed one never leaves)
    unset_env: tuple[str, ...] = ()


@cache
def _role_filters() -> Any:
    """The ib_mpi role's filter plugin (the functions its templates derive values with)."""
    path = roles_dir() / "ib_mpi" / "filter_plugins" / "ib_mpi.py"
    spec = importlib.util.spec_from_file_location("ibprov_role_ib_mpi_filters", path)
    if spec is None or spec.loader is None:  # pragma: no cover - the role ships with ibprov
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _filter(name: str) -> Callable[..., Any]:
    return cast("Callable[..., Any]", getattr(_role_filters(), name))


def expected_files(variables: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(ucx.conf, openmpi-mca-params.conf, nccl.conf) settings the role writes with these variables."""
    v = dict(variables)
    v.setdefault("ib_mpi_ucx_options", {})
    v.setdefault("ib_mpi_openmpi_mca_params", {})
    net_devices = _filter("ib_mpi_net_devices")(v["ib_mpi_rails"])
    common = {**v, "ansible_managed": "Ansible managed", "__ib_mpi_net_devices": net_devices}
    ucx = parse_kv_file("ucx.conf", render_role_template("ib_mpi", "etc/ucx/ucx.conf.j2", common))
    mca_file = {"path": "", "flavours": ["openmpi"]}
    mca = parse_kv_file(
        "openmpi-mca-params.conf",
        render_role_template(
            "ib_mpi", "etc/openmpi/openmpi-mca-params.conf.j2", {**common, "ib_mpi_mca_file": mca_file}
        ),
    )
    nccl: dict[str, str] = {}
    if v.get("ib_mpi_nccl_enabled"):
        settings = {
            "rails": v["ib_mpi_rails"],
            "forbid_tcp": v["ib_mpi_forbid_tcp"],
            "nccl_ib_hca": v.get("ib_mpi_nccl_ib_hca", []),
            "nccl_ib_gid_index": v.get("ib_mpi_nccl_ib_gid_index"),
            "nccl_socket_ifname": v.get("ib_mpi_nccl_socket_ifname"),
            "nccl_options": v.get("ib_mpi_nccl_options", {}),
        }
        env = _filter("ib_mpi_nccl_env")(settings)
        nccl = parse_kv_file(
            "nccl.conf", render_role_template("ib_mpi", "etc/nccl.conf.j2", {**common, "__ib_mpi_nccl_env": env})
        )
    return ucx, mca, nccl


def build_mpi_plan(
    loaded: LoadedSpec,
    *,
    containers: tuple[str, ...] = (),
    addresses: Mapping[str, str] | None = None,
    twin: bool = False,
) -> MpiPlan:
    """The plan of ``loaded``; ``containers``: only these nodes are hosts (the twin's node containers);
    ``addresses``: how the nodes reach each other (default: the spec's address, else the name)."""
    spec = loaded.spec
    mpi = spec.mpi
    nodes = [
        n for n in spec.nodes if not set(n.groups) & set(NON_HOST_GROUPS) and (not containers or n.name in containers)
    ]
    ucx, mca, nccl = expected_files(mpi_vars(loaded))
    reach = {n.name: (addresses or {}).get(n.name) or n.address or n.name for n in nodes}
    # the pair: two nodes without a subnet manager if there are (compute nodes), else any two
    sm = {i.node for i in spec.subnet_manager.instances}
    ordered = [n for n in nodes if n.name not in sm] + [n for n in nodes if n.name in sm]
    pair = (ordered[0].name, ordered[1].name) if len(ordered) >= 2 else None
    bandwidth, rate_text = None, ""
    if pair is not None:
        rates = []
        for node in ordered[:2]:
            hca = node.hcas[0]
            speed, width = hca.speed or spec.fabric.speed, hca.width or spec.fabric.width
            rates.append((data_rate_gbps(speed, width), f"{speed} {width}"))
        gbps, text = min(rates)
        bandwidth = mpi.bandwidth_fraction * gbps * 1000 / 8
        rate_text = f"{text} ({gbps:g} Gb/s)"
    return MpiPlan(
        cluster=spec.cluster.name,
        hosts=tuple(n.name for n in nodes),
        ucx_conf="/etc/ucx/ucx.conf",
        ucx={k: ucx[k] for k in UCX_KEYS if k in ucx},
        mca_files={f.name: f.mca_params_file or DISTRIBUTION_MCA for f in mpi.flavours},
        mca={k: mca[k] for k in MCA_KEYS if k in mca},
        nccl=nccl,
        devices=tuple(_filter("ib_mpi_net_devices")([{"devices": list(r.devices)} for r in mpi.rails])),
        forbid_tcp=mpi.forbid_tcp,
        pair=pair,
        addresses=reach,
        latency_us=mpi.latency_us,
        bandwidth_mbs=bandwidth,
        line_rate_text=rate_text,
        bandwidth_fraction=mpi.bandwidth_fraction,
        no_rdma=NO_RDMA_ON_TWIN if twin else "",
        unset_env=("LD_PRELOAD",) if twin else (),
    )
