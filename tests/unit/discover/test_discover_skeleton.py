"""The spec skeleton `ibprov discover` writes when there is no spec yet."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from captures import read_capture
from discoverdata import EXAMPLES, census, example_text, planned_text

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.types import NAME_RE
from ibprov.discover import build_skeleton, found_from_text, sanitize
from ibprov.errors import CollectError
from ibprov.probes import ParseError

REAL_TOPOLOGY_FILES = [
    "sim/ibnetdiscover-sim-v44.txt",
    "sim/ibnetdiscover-f-sim-v44.txt",
    "ibnetdiscover/hdr-full-f-faked-superbench.txt",
]


def skeleton_of(text: str) -> LoadedSpec:
    return load_spec_text(build_skeleton(found_from_text(text), cluster="disc").text, "disc.yaml")


def spec_guids(loaded: LoadedSpec) -> set[int]:
    spec = loaded.spec
    return {sw.node_guid for sw in spec.switches if sw.node_guid} | {
        h.node_guid for n in spec.nodes for h in n.hcas if h.node_guid
    }


def endpoint_guid(loaded: LoadedSpec, device: str, hca: str | None) -> int:
    if hca is None:
        guid = next(sw.node_guid for sw in loaded.spec.switches if sw.name == device)
    else:
        node = next(n for n in loaded.spec.nodes if n.name == device)
        guid = next(h.node_guid for h in node.hcas if h.device == hca)
    assert guid is not None
    return guid


@pytest.mark.parametrize("capture", REAL_TOPOLOGY_FILES)
def test_skeleton_of_a_real_capture_validates_with_every_guid_and_cable_of_the_file(capture: str) -> None:
    text = read_capture(capture)
    guids, cables = census(text)
    loaded = skeleton_of(text)
    assert spec_guids(loaded) == guids
    assert len(loaded.topology.links) == len(cables)
    planned = {
        frozenset((endpoint_guid(loaded, e.device, e.hca), e.port) for e in (link.a, link.b))
        for link in loaded.topology.links
    }
    assert planned == cables


def test_skeleton_keeps_the_port_guids_a_real_capture_prints() -> None:
    loaded = skeleton_of(read_capture("ibnetdiscover/hdr-full-f-faked-superbench.txt"))
    node = next(n for n in loaded.spec.nodes if n.name == "RMD701091902003")
    assert [(h.device, h.node_guid, h.port_guids) for h in node.hcas] == [
        ("ibp11s0f0", 0x1C34DA03005BACA4, {1: 0x1C34DA03005BACA4})
    ]


def test_switch_roles_follow_the_levels_of_the_cabling() -> None:
    loaded = skeleton_of(read_capture("ibnetdiscover/hdr-full-f-faked-superbench.txt"))
    roles = {sw.description: sw.role for sw in loaded.spec.switches}
    assert roles["MF0;rmd70-0101-0919-01ib0:MQM8700/U1"] == "leaf"  # hosts below it
    assert roles["MF0;rmd70-0101-0908-01ib1-A:MCS8500/L01/U1"] == "spine"  # switches only
    assert roles["MF0;rmd70-0101-0908-01ib1-A:MCS8500/S01/U1"] == "core"  # the third level
    assert sorted(roles.values()).count("leaf") == 5


def test_switch_names_are_sanitised_and_the_description_kept_for_matching() -> None:
    loaded = skeleton_of(read_capture("ibnetdiscover/hdr-full-f-faked-superbench.txt"))
    sw = next(s for s in loaded.spec.switches if s.description == "MF0;rmd70-0101-0919-01ib0:MQM8700/U1")
    assert sw.name == "MF0-rmd70-0101-0919-01ib0-MQM8700-U1"
    assert sw.ports == 41
    names = [sw.name for sw in loaded.spec.switches] + [n.name for n in loaded.spec.nodes]
    assert all(re.fullmatch(NAME_RE, name) for name in names)


def test_the_sm_placeholder_is_on_a_host_not_on_an_aggregation_node() -> None:
    text = build_skeleton(found_from_text(read_capture("ibnetdiscover/hdr-full-f-faked-superbench.txt"))).text
    loaded = load_spec_text(text)
    (sm,) = loaded.spec.subnet_manager.instances
    assert (sm.node, sm.priority) == ("RMD701091901003", 15)
    assert loaded.spec.subnet_manager.routing_engine == ("minhop",)
    assert "REVIEW" in text.split("subnet_manager:")[-2].splitlines()[-2]  # the comment above the section
    assert "# REVIEW" in text.split("subnet_manager:")[-1]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_skeleton_of_a_planned_fabric_has_its_cabling_names_and_guids(example: Path) -> None:
    planned, text, book = example_text(example)
    loaded = skeleton_of(text)
    assert {str(link) for link in loaded.topology.links} == {str(link) for link in planned.topology.links}
    assert {n.name for n in loaded.spec.nodes} == {n.name for n in planned.spec.nodes}
    assert {sw.name: sw.role for sw in loaded.spec.switches} == {
        name: sw.role for name, sw in planned.topology.switches.items()
    }
    for node in loaded.spec.nodes:
        for hca in node.hcas:
            assert hca.node_guid == book.hca_guid(node.name, hca.device)
            assert hca.port_guids == {1: book.port_guid(node.name, hca.device, 1)}
    assert {sw.name: sw.node_guid for sw in loaded.spec.switches} == {
        name: book.switch_guid(name) for name in planned.topology.switches
    }


def test_header_says_it_was_discovered_and_what_to_fill_in() -> None:
    _planned, text, _book = example_text()
    header = build_skeleton(found_from_text(text), source="saved.txt").text.split("version: 1")[0]
    assert "Discovered by `ibprov discover` from saved.txt: 6 switches, 34 HCAs on 34 nodes, 74 cables" in header
    for item in ("node names", "groups", "switch roles", "subnet_manager", "partitions"):
        assert item in header


HOSTS = """\
version: 1
cluster: {name: t}
nodes:
  - {name: gpu01, hcas: [{device: mlx5_0}, {device: mlx5_1, ports: [1, 2]}]}
  - {name: gpu02, hcas: [{device: mlx5_0}]}
  - {name: gpu03, hcas: [{device: mlx5_0}]}
