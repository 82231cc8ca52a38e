"""IPoIB per rail: an ``ipoib`` entry with ``rail:`` lives on that rail's port (its parent is the rail's
ipoib_parent) and only on the nodes that have the port; they alone get a pool address. verify --nodes plans
the interface on exactly those nodes.

The specs: 5 nodes (an odd count) with one single-port HCA per rail (rail R is mlx5_R:1 with IPoIB link ibR);
node n4 has no HCA of the last rail."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.errors import SpecError
from ibprov.render import render_files
from ibprov.verify.nodes.plan import build_node_plan

NODES = ["n1", "n2", "n3", "n4", "n5"]


def rail_spec(rails: int, tail: str) -> LoadedSpec:
    """5 nodes with one single-port HCA per rail; n4 has none of the last rail. One leaf cables them all."""
    lines = ["version: 1", "cluster:", "  name: rails", "nodes:"]
    links = []
    for name in NODES:
        count = rails - 1 if name == "n4" else rails
        hcas = ", ".join(f"{{device: mlx5_{r}}}" for r in range(count))
        lines.append(f"  - {{name: {name}, groups: [gpu], hcas: [{hcas}]}}")
        links += [f"{name}/mlx5_{r}:1" for r in range(count)]
    lines += ["switches:", f"  - {{name: leaf01, role: leaf, ports: {len(links)}}}", "fabric:", "  speed: HDR"]
    lines += ["  links:", *(f"    - leaf01:{k} <-> {end}" for k, end in enumerate(links, 1))]
    lines += ["subnet_manager:", "  instances:", "    - {node: n1, priority: 15}", "mpi:", "  rails:"]
    lines += [f"    - {{name: rail{r}, devices: ['mlx5_{r}:1'], ipoib_parent: ib{r}}}" for r in range(rails)]
    return load_spec_text("\n".join(lines) + "\n" + tail, "s.yaml")


def interfaces(loaded: LoadedSpec) -> dict[str, dict[str, dict[str, Any]]]:
    """host -> interface name -> its ib_ipoib_interfaces entry, read back from the rendered hosts.yml."""
    hosts = yaml.safe_load(render_files(loaded, synthetic_guids=True).files["inventory/hosts.yml"])
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for host, entry in hosts["all"]["children"]["ib_nodes"]["hosts"].items():
        out[host] = {i["name"]: i for i in (entry or {}).get("ib_ipoib_interfaces", [])}
    return out


def has_port(node: str, rail: int, rails: int) -> bool:
    return not (node == "n4" and rail == rails - 1)


@pytest.mark.parametrize("rails", [2, 8])
def test_one_entry_per_rail_puts_an_interface_and_an_address_only_on_nodes_with_the_rails_port(rails: int) -> None:
    # the typical use: one entry per rail, one subnet per rail, on the Default partition
    tail = "ipoib:\n" + "".join(f"  - {{rail: rail{r}, subnet: 10.{r}.0.0/24}}\n" for r in range(rails))
    got = interfaces(rail_spec(rails, tail))
    want: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in NODES}
    for r in range(rails):
        holders = [n for n in NODES if has_port(n, r, rails)]
        for k, node in enumerate(holders, 1):  # the pool in node order, over the nodes that have the port
            want[node][f"ib{r}"] = {
                "name": f"ib{r}",
                "parent": f"ib{r}",
                "pkey": None,
                "mode": "datagram",
                "mtu": 2044,
                "address": f"10.{r}.0.{k}/24",
            }
    assert got == want
    last = rails - 1
    assert f"ib{last}" not in got["n4"]
    assert got["n5"][f"ib{last}"]["address"] == f"10.{last}.0.4/24"
    assert len(got["n4"]) == rails - 1


@pytest.mark.parametrize("rails", [2, 8])
def test_a_rail_partition_gets_one_child_interface_per_rail_on_its_nodes(rails: int) -> None:
    members = ", ".join(f"{{all: true, rail: rail{r}}}" for r in range(rails))
    tail = (
        f"partitions:\n  - {{name: train, pkey: 0x0010, ipoib: true, defmember: full, members: [{members}]}}\n"
        "ipoib:\n"
        + "".join(f"  - {{partition: train, rail: rail{r}, subnet: 10.{100 + r}.0.0/24}}\n" for r in range(rails))
    )
    got = interfaces(rail_spec(rails, tail))
    for node in NODES:
        assert set(got[node]) == {f"ib{r}.8010" for r in range(rails) if has_port(node, r, rails)}, node
        for r in range(rails):
            if has_port(node, r, rails):
                iface = got[node][f"ib{r}.8010"]
                assert (iface["parent"], iface["pkey"]) == (f"ib{r}", 0x8010)


def test_a_fixed_address_stays_and_the_pool_skips_it_and_the_node_without_the_port() -> None:
    tail = "ipoib:\n  - {rail: rail1, subnet: 10.1.0.0/29, pool_start: 10.1.0.2, addresses: {n3: 10.1.0.3}}\n"
    got = interfaces(rail_spec(2, tail))
    addresses = {n: got[n]["ib1"]["address"] for n in NODES if "ib1" in got[n]}
    assert addresses == {"n1": "10.1.0.2/29", "n2": "10.1.0.4/29", "n3": "10.1.0.3/29", "n5": "10.1.0.5/29"}


def test_a_rail_interface_goes_only_where_the_partition_holds_the_rails_port() -> None:
    tail = """\
