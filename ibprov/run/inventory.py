"""Ansible inventories built straight from the spec, for runs without a rendered inventory (``verify --via
HOST``, ``verify --nodes``): each host with the address and user the spec gives it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ibprov.clusterspec import LoadedSpec

__all__ = ["host_inventory", "nodes_inventory"]


def host_inventory(loaded: LoadedSpec, host: str) -> dict[str, Any]:
    """A one-host inventory: the spec's address and user for a node it names, a local connection for
    localhost, else the cluster's SSH user."""
    node = next((n for n in loaded.spec.nodes if n.name == host), None)
    entry: dict[str, Any] = {"ansible_user": loaded.spec.cluster.ssh_user}
    if host in ("localhost", "127.0.0.1"):
        entry = {"ansible_connection": "local"}
    elif node is not None:
        entry.update({"ansible_host": node.address or node.name})
        if node.user:
            entry["ansible_user"] = node.user
    return {"all": {"hosts": {host: entry}}}


def nodes_inventory(loaded: LoadedSpec) -> dict[str, Any]:
    """An inventory of every node in the spec, each as :func:`host_inventory` has it."""
    hosts: dict[str, Any] = {}
    for node in loaded.spec.nodes:
        hosts.update(host_inventory(loaded, node.name)["all"]["hosts"])
    return {"all": {"hosts": hosts}}
