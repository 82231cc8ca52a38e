"""mpi4py's ringtest under Open MPI on real captures (tests/fixtures/mpi4py, each produced here by the real tools,
its command line on its first line): the loops, time, processes and size of each; UCX's and Open MPI's lines
merged into the output become notes, whatever they are and wherever they come; output cut short or not the
ringtest's is an error quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpinoise import MPI_NOISE
from noiselines import insert, noted, shown

from ibprov.probes import mpi4py_bench
from ibprov.probes._text import ParseError
from ibprov.probes.mpi4py_bench import RingResult

CAPTURES = capture_names("mpi4py/*.txt")
FAILED = "mpi4py/mpi4py3.1.4-ompi4.1.4-ucx1.13.1-pml-ucx-failed.txt"
READ = [n for n in CAPTURES if n != FAILED]


def parsed(name: str) -> RingResult:
    return mpi4py_bench.parse(read_capture(f"mpi4py/{name}"))


@pytest.mark.parametrize(
    ("name", "loops", "seconds", "size"),
    [
        ("mpi4py3.1.4-ompi4.1.4-latency-ob1.txt", 500, 0.00046399, 8),
        ("mpi4py3.1.4-ompi4.1.4-bandwidth-tcp.txt", 20, 0.0300437, 4194304),
    ],
)
def test_mpi4py_3_1_4_under_open_mpi_4_1_4(name: str, loops: int, seconds: float, size: int) -> None:
    """mpi4py 3.1.4 (Debian 12) under Open MPI 4.1.4, the latency and bandwidth runs ibprov launches."""
    ring = parsed(name)
    assert (ring.loops, ring.seconds, ring.processes, ring.size, ring.notes) == (loops, seconds, 2, size, ())
    assert ring.latency_us == pytest.approx(seconds / (2 * loops) * 1e6)


def test_ucx_warnings_before_the_latency_line_are_notes() -> None:
    """mpi4py 3.1.4 under Open MPI 4.1.4 with pml ucx (UCX 1.13.1) asked for rc on a host without RDMA."""
    ring = parsed("mpi4py3.1.4-ompi4.1.4-ucx1.13.1-latency-ucx-warn.txt")
    assert (ring.loops, ring.seconds, ring.size) == (500, 0.00049202, 8)
    assert [n.split(" UCX  WARN  ")[1] for n in ring.notes] == [
        "transport 'rc' is not available, please use one or more of: cma, mm, posix, self, shm, sm, sysv, tcp"
    ] * 2
    assert [n.split(": ")[0] for n in ring.notes] == ["line 1", "line 2"]


def test_ucx_unused_variable_warnings_before_the_bandwidth_line_are_notes() -> None:
    """mpi4py 3.1.4 under Open MPI 4.1.4 with pml ucx (UCX 1.13.1) and a UCX_IB_* variable on a host without IB."""
    ring = parsed("mpi4py3.1.4-ompi4.1.4-ucx1.13.1-bandwidth-unused-env-warn.txt")
    assert (ring.loops, ring.seconds, ring.size) == (20, 0.0336401, 4194304)
    assert ring.pingpong_mbs == pytest.approx(4194304 * 40 / 0.0336401 / 1e6)
    assert len(ring.notes) == 2
    assert all("unused env variable: UCX_IB_GID_INDEX" in n for n in ring.notes)


def test_a_launch_that_failed_is_not_ringtest_output_and_the_error_quotes_its_first_line() -> None:
    """Open MPI 4.1.4: 'PML ucx cannot be selected' (UCX_TLS=rc on a host without RDMA), the ringtest never ran."""
    text = read_capture(FAILED)
    with pytest.raises(ParseError, match=r"not mpi4py.bench ringtest output: expected 'time for N loops") as caught:
        mpi4py_bench.parse(text)
    assert (caught.value.line_no, caught.value.line) == (1, text.split("\n")[0])
    assert "UCX  WARN  transport 'rc' is not available" in caught.value.line


def test_every_capture_is_tested_above() -> None:
    assert [n.removeprefix("mpi4py/") for n in CAPTURES] == [
        "mpi4py3.1.4-ompi4.1.4-bandwidth-tcp.txt",
        "mpi4py3.1.4-ompi4.1.4-latency-ob1.txt",
        "mpi4py3.1.4-ompi4.1.4-ucx1.13.1-bandwidth-unused-env-warn.txt",
        "mpi4py3.1.4-ompi4.1.4-ucx1.13.1-latency-ucx-warn.txt",
        "mpi4py3.1.4-ompi4.1.4-ucx1.13.1-pml-ucx-failed.txt",
    ]


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("", 0, "no output: expected 'time for N loops"),
        ("bash: mpirun: command not found", 1, "not mpi4py.bench ringtest output"),
        ("[cn01:01289] PML ucx cannot be selected\ntime for 500 loops = 0.00049", 2, "cut short: expected 'time for"),
        ("time for 0 loops = 0 seconds (2 processes, 8 bytes)", 1, "no loop was timed"),
    ],
)
def test_what_is_not_whole_ringtest_output_is_an_error_quoting_its_line(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        mpi4py_bench.parse(text)
    assert caught.value.line_no == line_no


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(READ), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = mpi4py_bench.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), MPI_NOISE), max_size=8), label="inserts")
    result = mpi4py_bench.parse("\n".join(insert(lines, inserts)))
    assert replace(result, notes=()) == replace(clean, notes=())
    assert noted(result.notes) == sorted([*noted(clean.notes), *shown(inserts)])
