"""ibnetdiscover of every version in the field, on real captures (tests/fixtures/ibnetdiscover and
tests/fixtures/sim, each with its source and version on its first line): the nodes, links, widths and speeds
read from each; lines that are not ibnetdiscover's become notes, whatever they are and wherever they come; a
line of its own that does not read, output cut short or not ibnetdiscover's is an error quoting the line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noiselines import NOISE, insert, noted, shown

from ibprov.probes import ibnetdiscover
from ibprov.probes._text import ParseError
from ibprov.probes.ibnetdiscover import Fabric

VERSIONS = "ibnetdiscover/versions/"  # kept out of ibnetdiscover/*.txt: the discover and ibsim tests take those
# every capture the reader reads as it is (the NDR200 one hides its GUIDs: see test_ndr200_... below)
READABLE = [
    *capture_names("ibnetdiscover/versions/*.txt", "sim/ibnetdiscover*.txt"),
    "ibnetdiscover/edr-ports-p-mode-excerpt-treydock.txt",
    "ibnetdiscover/hdr-full-f-faked-superbench.txt",
    "ibnetdiscover/hdr-ports-p-mode-excerpt-edited-treydock.txt",
]
NDR = "ibnetdiscover/ndr200-2x-ndr-qm9700-partial-redacted.txt"


def parsed(name: str) -> Fabric:
    return ibnetdiscover.parse(read_capture(name))


def test_infiniband_diags_man_page_2007_sdr_fabric() -> None:
    # OFED 1.2-era infiniband-diags (the man page's example, 2007): '# Max of 3 hops discovered', a
    # 'Non-Chassis Nodes' line, a switch block without sysimgguid, 2-port InfiniHost CAs, 4xSDR and 1xSDR
    fabric = parsed(VERSIONS + "sdr-voltaire-infinihost-man-page-2007.txt")
    assert fabric.initiated_from == 0x0008F10403960558
    assert fabric.notes == ()
    isr = fabric.node(0x005442BA00003080)
    assert isr is not None
    assert (isr.type, isr.description, isr.port_count, isr.lid, isr.port_guid, isr.sysimgguid) == (
        "SW",
        "ISR9024 Voltaire",
        24,
        6,
        0x5442BA00003080,
        0x5442BA00003000,
    )
    sw6 = fabric.node(0x0008F10400410015)
    assert sw6 is not None
    assert (sw6.description, sw6.port_count, sw6.lid, sw6.sysimgguid) == ("SW-6IB4 Voltaire", 8, 3, None)
    host = fabric.node(0x0008F10403960558)
    assert host is not None
    assert [(p.number, p.guid, p.lid) for p in host.ports] == [(2, 0x8F1040396055A, 14), (1, 0x8F10403960559, 10)]
    assert sorted(n.type for n in fabric.nodes) == ["CA"] * 4 + ["SW"] * 2
    assert len(fabric.links) == 7  # 9 switch port lines, 2 of them the two switch-to-switch cables seen twice
    assert {li.speed for li in fabric.links} == {"SDR"}
    between = {(e.node_guid, e.port) for li in fabric.links for e in (li.a, li.b) if li.a.type == li.b.type == "SW"}
    assert between == {(0x5442BA00003080, 10), (0x8F10400410015, 1), (0x5442BA00003080, 6), (0x8F10400410015, 3)}


def test_voltaire_4036_qdr_ddr_partial_with_a_hash_in_the_description() -> None:
    # infiniband-diags 1.5 era (version not posted): 4xQDR and 4xDDR links, "Voltaire 4036 # v4036"
    fabric = parsed(VERSIONS + "qdr-ddr-voltaire4036-docstring-partial.txt")
    switch = fabric.node(0x0008F10500200134)
    assert switch is not None
    assert (switch.description, switch.port_count, switch.lid) == ("Voltaire 4036 # v4036", 36, 1)
    by_port = {li.a.port: li for li in fabric.links}
    assert {p: (li.b.description, li.b.lid, li.speed) for p, li in by_port.items()} == {
        1: ("larissa HCA-1", 2, "QDR"),
        2: ("triton HCA-1", 7, "DDR"),
        4: ("telesto HCA-1", 3, "DDR"),
        5: ("skoll HCA-1", 8, "DDR"),
    }
    assert by_port[1].b.port_guid == 0x117500007EA9B2
    telesto = fabric.node(0x001E0BFFFF4CAFC0)
    assert telesto is not None
    assert [(p.number, p.guid, p.lid) for p in telesto.ports] == [(1, 0x1E0BFFFF4CAFC1, 3)]


def test_xdr_router_of_a_quantum_3_system() -> None:
    # recent rdma-core/DOCA-OFED (version not posted): an 'Rt' node ('rtguid='), a 1xXDR link to its switch ASIC
    fabric = parsed(VERSIONS + "xdr-quantum3-router-docstring-partial.txt")
    router = fabric.node(0xB8E924030000B928)
    assert router is not None
    assert (router.type, router.description, router.port_count, router.sysimgguid) == (
        "RT",
        "MF0;mamba-2132:Q3400_RA/U2/RT",
        8,
        0xB8E924030000B900,
    )
    assert [(p.number, p.guid, p.lid) for p in router.ports] == [(2, 0xB8E924030000B929, 9)]
    ((link),) = fabric.links
    assert (link.width, link.speed, link.b.type, link.b.node_guid, link.b.port, link.b.lid) == (
        "1x",
        "XDR",
        "SW",
        0xB8E924030000B921,
        149,
        8,
    )


@pytest.mark.parametrize(
    ("name", "nodes", "links", "speeds"),
    [
        # infiniband_exporter's fixtures: EDR and HDR fabrics, -p mode (rdma-core, version not posted)
        ("ibnetdiscover/edr-ports-p-mode-excerpt-treydock.txt", 6, 4, {"EDR"}),
        ("ibnetdiscover/hdr-ports-p-mode-excerpt-edited-treydock.txt", 6, 3, {"HDR"}),
        # SuperBench's HDR topology file with MLNX_OFED's -f 'e=' field
        ("ibnetdiscover/hdr-full-f-faked-superbench.txt", 18, 18, {"HDR"}),
        # infiniband-diags 44.0 (rdma-core 44, Debian 12), ibsim: default, -f, -p, -l
        ("sim/ibnetdiscover-sim-v44.txt", 7, 6, {"EDR"}),
        ("sim/ibnetdiscover-f-sim-v44.txt", 7, 6, {"EDR"}),
        ("sim/ibnetdiscover-p-sim-v44.txt", 7, 6, {"EDR"}),
        ("sim/ibnetdiscover-l-sim-v44.txt", 7, 0, set()),
    ],
)
def test_newer_captures_nodes_links_and_speeds(name: str, nodes: int, links: int, speeds: set[str]) -> None:
    fabric = parsed(name)
    assert (len(fabric.nodes), len(fabric.links)) == (nodes, links)
    assert {li.speed for li in fabric.links} == speeds
    assert fabric.notes == ()


def test_ndr200_prompt_is_a_note_and_the_redacted_guid_an_error() -> None:
    # NDR200 2xNDR on an MQM9700 (2024): the post's shell prompt is read past, its "<redacted>" GUID is not
    text = read_capture(NDR)
    with pytest.raises(ParseError) as caught:
        ibnetdiscover.parse(text)
    assert (caught.value.line_no, caught.value.line) == (9, "sysimgguid=0x9c05<redacted>")
    restored = "\n".join(
        line.replace("<redacted>", f"{no:012x}") for no, line in enumerate(text.split("\n")) if line != "...omitted"
    )
    fabric = ibnetdiscover.parse(restored)
    assert fabric.notes == ("line 1: root@tj01-h20-node139:/# ibnetdiscover",)
    assert {(li.width, li.speed) for li in fabric.links} == {("2x", "NDR")}
    with_cut = ibnetdiscover.parse("\n".join(line.replace("<redacted>", "0") for line in text.split("\n")))
    assert with_cut.notes[-1].endswith(": ...omitted")


def test_every_capture_is_tested_above() -> None:
    assert sorted([*READABLE, NDR]) == capture_names(
        "ibnetdiscover/*.txt", "ibnetdiscover/versions/*.txt", "sim/ibnetdiscover*.txt"
    )


# -g (grouping) layout, as infiniband-diags 1.5.8 and rdma-core print it (src/ibnetdiscover.c: out_chassis,
# out_ids, out_ext_port): not a capture, the printf's of the source filled in
GROUPED = """\
#
# Topology file: generated on Tue Jun  5 14:15:10 2012
#
# Initiated from node 0008f10403960558 port 0008f10403960559