switches:
  - {name: sw1, role: leaf, ports: 8}
fabric:
  speed: HDR
  links:
    - sw1:1 <-> gpu01/mlx5_0:1
    - sw1:2 <-> gpu01/mlx5_1:1
    - {link: "sw1:3 <-> gpu02/mlx5_0:1", speed: EDR}
    - {link: "sw1:4 <-> gpu03/mlx5_0:1", width: 1x}
  empty_ports: [gpu01/mlx5_1:2]
subnet_manager: {instances: [{node: gpu01}]}
"""


def test_hcas_of_one_host_are_grouped_and_unconnected_ports_listed_empty() -> None:
    text, _book = planned_text(load_spec_text(HOSTS))
    loaded = skeleton_of(text)
    gpu01 = next(n for n in loaded.spec.nodes if n.name == "gpu01")
    assert [(h.device, h.ports) for h in gpu01.hcas] == [("mlx5_0", (1,)), ("mlx5_1", (1, 2))]
    assert loaded.spec.fabric.empty_ports == ("gpu01/mlx5_1:2",)


def test_fabric_rate_is_the_most_common_and_other_links_are_overridden() -> None:
    text, _book = planned_text(load_spec_text(HOSTS))
    loaded = skeleton_of(text)
    assert (loaded.spec.fabric.speed, loaded.spec.fabric.width) == ("HDR", "4x")
    overrides = {link.link: (link.speed, link.width) for link in loaded.spec.fabric.links if link.speed or link.width}
    assert overrides == {"sw1:3 <-> gpu02/mlx5_0:1": ("EDR", None), "sw1:4 <-> gpu03/mlx5_0:1": (None, "1x")}


def test_duplicate_host_names_and_odd_descriptions_become_distinct_valid_nodes() -> None:
    spec = HOSTS.replace("{name: gpu02,", '{name: gpu02, description: "gpu01 mlx5_0",').replace(
        "{name: gpu03,", '{name: gpu03, description: "MT4123 ConnectX6   Mellanox Technologies",'
    )
    text, _book = planned_text(load_spec_text(spec))
    loaded = skeleton_of(text)
    nodes = {n.name: (n.description, [h.device for h in n.hcas]) for n in loaded.spec.nodes}
    assert nodes == {
        "gpu01": (None, ["mlx5_0", "mlx5_1"]),
        "gpu01-2": ("gpu01 mlx5_0", ["mlx5_0"]),
        "MT4123-ConnectX6-Mellanox-Technologies": ("MT4123 ConnectX6   Mellanox Technologies", ["hca0"]),
    }


def test_names_yaml_would_read_as_numbers_or_booleans_stay_names() -> None:
    spec = HOSTS.replace("{name: gpu02,", "{name: '007',").replace("{name: gpu03,", "{name: 'yes',")
    spec = spec.replace("gpu02/", "007/").replace("gpu03/", "yes/")
    spec = spec.replace("{name: sw1,", "{name: '1e3',").replace("sw1:", "1e3:")
    text, _book = planned_text(load_spec_text(spec))
    loaded = skeleton_of(text)
    assert {n.name for n in loaded.spec.nodes} == {"gpu01", "007", "yes"}
    assert [sw.name for sw in loaded.spec.switches] == ["1e3"]


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("MF0;sw-a:MQM8700/U1", "MF0-sw-a-MQM8700-U1"),
        (" 5FB0406-spine-IB02 ", "5FB0406-spine-IB02"),
        ("--odd  name--", "odd-name"),
        (";;;", ""),
        ("x" * 80, "x" * 63),
    ],
)
def test_sanitize_maps_descriptions_onto_the_name_pattern(raw: str, name: str) -> None:
    assert sanitize(raw) == name


@pytest.mark.parametrize(
    ("capture", "message"),
    [
        ("ibnetdiscover/edr-ports-p-mode-excerpt-treydock.txt", "`ibnetdiscover -p` output"),
        ("sim/ibnetdiscover-p-sim-v44.txt", "`ibnetdiscover -p` output"),
        ("sim/ibnetdiscover-l-sim-v44.txt", "no cables"),
    ],
)
def test_outputs_without_node_guids_or_cables_are_refused(capture: str, message: str) -> None:
    with pytest.raises(CollectError, match=message):
        found_from_text(read_capture(capture))


def test_a_damaged_capture_is_a_collect_error_naming_the_line() -> None:
    # the prompt is line 1; line 9, the first GUID the blog redacted, is where the output stops being ibnetdiscover's
    with pytest.raises(ParseError, match=r"line 9: expected a 'NAME=0xHEX' node header line, got: 'sysimgguid=0x9c05<"):
        found_from_text(read_capture("ibnetdiscover/ndr200-2x-ndr-qm9700-partial-redacted.txt"))
