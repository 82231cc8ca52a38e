"""The lines an MPI run printed besides the benchmark's output (UCX warnings merged from stderr, real captures
of mpi4py 3.1.4 under Open MPI 4.1.4 with UCX 1.13.1 and of OSU 5.8 under Open MPI + UCX) are read past and
show in the mpi section's notes, as ucx_info -d's do."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import read_capture
from mpikit import OSU_TOOLS, TOOLS, perfect, plan_of

from ibprov.run.adhoc import HostOutcome
from ibprov.verify.mpi.collect import observe_run
from ibprov.verify.mpi.observation import MpiObservation
from ibprov.verify.mpi.section import check_mpi, run_notes, tools_notes

LAT = read_capture("mpi4py/mpi4py3.1.4-ompi4.1.4-ucx1.13.1-latency-ucx-warn.txt")
BW = read_capture("mpi4py/mpi4py3.1.4-ompi4.1.4-ucx1.13.1-bandwidth-unused-env-warn.txt")


def _stdout(latency: str, bandwidth: str) -> str:
    return f"@@ibprov-mpi latency\n{latency}\n@@rc 0\n@@ibprov-mpi bandwidth\n{bandwidth}\n@@rc 0\n"


def test_ucx_warnings_of_a_ringtest_run_are_its_notes_and_the_values_are_read() -> None:
    run = observe_run("configured", TOOLS, HostOutcome("ok", {"stdout": _stdout(LAT, BW)}))
    assert (run.status, run.latency_size, run.bandwidth_size) == ("ok", 8, 4194304)
    assert run.latency_us == pytest.approx(0.00049202 / 1000 * 1e6)  # half a round trip
    assert [n.split(": line ")[0] for n in run.notes] == ["latency run"] * 2 + ["bandwidth run"] * 2
    assert "UCX  WARN  transport 'rc' is not available" in run.notes[0]
    assert "unused env variable: UCX_IB_GID_INDEX" in run.notes[3]


def test_the_section_notes_quote_the_first_lines_of_a_run() -> None:
    plan = plan_of()
    run = observe_run("configured", TOOLS, HostOutcome("ok", {"stdout": _stdout(LAT, BW)}))
    obs = replace(perfect(plan), runs=(run,))
    [note] = run_notes(obs)
    assert note.startswith(
        "MPI run as configured: mpi4py.bench ringtest printed 4 lines besides its output (read past): "
    )
    assert note.endswith("(and 1 more)")
    assert note in check_mpi(plan, obs).notes


def test_an_osu_run_notes_the_kernel_message_before_its_title() -> None:
    lat = read_capture("osu/osu5.8-latency-ompi-ucx-azure-kernel-message.txt")
    bw = read_capture("osu/osu5.8-bw-ompi-ucx-azure-kernel-message.txt")
    run = observe_run("configured", OSU_TOOLS, HostOutcome("ok", {"stdout": _stdout(lat, bw)}))
    assert (run.latency_us, run.bandwidth_mbs) == (1.61, 24453.38)
    kernel = "[ 3420.098285] infiniband mlx5_1: create_qp:3323:(pid 300371): Create QP type 2 failed"
    assert run.notes == (
        f"latency run: line 1: {kernel}",
        "latency run: line 2: ....",
        f"bandwidth run: line 1: {kernel}",
        "bandwidth run: line 2: ....",
    )


def test_a_run_without_such_lines_adds_no_note() -> None:
    assert run_notes(MpiObservation({}, ())) == []
    clean = read_capture("mpi4py/mpi4py3.1.4-ompi4.1.4-latency-ob1.txt")
    run = observe_run("tcp", TOOLS, HostOutcome("ok", {"stdout": _stdout(clean, clean)}))
    assert run.notes == ()
    assert run_notes(MpiObservation({}, (run,))) == []


def test_a_warning_in_a_hosts_tools_probe_is_a_section_note() -> None:
    plan = plan_of()
    locale = "bash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)"
    obs = perfect(plan)
    host = plan.hosts[0]
    tools = replace(obs.hosts[host].tools, notes=(f"line 1: {locale}",))
    obs = replace(obs, hosts={**obs.hosts, host: replace(obs.hosts[host], tools=tools)})
    assert tools_notes(plan, obs) == [
        f"{host}: the probe of the MPI tools printed 1 line besides them (read past): line 1: {locale}"
    ]
    assert tools_notes(plan, obs)[0] in check_mpi(plan, obs).notes
