"""The physical probe's shell script, run as Ansible runs it (sh) on sysfs trees this test builds (IBPROV_SYSFS):
the PCIe path from each HCA up to its root port in both kernels' speed formats, a narrowed link, an mlx4 card
without link files, the NVIDIA GPUs with their NUMA nodes, and a host without mstlink (each port says so). The
trees hold the kernel's sysfs formats (pci_speed_string, "%u\\n" widths, numa_node -1); they are no capture."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ibprov.clusterspec.physical import PcieLink
from ibprov.probes.phyprobe import PHY_PROBE_SCRIPT, parse_phy_probe


def pci_device(root: Path, path: str, **files: str) -> Path:
    device = root / "devices" / path
    device.mkdir(parents=True, exist_ok=True)
    (device / "vendor").write_text(files.pop("vendor", "0x15b3") + "\n")
    for name, text in files.items():
        (device / name).write_text(text + "\n")
    return device


def hca(root: Path, name: str, device: Path, ports: int = 1, fw: str = "28.39.1002") -> None:
    cls = root / "class" / "infiniband" / name
    cls.mkdir(parents=True)
    (cls / "device").symlink_to(device)
    (cls / "fw_ver").write_text(fw + "\n")
    (cls / "board_id").write_text("MT_0000000838\n")
    (cls / "hca_type").write_text("MT4129\n")
    for p in range(1, ports + 1):
        (cls / "ports" / str(p)).mkdir(parents=True)


def link(speed: str, width: str, max_speed: str, max_width: str, numa: str) -> dict[str, str]:
    return {
        "current_link_speed": speed,
        "current_link_width": width,
        "max_link_speed": max_speed,
        "max_link_width": max_width,
        "numa_node": numa,
    }


def run_probe(root: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "IBPROV_SYSFS": str(root)}  # no mstlink, mlxlink or nvidia-smi on this PATH
    assert not any(os.access(Path(d) / "mstlink", os.X_OK) for d in env["PATH"].split(":"))
    done = subprocess.run(["sh", "-c", PHY_PROBE_SCRIPT], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_probe_reads_each_hcas_pcie_path_gpus_and_says_mstlink_is_missing(tmp_path: Path) -> None:
    root = tmp_path / "sys"
    port = pci_device(root, "pci0000:40/0000:40:01.1", **link("32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16", "1"))
    below = link("16.0 GT/s PCIe", "8", "32.0 GT/s PCIe", "16", "1")
    narrowed = pci_device(root, "pci0000:40/0000:40:01.1/0000:41:00.0", **below)
    old_kernel = pci_device(
        root, "pci0000:00/0000:00:02.0/0000:03:00.0", **link("16 GT/s", "16", "16 GT/s", "16", "-1")
    )
    pci_device(root, "pci0000:00/0000:00:02.0", **link("16 GT/s", "16", "16 GT/s", "16", "-1"))
    mlx4 = pci_device(root, "pci0000:80/0000:80:03.0/0000:81:00.0", numa_node="0")  # no link files
    pci_device(root, "pci0000:80/0000:80:03.0")
    hca(root, "mlx5_0", narrowed, ports=2)
    hca(root, "mlx5_1", old_kernel)
    hca(root, "mlx4_0", mlx4)
    gpu_files = {"class": "0x030200", "numa_node": "1"}
    gpu = pci_device(root, "pci0000:40/0000:40:02.1/0000:42:00.0", vendor="0x10de", **gpu_files)
    del port
    devices = root / "bus" / "pci" / "devices"
    devices.mkdir(parents=True)
    for device in (narrowed, old_kernel, mlx4, gpu):
        (devices / device.name).symlink_to(device)

    seen = parse_phy_probe(run_probe(root))

    assert seen.tools == frozenset()
    assert seen.link_tool is None
    assert sorted(seen.devices) == ["mlx4_0", "mlx5_0", "mlx5_1"]
    mlx5 = seen.devices["mlx5_0"]
    assert (mlx5.firmware, mlx5.board_id, mlx5.hca_type) == ("28.39.1002", "MT_0000000838", "MT4129")
    assert [h.bdf for h in mlx5.path] == ["0000:41:00.0", "0000:40:01.1"]
    assert (mlx5.path[0].current, mlx5.path[0].capable, mlx5.path[0].numa_node) == (PcieLink(4, 8), PcieLink(5, 16), 1)
    assert mlx5.path[1].current == PcieLink(5, 16)
    assert mlx5.link_errors == {1: "no mstlink or mlxlink on the host", 2: "no mstlink or mlxlink on the host"}
    old = seen.devices["mlx5_1"].path
    assert (old[0].current, old[0].numa_node) == (PcieLink(4, 16), None)  # "16 GT/s" (kernel <= 5.6); numa -1
    assert [(h.bdf, h.current, h.capable) for h in seen.devices["mlx4_0"].path] == [
        ("0000:81:00.0", None, None),
        ("0000:80:03.0", None, None),
    ]
    assert seen.gpus == (("0000:42:00.0", 1),)
    assert seen.topology is None
