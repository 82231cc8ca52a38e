"""The plan verify builds from a discovered spec: an HCA port without a cable shows no GUID, which must not
make verify say the device has none ("no GUID in the spec or lock file ... matched by NodeDescription")."""

from __future__ import annotations

import re

from discoverdata import planned_text, redescribe

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.discover import build_skeleton, found_from_text
from ibprov.identity.guids import GuidBook
from ibprov.probes import ibnetdiscover
from ibprov.verify.fabric.observation import ObservedNode
from ibprov.verify.fabric.plan import Plan, build_plan

# gpu01/mlx5_1 has two ports; port 2 has no cable
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
    - sw1:3 <-> gpu02/mlx5_0:1
    - sw1:4 <-> gpu03/mlx5_0:1
  empty_ports: [gpu01/mlx5_1:2]
subnet_manager: {instances: [{node: gpu01}]}
"""


def fabric() -> tuple[str, GuidBook]:
    """ibnetdiscover's text of HOSTS (GUIDs: port = node GUID + port) and the GUIDs it carries."""
    return planned_text(load_spec_text(HOSTS))


def observed(text: str) -> list[ObservedNode]:
    """The devices verify observes in this ibnetdiscover output."""
    return [
        ObservedNode(n.guid or 0, n.type, n.description, {p.number: (p.guid, p.lid) for p in n.ports}, n.lid)
        for n in ibnetdiscover.parse(text).nodes
    ]


def skeleton(text: str) -> str:
    return build_skeleton(found_from_text(text), cluster="t").text


def plan_of(spec: str, text: str) -> Plan:
    loaded: LoadedSpec = load_spec_text(spec, "t.yaml")
    return build_plan(loaded, GuidBook.for_spec(loaded), observed(text))  # a real fabric: nothing synthetic


def hca_line(spec: str, node: str, device: str) -> str:
    lines = spec.split("\n")
    start = lines.index(f"  - name: {node}")
    return next(line for line in lines[start:] if f"device: {device}," in line)


def test_a_discovered_spec_with_an_uncabled_port_is_not_said_to_miss_a_guid() -> None:
    text, book = fabric()
    spec = skeleton(text)
    assert "gpu01/mlx5_1:2" in spec.split("empty_ports:")[1]  # the port without a cable, and without a GUID
    plan = plan_of(spec, text)
    assert plan.notes == ()
    assert plan.port_guids[Endpoint("gpu01", "mlx5_1", 1)] == book.port_guid("gpu01", "mlx5_1", 1)
    assert plan.port_guids[Endpoint("gpu01", "mlx5_1", 2)] is None  # not made up as node GUID + 2


def test_the_note_names_only_the_devices_with_no_guid_at_all() -> None:
    text, book = fabric()
    spec = skeleton(text)
    gpu02 = hca_line(spec, "gpu02", "mlx5_0")
    spec = spec.replace(gpu02, re.sub(r", node_guid: .*\}$", "}", gpu02))  # no GUID at all
    gpu03 = hca_line(spec, "gpu03", "mlx5_0")
    spec = spec.replace(gpu03, re.sub(r", port_guids: .*\}$", "}", gpu03))  # only its node GUID
    plan = plan_of(spec, text)
    assert plan.notes == (
        "1 device(s) have no GUID in the spec or lock file and were matched by NodeDescription (gpu02/mlx5_0); "
        "run `ibprov discover` to pin their GUIDs",
    )
    assert plan.port_guids[Endpoint("gpu02", "mlx5_0", 1)] == book.port_guid("gpu02", "mlx5_0", 1)
    # gpu03: the port GUID the fabric shows for the device with its node GUID
    assert plan.port_guids[Endpoint("gpu03", "mlx5_0", 1)] == book.port_guid("gpu03", "mlx5_0", 1)


def test_a_device_known_by_guid_is_found_by_guid_not_by_description_and_no_numbering_is_assumed() -> None:
    text, book = fabric()
    node_guid = book.hca_guid("gpu01", "mlx5_1")
    port_guid = book.port_guid("gpu01", "mlx5_1", 1)
    assert node_guid is not None
    assert port_guid is not None
    text = text.replace(f"({port_guid:x})", f"({node_guid:x})")  # as on ConnectX: port 1 GUID = node GUID
    spec = skeleton(text)
    gpu01 = hca_line(spec, "gpu01", "mlx5_1")
    assert f"port_guids: {{1: 0x{node_guid:016x}}}" in gpu01
    spec = spec.replace(gpu01, gpu01.replace(f"node_guid: 0x{node_guid:016x}, ", ""))  # only its port GUID
    gpu03 = hca_line(spec, "gpu03", "mlx5_0")
    spec = spec.replace(gpu03, re.sub(r", port_guids: .*\}$", "}", gpu03))  # only its node GUID ...
    text = redescribe(text, "gpu03 mlx5_0", "localhost mlx5_0")  # ... and the fabric calls it otherwise
    plan = plan_of(spec, text)
    assert plan.notes == ()
    assert plan.book.hca_guid("gpu01", "mlx5_1") == node_guid  # the fabric's, not port GUID - 1
    assert plan.port_guids[Endpoint("gpu01", "mlx5_1", 2)] is None
    assert plan.port_guids[Endpoint("gpu03", "mlx5_0", 1)] == book.port_guid("gpu03", "mlx5_0", 1)