partitions:
  - {name: pair, pkey: 0x0010, ipoib: true, members: [{node: n1, rail: rail0}, {node: n2}]}
ipoib:
  - {partition: pair, rail: rail1, subnet: 10.1.0.0/24}
"""
    got = interfaces(rail_spec(2, tail))
    # n1 is in the partition with its rail-0 port only; n2 with all of its ports
    assert {n: sorted(got[n]) for n in NODES} == {"n1": [], "n2": ["ib1.8010"], "n3": [], "n4": [], "n5": []}


@pytest.mark.parametrize("rails", [2, 8])
def test_verify_nodes_plans_a_rail_interface_only_on_nodes_that_have_the_port(rails: int) -> None:
    tail = "ipoib:\n" + "".join(f"  - {{rail: rail{r}, subnet: 10.{r}.0.0/24}}\n" for r in range(rails))
    loaded = rail_spec(rails, tail)
    plan = build_node_plan(loaded)
    rendered = interfaces(loaded)
    assert {h: dict(i) for h, i in plan.ipoib.items()} == {
        h: {name: i["address"] for name, i in ifaces.items()} for h, ifaces in rendered.items()
    }
    assert sorted(plan.ipoib["n4"]) == [f"ib{r}" for r in range(rails - 1)]
    assert sorted(plan.ipoib["n5"]) == sorted(f"ib{r}" for r in range(rails))


def test_the_rails_parent_is_what_the_name_rules_check() -> None:
    # name checks and duplicate names see the rail's ipoib_parent, not the default ib0
    part = "partitions:\n  - {name: train, pkey: 0x0010, ipoib: true, members: [{all: true}]}\n"
    good = part + "ipoib:\n  - {partition: train, rail: rail1, name: ib1.8010, subnet: 10.1.0.0/24}\n"
    assert "ib1.8010" in interfaces(rail_spec(2, good))["n1"]
    bad = (
        part + "ipoib:\n  - {partition: train, rail: rail1, name: ib0.8010, subnet: 10.1.0.0/24}\n"
        "  - {partition: train, rail: rail0, subnet: 10.0.0.0/24}\n"
        "  - {partition: train, subnet: 10.2.0.0/24}\n"
    )
    with pytest.raises(SpecError) as err:
        rail_spec(2, bad)
    # ipoib[1] is ib0.8010 by its rail's parent ib0, like the one without rail on the default parent ib0
    assert [str(p) for p in err.value.problems] == [
        "s.yaml:34:43: ipoib[0].name: ib0.8010 names parent ib0, but parent is ib1",
        "s.yaml:35:5: ipoib[1].name: duplicate IPoIB interface ib0.8010 (also at ipoib[0].name)",
        "s.yaml:36:5: ipoib[2].name: duplicate IPoIB interface ib0.8010 (also at ipoib[0].name)",
    ]
