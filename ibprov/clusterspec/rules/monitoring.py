"""The monitoring section: the verify timer runs on a node of the spec that is a host with an HCA (its diags
read the fabric through that HCA), and sections that need a scheduler (or a switch or UFM SM) have one."""

from __future__ import annotations

from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.findings import Finding, hint
from ibprov.clusterspec.topology import Topology
from ibprov.clusterspec.types import NON_HOST_GROUPS

TIMER: Path = ("monitoring", "verify_timer")


def monitoring_is_sound(spec: ClusterSpec, _topo: Topology) -> Iterator[Finding]:
    timer = spec.monitoring.verify_timer
    if timer is None:
        return
    node = next((n for n in spec.nodes if n.name == timer.host), None)
    if node is None:
        names = [n.name for n in spec.nodes]
        yield (
            (*TIMER, "host"),
            f"no node named {timer.host!r}{hint(timer.host, names)}: the verify timer runs on a node of the spec "
            "(its diags read the fabric through its HCA)",
        )
    elif set(node.groups) & set(NON_HOST_GROUPS):
        yield (
            (*TIMER, "host"),
            f"{timer.host} is in group {sorted(set(node.groups) & set(NON_HOST_GROUPS))[0]}, not a host Ansible "
            "logs in to: pick a node that is",
        )
    if "scheduler" in timer.sections and spec.scheduler is None:
        index = timer.sections.index("scheduler")
        yield (*TIMER, "sections", index), "section scheduler needs the spec's scheduler section"
    if "backend" in timer.sections and spec.subnet_manager.backend == "opensm":
        index = timer.sections.index("backend")
        yield (
            (*TIMER, "sections", index),
            "section backend reads a switch or UFM SM: subnet_manager.backend is opensm (verify --fabric reads "
            "OpenSM's partitions from the fabric)",
        )
