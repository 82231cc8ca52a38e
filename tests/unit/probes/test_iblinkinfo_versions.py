"""iblinkinfo of every layout in the field, on real captures (tests/fixtures/iblinkinfo and tests/fixtures/sim,
each with its source and version on its first line): the ports, widths, lane rates, states and peers read
from each; lines that are not iblinkinfo's become notes, whatever they are and wherever they come; a port
line or header that does not read, output cut short or not iblinkinfo's is an error quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, insert, noted, shown

from ibprov.probes import iblinkinfo
from ibprov.probes._text import ParseError
from ibprov.probes.iblinkinfo import LinkHint, LinkInfo, PortLink

PORT_LINES = "iblinkinfo/port-lines-qdr-ddr-fdr10-ruby-comments-partial.txt"  # no header: read line by line
WHOLE = [n for n in capture_names("iblinkinfo/*.txt", "sim/iblinkinfo*.txt") if n != PORT_LINES]


def parsed(name: str) -> LinkInfo:
    return iblinkinfo.parse(read_capture(name))


def port(info: LinkInfo, description: str, number: int) -> PortLink:
    return next(p for p in info.ports if p.description == description and p.port == number)


def test_ddr_connectx_pair_back_to_back_archwiki() -> None:
    # two MT25408 ConnectX (mlx4) cabled to each other, DDR: 4X at 5.0 Gb/s a lane
    info = parsed("iblinkinfo/ddr-mt25408-back-to-back-archwiki.txt")
    first, second = info.ports
    assert (first.node_type, first.guid, first.description, first.lid) == (
        "CA",
        0x0002C90300002779,
        "MT25408 ConnectX Mellanox Technologies",
        4,
    )
    assert (first.width, first.lane_gbps, first.state, first.phys_state) == ("4X", 5.0, "Active", "LinkUp")
    assert first.remote is not None
    assert (first.remote.lid, first.remote.port, first.remote.description) == (3, 1, "kvm mlx4_0")
    assert second.remote is not None
    assert (second.lid, second.remote.lid) == (3, 4)
    assert info.notes == ()


def test_qdr_connectx2_infiniscale_iv_centos() -> None:
    # CentOS, ConnectX-2 fw 2.9.1000, Infiniscale-IV: 4-space indented CA port lines reading 'Active/ LinkUp'
    info = parsed("iblinkinfo/qdr-cx2-infiniscale4-centos.txt")
    assert info.notes == ("line 1: $ iblinkinfo",)
    assert len(info.ports) == 4 + 36
    assert {(p.width, p.lane_gbps) for p in info.ports if p.is_up} == {("4X", 10.0)}
    assert sum(p.is_up for p in info.ports) == 8
    host = info.ports[0]
    assert (host.guid, host.description, host.lid, host.state, host.phys_state) == (
        0x0002C903000D81F9,
        "centos-data-200 HCA-1",
        4,
        "Active",
        "LinkUp",
    )
    assert host.remote is not None
    assert (host.remote.lid, host.remote.port) == (2, 3)
    switch_port = port(info, "Infiniscale-IV Mellanox Technologies", 4)
    assert (switch_port.node_type, switch_port.guid, switch_port.lid) == ("SW", 0x0002C9020046C588, 2)
    assert switch_port.remote is not None
    assert switch_port.remote.description == "kube-node-100 HCA-1"
    assert port(info, "Infiniscale-IV Mellanox Technologies", 36).phys_state == "Polling"


def test_qdr_connectx3_is5035_snippet_with_ellipses() -> None:
    # LegoOS README: ConnectX-3 hosts on an IS5035, between '...' lines the README added (notes)
    info = parsed("iblinkinfo/qdr-cx3-is5035-legoos-snippet.txt")
    assert info.notes == ("line 1: ...", "line 10: ...")
    assert [(p.description, p.lid, p.remote.port if p.remote else None) for p in info.ports] == [
        ("wuklab00 mlx4_0", 8, 1),
        ("wuklab01 mlx4_0", 27, 2),
        ("wuklab02 mlx4_0", 24, 3),
    ]
    assert {p.lane_gbps for p in info.ports} == {10.0}


def test_old_port_lines_nine_column_speed_and_fdr10() -> None:
    # infiniband-diags 1.5 ('%3s %9s': '( 4X 10.0 Gbps Active/  LinkUp)') and 1.6 ('10.0 Gbps (FDR10)')
    lines = read_capture(PORT_LINES).strip().split("\n")
    links = [iblinkinfo.parse_port(line, node_type="SW", guid=None, description="sw") for line in lines]
    assert [(p.lid, p.port, p.width, p.lane_gbps, p.fdr10, p.state) for p in links if p] == [
        (4, 1, "4X", 10.0, False, "Active"),
        (1, 35, "4X", 5.0, False, "Active"),
        (223, 33, "4X", 10.0, True, "Active"),
    ]
    assert [p.remote.description for p in links if p and p.remote] == [
        "MF0;ib0-is5200-a2-bip-m:IS5200/L07/U1",
        "Voltaire 4036E IO ib0gw-a2-001-m",
        "gpfs-a4-005-p HCA-1",
    ]
    with pytest.raises(ParseError, match="line 1: port line before any node header"):
        iblinkinfo.parse(read_capture(PORT_LINES))


def test_fdr_line_mode_connectx3_sx6036() -> None:
    # iblinkinfo -l (version not posted): FDR, 4X at 14.0625 Gb/s a lane, the peer's GUID on the line
    (only,) = parsed("iblinkinfo/fdr-cx3-sx6036-line-mode-docstring-partial.txt").ports
    assert (only.node_type, only.guid, only.description, only.lid, only.port) == (
        None,
        0xF452140300F55051,
        "ib-test-7 mlx4_0",
        37,
        1,
    )
    assert (only.width, only.lane_gbps, only.fdr10, only.state, only.phys_state) == (
        "4X",
        14.0625,
        False,
        "Active",
        "LinkUp",
    )
    assert only.remote is not None
    assert (only.remote.guid, only.remote.lid, only.remote.port, only.remote.description) == (
        0xF45214030067C630,
        5,
        16,
        "MF0;switch-e1be74:SX6036/U1",
    )


def test_hdr_quantum_mlnx_ofed_5_2() -> None:
    # MLNX_OFED 5.2 (HPC-X 2.9.0 build, RHEL 8.2), ConnectX-6 on one Quantum HDR switch
    info = parsed("iblinkinfo/hdr-quantum-cx6-mlnx-ofed5.2-rhel8.2.txt")
    assert info.notes == ("line 1: [root@cu02 ~]# iblinkinfo",)
    assert len(info.ports) == 22 + 41
    up = [p for p in info.ports if p.is_up]
    assert len(up) == 44
    assert {(p.width, p.lane_gbps) for p in up} == {("4X", 53.125)}
    aggregation = next(p for p in info.ports if p.description == "Mellanox Technologies Aggregation Node")
    assert (aggregation.node_type, aggregation.guid, aggregation.lid) == ("CA", 0x0C42A103008982AC, 4)
    assert aggregation.remote is not None
    assert (aggregation.remote.lid, aggregation.remote.port) == (3, 41)
    last = port(info, "Quantum Mellanox Technologies", 41)
    assert (last.guid, last.lid) == (0x0C42A103008982A4, 3)
    assert info.degraded() == ()


def test_edr_links_below_hdr_on_a_quantum_switch_mlnx_ofed_4() -> None:
    # MLNX_OFED 4.x, iblinkinfo -S of one switch: four EDR hosts flagged '( Could be 53.125 Gbps)'
    info = parsed("iblinkinfo/hdr-edr-quantum-switch-S-mlnx-ofed4.txt")
    assert info.notes == (
        "line 1: root@ubuntu:/home/ubuntu# iblinkinfo -S 0x08c0eb0300add04e",
        "line 44: root@ubuntu:/home/ubuntu#",
    )
    assert len(info.ports) == 41
    assert [p.port for p in info.degraded()] == [21, 22, 23, 24]
    assert {p.could_be for p in info.degraded()} == {LinkHint(None, 53.125, False, "Could be 53.125 Gbps")}
    node3 = port(info, "Quantum Mellanox Technologies", 21)
    assert (node3.lane_gbps, node3.remote.description if node3.remote else None) == (25.78125, "node3 HCA-2")
    uplink = port(info, "Quantum Mellanox Technologies", 40)
    assert uplink.remote is not None
    assert (uplink.lane_gbps, uplink.remote.lid, uplink.remote.port) == (53.125, 4, 40)


@pytest.mark.parametrize(
    ("name", "ports", "up", "lanes"),
    [
        # EDR SB7700, xCAT cluster 2019 (version not posted)
        ("iblinkinfo/edr100-sb7700-truncated-at-port18.txt", 20, 4, {25.78125}),
        # infiniband-diags 44.0 (rdma-core 44, Debian 12), ibsim: default and -l
        ("sim/iblinkinfo-sim-v44.txt", 112, 12, {25.78125}),
        ("sim/iblinkinfo-l-sim-v44.txt", 112, 12, {25.78125}),
    ],
)
def test_newer_captures(name: str, ports: int, up: int, lanes: set[float]) -> None:
    info = parsed(name)
    assert (len(info.ports), sum(p.is_up for p in info.ports)) == (ports, up)
    assert {p.lane_gbps for p in info.ports if p.is_up} == lanes


def test_every_capture_is_tested_above() -> None:
    assert capture_names("iblinkinfo/*.txt", "sim/iblinkinfo*.txt") == [
        "iblinkinfo/ddr-mt25408-back-to-back-archwiki.txt",
        "iblinkinfo/edr100-sb7700-truncated-at-port18.txt",
        "iblinkinfo/fdr-cx3-sx6036-line-mode-docstring-partial.txt",
        "iblinkinfo/hdr-edr-quantum-switch-S-mlnx-ofed4.txt",
        "iblinkinfo/hdr-quantum-cx6-mlnx-ofed5.2-rhel8.2.txt",
        "iblinkinfo/port-lines-qdr-ddr-fdr10-ruby-comments-partial.txt",
        "iblinkinfo/qdr-cx2-infiniscale4-centos.txt",
        "iblinkinfo/qdr-cx3-is5035-legoos-snippet.txt",
        "sim/iblinkinfo-l-sim-v44.txt",
        "sim/iblinkinfo-sim-v44.txt",
    ]


# infiniband-diags 1.5.8's layout (src/iblinkinfo.c print_switch_header: "Switch 0x%016x %s:", switches only):
# not a capture, the source's printf's filled in
OLD_HEADER = (
    "Switch 0x0002c90200404ad8 MT47396 Infiniscale-III Mellanox Technologies:\n"
    '           2    1[  ] ==( 4X 5.0 Gbps Active/  LinkUp)==>       3    1[  ] "node1 HCA-1" ( )\n'
)


def test_infiniband_diags_1_5_switch_header_without_colon() -> None:
    (only,) = iblinkinfo.parse(OLD_HEADER).ports
    assert (only.node_type, only.guid, only.description, only.lane_gbps) == (
        "SW",
        0x0002C90200404AD8,
        "MT47396 Infiniscale-III Mellanox Technologies",
        5.0,
    )


UP = '==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    2[  ] "Leaf2" ( )'


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("bash: iblinkinfo: command not found", 1, "cannot parse: 'bash: iblinkinfo: command not found'; not"),
        ("CA: node04 mlx5_0:\nCA: node03 mlx5_0:\n", 1, "a node header with no port line under it"),
        ("CA: node04 mlx5_0:\n", 1, "cut short: the output ends before this node's port lines"),
        ("Switch: 0x00002000001 Leaf2\n", 1, "expected a node header"),
        (f"CA: n:\n      0x0000000000100007      7    1[  ] {UP[:30]}", 2, "expected a port line"),
        (f"CA: n:\n  garbage  7    1[  ] {UP}", 2, "expected '      0xGUID'"),
        (f"           3    1[  ] {UP}", 1, "port line before any node header"),
    ],
)
def test_what_is_not_whole_iblinkinfo_output_is_an_error_quoting_its_line(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        iblinkinfo.parse(text)
    assert caught.value.line_no == line_no


def test_empty_output_is_no_port() -> None:
    assert iblinkinfo.parse("") == LinkInfo(())


# ------------------------------------------------------------------ any warning anywhere changes only the notes --

KERNEL = st.sampled_from(
    [
        "[  123.456] some log line",
        "[ 8812.003311] mlx5_core 0000:3b:00.0: mlx5_port_module_event: Port module event: module 0, Cable unplugged",
        "...",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(WHOLE), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = iblinkinfo.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), st.one_of(NOISE, KERNEL)), max_size=8))
    info = iblinkinfo.parse("\n".join(insert(lines, inserts)))
    assert replace(info, notes=()) == replace(clean, notes=())
    assert noted(info.notes) == sorted(shown(inserts) + noted(clean.notes))
