"""osu_latency / osu_bw of every OSU layout on real captures (tests/fixtures/osu, each with its source and
version): the kind, version and rows of each; lines that are not the benchmark's become notes, whatever they are
and wherever they come; output cut short or not osu_latency's / osu_bw's is an error quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpinoise import MPI_NOISE
from noiselines import insert, noted, shown

from ibprov.probes import osu
from ibprov.probes._text import ParseError
from ibprov.probes.osu import OsuResult

CAPTURES = capture_names("osu/*.txt")
LOADER = (
    "/usr/local/libexec/osu-micro-benchmarks/mpi/./pt2pt/osu_latency: /usr/lib/aarch64-linux-gnu/libnl-3.so.200: "
    "no version information available (required by /usr/lib64/libcxi.so.1)"
)
KERNEL = "[ 3420.098285] infiniband mlx5_1: create_qp:3323:(pid 300371): Create QP type 2 failed"


def parsed(name: str) -> OsuResult:
    return osu.parse(read_capture(f"osu/{name}"))


def test_osu_5_0_latency_after_the_run_script_lines() -> None:
    """OSU 5.0 osu_latency under srun (ofi-cray/libfabric-cray#859): its '###' lines before the title are notes."""
    lat = parsed("osu5.0-latency-cray-gni-srun.txt")
    assert (lat.kind, lat.version, lat.unit) == ("latency", "5.0", "us")
    assert (len(lat.rows), lat.smallest, lat.largest) == (24, (0, 1.84), (4194304, 497.37))
    assert lat.at(16384) == 13.62
    assert lat.notes == (
        "line 1: ###",
        "line 2: ### Running: srun -n2 -N2 -t00:8:00 --exclusive --cpu_bind=none -c2 osu_latency",
        "line 3: ###",
    )


@pytest.mark.parametrize(
    ("name", "kind", "rows", "smallest", "largest", "at_1m"),
    [
        ("osu5.8-latency-ompi-ucx-azure-kernel-message.txt", "latency", 24, (0, 1.61), (4194304, 179.11), 49.98),
        ("osu5.8-bw-ompi-ucx-azure-kernel-message.txt", "bandwidth", 23, (1, 3.88), (4194304, 24453.38), 24562.45),
    ],
)
def test_osu_5_8_after_a_kernel_message(
    name: str, kind: str, rows: int, smallest: tuple[int, float], largest: tuple[int, float], at_1m: float
) -> None:
    """OSU 5.8 under Open MPI + UCX on Azure HPC (converged-computing/usernetes-azure): the kernel message and the
    author's '....' before the title are notes."""
    result = parsed(name)
    assert (result.kind, result.version, len(result.rows)) == (kind, "5.8", rows)
    assert (result.smallest, result.largest, result.at(1048576)) == (smallest, largest, at_1m)
    assert result.notes == (f"line 1: {KERNEL}", "line 2: ....")


def test_osu_6_2_bandwidth() -> None:
    """OSU 6.2 osu_bw under MPICH 4.1 (eth-cscs/cscs-docs, resource-hook.md)."""
    bw = parsed("osu6.2-bw-mpich-ubuntu22.04.txt")
    assert (bw.kind, bw.version, bw.unit, len(bw.rows)) == ("bandwidth", "6.2", "MB/s", 23)
    assert (bw.smallest, bw.largest, bw.at(131072)) == ((1, 0.22), (4194304, 1279.54), 871.86)
    assert bw.notes == ()


def test_osu_7_2_cuda_bandwidth_with_its_buffer_and_datatype_headers() -> None:
    """OSU 7.2 osu_bw -d cuda (EESSI/software-layer#716): '# OSU MPI-CUDA', '# Send Buffer ...', '# Datatype'."""
    bw = parsed("osu7.2-cuda-bw-datatype-eessi.txt")
    assert (bw.kind, bw.version, len(bw.rows)) == ("bandwidth", "7.2", 26)
    assert (bw.smallest, bw.largest) == ((1, 1.01), (33554432, 93130.52))
    assert bw.notes == ()


def test_osu_7_5_latency_with_the_validation_column_after_loader_warnings() -> None:
    """OSU 7.5 osu_latency --validation under MPICH + libfabric cxi (eth-cscs/cscs-docs, image-mpich.md): the
    'Pass' column is read past, the loader's two warnings are notes."""
    lat = parsed("osu7.5-latency-validation-mpich-cxi-loader-warnings.txt")
    assert (lat.kind, lat.version, len(lat.rows)) == ("latency", "7.5", 23)
    assert (lat.smallest, lat.largest, lat.at(8)) == ((1, 3.00), (4194304, 181.46), 3.07)
    assert lat.notes == (f"line 1: {LOADER}", f"line 2: {LOADER}")


def test_osu_7_5_avg_latency_header() -> None:
    """OSU 7.5 osu_latency under Open MPI + UCX 1.19 (openucx/ucx#11020, the first rows as posted)."""
    lat = parsed("osu7.5-latency-ucx1.19-partial.txt")
    assert (lat.version, lat.rows) == ("7.5", ((1, 0.94), (2, 0.93), (4, 0.92), (8, 0.93)))


def test_every_capture_is_tested_above() -> None:
    assert [n.removeprefix("osu/") for n in CAPTURES] == [
        "osu5.0-latency-cray-gni-srun.txt",
        "osu5.8-bw-ompi-ucx-azure-kernel-message.txt",
        "osu5.8-latency-ompi-ucx-azure-kernel-message.txt",
        "osu6.2-bw-mpich-ubuntu22.04.txt",
        "osu7.2-cuda-bw-datatype-eessi.txt",
        "osu7.5-latency-ucx1.19-partial.txt",
        "osu7.5-latency-validation-mpich-cxi-loader-warnings.txt",
    ]


def test_an_open_mpi_banner_between_rows_is_notes() -> None:
    body = read_capture("osu/osu6.2-bw-mpich-ubuntu22.04.txt").split("\n")
    banner = ["-" * 74, "WARNING: There was an error initializing an OpenFabrics device.", "-" * 74]
    bw = osu.parse("\n".join([*body[:5], *banner, *body[5:]]))
    assert replace(bw, notes=()) == parsed("osu6.2-bw-mpich-ubuntu22.04.txt")
    assert bw.notes == tuple(f"line {6 + i}: {text}" for i, text in enumerate(banner))


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("bash: osu_latency: command not found", 1, "not osu_latency or osu_bw output: expected a '# OSU MPI"),
        (read_capture("mpi4py/mpi4py3.1.4-ompi4.1.4-ucx1.13.1-pml-ucx-failed.txt"), 1, "not osu_latency or osu_bw"),
        ("", 0, "no output: expected a '# OSU MPI Latency Test vX'"),
        (
            "# OSU MPI Allreduce Latency Test v5.8\n# Size       Avg Latency(us)\n4  10.08",
            1,
            "not osu_latency or osu_bw",
        ),
        ("# OSU MPI Latency Test v5.8\n# Size          Latency (us)\n", 1, "cut short: no result row"),
        ("# OSU MPI Bandwidth Test v6.2\n# Size      Bandwidth (MB/s)\n1   0.22\n2", 4, "cut short: a message size"),
        ("# OSU MPI Latency Test v5.8\n0   1.61\n# OSU MPI Latency Test v5.8\n0   1.62", 3, "a second title"),
    ],
)
def test_what_is_not_whole_osu_output_is_an_error_quoting_its_line(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        osu.parse(text)
    assert caught.value.line_no == line_no


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(CAPTURES), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = osu.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), MPI_NOISE), max_size=8), label="inserts")
    result = osu.parse("\n".join(insert(lines, inserts)))
    assert replace(result, notes=()) == replace(clean, notes=())
    assert noted(result.notes) == sorted([*noted(clean.notes), *shown(inserts)])
