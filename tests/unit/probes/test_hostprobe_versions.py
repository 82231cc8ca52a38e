"""The node probe's readers on real captures (tests/fixtures/ibstatus and hostprobe, each with its source and
version on its first line): port rates of every kernel's sysfs text (the rate lines ibstatus prints), ``ip -j
addr``, ``ulimit -l`` and dpkg's version of rdma-core; lines that are not the tool's (a warning before or after
it: the probe merges stderr) are read past and kept as notes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, noted, shown

from ibprov.clusterspec.units import LANES, Speed, data_rate_gbps
from ibprov.probes.hostprobe import parse_ip_addr, parse_memlock, parse_rate, parse_stack_version


def rates(name: str) -> list[float | None]:
    """parse_rate of each ``rate:`` line of an ibstatus capture (the kernel's sysfs rate text)."""
    return [
        parse_rate(line.split("rate:", 1)[1].strip())
        for line in read_capture(f"ibstatus/{name}").splitlines()
        if line.strip().startswith("rate:")
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # 2014, mlx4 DDR, a down port: "10 Gb/sec (4X)" is SDR as kernels before the HDR names printed it
        ("ddr-sdr4x-mlx4-ompi-users-2014.txt", [8.0, 16.0]),
        # 2014, ConnectX-3 FDR: "56 Gb/sec (4X FDR)" is 54.56 Gb/s of data (64b/66b)
        ("fdr56-mlx4-2port-ibstatus.txt", [54.56, 54.56]),
        # 2024, ConnectX-7 on NDR200: "200 Gb/sec (2X NDR)"
        ("ndr200-2x-ndr-cx7-ibstatus.txt", [200.0]),
    ],
)
def test_rate_lines_of_real_ibstatus_captures(name: str, expected: list[float]) -> None:
    assert rates(name) == pytest.approx(expected)


def test_every_ibstatus_capture_is_tested_above() -> None:
    assert capture_names("ibstatus/*.txt") == [
        "ibstatus/ddr-sdr4x-mlx4-ompi-users-2014.txt",
        "ibstatus/fdr56-mlx4-2port-ibstatus.txt",
        "ibstatus/ndr200-2x-ndr-cx7-ibstatus.txt",
    ]


# The kernel's rate_show (drivers/infiniband/core/sysfs.c): deci-Gb/s a lane, " %s" speed name, "%dX" width.
_KERNEL_DECI = {
    "SDR": 25,
    "DDR": 50,
    "QDR": 100,
    "FDR10": 100,
    "FDR": 140,
    "EDR": 250,
    "HDR": 500,
    "NDR": 1000,
    "XDR": 2000,
}


def kernel_rate(speed: str, lanes: int, *, old: bool = False) -> str:
    rate = _KERNEL_DECI[speed] * lanes
    name = "" if old and speed == "SDR" else f" {speed}"
    return f"{rate // 10}{'.5' if rate % 10 else ''} Gb/sec ({lanes}X{name})"


@pytest.mark.parametrize("speed", list(Speed))
@pytest.mark.parametrize("width", list(LANES))
def test_every_speed_and_width_the_kernel_prints(speed: Speed, width: Any) -> None:
    text = kernel_rate(speed.value, LANES[width])
    assert parse_rate(text) == pytest.approx(data_rate_gbps(speed, width)), text


@pytest.mark.parametrize("width", list(LANES))
def test_old_kernels_sdr_without_its_name(width: Any) -> None:
    assert parse_rate(kernel_rate("SDR", LANES[width], old=True)) == pytest.approx(data_rate_gbps(Speed.SDR, width))


def test_a_bare_width_that_is_not_sdr_is_taken_at_face_value() -> None:
    # ibsim's sysfs prints an extended speed it does not name as "(4X)" with its own number
    assert parse_rate("104 Gb/sec (4X)") == 104.0
    assert parse_rate("junk", 200) == 200.0  # ibstat's "Rate: 200" comes as the number


def test_ip_json_addr_of_iproute2() -> None:
    # cloud-init's test data (iproute2 of its time, pretty-printed) and iproute2 6.1 (one line)
    assert parse_ip_addr(read_capture("hostprobe/ip-json-addr-cloud-init-sample.txt")) == {
        "lo": ("127.0.0.1/8", "::1/128"),
        "enp0s25": ("192.168.2.18/24", "fe80::7777:2222:1111:eeee/64", "fe80::8107:2b92:867e:f8a6/64"),
    }
    assert parse_ip_addr(read_capture("hostprobe/ip-j-addr-lo-iproute2-6.1.txt")) == {"lo": ("127.0.0.1/8", "::1/128")}


def test_ulimit_and_dpkg() -> None:
    assert parse_memlock(read_capture("hostprobe/ulimit-l-bash5.2.txt")) == "8192"  # bash 5.2, Debian 12
    assert parse_stack_version(read_capture("hostprobe/dpkg-query-version-rdma-core44-debian12.txt")) == "44.0-2"


def test_an_iproute2_without_json_gives_no_addresses_and_a_note() -> None:
    notes: list[str] = []
    assert parse_ip_addr('Option "-j" is unknown, try "ip -help".\n', notes) == {}
    assert notes == ['line 1: Option "-j" is unknown, try "ip -help".']


def test_a_log_line_in_brackets_is_not_the_address_array() -> None:
    log = "[1700000000.123456] [node01:1234 :0] ucp_context.c:1234 UCX  WARN  x"
    body = read_capture("hostprobe/ip-j-addr-lo-iproute2-6.1.txt")
    notes: list[str] = []
    assert parse_ip_addr(f"{log}\n{body}", notes) == {"lo": ("127.0.0.1/8", "::1/128")}
    assert notes == [f"line 1: {log}"]


def test_nothing_known_is_none_with_every_line_noted() -> None:
    notes: list[str] = []
    assert parse_stack_version("package rdma-core is not installed\n", notes) is None
    assert parse_memlock("bash: ulimit: error\n", notes) is None
    assert notes == ["line 1: package rdma-core is not installed", "line 1: bash: ulimit: error"]


READERS: dict[str, Callable[..., Any]] = {
    "hostprobe/ip-json-addr-cloud-init-sample.txt": parse_ip_addr,
    "hostprobe/ip-j-addr-lo-iproute2-6.1.txt": parse_ip_addr,
    "hostprobe/ulimit-l-bash5.2.txt": parse_memlock,
    "hostprobe/dpkg-query-version-rdma-core44-debian12.txt": parse_stack_version,
}


def test_every_hostprobe_capture_is_read_above() -> None:
    assert capture_names("hostprobe/*.txt") == sorted(READERS)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(READERS)),
    before=st.lists(NOISE, max_size=4),
    after=st.lists(NOISE, max_size=4),
)
def test_warning_lines_around_the_output_change_only_the_notes(name: str, before: list[str], after: list[str]) -> None:
    # the tool prints its output in one write: stderr lines come before or after it, never inside a JSON array
    parse = READERS[name]
    body = read_capture(name).rstrip("\n")
    notes: list[str] = []
    assert parse("\n".join([*before, body, *after]), notes) == parse(body)
    assert noted(tuple(notes)) == shown([(0, t) for t in [*before, *after]])
