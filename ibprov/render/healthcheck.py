"""The ib_healthcheck role's variables (issue 25): per Slurm node, the ports its HCAs must have up, at what rate
and with which P_Keys, for the node-local check Slurm runs as HealthCheckProgram.

The expectations are the plan's, from the same computations verify judges with: the rate is the data rate of
the planned speed and width (:func:`~ibprov.clusterspec.units.data_rate_gbps`, as ``verify --nodes`` expects
it), the P_Keys the port's planned table (:meth:`~ibprov.identity.partitions.PartitionPlan.pkeys`). A port
whose GUID is not known yet gets no P_Keys (no partitions.conf names it either); an HCA under discover's
placeholder name (``hca3``) is left out (the host names it otherwise) and said in a note.

On a large cluster nearly every node expects the same (one HCA, the same partitions): the value most of the
ib_nodes share goes to group_vars/ib_nodes.yml once, and only a node that differs carries its own in hosts.yml
(10,000 identical nodes would otherwise add some 2.5 MB to it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.scheduler import scheduler_nodes
from ibprov.clusterspec.units import data_rate_gbps
from ibprov.identity.guids import PLACEHOLDER_DEVICE, GuidBook
from ibprov.identity.partitions import PartitionPlan
from ibprov.pkey import PKey

__all__ = ["HealthcheckVars", "healthcheck_vars"]

# one expected port: (device, port, rate_gbps, pkeys as written); a node's expectations: its ports in spec order
_Port = tuple[str, int, float, tuple[str, ...]]
_Ports = tuple[_Port, ...]


@dataclass
class HealthcheckVars:
    group: dict[str, Any] = field(default_factory=dict)  # group_vars/ib_nodes.yml
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)  # host -> its own, where it differs
    notes: list[str] = field(default_factory=list)


def _as_vars(ports: _Ports | None) -> dict[str, Any]:
    if ports is None:
        return {"ib_healthcheck_enabled": False}
    return {
        "ib_healthcheck_enabled": True,
        "ib_healthcheck_ports": [
            {"device": d, "port": p, "rate_gbps": r, **({"pkeys": list(k)} if k else {})} for d, p, r, k in ports
        ],
    }


def _expected(
    loaded: LoadedSpec, book: GuidBook, partitions: PartitionPlan, wanted: Collection[str]
) -> tuple[dict[str, _Ports], list[str]]:
    """Slurm node -> the ports it must have up; and the HCAs left out under placeholder names."""
    spec = loaded.spec
    nodes = [n for n in spec.nodes if n.name in wanted]
    port_guid = book.port_guid
    guids = {(n.name, h.device, p): port_guid(n.name, h.device, p) for n in nodes for h in n.hcas for p in h.ports}
    tables = partitions.pkeys(g for g in guids.values() if g is not None)
    texts: dict[frozenset[PKey], tuple[str, ...]] = {frozenset(): ()}  # a few tables, each sorted once
    rates: dict[tuple[str, str], float] = {}
    out: dict[str, _Ports] = {}
    placeholders: list[str] = []
    for node in nodes:
        ports: list[_Port] = []
        for hca in node.hcas:
            if PLACEHOLDER_DEVICE.match(hca.device):
                placeholders.append(f"{node.name}/{hca.device}")
                continue
            speed, width = hca.speed or spec.fabric.speed, hca.width or spec.fabric.width
            rate = rates.get((speed, width))
            if rate is None:
                rate = rates[(speed, width)] = data_rate_gbps(speed, width)
            for port in hca.ports:
                guid = guids[(node.name, hca.device, port)]
                table = tables.get(guid, frozenset()) if guid is not None else frozenset()
                text = texts.get(table)
                if text is None:
                    text = texts[table] = tuple(k.hex for k in sorted(table, key=lambda k: (k.base, k.full)))
                ports.append((hca.device, port, rate, text))
        out[node.name] = tuple(ports)
    return out, placeholders


def healthcheck_vars(
    loaded: LoadedSpec, book: GuidBook, partitions: PartitionPlan, ib_nodes: Collection[str]
) -> HealthcheckVars:
    """The ib_healthcheck variables of the ``ib_nodes`` (the hosts of group ib_nodes, in spec order): enabled with
    their ports on the scheduler's nodes, disabled elsewhere; nothing without a scheduler section."""
    scheduler = loaded.spec.scheduler
    if scheduler is None:
        return HealthcheckVars()
    hosts = list(ib_nodes)
    expected, placeholders = _expected(loaded, book, partitions, set(scheduler_nodes(loaded.spec)) & set(hosts))
    per_host: dict[str, _Ports | None] = {h: expected.get(h) for h in hosts}
    common = Counter(per_host.values()).most_common(1)[0][0] if per_host else None
    out = HealthcheckVars(group={"ib_healthcheck_memlock": "unlimited", "ib_healthcheck_drain": scheduler.drain})
    if common is not None:
        out.group.update(_as_vars(common))
    written: dict[_Ports | None, dict[str, Any]] = {}  # one mapping per distinct value, shared by its hosts
    for host, ports in per_host.items():
        if ports != common:
            variables = written.get(ports)
            if variables is None:
                variables = written[ports] = _as_vars(ports)
            out.hosts[host] = variables
    if placeholders:
        shown = ", ".join(placeholders[:5]) + (" ..." if len(placeholders) > 5 else "")
        out.notes.append(
            f"health check: {len(placeholders)} HCA(s) under discover's placeholder names left out of "
            f"ib_healthcheck_ports (name them as the host does): {shown}"
        )
    return out
