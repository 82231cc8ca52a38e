from __future__ import annotations

import pytest
from diagtext import own, shared

from ibprov.verify.collect import ParseError
from ibprov.verify.collect.saquery import McMemberRecord, PathRecord, SmPortRecord, parse


def test_node_record() -> None:
    (node,) = parse(shared("sim/saquery-noderecords-sim-v44.txt")).nodes
    assert (node.lid, node.type, node.node_type, node.num_ports) == (1, "CA", "Channel Adapter", 1)
    assert (node.node_guid, node.port_guid, node.sys_guid, node.port_num) == (0x100000, 0x100001, 0x100000, 1)
    assert node.description == "node01 mlx5_0"


def test_multicast_group_records() -> None:
    result = parse(shared("sim/saquery-mcmr-sim-v44.txt"))
    assert result.nodes == ()
    assert result.mc_members == (
        McMemberRecord("group", "ff12:401b:8010::ffff:ffff", 0xC001, 0x84, 0x83, 0x8010, 0),
        McMemberRecord("group", "ff12:401b:ffff::ffff:ffff", 0xC000, 0x85, 0x87, 0xFFFF, 0),
    )


def test_multicast_member_record() -> None:
    (member,) = parse(own("saquery/mcmember-member-dump.txt")).mc_members
    assert (member.kind, member.mgid, member.mlid, member.port_gid) == (
        "member",
        "ff12:401b:ffff::ffff:ffff",
        0xC000,
        "::",
    )
    assert (member.scope_state, member.node_description, member.mtu, member.sl) == (
        0x20,
        "<unknown>",
        None,
        None,
    )


def test_pkey_table_records_keep_the_membership_bit() -> None:
    switch_port0, switch_port1 = parse(shared("sim/saquery-pkeytablerecord-sim-v44.txt")).pkey_tables
    assert (switch_port0.lid, switch_port0.port, switch_port0.block) == (2, 0, 0)
    assert len(switch_port0.pkeys) == 32
    assert switch_port0.nonzero == (0xFFFF,)
    assert (switch_port1.port, switch_port1.nonzero) == (1, (0xFFFF, 0x8010, 0x8020))


def test_path_records() -> None:
    paths = parse(shared("sim/saquery-pathrecord-sim-v44.txt")).paths
    assert len(paths) == 3
    assert paths[1] == PathRecord("fe80::10:1", "fe80::20:0", 1, 2, 0xFFFF, 0, 0x83, 0x83)


def test_issm_ports() -> None:
    result = parse(own("saquery/issm-ports.txt"))
    assert result.sm_ports == (SmPortRecord(1, 1, 1, 1, 0x50C04A, True),)


def test_issm_disabled_section_marks_its_records() -> None:
    text = (
        "IsSM ports\n\nIsSMdisabled ports\nPortInfoRecord dump:\n"
        "\t\tEndPortLid..............9\n\t\tPortNum.................1\n"
    )
    (port,) = parse(text).sm_ports
    assert (port.lid, port.port, port.is_sm, port.base_lid) == (9, 1, False, None)


def test_sa_error_is_reported() -> None:
    with pytest.raises(ParseError, match="line 1: the SA returned an error"):
        parse("ERROR: Query result returned 0x0200,  SA(SA_ERR_REQ_INVALID)\n")


def test_record_without_a_required_field_names_its_header_line() -> None:
    text = "NodeRecord dump:\n\t\tlid.....................1\n\nNodeRecord dump:\n\t\tnode_guid.....0x1\n"
    with pytest.raises(ParseError, match=r"^saquery: line 1: NodeRecord without node_type: 'NodeRecord dump:'$"):
        parse(text)


def test_line_outside_a_record_is_an_error() -> None:
    with pytest.raises(ParseError, match="line 1: cannot parse"):
        parse("lid.....................1\n")
