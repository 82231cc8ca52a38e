"""The ``nvidia-smi topo -m`` reader on real captures (tests/fixtures/nvidia-smi, each with its source and driver
on its first line): the current layout (``NICn`` columns and a ``NIC Legend:``, ``mlx5_N`` and ``mlx5_bond_N``),
the old one (RDMA names as column headers), the very old ``SOC`` token, ``topo -mp``, tab-separated and
space-aligned copies. Every (GPU, NIC) relation of every matrix is checked against the table below,
transcribed from the capture (and its README row), never computed by the reader."""

from __future__ import annotations

import pytest
from captures import capture_names, read_capture

from ibprov.probes._text import ParseError
from ibprov.probes.gputopo import DISTANCE, parse_topo

# Per capture: the NICs in column order (the legend applied) and, per GPU row, its cells in those NIC columns.
MATRIX: dict[str, tuple[tuple[str, ...], dict[int, str]]] = {
    # driver 575, spaces, 2x RTX 6000 Ada + one dual-port ConnectX-7; no PIX/PXB NIC
    "topo-m-2gpu-1numa-no-pix-nic-driver575-stelline.txt": (
        ("mlx5_0", "mlx5_1"),
        {
            0: "NODE NODE",
            1: "NODE NODE",
        },
    ),
    # old layout (mlx5_N headers), tabs, NIC rows ending in two empty cells; no PIX/PXB NIC
    "topo-m-2gpu-a100-mlx5-headers-no-pix-della.txt": (
        ("mlx5_0", "mlx5_1"),
        {
            0: "NODE SYS",
            1: "SYS  NODE",
        },
    ),
    # driver 575, spaces, 4x RTX 6000 Ada on 2 NUMA nodes, two dual-port ConnectX-7; no PIX/PXB NIC
    "topo-m-4gpu-2numa-no-pix-nic-driver575-stelline.txt": (
        ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"),
        {
            0: "NODE NODE SYS  SYS",
            1: "NODE NODE SYS  SYS",
            2: "SYS  SYS  NODE NODE",
            3: "SYS  SYS  NODE NODE",
        },
    ),
    # driver 580, tabs, 8x A800 NV8, bonded NICs; an empty field before GPU NUMA ID on GPU rows
    "topo-m-8xa800-mlx5-bond-pix-driver580-envsnapshot.txt": (
        tuple(f"mlx5_bond_{n}" for n in range(8)),
        {
            0: "PIX  PIX  NODE NODE SYS  SYS  SYS  SYS",
            1: "PIX  PIX  NODE NODE SYS  SYS  SYS  SYS",
            2: "NODE NODE PIX  PIX  SYS  SYS  SYS  SYS",
            3: "NODE NODE PIX  PIX  SYS  SYS  SYS  SYS",
            4: "SYS  SYS  SYS  SYS  PIX  PIX  NODE NODE",
            5: "SYS  SYS  SYS  SYS  PIX  PIX  NODE NODE",
            6: "SYS  SYS  SYS  SYS  NODE NODE PIX  PIX",
            7: "SYS  SYS  SYS  SYS  NODE NODE PIX  PIX",
        },
    ),
    # spaces, 8x B300 NV18, 8 ConnectX-8 as bonded NICs: GPUn PXB to NICn
    "topo-m-8xb300-cx8-mlx5-bond-pxb-deepep590.txt": (
        tuple(f"mlx5_bond_{n}" for n in range(8)),
        {
            0: "PXB  NODE NODE NODE SYS  SYS  SYS  SYS",
            1: "NODE PXB  NODE NODE SYS  SYS  SYS  SYS",
            2: "NODE NODE PXB  NODE SYS  SYS  SYS  SYS",
            3: "NODE NODE NODE PXB  SYS  SYS  SYS  SYS",
            4: "SYS  SYS  SYS  SYS  PXB  NODE NODE NODE",
            5: "SYS  SYS  SYS  SYS  NODE PXB  NODE NODE",
            6: "SYS  SYS  SYS  SYS  NODE NODE PXB  NODE",
            7: "SYS  SYS  SYS  SYS  NODE NODE NODE PXB",
        },
    ),
    # very old driver, tabs: SOC (not SYS), no NODE, one NIC as a mlx5_0 header
    "topo-m-8xp40-old-driver-soc-mlx5-header-paddle.txt": (
        ("mlx5_0",),
        {
            0: "SOC",
            1: "SOC",
            2: "SOC",
            3: "SOC",
            4: "SOC",
            5: "SOC",
            6: "SOC",
            7: "SOC",
        },
    ),
    # old layout, tabs, DGX A100: 12 NICs as mlx5_0..mlx5_11 headers
    "topo-m-dgx-a100-mlx5-headers-gengwg.txt": (
        tuple(f"mlx5_{n}" for n in range(12)),
        {
            0: "PXB PXB SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS",
            1: "PXB PXB SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS",
            2: "SYS SYS PXB PXB SYS SYS SYS SYS SYS SYS SYS SYS",
            3: "SYS SYS PXB PXB SYS SYS SYS SYS SYS SYS SYS SYS",
            4: "SYS SYS SYS SYS SYS SYS PXB PXB SYS SYS SYS SYS",
            5: "SYS SYS SYS SYS SYS SYS PXB PXB SYS SYS SYS SYS",
            6: "SYS SYS SYS SYS SYS SYS SYS SYS PXB PXB SYS SYS",
            7: "SYS SYS SYS SYS SYS SYS SYS SYS PXB PXB SYS SYS",
        },
    ),
    # topo -mp (PCIe only, no NV#), old layout, tabs, DGX-1: 4 NICs as mlx5_N headers
    "topo-mp-dgx1-mlx5-headers-gengwg.txt": (
        ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"),
        {
            0: "PIX PHB SYS SYS",
            1: "PIX PHB SYS SYS",
            2: "PHB PIX SYS SYS",
            3: "PHB PIX SYS SYS",
            4: "SYS SYS PIX PHB",
            5: "SYS SYS PIX PHB",
            6: "SYS SYS PHB PIX",
            7: "SYS SYS PHB PIX",
        },
    ),
}


