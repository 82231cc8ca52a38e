"""The port an object names, as the per-port exporters label it (node GUID and port number) with the far end of
its planned cable: what joins ibprov's metrics with theirs."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from causekit import f, rack, report_of

from ibprov.clusterspec import LoadedSpec, load_spec
from ibprov.identity.guids import GuidBook, synthetic_guid
from ibprov.report.json_report import to_dict
from ibprov.report.model import PortIds
from ibprov.verify.causes import fabric_of
from ibprov.verify.portids import PortIndex, identify_ports, port_lookup

# examples/rack.yaml plans every GUID: leaf01's node GUID, and each HCA's
LEAF = 0xB8599F0300F1C2A0
HCA = {"sm01": 0x0C42A10300D8E2A0, "node01": 0x0C42A10300D8E3C8, "node02": 0x0C42A10300D8E3DC}
HCA["node03"] = 0x0C42A10300D8E3F0


@cache
def planned() -> LoadedSpec:
    return load_spec(Path(__file__).resolve().parents[3] / "examples" / "rack.yaml")


def index() -> PortIndex:
    return PortIndex(fabric_of(planned()), GuidBook.for_spec(planned()))


def hca(node: str) -> int:
    return HCA[node]


def test_an_hca_port_is_its_hcas_node_guid_and_port_and_the_far_end_is_its_leaf_port() -> None:
    assert index().of("node03 mlx5_0 port 1") == PortIds(hca("node03"), 1, LEAF, 3)


def test_a_switch_port_is_the_switchs_node_guid_and_the_far_end_the_hca_port() -> None:
    assert index().of("leaf01 port 39") == PortIds(LEAF, 39, hca("sm01"), 1)


def test_a_cable_written_as_the_spec_writes_it_is_its_first_end() -> None:
    assert index().of("leaf01:2 <-> node02/mlx5_0:1") == PortIds(LEAF, 2, hca("node02"), 1)
    assert index().of("node02/mlx5_0:1 <-> leaf01:2") == PortIds(hca("node02"), 1, LEAF, 2)


def test_a_switch_port_without_a_planned_cable_has_no_far_end() -> None:
    assert index().of("leaf01 port 17") == PortIds(LEAF, 17, None, None)


def test_objects_that_are_not_one_planned_port_have_none() -> None:
    for obj in (
        "fabric",
        "node01",
        "node01 mlx5_0",
        "node01/mlx5_0:1 -> node02/mlx5_0:1 ib_write_bw 64KiB",  # two ports, not one cable
        '0x0002c90300000001 "stray" port 1',
        "node99 mlx5_0 port 1",  # not planned
    ):
        assert index().of(obj) is None, obj


def test_guids_the_plan_does_not_know_are_none_and_the_twins_synthetic_ones_are_used_on_the_twin() -> None:
    embedded = rack()  # the embedded example: no GUID planned
    unknown = PortIndex(fabric_of(embedded), GuidBook.for_spec(embedded))
    assert unknown.of("node03 mlx5_0 port 1") == PortIds(None, 1, None, 3)
    twin = PortIndex(fabric_of(embedded), GuidBook.for_spec(embedded, allow_synthetic=True, twin=True))
    ids = twin.of("node03 mlx5_0 port 1")
    assert ids is not None
    assert ids.guid == synthetic_guid(embedded.spec.cluster.name, "hca", "node03", "mlx5_0")
    assert ids.remote_guid == synthetic_guid(embedded.spec.cluster.name, "switch", "leaf01")


def test_report_json_gives_each_finding_on_a_port_its_port_and_the_others_none() -> None:
    report = identify_ports(report_of([f("link.down", "node03 mlx5_0 port 1"), f("sm.master", "fabric")]), index())
    findings = {x["object"]: x for x in to_dict(report)["findings"]}
    assert findings["node03 mlx5_0 port 1"]["port"] == {
        "guid": f"0x{hca('node03'):016x}",
        "port": 1,
        "remote_guid": "0xb8599f0300f1c2a0",
        "remote_port": 3,
    }
    assert "port" not in findings["fabric"]


def test_the_metrics_lookup_answers_as_report_json_writes_a_port() -> None:
    look = port_lookup(planned())
    assert look("leaf01 port 1") == {
        "guid": "0xb8599f0300f1c2a0",
        "port": 1,
        "remote_guid": f"0x{hca('node01'):016x}",
        "remote_port": 1,
    }
    assert look("fabric") is None