Chassis 1 (guid 0x8f10400411f56)

# Spine Nodes
vendid=0x8f1
devid=0x5a30
sysimgguid=0x8f10400411f56\t\t# Chassis 1 (ISR9288)
switchguid=0x8f10400411f5a(8f10400411f5a)\t# ISR9288 Spine 1 Chip 1
Switch\t24 "S-0008f10400411f5a"\t\t# "ISR9288 Voltaire sFB-12D" base port 0 lid 6 lmc 0
[3][ext 7]\t"H-0008f10403960558"[1](8f10403960559) \t\t# "host HCA-1" lid 10 4xDDR

Non-Chassis Nodes

vendid=0x2c9
devid=0x5a44
caguid=0x8f10403960558
Ca\t2 "H-0008f10403960558"\t\t# "host HCA-1"
[1](8f10403960559) \t"S-0008f10400411f5a"[3][ext 7]\t\t# lid 10 lmc 1 "ISR9288 Voltaire sFB-12D" lid 6 4xDDR
"""


def test_grouping_lines_are_read_past() -> None:
    fabric = ibnetdiscover.parse(GROUPED)
    assert fabric.notes == ()
    ((link),) = fabric.links
    assert {(e.node_guid, e.port) for e in (link.a, link.b)} == {(0x8F10400411F5A, 3), (0x8F10403960558, 1)}
    assert (link.width, link.speed) == ("4x", "DDR")
    switch = fabric.node(0x8F10400411F5A)
    assert switch is not None
    assert (switch.sysimgguid, switch.port_guid) == (0x8F10400411F56, 0x8F10400411F5A)


WARNING = "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)"


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("bash: ibnetdiscover: command not found", 1, "cannot parse: 'bash: ibnetdiscover: command not found'; not"),
        (WARNING + "\nsrc/query_smp.c:228; umad (DR path slid 0; dlid 0; 0,1,3) Attribute (NodeInfo) bad", 2, "not"),
        ("vendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0xb85", 1, "cut short: the output ends before this node block's"),
        ("vendid=0x2c9\ndevid=0xd2f0\nvendid=0x2c9\n", 3, "the node block of line 1 has no node line"),
        ('Switch\t36 "S-0000000000200001"\t\t# "Leaf2" base port 0 lid', 1, "without '\\(base\\|enhanced\\)"),
        ('Switch\t36 "S-0000000000200001"\t\t# "Leaf2" base port 0 lid 3 lmc 0\n[1]\t"H-000', 2, "expected a port"),
        ('Ca\t1 "S-0000000000100006"\t\t# "node04 mlx5_0"', 1, "a Ca named S-GUID"),
        ("SW     3 35 0x0000000000200001 4x EDR - SW", 1, "expected a -p port line"),
        ("Switch\t : 0x0000000000200001 ports 36", 1, "expected a -l node line"),
    ],
)
def test_what_is_not_whole_ibnetdiscover_output_is_an_error_quoting_its_line(
    text: str, line_no: int, reason: str
) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        ibnetdiscover.parse(text)
    assert caught.value.line_no == line_no


def test_empty_output_is_an_empty_fabric() -> None:
    assert ibnetdiscover.parse("") == Fabric((), ())


# ------------------------------------------------------------------ any warning anywhere changes only the notes --

KERNEL = st.sampled_from(
    [
        "[  123.456] some log line",
        "[ 8812.003311] mlx5_core 0000:3b:00.0: mlx5_port_module_event: Port module event: module 0, Cable unplugged",
        "...",
        # libibumad's message as an FDR cluster's ibnetdiscover printed it (Chinese notes on SX6536, find_string id
        # 41932268576)
        "src/query_smp.c:199; umad (DR path slid 0; dlid 0; 0,1,19,5,18 Attr 0x11:0) bad status 110; "
        "Connection timed out",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(READABLE), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = ibnetdiscover.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), st.one_of(NOISE, KERNEL)), max_size=8))
    fabric = ibnetdiscover.parse("\n".join(insert(lines, inserts)))
    assert replace(fabric, notes=()) == replace(clean, notes=())
    assert noted(fabric.notes) == sorted(shown(inserts) + noted(clean.notes))
