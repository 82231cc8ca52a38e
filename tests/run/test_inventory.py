"""Inventories from the spec: one host for ``--via HOST``, every node for ``verify --nodes``."""

from __future__ import annotations

from pathlib import Path

from ibprov.clusterspec import load_spec, load_spec_text
from ibprov.run.inventory import host_inventory, nodes_inventory

RACK = Path(__file__).resolve().parents[2] / "examples" / "rack.yaml"


def test_the_host_inventory_uses_the_spec_address_user_or_a_local_connection() -> None:
    loaded = load_spec(RACK)
    assert host_inventory(loaded, "sm01") == {
        "all": {"hosts": {"sm01": {"ansible_user": "root", "ansible_host": "sm01"}}}
    }
    assert host_inventory(loaded, "localhost") == {"all": {"hosts": {"localhost": {"ansible_connection": "local"}}}}
    assert host_inventory(loaded, "jump.example.org")["all"]["hosts"]["jump.example.org"] == {"ansible_user": "root"}


def test_the_nodes_inventory_holds_every_node_with_its_own_address_and_user() -> None:
    text = RACK.read_text().replace(
        "  - name: node01\n", "  - name: node01\n    address: 10.0.0.1\n    user: admin\n", 1
    )
    loaded = load_spec_text(text, "rack.yaml")
    hosts = nodes_inventory(loaded)["all"]["hosts"]
    assert list(hosts) == [n.name for n in loaded.spec.nodes]
    assert hosts["node01"] == {"ansible_user": "admin", "ansible_host": "10.0.0.1"}
    assert hosts["node02"] == {"ansible_user": "root", "ansible_host": "node02"}