def expected_relation(name: str) -> dict[tuple[int, str], str]:
    nics, rows = MATRIX[name]
    out: dict[tuple[int, str], str] = {}
    for gpu, row in rows.items():
        cells = row.split()
        assert len(cells) == len(nics), (name, gpu)  # the table itself is whole
        out.update({(gpu, nic): cell for nic, cell in zip(nics, cells, strict=True)})
    return out


@pytest.mark.parametrize("name", sorted(MATRIX))
def test_every_gpu_nic_relation_of_a_real_capture_reads_value_for_value(name: str) -> None:
    topo = parse_topo(read_capture(f"nvidia-smi/{name}"))
    nics, rows = MATRIX[name]
    assert topo.gpus == tuple(rows)
    assert topo.nics == nics
    assert topo.relation == expected_relation(name)
    assert topo.notes == ()  # the legend is read past, nothing is left over


# nearest() of one GPU per capture: nearest first, ties by NIC name (as text: mlx5_10 before mlx5_2)
NEAREST: dict[str, tuple[int, list[tuple[str, str]]]] = {
    "topo-m-2gpu-1numa-no-pix-nic-driver575-stelline.txt": (1, [("mlx5_0", "NODE"), ("mlx5_1", "NODE")]),
    "topo-m-2gpu-a100-mlx5-headers-no-pix-della.txt": (1, [("mlx5_1", "NODE"), ("mlx5_0", "SYS")]),
    "topo-m-4gpu-2numa-no-pix-nic-driver575-stelline.txt": (
        2,
        [("mlx5_2", "NODE"), ("mlx5_3", "NODE"), ("mlx5_0", "SYS"), ("mlx5_1", "SYS")],
    ),
    "topo-m-8xa800-mlx5-bond-pix-driver580-envsnapshot.txt": (
        6,
        [
            ("mlx5_bond_6", "PIX"),
            ("mlx5_bond_7", "PIX"),
            ("mlx5_bond_4", "NODE"),
            ("mlx5_bond_5", "NODE"),
            ("mlx5_bond_0", "SYS"),
            ("mlx5_bond_1", "SYS"),
            ("mlx5_bond_2", "SYS"),
            ("mlx5_bond_3", "SYS"),
        ],
    ),
    "topo-m-8xb300-cx8-mlx5-bond-pxb-deepep590.txt": (
        5,
        [
            ("mlx5_bond_5", "PXB"),
            ("mlx5_bond_4", "NODE"),
            ("mlx5_bond_6", "NODE"),
            ("mlx5_bond_7", "NODE"),
            ("mlx5_bond_0", "SYS"),
            ("mlx5_bond_1", "SYS"),
            ("mlx5_bond_2", "SYS"),
            ("mlx5_bond_3", "SYS"),
        ],
    ),
    "topo-m-8xp40-old-driver-soc-mlx5-header-paddle.txt": (3, [("mlx5_0", "SOC")]),
    "topo-m-dgx-a100-mlx5-headers-gengwg.txt": (
        6,
        [
            ("mlx5_8", "PXB"),
            ("mlx5_9", "PXB"),
            ("mlx5_0", "SYS"),
            ("mlx5_1", "SYS"),
            ("mlx5_10", "SYS"),
            ("mlx5_11", "SYS"),
            ("mlx5_2", "SYS"),
            ("mlx5_3", "SYS"),
            ("mlx5_4", "SYS"),
            ("mlx5_5", "SYS"),
            ("mlx5_6", "SYS"),
            ("mlx5_7", "SYS"),
        ],
    ),
    "topo-mp-dgx1-mlx5-headers-gengwg.txt": (
        4,
        [("mlx5_2", "PIX"), ("mlx5_3", "PHB"), ("mlx5_0", "SYS"), ("mlx5_1", "SYS")],
    ),
}


