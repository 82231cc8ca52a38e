"""Unit tests for roles/ib_mpi/filter_plugins/ib_mpi.py (device lists, MCA files, NCCL environment, validation)."""

from __future__ import annotations

from typing import Any

import pytest
from role_code import load

f = load("ib_mpi", "filter_plugins/ib_mpi.py", "ib_mpi_filters")

RAILS: list[dict[str, Any]] = [
    {"name": "rail0", "devices": ["mlx5_0:1"]},
    {"name": "rail1", "devices": ["mlx5_1:1", "mlx5_2:1"]},
]


def settings(**over: Any) -> dict[str, Any]:
    """The role's defaults (without the ib_mpi_ prefix), overridden."""
    base: dict[str, Any] = {
        "ucx_tls": ["rc", "ud", "sm", "self"],
        "rails": RAILS,
        "forbid_tcp": True,
        "ucx_options": {},
        "flavours": [{"name": "openmpi"}],
        "openmpi_mca_params": {},
        "nccl_enabled": False,
        "nccl_ib_hca": [],
        "nccl_ib_gid_index": None,
        "nccl_socket_ifname": None,
        "nccl_options": {},
    }
    base.update(over)
    return base


def test_defaults_are_valid() -> None:
    assert f.ib_mpi_problems(settings()) == []
    assert f.ib_mpi_problems(settings(rails=[])) == []


def test_net_devices_in_rail_order_each_once() -> None:
    rails = [*RAILS, {"name": "rail2", "devices": ["mlx5_0:1"]}]
    assert f.ib_mpi_net_devices(rails) == ["mlx5_0:1", "mlx5_1:1", "mlx5_2:1"]
    assert f.ib_mpi_net_devices([]) == []
    assert f.ib_mpi_net_devices(None) == []


def test_nccl_ib_hca_is_an_exact_match_list() -> None:
    assert f.ib_mpi_nccl_ib_hca(["mlx5_0:1", "mlx5_1:1"]) == "=mlx5_0:1,mlx5_1:1"
    assert f.ib_mpi_nccl_ib_hca([]) == ""


def test_mca_files_group_flavours_by_path() -> None:
    flavours = [
        {"name": "openmpi"},
        {"name": "hpcx", "mca_params_file": "/opt/hpcx/ompi/etc/openmpi-mca-params.conf"},
        {"name": "site", "mca_params_file": None},
    ]
    assert f.ib_mpi_mca_files(flavours, "/etc/openmpi/openmpi-mca-params.conf") == [
        {"path": "/etc/openmpi/openmpi-mca-params.conf", "flavours": ["openmpi", "site"]},
        {"path": "/opt/hpcx/ompi/etc/openmpi-mca-params.conf", "flavours": ["hpcx"]},
    ]
    assert f.ib_mpi_mca_files([], "/etc/openmpi/openmpi-mca-params.conf") == []


def test_nccl_env_from_rails_with_gid_ifname_and_forbid_tcp() -> None:
    env = f.ib_mpi_nccl_env(
        settings(nccl_ib_gid_index=3, nccl_socket_ifname="=eth0", nccl_options={"NCCL_IB_TIMEOUT": 22})
    )
    assert env == {
        "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1,mlx5_2:1",
        "NCCL_IB_GID_INDEX": "3",
        "NCCL_SOCKET_IFNAME": "=eth0",
        "NCCL_NET": "IB",
        "NCCL_IB_TIMEOUT": "22",
    }


def test_nccl_env_explicit_hcas_gid_zero_and_tcp_allowed() -> None:
    env = f.ib_mpi_nccl_env(settings(nccl_ib_hca=["mlx5_4:1"], nccl_ib_gid_index=0, forbid_tcp=False))
    assert env == {"NCCL_IB_HCA": "=mlx5_4:1", "NCCL_IB_GID_INDEX": "0"}


