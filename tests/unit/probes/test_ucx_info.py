"""ucx_info -d of every UCX layout on real captures (tests/fixtures/ucx_info, each with its source and version):
the (memory domain, transport, device) triples of each; lines that are not ucx_info's become notes, whatever
they are and wherever they come; output cut short or not ucx_info's is an error quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibprov.probes import ucx_info
from ibprov.probes._text import ParseError
from ibprov.probes.ucx_info import UcxInfo, UcxResource

CAPTURES = capture_names("ucx_info/*.txt")
VERBS5 = ("dc_mlx5", "rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5")


def parsed(name: str) -> UcxInfo:
    return ucx_info.parse(read_capture(f"ucx_info/{name}"))


def triples(info: UcxInfo) -> list[tuple[str, str, str]]:
    return [(r.memory_domain, r.transport, r.device) for r in info.resources]


def test_ucx_1_6_one_transport_line_for_several_devices() -> None:
    info = parsed("ucx1.6-ompi4.0.2-centos7.6-mlx5.txt")
    assert triples(info) == [
        ("posix", "mm", "posix"),
        ("sysv", "mm", "sysv"),
        ("self", "self", "self"),
        ("tcp", "tcp", "eth2"),
        ("tcp", "tcp", "ib0"),  # the second Device line under the one "Transport: tcp"
        *[("ib/mlx5_0", t, "mlx5_0:1") for t in ("rc", "rc_mlx5", "dc_mlx5", "ud", "ud_mlx5", "cm")],
        ("cma", "cma", "cma"),
        ("knem", "knem", "knem"),
    ]
    assert info.idle_domains == ("rdmacm",)
    assert info.transports_on("mlx5_0:1") == ("rc", "rc_mlx5", "dc_mlx5", "ud", "ud_mlx5", "cm")
    assert len(info.verbs) == 6
    assert info.notes == ()


def test_ucx_1_9_connection_managers_and_idle_roce_devices() -> None:
    info = parsed("ucx1.9.0-centos8.1-cx5.txt")
    assert triples(info) == [
        ("posix", "posix", "memory"),
        ("sysv", "sysv", "memory"),
        ("self", "self", "memory"),
        ("tcp", "tcp", "eno1"),
        ("tcp", "tcp", "ib0"),
        *[("mlx5_0", t, "mlx5_0:1") for t in ("rc_verbs", "rc_mlx5", "dc_mlx5", "ud_verbs", "ud_mlx5")],
        ("cma", "cma", "memory"),
    ]
    assert info.idle_domains == ("sockcm", "i40iw0", "i40iw1", "rdmacm")


def test_ucx_1_13_without_rdma() -> None:
    info = parsed("ucx1.13.1-debian12-no-rdma.txt")
    assert info.transports == ("self", "tcp", "sysv", "posix", "cma")
    assert info.verbs == ()


def test_ucx_1_18_of_debian_13_without_rdma() -> None:
    info = parsed("ucx1.18.1-debian13-no-rdma.txt")
    assert info.transports == ("self", "tcp", "sysv", "posix", "cma")
    assert tuple(r.device for r in info.resources if r.transport == "tcp") == ("lo",)
    assert info.verbs == ()
    assert info.idle_domains == ()
    assert info.notes == ()


@pytest.mark.parametrize(
    ("name", "domain", "device", "tcp", "idle"),
    [
        ("ucx1.15-hpcx2.15-azure-ndv5.txt", "mlx5_ib0", "mlx5_ib0:1", ("ib0", "lo", "eth0"), ()),
        ("ucx1.16.0-rhel8.9-cx6-partial.txt", "mlx5_0", "mlx5_0:1", ("ib0", "lo"), ("mlx5_1",)),
        ("ucx1.17.0-azure-ubuntu24.04.txt", "mlx5_0", "mlx5_0:1", ("eth0", "lo"), ("mlx5_0",)),
    ],
)
def test_ucx_1_15_and_newer(name: str, domain: str, device: str, tcp: tuple[str, ...], idle: tuple[str, ...]) -> None:
    info = parsed(name)
    assert [(r.memory_domain, r.transport, r.device) for r in info.verbs] == [(domain, t, device) for t in VERBS5]
    assert tuple(r.device for r in info.resources if r.transport == "tcp") == tcp
    assert info.idle_domains == idle
    assert info.notes == ()


def test_every_capture_is_tested_above() -> None:
    assert [n.removeprefix("ucx_info/") for n in CAPTURES] == [
        "ucx1.13.1-debian12-no-rdma.txt",
        "ucx1.15-hpcx2.15-azure-ndv5.txt",
        "ucx1.16.0-rhel8.9-cx6-partial.txt",
        "ucx1.17.0-azure-ubuntu24.04.txt",
        "ucx1.18.1-debian13-no-rdma.txt",
        "ucx1.6-ompi4.0.2-centos7.6-mlx5.txt",
        "ucx1.9.0-centos8.1-cx5.txt",
    ]


WARNING = (
    "[1700000000.123456] [node01:1234 :0]     ucp_context.c:1234 UCX  WARN  network device 'mlx5_2:1' is not available"
)


def test_a_ucx_warning_before_the_old_layout_is_a_note() -> None:
    body = read_capture("ucx_info/ucx1.6-ompi4.0.2-centos7.6-mlx5.txt")
    info = ucx_info.parse(WARNING + "\n" + body)
    assert info.notes == (f"line 1: {WARNING}",)
    assert replace(info, notes=()) == parsed("ucx1.6-ompi4.0.2-centos7.6-mlx5.txt")


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("bash: ucx_info: command not found", 1, "not ucx_info -d output: expected '# Memory domain:'"),
        (WARNING + "\nSegmentation fault (core dumped)", 1, "not ucx_info -d output"),
        ("", 0, "no transport listed"),
        ("#\n# Memory domain: tcp\n#     Component: tcp\n#\n#   Transport: tcp\n#\n", 5, "cut short: the output ends"),
        ("# Memory domain: self\n#   Transport: self\n#      Device: memory\n# Memory domain: tcp", 4, "cut short"),
        ("#   Transport: rc\n#   Transport: ud\n#   Device: mlx5_0:1", 1, "transport rc has no Device line"),
        ("#\n#         Device: mlx5_0:1", 2, "expected a '# Transport:' line before this Device line"),
    ],
)
def test_what_is_not_whole_ucx_info_output_is_an_error_quoting_its_line(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        ucx_info.parse(text)
    assert caught.value.line_no == line_no


# ------------------------------------------------------------------ any warning anywhere changes only the notes --

_HOST = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
_TEXT = (
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=60).map(str.strip).filter(bool)
)
_UCX_LOG = st.builds(
    "[{}.{:06d}] [{}:{} :{}] {:>20}:{:<4} UCX  {:<5} {}".format,
    st.integers(1_500_000_000, 1_900_000_000),
    st.integers(0, 999_999),
    _HOST,
    st.integers(1, 4_000_000),
    st.integers(0, 64),
    st.sampled_from(["ucp_context.c", "ib_device.c", "tcp_iface.c", "parser.c", "topo.c", "debug.c"]),
    st.integers(1, 3000),
    st.sampled_from(["WARN", "ERROR", "DIAG", "INFO", "DEBUG"]),
    _TEXT,
)
_OTHER = st.sampled_from(
    [
        "bash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)",
        "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': cannot open shared object file",
        "mlx5: ib0: got completion with error:",
        "WARNING: this node is reserved for maintenance",
        "ucx_info: /lib64/libtinfo.so.5: no version information available",
        "   ",
        "",
    ]
)
_NOISE = st.one_of(_UCX_LOG, _OTHER)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(CAPTURES), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = ucx_info.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), _NOISE), max_size=8), label="inserts")
    noisy = list(lines)
    for at, text in sorted(inserts, key=lambda i: i[0], reverse=True):
        noisy.insert(at, text)
    info = ucx_info.parse("\n".join(noisy))
    assert replace(info, notes=()) == clean
    shown = [t.strip() for _, t in inserts if t.strip()]
    assert sorted(n.split(": ", 1)[1] for n in info.notes) == sorted(shown)


def test_a_resource_knows_verbs() -> None:
    assert UcxResource("mlx5_0", "rc_mlx5", "mlx5_0:1").verbs
    assert not UcxResource("tcp", "tcp", "ib0").verbs
