"""Unit tests for roles/ib_facts/library/ib_facts.py against fake sysfs trees."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from role_code import ROLES, load

ib_facts = load("ib_facts", "library/ib_facts.py", "ib_facts_module")


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _port(root: Path, dev: str, port: int, **attrs: str) -> None:
    base = f"class/infiniband/{dev}/ports/{port}"
    for name, value in attrs.items():
        _write(root, f"{base}/{name}", value)


@pytest.fixture
def hca_tree(tmp_path: Path) -> Path:
    """A ConnectX-6 (one active HDR port) and a dual-port ConnectX-3 (port 2 down), as sysfs shows them."""
    dev = "class/infiniband/mlx5_0"
    _write(tmp_path, f"{dev}/node_guid", "b859:9f03:0012:3450\n")
    _write(tmp_path, f"{dev}/sys_image_guid", "b859:9f03:0012:3450\n")
    _write(tmp_path, f"{dev}/fw_ver", "20.31.1014\n")
    _write(tmp_path, f"{dev}/hca_type", "MT4123\n")
    _write(tmp_path, f"{dev}/hw_rev", "0x0\n")
    _write(tmp_path, f"{dev}/board_id", "MT_0000000223\n")
    _write(tmp_path, f"{dev}/node_desc", "node01 mlx5_0\n")
    _write(tmp_path, f"{dev}/node_type", "1: CA\n")
    _port(
        tmp_path,
        "mlx5_0",
        1,
        state="4: ACTIVE\n",
        phys_state="5: LinkUp\n",
        rate="200 Gb/sec (4X HDR)\n",
        link_layer="InfiniBand\n",
        lid="0x1a\n",
        sm_lid="0x1\n",
        sm_sl="0\n",
        lid_mask_count="0\n",
        cap_mask="0xa651e848\n",
    )
    _write(tmp_path, f"{dev}/ports/1/gids/0", "fe80:0000:0000:0000:b859:9f03:0012:3451\n")
    _write(tmp_path, f"{dev}/ports/1/gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n")
    for index, value in enumerate(["0xffff", "0x8010", "0x0000", "0x0020"]):
        _write(tmp_path, f"{dev}/ports/1/pkeys/{index}", value + "\n")
    # pkeys index 10 sorts after 2 numerically, not lexically
    _write(tmp_path, f"{dev}/ports/1/pkeys/10", "0x8030\n")

    dev = "class/infiniband/mlx4_0"
    _write(tmp_path, f"{dev}/node_guid", "0002:c903:00ee:ae00\n")
    _write(tmp_path, f"{dev}/fw_ver", "2.42.5000\n")
    for port, guid in ((1, "ae01"), (2, "ae02")):
        _write(tmp_path, f"{dev}/ports/{port}/gids/0", f"fe80:0000:0000:0000:0002:c903:00ee:{guid}\n")
    _port(tmp_path, "mlx4_0", 1, state="4: ACTIVE\n", phys_state="5: LinkUp\n", rate="56 Gb/sec (4X FDR)\n")
    _port(tmp_path, "mlx4_0", 2, state="1: DOWN\n", phys_state="3: Disabled\n", rate="2.5 Gb/sec (1X SDR)\n")
    return tmp_path


def test_device_attributes(hca_tree: Path) -> None:
    dev = ib_facts.collect(str(hca_tree))["devices"]["mlx5_0"]
    assert dev["node_guid"] == "0xb8599f0300123450"
    assert dev["sys_image_guid"] == "0xb8599f0300123450"
    assert dev["fw_ver"] == "20.31.1014"
    assert dev["hca_type"] == "MT4123"
    assert dev["node_desc"] == "node01 mlx5_0"
    assert (dev["node_type"], dev["node_type_code"]) == ("CA", 1)
    assert list(dev["ports"]) == ["1"]


def test_port_attributes(hca_tree: Path) -> None:
    port = ib_facts.collect(str(hca_tree))["devices"]["mlx5_0"]["ports"]["1"]
    assert port["state"] == "ACTIVE"
    assert port["state_code"] == 4
    assert port["phys_state"] == "LinkUp"
    assert port["phys_state_code"] == 5
    assert port["rate"] == 200
    assert port["rate_text"] == "200 Gb/sec (4X HDR)"
    assert port["link_layer"] == "InfiniBand"
    assert (port["lid"], port["sm_lid"], port["sm_sl"], port["lmc"]) == (26, 1, 0, 0)
    assert port["port_guid"] == "0xb8599f0300123451"
    assert port["gid_prefix"] == "0xfe80000000000000"
    assert port["cap_mask"] == "0xa651e848"


def test_pkeys_skip_empty_slots_in_index_order(hca_tree: Path) -> None:
    port = ib_facts.collect(str(hca_tree))["devices"]["mlx5_0"]["ports"]["1"]
    assert port["pkeys"] == ["0xffff", "0x8010", "0x0020", "0x8030"]


def test_missing_attributes_are_none_and_link_layer_defaults(hca_tree: Path) -> None:
    dev = ib_facts.collect(str(hca_tree))["devices"]["mlx4_0"]
    assert dev["sys_image_guid"] is None
    assert dev["node_desc"] is None
    down = dev["ports"]["2"]
    assert (down["state"], down["phys_state"], down["rate"]) == ("DOWN", "Disabled", 2.5)
    assert down["lid"] is None
    assert down["pkeys"] == []
    assert down["link_layer"] == "InfiniBand"


def test_port_guids_sorted_over_all_devices(hca_tree: Path) -> None:
    assert ib_facts.collect(str(hca_tree))["port_guids"] == [
        "0x0002c90300eeae01",
        "0x0002c90300eeae02",
        "0xb8599f0300123451",
    ]


def test_active_ports(hca_tree: Path) -> None:
    assert ib_facts.collect(str(hca_tree))["active_ports"] == [
        {
            "device": "mlx4_0",
            "port": 1,
            "port_guid": "0x0002c90300eeae01",
            "lid": None,
            "rate": 56,
            "link_layer": "InfiniBand",
        },
        {
            "device": "mlx5_0",
            "port": 1,
            "port_guid": "0xb8599f0300123451",
            "lid": 26,
            "rate": 200,
            "link_layer": "InfiniBand",
        },
    ]


def test_host_without_devices(tmp_path: Path) -> None:
    facts = ib_facts.collect(str(tmp_path))
    assert facts["devices"] == {}
    assert facts["port_guids"] == []
    assert facts["active_ports"] == []


def test_umad2sim_layout(tmp_path: Path) -> None:
    """ibsim's umad2sim: no link_layer, lid without newline, all-zero prefix before an SM ran."""
    dev = "class/infiniband/ibsim0"
    _write(tmp_path, f"{dev}/node_guid", "0000:0000:0010:0000\n")
    _write(tmp_path, f"{dev}/node_type", "1: CA\n")
    _write(tmp_path, f"{dev}/hca_type", "simulator\n")
    _port(
        tmp_path,
        "ibsim0",
        1,
        state="2: INIT\n",
        phys_state="5: LinkUp\n",
        rate="10 Gb/sec (4X)\n",
        lid="0x0",
        sm_lid="0x0",
        cap_mask="0x0050c048",
    )
    _write(tmp_path, f"{dev}/ports/1/gids/0", "0000:0000:0000:0000:0000:0000:0010:0001\n")
    port = ib_facts.collect(str(tmp_path))["devices"]["ibsim0"]["ports"]["1"]
    assert port["port_guid"] == "0x0000000000100001"
    assert (port["state"], port["rate"], port["lid"], port["link_layer"]) == ("INIT", 10, 0, "InfiniBand")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0002:c903:00ee:ae00", "0x0002c90300eeae00"),
        ("", None),
        (None, None),
        ("zz02:c903", None),
    ],
)
def test_parse_guid(text: str | None, expected: str | None) -> None:
    assert ib_facts.parse_guid(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100 Gb/sec (4X EDR)", 100),
        ("2.5 Gb/sec (1X SDR)", 2.5),
        ("14 Gb/sec (1X FDR)", 14),
        ("unknown", None),
        (None, None),
    ],
)
def test_parse_rate(text: str | None, expected: float | None) -> None:
    assert ib_facts.parse_rate(text) == expected


def test_module_runs_as_ansible_module(hca_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Run the module file the way Ansible's module runner does (args file), check the JSON it prints."""
    args = tmp_path_factory.mktemp("args") / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"sysfs_root": str(hca_tree), "pyverbs": False}}))
    proc = subprocess.run(
        [sys.executable, str(ROLES / "ib_facts" / "library" / "ib_facts.py"), str(args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["changed"] is False
    ib = result["ansible_facts"]["ib"]
    assert sorted(ib["devices"]) == ["mlx4_0", "mlx5_0"]
    assert ib["devices"]["mlx5_0"]["ports"]["1"]["port_guid"] == "0xb8599f0300123451"
    assert ib["sysfs_root"] == str(hca_tree)