def test_nccl_env_net_module_can_be_overridden() -> None:
    env = f.ib_mpi_nccl_env(settings(nccl_options={"NCCL_NET": "IBext_v8"}))
    assert env["NCCL_NET"] == "IBext_v8"


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"ucx_tls": []}, "ucx_tls: at least one transport is needed"),
        ({"ucx_tls": ["rc", "tcp"]}, "forbid_tcp is true, but the transports include tcp"),
        ({"ucx_tls": ["all"]}, "the transports include all (which includes tcp)"),
        ({"ucx_tls": ["^ud"]}, "the negated list does not exclude tcp"),
        ({"ucx_tls": ["rc", "^ud"]}, "only the first entry may start with ^"),
        ({"ucx_tls": ["rc", "infiniband"]}, "unknown UCX transport 'infiniband'"),
        ({"rails": [{"name": "r0", "devices": ["mlx5_0"]}]}, "device 'mlx5_0' is not DEVICE:PORT"),
        ({"rails": [{"name": "r0", "devices": []}]}, "rail 'r0' lists no devices"),
        ({"rails": [{"name": "r0", "devices": ["mlx5_0:1"]}] * 2}, "rail name 'r0' already used by rails[0]"),
        (
            {"rails": [{"name": "r0", "devices": ["mlx5_0:1"]}, {"name": "r1", "devices": ["mlx5_0:1"]}]},
            "device mlx5_0:1 is already in rail 'r0'",
        ),
        ({"flavours": [{"name": "hpcx"}]}, "flavour 'hpcx' needs mca_params_file"),
        ({"flavours": [{"name": "x", "mca_params_file": "etc/x.conf"}]}, "'etc/x.conf' is not an absolute path"),
        ({"flavours": [{"name": "openmpi"}, {"name": "openmpi"}]}, "flavour 'openmpi' is listed twice"),
        ({"ucx_options": {"UCX_TLS": "tcp"}}, "UCX_TLS comes from ucx_tls / rails"),
        ({"ucx_options": {"ucx_ib_sl": 1}}, "key 'ucx_ib_sl' is not a valid name"),
        ({"openmpi_mca_params": {"pml": "a\nb"}}, "value of pml must be a single-line scalar"),
        ({"nccl_enabled": True, "rails": []}, "NCCL needs HCA ports"),
        ({"nccl_enabled": True, "nccl_ib_gid_index": 256}, "256 is not a GID table index"),
        ({"nccl_enabled": True, "nccl_socket_ifname": "eth0 eth1"}, "'eth0 eth1' is not an interface list"),
        ({"nccl_enabled": True, "nccl_ib_hca": ["mlx5_0"]}, "nccl_ib_hca: 'mlx5_0' is not DEVICE:PORT"),
        ({"nccl_enabled": True, "nccl_options": {"NCCL_IB_HCA": "x"}}, "NCCL_IB_HCA has its own variable"),
    ],
)
def test_problems(over: dict[str, Any], message: str) -> None:
    problems = f.ib_mpi_problems(settings(**over))
    assert any(message in p for p in problems), problems


def test_tcp_allowed_when_not_forbidden() -> None:
    assert f.ib_mpi_problems(settings(ucx_tls=["rc", "tcp", "sm", "self"], forbid_tcp=False)) == []
    assert f.ib_mpi_problems(settings(ucx_tls=["^tcp"], forbid_tcp=True)) == []
    assert f.ib_mpi_problems(settings(ucx_tls=["rc:aux", "ud_mlx5", "dc_x", "sm", "self"])) == []


def test_nccl_settings_are_ignored_when_nccl_is_disabled() -> None:
    assert f.ib_mpi_problems(settings(nccl_ib_gid_index=999, rails=[])) == []


def test_filter_module_exports_every_filter() -> None:
    assert set(f.FilterModule().filters()) == {
        "ib_mpi_problems",
        "ib_mpi_net_devices",
        "ib_mpi_nccl_ib_hca",
        "ib_mpi_mca_files",
        "ib_mpi_nccl_env",
    }
