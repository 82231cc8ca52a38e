"""Valid specs: the shipped examples, `ibprov example`, the JSON Schema, the accepted shorthands and what
the fat-tree generator plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec, load_spec_text
from ibprov.clusterspec.example import example_text
from ibprov.clusterspec.positions import load_yaml
from ibprov.clusterspec.schema import json_schema
from ibprov.clusterspec.types import Endpoint

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))

SMALL = """\
version: 1
cluster: {name: tiny}
nodes:
  - {name: a, hcas: [{device: mlx5_0}]}
  - {name: b, hcas: [{device: mlx5_0}]}
switches:
  - {name: leaf01, role: leaf, ports: 8}
fabric:
  speed: EDR
  links: ["leaf01:1 <-> a/mlx5_0:1", "leaf01:2 <-> b/mlx5_0:1"]
subnet_manager:
  instances: [{node: a}]
"""


def test_the_three_examples_are_shipped() -> None:
    assert {p.name for p in EXAMPLES} >= {"rack.yaml", "fat-tree.yaml", "qos-partitions.yaml"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_validates(path: Path) -> None:
    loaded = load_spec(path)
    assert isinstance(loaded, LoadedSpec)
    assert loaded.path == path


def test_the_rack_example_is_one_leaf_four_compute_nodes_and_two_sms() -> None:
    loaded = load_spec(REPO / "examples" / "rack.yaml")
    assert [s.role for s in loaded.topology.switches.values()] == ["leaf"]
    assert sum("compute" in n.groups for n in loaded.spec.nodes) == 4
    assert sorted(i.priority for i in loaded.spec.subnet_manager.instances) == [14, 15]
    assert all(h.node_guid and h.port_guids for n in loaded.spec.nodes for h in n.hcas)


def test_the_fat_tree_example_is_generated_and_has_no_guids() -> None:
    loaded = load_spec(REPO / "examples" / "fat-tree.yaml")
    assert loaded.spec.fabric.fat_tree is not None
    assert loaded.spec.fabric.links == ()
    assert sum(n.name.startswith("node") for n in loaded.spec.nodes) == 32
    assert all("compute" in n.groups for n in loaded.spec.nodes)
    assert loaded.spec.subnet_manager.routing_engine == ("ftree",)
    assert not any(h.node_guid or h.port_guids for n in loaded.spec.nodes for h in n.hcas)


def test_the_qos_example_has_partitions_qos_tables_and_child_interfaces() -> None:
    spec = load_spec(REPO / "examples" / "qos-partitions.yaml").spec
    assert len(spec.partitions) == 3
    memberships = {m.membership for p in spec.partitions for m in p.members} | {p.defmember for p in spec.partitions}
    assert {"full", "limited"} <= memberships
    assert spec.qos.enabled
    assert spec.qos.sl2vl
    assert spec.qos.vlarb_high
    assert spec.qos.vlarb_low
    assert spec.qos.levels
    assert spec.qos.match_rules
    assert {i.partition for i in spec.ipoib} >= {p.name for p in spec.partitions}


def test_guids_are_unique_across_the_examples() -> None:
    guids: list[int] = []
    for path in EXAMPLES:
        spec = load_spec(path).spec
        for node in spec.nodes:
            for hca in node.hcas:
                guids += [g for g in (hca.node_guid,) if g] + [g for g in hca.port_guids.values() if g != hca.node_guid]
        guids += [s.node_guid for s in spec.switches if s.node_guid]
    assert len(guids) == len(set(guids))


def test_the_example_command_text_validates() -> None:
    loaded = load_spec_text(example_text(), "example.yaml")
    spec = loaded.spec
    assert len(loaded.topology.switches) == 1
    assert sum("compute" in n.groups for n in spec.nodes) == 4
    assert len(spec.subnet_manager.instances) == 2
    assert len(spec.partitions) == 1
    assert [i.partition for i in spec.ipoib] == ["default"]


def test_the_example_is_heavily_commented() -> None:
    lines = example_text().splitlines()
    assert sum("#" in line for line in lines) > len(lines) / 3


def _as_json(text: str) -> object:
    raw, _ = load_yaml(text, "x.yaml")
    return json.loads(json.dumps(raw, default=str))  # what an editor's YAML language server sees


def test_the_json_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"]
    assert {"cluster", "nodes", "fabric", "subnet_manager", "partitions", "qos", "ipoib"} <= set(schema["properties"])
    assert set(schema["required"]) == {"cluster", "nodes", "fabric", "subnet_manager"}


@pytest.mark.parametrize("path", [*EXAMPLES, None], ids=lambda p: p.name if p else "ibprov-example")
def test_the_json_schema_accepts_the_examples(path: Path | None) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    text = path.read_text() if path else example_text()
    errors = [
        f"{list(e.path)}: {e.message}"
        for e in jsonschema.Draft202012Validator(json_schema()).iter_errors(_as_json(text))
    ]
    assert errors == []


def test_the_json_schema_rejects_unknown_keys() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    data = _as_json(SMALL.replace("cluster: {name: tiny}", "cluster: {name: tiny, nmae: x}"))
    assert not jsonschema.Draft202012Validator(json_schema()).is_valid(data)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("links: [", "links: [{link: 'leaf01:3 <-> leaf01:4', width: 1x}, ", id="link-mapping-form"),
        pytest.param("instances:", "routing_engine: 'updn, minhop'\n  instances:", id="engines-as-comma-list"),
        pytest.param("instances:", "routing_engine: [updn, minhop]\n  instances:", id="engines-as-list"),
        pytest.param(
            "{device: mlx5_0}]}\n  - {name: b",
            "{device: mlx5_0, node_guid: '00:02:c9:03:00:a1:b2:c3'}]}\n  - {name: b",
            id="guid-with-colons",
        ),
        pytest.param(
            "{device: mlx5_0}]}\n  - {name: b",
            "{device: mlx5_0, node_guid: '0002C90300A1B2C3'}]}\n  - {name: b",
            id="guid-without-0x",
        ),
        pytest.param("version: 1\n", "\ufeffversion: 1\n", id="byte-order-mark"),
        pytest.param("version: 1\n", "%YAML 1.1\n---\nversion: 1\n", id="yaml-directive"),
        pytest.param("instances: [{node: a}]\n", "instances: [{node: a}]\n...\n", id="document-end-marker"),
        pytest.param(
            "version: 1\n",
            "version: 1\npartitions: [{name: p, pkey: 32767, members: [{all: true}]}]\n".replace("32767", "0x7ffe"),
            id="pkey-0x7ffe",
        ),
        pytest.param(
            "version: 1\n",
            "version: 1\nqos: {sl2vl: [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 15], "
            "vlarb_low: [[0, 64], [1, 32]]}\n",
            id="qos-tables-as-lists",
        ),
        pytest.param(
            "version: 1\n",
            "version: 1\nqos: {sl2vl: ' 0, 1,2,3,4,5,6,7,0,1,2,3,4,5,6,7 ', vlarb_high: '0 : 4 , 1:0'}\n",
            id="qos-tables-with-spaces",
        ),
        pytest.param("version: 1\n", "version: 1\nipoib: [{subnet: 'fd00:10::/64'}]\n", id="ipv6-subnet"),
        pytest.param(
            "- {name: a, hcas: [{device: mlx5_0}]}", "- &host {name: a, hcas: [{device: mlx5_0}]}", id="anchor"
        ),
        pytest.param("- {name: b, hcas: [{device: mlx5_0}]}", "- {<<: *host, name: b}", id="merge-key"),
    ],
)
def test_accepted_spellings_are_valid(old: str, new: str) -> None:
    text = SMALL.replace(old, new, 1)
    if "*host" in text and "&host" not in text:
        text = text.replace("- {name: a,", "- &host {name: a,", 1)
    assert text != SMALL
    load_spec_text(text, "x.yaml")


def test_defaults_are_filled_in() -> None:
    spec = load_spec_text(SMALL).spec
    assert spec.subnet_manager.routing_engine == ("minhop",)
    assert spec.default_partition.membership == "full"
    assert spec.nodes[0].hcas[0].ports == (1,)
    assert spec.acceptance.error_thresholds["PortXmitWait"] == 1000
    assert spec.cluster.subnet_prefix == 0xFE80000000000000


def test_error_threshold_overrides_keep_the_other_defaults() -> None:
    spec = load_spec_text(SMALL + "acceptance: {error_thresholds: {SymbolErrorCounter: 0}}\n").spec
    assert spec.acceptance.error_thresholds["SymbolErrorCounter"] == 0
    assert spec.acceptance.error_thresholds["LinkDownedCounter"] == 10


def test_source_map_locates_values_and_keys() -> None:
    loaded = load_spec_text(SMALL)
    assert loaded.source.locate(("nodes", 1, "name")) == (5, 12)
    assert loaded.source.locate(("fabric", "speed"), prefer_key=True) == (9, 3)
    assert loaded.source.locate(("fabric", "nowhere")) == (9, 3)  # the closest existing parent


# ---------------------------------------------------------------------------------- fat-tree numbering
def _cables(loaded: LoadedSpec) -> dict[str, str]:
    out: dict[str, str] = {}
    for link in loaded.topology.links:
        out[str(link.a)] = str(link.b)
        out[str(link.b)] = str(link.a)
    return out


def test_fat_tree_leaf_ports_face_the_hosts_in_node_order() -> None:
    loaded = load_spec(REPO / "examples" / "fat-tree.yaml")
    cables = _cables(loaded)
    hosts = [n.name for n in loaded.spec.nodes]
    for i, host in enumerate(hosts):
        assert cables[f"{host}/mlx5_0:1"] == f"leaf{i // 10 + 1:02d}:{i % 10 + 1}"
    assert cables["sm01/mlx5_0:1"] == "leaf01:1"
    assert cables["sm02/mlx5_0:1"] == "leaf04:4"


def test_fat_tree_uplinks_follow_the_host_ports_round_robin_over_the_spines() -> None:
    loaded = load_spec(REPO / "examples" / "fat-tree.yaml")
    cables = _cables(loaded)
    assert cables["leaf01:11"] == "spine01:1"
    assert cables["leaf01:12"] == "spine02:1"
    assert cables["leaf01:13"] == "spine01:2"
    assert cables["leaf02:11"] == "spine01:6"
    assert cables["leaf04:20"] == "spine02:20"
    assert "leaf01:21" not in cables
    switches = loaded.topology.switches
    assert sorted(switches) == ["leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02"]
    assert all(sw.generated and sw.ports == 40 for sw in switches.values())


def test_three_level_fat_tree_connects_spines_to_cores() -> None:
    text = SMALL.replace("switches:\n  - {name: leaf01, role: leaf, ports: 8}\n", "").replace(
        '  links: ["leaf01:1 <-> a/mlx5_0:1", "leaf01:2 <-> b/mlx5_0:1"]\n',
        "  fat_tree: {radix: 8, pods: 2, leaves: 4, spines: 4, cores: 2, hosts_per_leaf: 4, uplinks_per_leaf: 2,"
        " uplinks_per_spine: 2}\n",
    )
    loaded = load_spec_text(text)
    cables = _cables(loaded)
    roles = {sw.role for sw in loaded.topology.switches.values()}
    assert roles == {"leaf", "spine", "core"}
    # pod 1 = leaf01, leaf02, spine01, spine02; pod 2 = leaf03, leaf04, spine03, spine04
    assert cables["leaf03:5"] == "spine03:1"
    assert cables["spine01:3"] == "core01:1"
    assert cables["spine02:3"] == "core02:1"
    assert cables["spine03:3"] == "core01:3"
    assert Endpoint("a", "mlx5_0", 1) in {link.b for link in loaded.topology.links}
