"""The Ansible inventory: hosts and groups, host variables inline in hosts.yml, group_vars as files.

Host variables sit under each host in hosts.yml rather than in 10,000 host_vars/ files: one file to
diff, and Ansible loads a large inventory far faster. Every variable written here is declared in a
role's meta/argument_specs.yml (a test enforces it).
"""

from __future__ import annotations

from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.ipoib import planned_interfaces
from ibprov.clusterspec.types import NON_HOST_GROUPS


def hosts(loaded: LoadedSpec, sm_hosts: set[str], host_vars: dict[str, dict[str, Any]]) -> dict[str, Any]:
    spec = loaded.spec
    all_hosts: dict[str, Any] = {}
    for node in spec.nodes:
        entry: dict[str, Any] = {}
        if node.address:
            entry["ansible_host"] = node.address
        if node.user and node.user != spec.cluster.ssh_user:
            entry["ansible_user"] = node.user
        entry.update(host_vars.get(node.name, {}))
        all_hosts[node.name] = entry or None
    groups: dict[str, dict[str, Any]] = {}
    for node in spec.nodes:
        for g in node.groups:
            groups.setdefault(g, {"hosts": {}})["hosts"][node.name] = None
    # CAs that are no host to log in to (SHARP aggregation nodes, UFM appliances, gateways: the groups
    # `ibprov discover` gives them) stay in their groups but are not ib_nodes: the roles never reach for them
    ib_nodes = {n: all_hosts[n] for n in ib_node_names(loaded)}
    children: dict[str, Any] = {
        "ib_nodes": {"hosts": ib_nodes},
        "ib_sm": {"hosts": {n.name: None for n in spec.nodes if n.name in sm_hosts}},
    }
    controller = slurm_controller(loaded)
    if controller is not None:
        children["slurm_controller"] = {"hosts": controller}
    timer = spec.monitoring.verify_timer
    if timer is not None:  # the node that runs verify on its timer (role ib_verify_timer)
        children["ib_verify_timer"] = {"hosts": {timer.host: None}}
    children.update(dict(sorted(groups.items())))
    return {"all": {"children": children}}


def ib_node_names(loaded: LoadedSpec) -> list[str]:
    """The hosts of group ib_nodes, in spec order: every node but the CAs that are no host to log in to."""
    return [n.name for n in loaded.spec.nodes if not set(n.groups) & set(NON_HOST_GROUPS)]


def slurm_controller(loaded: LoadedSpec) -> dict[str, Any] | None:
    """The group slurm_controller's hosts: the host that runs slurmctld, when ibprov manages Slurm's topology
    (None otherwise). A controller that is a node is that host; one that is not is a host of its own, reached
    at controller_address as controller_user, and in no ib_* group (no role but ib_slurm_topology reaches it)."""
    spec = loaded.spec
    scheduler = spec.scheduler
    if scheduler is None or not scheduler.manage_topology:
        return None
    name = scheduler.controller
    if any(n.name == name for n in spec.nodes):
        return {name: None}
    entry: dict[str, Any] = {}
    if scheduler.controller_address:
        entry["ansible_host"] = scheduler.controller_address
    if scheduler.controller_user and scheduler.controller_user != spec.cluster.ssh_user:
        entry["ansible_user"] = scheduler.controller_user
    return {name: entry or None}


def stack_vars(loaded: LoadedSpec) -> dict[str, Any]:
    stack = loaded.spec.stack
    out: dict[str, Any] = {"ib_stack_kind": stack.kind}
    if stack.version:
        out["ib_stack_version"] = stack.version
    if stack.repository:
        out["ib_stack_repository"] = stack.repository
    return out


def mpi_vars(loaded: LoadedSpec) -> dict[str, Any]:
    """The ib_mpi role's variables from the spec's ``mpi:`` section (the same on every ib_node)."""
    mpi = loaded.spec.mpi
    out: dict[str, Any] = {
        "ib_mpi_ucx_tls": list(mpi.ucx_tls),
        "ib_mpi_rails": [{"name": r.name, "devices": list(r.devices)} for r in mpi.rails],
        "ib_mpi_forbid_tcp": mpi.forbid_tcp,
        "ib_mpi_flavours": [
            {"name": f.name, **({"mca_params_file": f.mca_params_file} if f.mca_params_file else {})}
            for f in mpi.flavours
        ],
        "ib_mpi_openmpi_install": mpi.install_openmpi,
        "ib_mpi_benchmark_install": mpi.benchmark_tools,
        "ib_mpi_nccl_enabled": mpi.nccl is not None,
    }
    if mpi.nccl is not None:
        if mpi.nccl.ib_hca:
            out["ib_mpi_nccl_ib_hca"] = list(mpi.nccl.ib_hca)
        if mpi.nccl.ib_gid_index is not None:
            out["ib_mpi_nccl_ib_gid_index"] = mpi.nccl.ib_gid_index
        if mpi.nccl.socket_ifname:
            out["ib_mpi_nccl_socket_ifname"] = mpi.nccl.socket_ifname
    return out


def ipoib_vars(loaded: LoadedSpec) -> dict[str, list[dict[str, Any]]]:
    """host -> ib_ipoib_interfaces (:func:`~ibprov.clusterspec.ipoib.planned_interfaces`, as the role takes them)."""
    return {
        node: [
            {
                "name": i.name,
                "parent": i.parent,
                "pkey": i.pkey.wire if i.pkey is not None else None,
                "mode": i.mode,
                "mtu": i.mtu,
                "address": i.cidr,
            }
            for i in interfaces
        ]
        for node, interfaces in planned_interfaces(loaded.spec).items()
    }
