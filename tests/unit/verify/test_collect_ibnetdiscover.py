from __future__ import annotations

import pytest
from captures import read_capture

from ibprov.probes import ParseError
from ibprov.probes.ibnetdiscover import Fabric, LinkEnd, parse


def end_key(end: LinkEnd) -> tuple[int | None, int]:
    """A mode-independent identity: CA ports by port GUID, switch ports by switch GUID + port."""
    if end.type == "CA":
        return (end.port_guid, end.port)
    return (end.node_guid if end.node_guid is not None else end.port_guid, end.port)


def link_set(fabric: Fabric) -> set[tuple[frozenset[tuple[int | None, int]], str | None, str | None]]:
    return {(frozenset((end_key(li.a), end_key(li.b))), li.width, li.speed) for li in fabric.links}


def test_sim_topology_file_has_every_node_and_each_link_once() -> None:
    fabric = parse(read_capture("sim/ibnetdiscover-sim-v44.txt"))
    assert sorted(n.type for n in fabric.nodes) == ["CA"] * 4 + ["SW"] * 3
    assert len(fabric.links) == 6
    assert {(li.width, li.speed) for li in fabric.links} == {("4x", "EDR")}
    leaf2 = fabric.node(0x200001)
    assert leaf2 is not None
    assert (leaf2.description, leaf2.port_count, leaf2.lid, leaf2.port_guid) == ("Leaf2", 36, 3, 0x200001)
    node04 = fabric.node(0x100006)
    assert node04 is not None
    assert (node04.type, node04.description, node04.port_count) == ("CA", "node04 mlx5_0", 1)
    assert [(p.number, p.guid, p.lid) for p in node04.ports] == [(1, 0x100007, 7)]


def test_sim_topology_file_links_carry_both_ends() -> None:
    fabric = parse(read_capture("sim/ibnetdiscover-sim-v44.txt"))
    to_node03 = next(li for li in fabric.links if 0x100004 in (li.a.node_guid, li.b.node_guid))
    switch_end, ca_end = sorted((to_node03.a, to_node03.b), key=lambda e: e.type != "SW")
    assert (switch_end.node_guid, switch_end.port, switch_end.lid) == (0x200001, 1, 3)
    assert (ca_end.node_guid, ca_end.port, ca_end.port_guid, ca_end.lid) == (0x100004, 1, 0x100005, 6)
    spine_leaf1 = [li for li in fabric.links if {li.a.node_guid, li.b.node_guid} == {0x200000, 0x200002}]
    assert len(spine_leaf1) == 1
    assert {(e.node_guid, e.port) for e in (spine_leaf1[0].a, spine_leaf1[0].b)} == {
        (0x200000, 35),
        (0x200002, 1),
    }


def test_full_mode_adds_the_extra_fields_and_changes_nothing_else() -> None:
    plain = parse(read_capture("sim/ibnetdiscover-sim-v44.txt"))
    full = parse(read_capture("sim/ibnetdiscover-f-sim-v44.txt"))
    assert link_set(full) == link_set(plain)
    assert {li.extra for li in full.links} == {(("s", 1), ("w", 2), ("v", 4))}
    assert {li.extra for li in plain.links} == {()}


def test_ports_mode_finds_the_same_links_as_the_topology_file() -> None:
    ports = parse(read_capture("sim/ibnetdiscover-p-sim-v44.txt"))
    assert link_set(ports) == link_set(parse(read_capture("sim/ibnetdiscover-sim-v44.txt")))
    assert all(li.a.node_guid is None and li.b.node_guid is None for li in ports.links)
    switches = [n for n in ports.nodes if n.type == "SW"]
    assert sorted((n.port_guid, n.lid, n.description) for n in switches) == [
        (0x200000, 2, "Leaf1"),
        (0x200001, 3, "Leaf2"),
        (0x200002, 4, "Spine1"),
    ]
    assert all(n.guid is None and n.port_count is None for n in ports.nodes)


def test_list_mode_gives_nodes_without_links() -> None:
    fabric = parse(read_capture("sim/ibnetdiscover-l-sim-v44.txt"))
    assert fabric.links == ()
    assert len(fabric.nodes) == 7
    leaf1 = fabric.node(0x200000)
    assert leaf1 is not None
    assert (leaf1.type, leaf1.port_count, leaf1.description) == ("SW", 36, "Leaf1")


def test_mlnx_full_mode_hdr_fabric_with_e_field() -> None:
    fabric = parse(read_capture("ibnetdiscover/hdr-full-f-faked-superbench.txt"))
    assert sorted(n.type for n in fabric.nodes) == ["CA"] * 10 + ["SW"] * 8
    assert len(fabric.links) == 18
    assert {(li.width, li.speed) for li in fabric.links} == {("4x", "HDR")}
    spine = fabric.node(0x0FF08C43213B3F30)
    assert spine is not None
    assert (spine.port_count, spine.lid, spine.description) == (
        41,
        387,
        "MF0;rmd70-0101-0908-01ib1-A:MCS8500/S01/U1",
    )
    aggregation = next(li for li in fabric.links if li.b.node_guid == 0x0FF08C43213B3F38)
    assert (aggregation.a.port, aggregation.b.port_guid, aggregation.b.lid) == (41, 0xFF08C43213B3F38, 2152)
    assert aggregation.extra == (("s", 4), ("w", 2), ("v", 2), ("e", 4))
    host = fabric.node(0x1C34DA03005BACA4)
    assert host is not None
    assert [(p.number, p.guid, p.lid) for p in host.ports] == [(1, 0x1C34DA03005BACA4, 1294)]


