from __future__ import annotations

import pytest
from captures import read_capture
from diagtext import own

from ibprov.probes import ParseError
from ibprov.probes.iblinkinfo import LinkHint, PortLink, parse


def test_sim_default_mode_reads_every_port_of_every_node() -> None:
    info = parse(read_capture("sim/iblinkinfo-sim-v44.txt"))
    assert len(info.ports) == 3 * 36 + 4
    up = [p for p in info.ports if p.is_up]
    assert len(up) == 12  # 6 links, both ends
    assert {(p.width, p.lane_gbps, p.state, p.phys_state) for p in up} == {("4X", 25.78125, "Active", "LinkUp")}
    down = [p for p in info.ports if not p.is_up]
    assert {(p.state, p.phys_state, p.width, p.lane_gbps, p.remote) for p in down} == {
        ("Down", "Polling", None, None, None)
    }


def test_sim_default_mode_ca_and_switch_lines() -> None:
    ports = parse(read_capture("sim/iblinkinfo-sim-v44.txt")).ports
    node04 = ports[0]
    assert (node04.node_type, node04.guid, node04.description, node04.lid, node04.port) == (
        "CA",
        0x100007,
        "node04 mlx5_0",
        7,
        1,
    )
    assert node04.remote is not None
    assert (node04.remote.lid, node04.remote.port, node04.remote.description, node04.remote.guid) == (
        3,
        2,
        "Leaf2",
        None,
    )
    leaf2_spine = next(p for p in ports if p.description == "Leaf2" and p.port == 35)
    assert (leaf2_spine.node_type, leaf2_spine.guid, leaf2_spine.lid) == ("SW", 0x200001, 3)
    assert leaf2_spine.remote is not None
    assert (leaf2_spine.remote.lid, leaf2_spine.remote.port, leaf2_spine.remote.description) == (
        4,
        2,
        "Spine1",
    )


def test_could_be_hint_flags_every_sim_link_as_degraded() -> None:
    info = parse(read_capture("sim/iblinkinfo-sim-v44.txt"))
    assert len(info.degraded()) == 12
    assert {p.could_be for p in info.degraded()} == {
        LinkHint("12X", 53.125, False, "Could be 12X Could be 53.125 Gbps")
    }


def test_line_mode_agrees_with_default_mode_and_adds_remote_guids() -> None:
    lines = parse(read_capture("sim/iblinkinfo-l-sim-v44.txt")).ports
    default = parse(read_capture("sim/iblinkinfo-sim-v44.txt")).ports

    def key(p: PortLink) -> tuple[object, ...]:
        remote = (p.remote.lid, p.remote.port, p.remote.description) if p.remote else None
        return (p.description, p.lid, p.port, p.state, p.lane_gbps, remote)

    assert sorted(map(key, lines), key=repr) == sorted(map(key, default), key=repr)
    node04 = lines[0]
    assert (node04.node_type, node04.guid, node04.description) == (None, 0x100007, "node04 mlx5_0")
    assert node04.remote is not None
    assert node04.remote.guid == 0x200001
    spine_port = next(p for p in lines if p.description == "Spine1" and p.port == 1)
    assert spine_port.remote is not None
    assert spine_port.remote.guid == 0x200000


def test_real_edr_switch_and_hosts_at_full_speed() -> None:
    info = parse(read_capture("iblinkinfo/edr100-sb7700-truncated-at-port18.txt", not_output=1))
    assert len(info.ports) == 2 + 18
    assert info.degraded() == ()
    n02 = info.ports[0]
    assert (n02.guid, n02.description, n02.lid, n02.width, n02.lane_gbps) == (
        0xEC0D9A03003D62BE,
        "n02 HCA-1",
        4,
        "4X",
        25.78125,
    )
    switch_ports = [p for p in info.ports if p.node_type == "SW"]
    assert {p.guid for p in switch_ports} == {0x506B4B0300820910}
    assert {p.description for p in switch_ports} == {"MF0;SB7700:MSB7700/U1"}
    assert [p.port for p in switch_ports if p.is_up] == [17, 18]
    port18 = switch_ports[-1]
    assert port18.remote is not None
    assert (port18.remote.lid, port18.remote.port, port18.remote.description) == (1, 1, "n01 HCA-1")


def test_shell_prompt_in_a_capture_is_a_note() -> None:
    with_prompt = parse(read_capture("iblinkinfo/edr100-sb7700-truncated-at-port18.txt"))
    assert with_prompt.notes == ("line 1: [root@n01 HPL]# iblinkinfo",)
    without = parse(read_capture("iblinkinfo/edr100-sb7700-truncated-at-port18.txt", not_output=1))
    assert with_prompt.ports == without.ports


def test_own_sdr_capture_names_the_better_speed() -> None:
    info = parse(own("iblinkinfo/1sw2hca-sdr.txt"))
    assert len(info.ports) == 10
    hca1 = info.ports[0]
    assert (hca1.lane_gbps, hca1.width) == (2.5, "4X")
    assert hca1.could_be == LinkHint("12X", 10.0, False, "Could be 12X Could be 10.0 Gbps")


SYNTHETIC = (
    "Switch: 0x0000000000000abc big switch:\n"
    "           7  101[ 3] ==( 4X      10.0 Gbps (FDR10) Active/  LinkUp) (HOQ:16 VL_Stall:7)==>"
    '      9    1[  ] "h" (Could be FDR10)\n'
    '           7  102[  ] ==( 2X        106.25 Gbps Initialize/  LinkUp)==>    "Port not available"\n'
    '           7  103[  ] ==(              Down/Disabled)==>             [  ] "" ( )\n'
    "Router: rtr one:\n"
    "      0x0000000000000def     12    1[  ] ==( 4X        53.125 Gbps  Armed/  LinkUp)==>"
    '     13    2[  ] "x" (Could be 12X )\n'
)


def test_fdr10_missing_peer_disabled_port_and_router() -> None:
    first, second, third, router = parse(SYNTHETIC).ports
    assert (first.port, first.ext_port, first.lane_gbps, first.fdr10) == (101, 3, 10.0, True)
    assert first.could_be == LinkHint(None, 10.0, True, "Could be FDR10")
    assert (second.state, second.width, second.lane_gbps, second.remote, second.peer_missing) == (
        "Initialize",
        "2X",
        106.25,
        None,
        True,
    )
    assert (third.state, third.phys_state, third.is_up) == ("Down", "Disabled", False)
    assert (router.node_type, router.guid, router.state) == ("RT", 0xDEF, "Armed")
    assert router.could_be == LinkHint("12X", None, False, "Could be 12X")


def test_port_line_before_any_header_is_an_error() -> None:
    text = '      0x0000000000100007      7    1[  ] ==(                Down/ Polling)==>    [  ] "" ( )\n'
    with pytest.raises(ParseError, match="line 1: port line before any node header"):
        parse(text)


def test_unreadable_remote_part_is_an_error() -> None:
    text = "CA: h:\n      0x0000000000100007      7    1[  ] ==(                Down/ Polling)==>  ???\n"
    with pytest.raises(ParseError, match="line 2: cannot parse the remote port"):
        parse(text)
