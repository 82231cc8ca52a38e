"""discover's placeholder device names (``hca1`` for a "<host> HCA-1" description) are reconciled on the host
by node GUID: judged as the host's real device, with a caveat naming it; never guessed without a GUID."""

from __future__ import annotations

from nodekit import ib_facts

from ibprov.clusterspec import load_spec_text
from ibprov.run.adhoc import HostOutcome
from ibprov.verify.nodes.collect import observe_host
from ibprov.verify.nodes.plan import build_node_plan
from ibprov.verify.nodes.section import check_nodes

SPEC = """\
version: 1
cluster: {name: gpu}
nodes:
  - {name: gpu01, hcas: [{device: hca1, node_guid: 0x0c42a10300d8e3c8}]}
switches: [{name: leaf01, role: leaf, ports: 8}]
fabric:
  speed: HDR
  links: ["leaf01:1 <-> gpu01/hca1:1"]
subnet_manager: {instances: [{node: gpu01, priority: 15}]}
"""
PROBE = "@@ibprov-probe memlock\nunlimited\n@@ibprov-probe opensm\nactive\n"


def host(device: str, node_guid: str = "0x0c42a10300d8e3c8"):  # type: ignore[no-untyped-def]
    facts = ib_facts(device=device)
    facts["ansible_facts"]["ib"]["devices"][device]["node_guid"] = node_guid
    return observe_host("gpu01", HostOutcome("ok", facts), HostOutcome("ok", {"stdout": PROBE, "rc": 0}))


def test_a_placeholder_is_the_host_device_with_its_node_guid_and_the_report_says_which() -> None:
    plan = build_node_plan(load_spec_text(SPEC, "gpu.yaml"))
    assert plan.ports[0].placeholder_guid == 0x0C42A10300D8E3C8
    section = check_nodes(plan, {"gpu01": host("mlx5_2")})
    assert [f for f in section.findings if f.check in ("node.hca_missing", "node.port_state", "node.rate")] == []
    caveats = dict(next(c for c in section.checks if c.id == "node.hca_missing").caveats)
    assert caveats == {"gpu01 hca1 port 1": "hca1 is mlx5_2 on the host (by node GUID): rename it in the spec"}


def test_a_placeholder_whose_guid_no_device_has_is_missing_never_guessed() -> None:
    plan = build_node_plan(load_spec_text(SPEC, "gpu.yaml"))
    section = check_nodes(plan, {"gpu01": host("mlx5_2", node_guid="0x0c42a10300d8ffff")})
    (missing,) = [f for f in section.findings if f.check == "node.hca_missing"]
    assert missing.expected == "hca1: an HCA with node GUID 0x0c42a10300d8e3c8"
    assert missing.observed == "no such HCA (mlx5_2)"


def test_a_sharp_aggregation_node_is_no_host_to_log_in_to() -> None:
    from ibprov.render.inventory import hosts

    text = SPEC.replace(
        "nodes:\n",
        "nodes:\n  - {name: sharp-leaf01, groups: [sharp], hcas: [{device: hca0}]}\n",
    ).replace(
        'links: ["leaf01:1 <-> gpu01/hca1:1"]',
        'links: ["leaf01:1 <-> gpu01/hca1:1", "leaf01:2 <-> sharp-leaf01/hca0:1"]',
    )
    loaded = load_spec_text(text, "gpu.yaml")
    assert build_node_plan(loaded).hosts == ("gpu01",)
    inventory = hosts(loaded, {"gpu01"}, {})["all"]["children"]
    assert set(inventory["ib_nodes"]["hosts"]) == {"gpu01"}
    assert set(inventory["sharp"]["hosts"]) == {"sharp-leaf01"}