def test_edr_ports_mode_skips_unconnected_ports_but_keeps_their_switch() -> None:
    fabric = parse(read_capture("ibnetdiscover/edr-ports-p-mode-excerpt-treydock.txt"))
    assert len(fabric.links) == 4
    uplink = next(li for li in fabric.links if li.a.type == li.b.type == "SW")
    assert {(e.port_guid, e.port, e.lid) for e in (uplink.a, uplink.b)} == {
        (0x7CFE9003009CE5B0, 1, 1719),
        (0x7CFE900300B07320, 1, 1516),
    }
    unconnected = fabric.node(0x08C0EB0300ADD20E)
    assert unconnected is not None
    assert (unconnected.type, unconnected.lid, unconnected.description) == ("SW", 1781, "ib-i7l2s01")
    assert not any(e.port in (37, 80) for li in fabric.links for e in (li.a, li.b))  # '4x ???', '4x SDR' lines


def test_hdr_ports_mode_keeps_descriptions_verbatim() -> None:
    fabric = parse(read_capture("ibnetdiscover/hdr-ports-p-mode-excerpt-edited-treydock.txt"))
    assert len(fabric.links) == 3
    assert {li.speed for li in fabric.links} == {"HDR"}
    descriptions = {e.description for li in fabric.links for e in (li.a, li.b)}
    assert {"5FB0405-leaf-IB01 ", " 5FB0406-spine-IB03 ", "worker20 mlx5_3"} <= descriptions


def test_redacted_capture_fails_on_the_first_unreadable_line() -> None:
    with pytest.raises(ParseError) as caught:
        parse(read_capture("ibnetdiscover/ndr200-2x-ndr-qm9700-partial-redacted.txt", not_output=1))
    assert (caught.value.tool, caught.value.line_no) == ("ibnetdiscover", 8)
    assert caught.value.line == "sysimgguid=0x9c05<redacted>"
    assert str(caught.value) == (
        "ibnetdiscover: line 8: expected a 'NAME=0xHEX' node header line, got: 'sysimgguid=0x9c05<redacted>'"
    )


def test_ndr200_two_lane_links_from_a_partial_capture() -> None:
    # The capture hides GUID digits as "<redacted>" and cuts off with "...omitted": put distinct hex
    # digits back (one value per line, so the five hosts stay distinct) and drop the cut marker.
    text = read_capture("ibnetdiscover/ndr200-2x-ndr-qm9700-partial-redacted.txt", not_output=1)
    restored = "\n".join(
        line.replace("<redacted>", f"{no:012x}") for no, line in enumerate(text.split("\n")) if line != "...omitted"
    )
    fabric = parse(restored)
    assert len(fabric.links) == 5
    assert {(li.width, li.speed) for li in fabric.links} == {("2x", "NDR")}
    (switch,) = fabric.nodes  # the hosts' own blocks are not in the excerpt
    assert (switch.port_count, switch.lid, switch.description) == (
        129,
        1,
        "MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1",
    )
    assert sorted((li.a.port, li.b.lid, li.b.description) for li in fabric.links)[0] == (
        1,
        22,
        "tj01-4090-node005 mlx5_2",
    )


SYNTHETIC = """\
#
# Topology file: generated on Mon Jan  1 00:00:00 2024
#

vendid=0x2c9
devid=0xd2f2
sysimgguid=0xa
switchguid=0xa(b)
Switch\t129 "S-000000000000000a"\t\t# "spine" enhanced port 0 lid 7 lmc 0
[100]\t"H-0000000000000010"[1](11) \t\t# "host a" lid 20 4x???
[128]\t"H-0000000000000012"[1](13) \t\t# "host b" lid 21 ?????
[129]\t"S-000000000000000c"[3]\t\t# "leaf" lid 9 4xXDR
"""


def test_unknown_tokens_high_port_numbers_and_xdr() -> None:
    fabric = parse(SYNTHETIC)
    (spine,) = fabric.nodes
    assert (spine.guid, spine.port_guid, spine.lid) == (0xA, 0xB, 7)
    by_port = {li.a.port: li for li in fabric.links}
    assert sorted(by_port) == [100, 128, 129]
    assert (by_port[100].width, by_port[100].speed) == ("4x", None)
    assert (by_port[128].width, by_port[128].speed) == (None, None)
    assert (by_port[129].width, by_port[129].speed, by_port[129].b.port) == ("4x", "XDR", 3)
    assert by_port[100].b.port_guid == 0x11


def test_ports_mode_unknown_speed_on_a_connected_port() -> None:
    line = "SW  2052 137 0x506b4b03005c2740 4x ??? - CA  1432  1 0x506b4b0300cc02a6 ( 'sw' - 'p0001 HCA-1' )"
    (link,) = parse(line).links
    assert (link.a.port, link.width, link.speed, link.b.lid) == (137, "4x", None, 1432)


def test_port_line_without_a_node_is_an_error() -> None:
    message = r"^ibnetdiscover: line 2: a port line before any Switch/Ca/Rt node line: '\[1\]"
    with pytest.raises(ParseError, match=message):
        parse('# comment\n[1]\t"S-000000000000000c"[3]\t\t# "leaf" lid 9 4xEDR\n')