@pytest.mark.parametrize("name", sorted(NEAREST))
def test_nearest_nics_of_one_gpu_per_capture(name: str) -> None:
    gpu, expected = NEAREST[name]
    assert parse_topo(read_capture(f"nvidia-smi/{name}")).nearest(gpu) == expected


def test_the_old_soc_token_is_kept_and_ranks_as_sys() -> None:
    topo = parse_topo(read_capture("nvidia-smi/topo-m-8xp40-old-driver-soc-mlx5-header-paddle.txt"))
    assert set(topo.relation.values()) == {"SOC"}
    assert DISTANCE["SOC"] == DISTANCE["SYS"] > DISTANCE["NODE"]


def test_topo_mp_has_no_nvlink_and_reads_like_topo_m() -> None:
    text = read_capture("nvidia-smi/topo-mp-dgx1-mlx5-headers-gengwg.txt")
    assert "NV#" not in text  # topo -mp: no NV# legend line
    topo = parse_topo(text)
    assert topo.gpus == tuple(range(8))
    assert topo.nics == ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3")
    assert topo.relation[(0, "mlx5_0")] == "PIX"
    assert topo.relation[(7, "mlx5_3")] == "PIX"


TABBED = [name for name in sorted(MATRIX) if "\t" in read_capture(f"nvidia-smi/{name}")]
SPACED = [name for name in sorted(MATRIX) if name not in TABBED]


def test_the_captures_hold_both_tabbed_and_space_aligned_copies() -> None:
    assert TABBED == [
        "topo-m-2gpu-a100-mlx5-headers-no-pix-della.txt",
        "topo-m-8xa800-mlx5-bond-pix-driver580-envsnapshot.txt",
        "topo-m-8xp40-old-driver-soc-mlx5-header-paddle.txt",
        "topo-m-dgx-a100-mlx5-headers-gengwg.txt",
        "topo-mp-dgx1-mlx5-headers-gengwg.txt",
    ]
    assert SPACED == [
        "topo-m-2gpu-1numa-no-pix-nic-driver575-stelline.txt",
        "topo-m-4gpu-2numa-no-pix-nic-driver575-stelline.txt",
        "topo-m-8xb300-cx8-mlx5-bond-pxb-deepep590.txt",
    ]


@pytest.mark.parametrize("name", TABBED)
@pytest.mark.parametrize("tabsize", [4, 8])
def test_a_capture_whose_tabs_became_spaces_reads_the_same(name: str, tabsize: int) -> None:
    text = read_capture(f"nvidia-smi/{name}")
    spaced = parse_topo(text.expandtabs(tabsize))
    assert (spaced.gpus, spaced.nics, spaced.relation, spaced.notes) == (
        tuple(MATRIX[name][1]),
        MATRIX[name][0],
        expected_relation(name),
        (),
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "No devices were found\n",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        read_capture("lspci/cx7-ndr-gen5x16-ok-markers-lmcache.txt"),
    ],
    ids=["empty", "no-devices", "no-driver", "not-topo"],
)
def test_a_text_with_no_gpu_header_raises_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_topo(text)


def test_junk_lines_before_the_matrix_become_notes() -> None:
    name = "topo-m-8xa800-mlx5-bond-pix-driver580-envsnapshot.txt"
    junk = "$ nvidia-smi topo -m\nWARNING: infoROM is corrupted at gpu 0000:4F:00.0\n\n"
    topo = parse_topo(junk + read_capture(f"nvidia-smi/{name}"))
    assert topo.notes == (
        "line 1: $ nvidia-smi topo -m",
        "line 2: WARNING: infoROM is corrupted at gpu 0000:4F:00.0",
    )
    assert topo.relation == expected_relation(name)


def test_every_nvidia_smi_capture_is_tested_above() -> None:
    assert capture_names("nvidia-smi/*.txt") == sorted(f"nvidia-smi/{name}" for name in MATRIX)
    assert sorted(NEAREST) == sorted(MATRIX)
