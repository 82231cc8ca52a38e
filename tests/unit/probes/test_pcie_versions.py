"""The PCIe link readers on real captures (tests/fixtures/lspci, each with its source and version on its first
line) and on the sysfs text of every kernel: ``lspci -vv`` of the three pciutils eras (no marker before 3.6,
``(ok)``/``(downgraded)`` on every device in 3.6-3.7, plain when equal and ``(downgraded)`` on endpoints from
3.8), a script's grep of ``LnkSta:`` lines read line by line, both sysfs speed formats (``8 GT/s`` up to kernel
5.6, ``8.0 GT/s PCIe`` after), the probe's ``pci=`` hop line, and the PCIe arithmetic the physical checks
judge with (PcieLink, needed_pcie)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from captures import capture_names, read_capture

from ibprov.clusterspec.physical import PcieLink, needed_pcie
from ibprov.clusterspec.units import Speed, Width, data_rate_gbps
from ibprov.probes._text import ParseError
from ibprov.probes.pcie import PcieHop, parse_link_line, parse_lspci, parse_sysfs_hop, parse_sysfs_speed

# ------------------------------------------------------------------------------------------------ lspci -vv
# Per capture, every device: (BDF, description, LnkCap gen, LnkCap width, LnkSta gen, LnkSta width, downgraded
# marker), transcribed from the capture (and its README row).
LSPCI: dict[str, list[tuple[str, str, int, int, int, int, bool]]] = {
    # pciutils <3.6 (no marker), tabs, mail-wrapped lines: two functions of one ConnectX-4 Lx at 8GT/s x8
    "cx4lx-8gts-x8-pciutils-pre36-netdev-2019.txt": [
        ("0b:00.0", "Ethernet controller: Mellanox Technologies MT27710 Family [ConnectX-4 Lx]", 3, 8, 3, 8, False),
        ("0b:00.1", "Ethernet controller: Mellanox Technologies MT27710 Family [ConnectX-4 Lx]", 3, 8, 3, 8, False),
    ],
    # pciutils <3.6, an rst literal block (indented device line): a Gen4 card trained at 8GT/s, with no marker
    "cx5ex-gen4-card-at-8gts-pciutils-pre36-fdio-csit.txt": [
        ("5e:00.0", "Ethernet controller: Mellanox Technologies MT28800 Family [ConnectX-5 Ex]", 4, 16, 3, 16, False),
    ],
    # pciutils >=3.8 (plain when equal), spaces: two ConnectX-7 at Gen5 x16
    "cx7-gen5x16-pciutils38-asus-esc8000a-stelline.txt": [
        ("21:00.0", "Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]", 5, 16, 5, 16, False),
        ("81:00.0", "Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]", 5, 16, 5, 16, False),
    ],
    # pciutils 3.6-3.7: "Speed 32GT/s (ok), Width x16 (ok)"
    "cx7-ndr-gen5x16-ok-markers-lmcache.txt": [
        ("19:00.0", "Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]", 5, 16, 5, 16, False),
    ],
    # pciutils >=3.8: an idle GPU at "2.5GT/s (downgraded)" (Gen1) under its Gen4 capability
    "gpu-idle-downgraded-pciutils38-asus-esc8000a-stelline.txt": [
        (
            "01:00.0",
            "VGA compatible controller: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] (rev a1) "
            "(prog-if 00 [VGA controller])",
            4,
            16,
            1,
            16,
            True,
        ),
    ],
}


@pytest.mark.parametrize("name", sorted(LSPCI))
def test_every_device_of_a_real_lspci_capture_reads_value_for_value(name: str) -> None:
    notes: list[str] = []
    devices = parse_lspci(read_capture(f"lspci/{name}"), notes)
    got = [
        (
            d.bdf,
            d.description,
            d.capable.generation if d.capable else None,
            d.capable.width if d.capable else None,
            d.current.generation if d.current else None,
            d.current.width if d.current else None,
            d.downgraded,
        )
        for d in devices
    ]
    assert got == LSPCI[name]
    assert notes == []  # every capture starts at its first device line


def test_the_gen4_connectx5_ex_trained_at_8gts_is_below_its_capability_without_a_marker() -> None:
    # pciutils <3.6 prints no marker: only the numbers say the Gen4 card trained at Gen3 (a Gen3 slot)
    (device,) = parse_lspci(read_capture("lspci/cx5ex-gen4-card-at-8gts-pciutils-pre36-fdio-csit.txt"))
    assert device.current == PcieLink(3, 16)
    assert device.capable == PcieLink(4, 16)
    assert device.current < device.capable
    assert device.current.generation < device.capable.generation
    assert device.downgraded is False


def test_the_idle_gpu_downgraded_marker_is_backed_by_its_numbers() -> None:
    (device,) = parse_lspci(read_capture("lspci/gpu-idle-downgraded-pciutils38-asus-esc8000a-stelline.txt"))
    assert device.current == PcieLink(1, 16)  # 2.5GT/s is Gen1
    assert device.capable == PcieLink(4, 16)
    assert device.current.generation < device.capable.generation  # judged by the numbers
    assert device.current.width == device.capable.width  # the width has no marker and is not below


def test_ok_markers_of_pciutils_3_6_are_not_downgrades() -> None:
    (device,) = parse_lspci(read_capture("lspci/cx7-ndr-gen5x16-ok-markers-lmcache.txt"))
    assert (device.current, device.capable, device.downgraded) == (PcieLink(5, 16), PcieLink(5, 16), False)


# ------------------------------------------------------------------------------------------------ grep of LnkSta
# Not lspci output: a script's "MLX Number: <dev>   LnkSta: ..." per HCA; each line read with parse_link_line.
# Per capture, in file order: (device, LnkSta gen, LnkSta width, downgraded marker).
LNKSTA: dict[str, list[tuple[str, int, int, bool]]] = {
    # >=3.8 layout, no marker: nine ConnectX-7 at 32GT/s x16
    "lnksta-only-cx7-32gts-nccl-precheck.txt": [
        ("mlx5_0", 5, 16, False),
        ("mlx5_1", 5, 16, False),
        ("mlx5_2", 5, 16, False),
        ("mlx5_3", 5, 16, False),
        ("mlx5_4", 5, 16, False),
        ("mlx5_5", 5, 16, False),
        ("mlx5_6", 5, 16, False),
        ("mlx5_7", 5, 16, False),
        ("mlx5_8", 5, 16, False),
    ],
    # 3.6-3.7 layout: "(ok)" everywhere but mlx5_106's "Width x4 (downgraded)"; rows not sorted
    "lnksta-only-hca-x4-downgraded-ok-markers-nccl-precheck.txt": [
        ("mlx5_107", 4, 16, False),
        ("mlx5_106", 4, 4, True),
        ("mlx5_104", 4, 16, False),
        ("mlx5_103", 4, 16, False),
        ("mlx5_102", 4, 16, False),
        ("mlx5_101", 4, 16, False),
        ("mlx5_105", 4, 16, False),
        ("mlx5_100", 4, 16, False),
    ],
}


@pytest.mark.parametrize("name", sorted(LNKSTA))
def test_every_line_of_a_grep_of_lnksta_reads_value_for_value(name: str) -> None:
    got = []
    for line in read_capture(f"lspci/{name}").splitlines():
        read = parse_link_line(line)
        assert read is not None, line
        kind, link, downgraded = read
        assert kind == "LnkSta", line
        assert link is not None, line
        device = line.split("MLX Number:", 1)[1].split()[0]
        got.append((device, link.generation, link.width, downgraded))
    assert got == LNKSTA[name]


@pytest.mark.parametrize("name", sorted(LNKSTA))
def test_a_grep_of_lnksta_is_not_read_as_lspci_devices(name: str) -> None:
    notes: list[str] = []
    assert parse_lspci(read_capture(f"lspci/{name}"), notes) == []
    assert len(notes) == len(LNKSTA[name])  # no BDF line: every line is a note, no device is invented


def test_parse_link_line_reads_lnkcap_and_ignores_other_lines() -> None:
    line = "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported, Exit Latency L0s unlimited"
    assert parse_link_line(line) == ("LnkCap", PcieLink(4, 16), False)
    assert parse_link_line("\t\tLnkCap2: Supported Link Speeds: 2.5-32GT/s, Crosslink- Retimer+") is None
    assert parse_link_line("\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes Disabled- CommClk-") is None
    assert parse_link_line("MLX Number: mlx5_0") is None


def test_every_lspci_capture_is_tested_above() -> None:
    assert capture_names("lspci/*.txt") == sorted(f"lspci/{name}" for name in [*LSPCI, *LNKSTA])


# ------------------------------------------------------------------------------------------------ sysfs
# Linux pci_speed_string: "%s GT/s" up to kernel 5.6, "%s GT/s PCIe" after (2.5 .. 64.0).
OLD_KERNEL = {"2.5 GT/s": 1, "5 GT/s": 2, "8 GT/s": 3, "16 GT/s": 4, "32 GT/s": 5, "64 GT/s": 6}
NEW_KERNEL = {
    "2.5 GT/s PCIe": 1,
    "5.0 GT/s PCIe": 2,
    "8.0 GT/s PCIe": 3,
    "16.0 GT/s PCIe": 4,
    "32.0 GT/s PCIe": 5,
    "64.0 GT/s PCIe": 6,
}


@pytest.mark.parametrize(("text", "generation"), [*OLD_KERNEL.items(), *NEW_KERNEL.items()])
def test_sysfs_speeds_of_both_kernel_formats_map_to_their_generation(text: str, generation: int) -> None:
    assert parse_sysfs_speed(text) == generation
    assert parse_sysfs_speed(text + "\n") == generation  # as read from the file


@pytest.mark.parametrize("text", ["Unknown", "Unknown speed", "", "   ", None])
def test_sysfs_speeds_with_no_value_read_none(text: str | None) -> None:
    assert parse_sysfs_speed(text) is None


def test_a_sysfs_hop_line_reads_its_links_and_numa_node() -> None:
    hop = parse_sysfs_hop("pci=0000:41:00.0|16.0 GT/s PCIe|8|32.0 GT/s PCIe|16|1")
    assert hop == PcieHop("0000:41:00.0", PcieLink(4, 8), PcieLink(5, 16), 1)


def test_a_sysfs_hop_line_of_an_old_kernel_reads_the_same() -> None:
    hop = parse_sysfs_hop("pci=0000:41:00.0|16 GT/s|8|32 GT/s|16|1")
    assert hop == PcieHop("0000:41:00.0", PcieLink(4, 8), PcieLink(5, 16), 1)


def test_a_sysfs_hop_line_with_missing_values_has_none_never_a_guess() -> None:
    hop = parse_sysfs_hop("pci=0000:41:00.0|||||-1")
    assert (hop.bdf, hop.current, hop.capable, hop.numa_node) == ("0000:41:00.0", None, None, None)
    unknown = parse_sysfs_hop("pci=0000:00:01.1|Unknown|0|Unknown speed|16|")
    assert (unknown.current, unknown.capable, unknown.numa_node) == (None, None, None)


@pytest.mark.parametrize(
    "line",
    [
        "pci=0000:41:00.0|16.0 GT/s PCIe|8|32.0 GT/s PCIe|16",  # a field short
        "pci=0000:41:00.0|16.0 GT/s PCIe|8|32.0 GT/s PCIe|16|1|extra",  # a field too many
        "pci=mlx5_0|16.0 GT/s PCIe|8|32.0 GT/s PCIe|16|1",  # not a BDF
        "pci=",
        "garbage",
    ],
)
def test_a_malformed_sysfs_hop_line_raises_parse_error(line: str) -> None:
    with pytest.raises(ParseError):
        parse_sysfs_hop(line, 3)


# ------------------------------------------------------------------------------------------------ arithmetic
@pytest.mark.parametrize(
    ("link", "gbps"),
    [(PcieLink(3, 16), 126.03), (PcieLink(4, 8), 126.03), (PcieLink(4, 16), 252.06), (PcieLink(5, 16), 504.12)],
)
def test_usable_bandwidth_of_a_link(link: PcieLink, gbps: float) -> None:
    assert link.gbps == pytest.approx(gbps, abs=0.01)  # 128b/130b encoding
    assert link.arithmetic() == f"{link.text} = {round(gbps)} Gb/s usable"


def test_the_arithmetic_text_is_exact() -> None:
    assert PcieLink(4, 8).arithmetic() == "Gen4 x8 = 126 Gb/s usable"
    assert PcieLink(5, 16).text == "Gen5 x16"


@pytest.mark.parametrize(
    ("speed", "width", "needed"),
    [
        (Speed.NDR, Width.X4, PcieLink(5, 16)),  # NDR 400
        (Speed.HDR, Width.X4, PcieLink(4, 16)),  # HDR 200
        (Speed.HDR, Width.X2, PcieLink(3, 16)),  # HDR100
        (Speed.EDR, Width.X4, PcieLink(3, 16)),  # EDR 100
    ],
)
def test_the_link_a_port_rate_needs(speed: Speed, width: Width, needed: PcieLink) -> None:
    rate = data_rate_gbps(speed, width)
    assert needed_pcie(rate) == needed
    assert needed.carries(rate)
    assert not PcieLink(needed.generation - 1, 16).carries(rate)  # one generation slower does not
    assert not PcieLink(needed.generation, 8).carries(rate)  # nor half the lanes


def test_carries_at_the_edge() -> None:
    assert PcieLink(4, 8).carries(126.0)  # 126.03 Gb/s carries a need written as 126
    assert not PcieLink(4, 8).carries(200.0)
    assert PcieLink(4, 8).carries(PcieLink(4, 8).gbps)  # exactly its bandwidth: carried
    assert not PcieLink(4, 8).carries(PcieLink(4, 8).gbps + 0.01)  # no tolerance above it
    assert PcieLink(5, 16).carries(400.0)
    assert not PcieLink(4, 16).carries(400.0)
    assert PcieLink(3, 16).carries(100.0)
    assert not PcieLink(3, 8).carries(100.0)


@pytest.mark.parametrize("width", range(1, 17))
def test_bandwidth_grows_with_every_generation(width: int) -> None:
    rates = [PcieLink(gen, width).gbps for gen in range(1, 7)]
    assert all(a < b for a, b in pairwise(rates)), rates


@pytest.mark.parametrize("generation", range(1, 7))
def test_bandwidth_grows_with_every_lane(generation: int) -> None:
    rates = [PcieLink(generation, width).gbps for width in range(1, 17)]
    assert all(a < b for a, b in pairwise(rates)), rates
