"""The parsers of verify --mpi on real captures (tests/data/mpi and tests/fixtures/ucx_info, each with its source;
every UCX version's ucx_info -d in tests/unit/probes/test_ucx_info.py): ucx_info -d from an RDMA
host (UCX 1.16, ConnectX-6) and from a host without RDMA (Debian 12, UCX 1.13.1), osu_latency / osu_bw from an
HDR cluster, mpi4py's ringtest from Debian 12 Open MPI."""

from __future__ import annotations

import pytest
from mpikit import NO_RDMA_UCX_TEXT, RDMA_UCX_TEXT, capture

from ibprov.probes import mpi4py_bench, osu, ucx_info
from ibprov.probes._text import ParseError
from ibprov.probes.mpiconf import (
    DISTRIBUTION_MCA,
    first_reason,
    parse_env,
    parse_kv_file,
    parse_probe,
    parse_tools,
    probe_script,
)


def test_ucx_info_of_an_rdma_host_lists_verbs_transports_on_its_port() -> None:
    info = ucx_info.parse(RDMA_UCX_TEXT)
    assert info.transports_on("mlx5_0:1") == ("dc_mlx5", "rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5")
    assert [r.transport for r in info.verbs] == ["dc_mlx5", "rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5"]
    assert {r.memory_domain for r in info.verbs} == {"mlx5_0"}
    assert info.idle_domains == ("mlx5_1",)  # "< no supported devices found >": its port is down
    assert info.transports_on("ib0") == ("tcp",)  # IPoIB is TCP to UCX, not verbs


def test_ucx_info_of_a_host_without_rdma_lists_only_tcp_and_shared_memory() -> None:
    info = ucx_info.parse(NO_RDMA_UCX_TEXT)
    assert info.transports == ("self", "tcp", "sysv", "posix", "cma")
    assert info.verbs == ()
    assert info.transports_on("eth0") == ("tcp",)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("bash: ucx_info: command not found", "not ucx_info -d output"),
        ("#      Transport: rc_mlx5\n#      Transport: ud_mlx5\n#         Device: mlx5_0:1", "has no Device line"),
        ("#         Device: mlx5_0:1", "expected a '# Transport:' line before this Device line"),
        ("# Memory domain: tcp\n#      Transport: tcp", "cut short: the output ends before transport tcp's Device"),
        ("#\n#\n", "no transport listed"),
    ],
)
def test_ucx_info_refuses_what_it_cannot_read(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        ucx_info.parse(text)


def test_osu_latency_and_bandwidth_of_an_hdr_pair() -> None:
    lat = osu.parse(capture("osu_latency_ucx_rc_hdr.txt"))  # a driver warning before the title is read past
    assert (lat.kind, lat.version, lat.unit) == ("latency", "5.8", "us")
    assert lat.smallest == (0, 1.61)
    assert lat.largest == (4194304, 179.11)
    assert len(lat.rows) == 24
    bw = osu.parse(capture("osu_bw_ucx_rc_hdr.txt"))
    assert (bw.kind, bw.unit, bw.smallest, bw.largest) == ("bandwidth", "MB/s", (1, 3.88), (4194304, 24453.38))
    assert bw.at(1048576) == 24562.45


def test_osu_7_header_with_its_datatype_line() -> None:
    lat = osu.parse(capture("osu_latency_v7_mlx5.txt"))
    assert (lat.version, lat.smallest) == ("7.5", (1, 0.94))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("# OSU MPI Allreduce Latency Test v5.8\n4 9.88\n", "not osu_latency or osu_bw"),
        ("# OSU MPI Latency Test v5.8\n# Size Latency (us)\n", "cut short: no result row"),
        ("# OSU MPI Bandwidth Test v5.8\n1 3.88\n2\n", "cut short: a message size without its value"),
        ("mpirun: command not found\n", "not osu_latency or osu_bw output: expected a '# OSU MPI"),
    ],
)
def test_osu_refuses_what_it_cannot_read(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        osu.parse(text)


def test_ringtest_across_two_twin_containers_over_tcp() -> None:
    ring = mpi4py_bench.parse(capture("mpi4py_ringtest_twin_tcp.txt"))
    assert (ring.loops, ring.seconds, ring.processes, ring.size) == (2000, 70.318, 2, 8)
    assert ring.latency_us == pytest.approx(70.318 / 4000 * 1e6)  # half a round trip


def test_ringtest_on_one_host() -> None:
    ring = mpi4py_bench.parse(capture("mpi4py_ringtest_one_host.txt"))
    assert ring.latency_us == pytest.approx(0.54952)
    assert ring.pingpong_mbs == pytest.approx(8 * 2000 / 0.00109904 / 1e6)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "no output: expected 'time for N loops"),
        ("[cn01:01289] PML ucx cannot be selected\n", "not mpi4py.bench ringtest output: expected 'time for N loops"),
        ("time for 1000 loops = 0.0010\n", "cut short"),
        ("time for 0 loops = 0 seconds (2 processes, 8 bytes)\n", "no loop was timed"),
    ],
)
def test_ringtest_refuses_what_it_cannot_read(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        mpi4py_bench.parse(text)


def test_probe_sections_files_environment_and_tools() -> None:
    script = probe_script({"openmpi": DISTRIBUTION_MCA, "hpcx": "/opt/hpcx/etc/openmpi-mca-params.conf"})
    assert "openmpi-$(uname -m)" in script
    assert "/opt/hpcx/etc/openmpi-mca-params.conf" in script
    out = "\n".join(
        [
            "@@ibprov-mpi ucx.conf",
            "# Generated by ibprov role ib_mpi",
            "UCX_TLS=rc,ud,sm,self",
            "@@ibprov-mpi mca openmpi",
            "pml = ucx",
            "@@ibprov-mpi nccl.conf",
            "@@ibprov-missing",
            "@@ibprov-mpi env",
            "UCX_TLS=tcp",
            "PATH=/usr/bin",
            "@@ibprov-mpi tools",
            "/usr/bin/mpirun",
            "mpi4py 3.1.4",
        ]
    )
    sections = parse_probe(out)
    assert sections["nccl.conf"] is None
    assert parse_kv_file("ucx.conf", sections["ucx.conf"] or "") == {"UCX_TLS": "rc,ud,sm,self"}
    assert parse_kv_file("mca", sections["mca openmpi"] or "") == {"pml": "ucx"}
    assert parse_env(sections["env"] or "") == {"UCX_TLS": "tcp"}
    tools = parse_tools(sections["tools"] or "")
    assert (tools.mpirun, tools.mpi4py, tools.osu) == ("/usr/bin/mpirun", "3.1.4", False)
    with pytest.raises(ParseError, match="expected KEY=VALUE"):
        parse_kv_file("ucx.conf", "UCX_TLS rc")


def test_the_reason_of_a_failed_launch_is_the_line_that_says_why() -> None:
    banner = [
        "-" * 20,
        "No components were able to be opened in the pml framework.",
        "",
        "[cn01:01289] PML ucx cannot be selected",
    ]
    assert first_reason(banner) == "[cn01:01289] PML ucx cannot be selected"
    assert first_reason(["ssh: connect to host 10.0.0.2 port 22: Connection refused", "ORTE ..."]).startswith("ssh:")
    assert first_reason(["something odd", "last words"]) == "last words"
    assert first_reason([]) == "no output"
