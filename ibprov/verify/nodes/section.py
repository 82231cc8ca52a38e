"""``verify --nodes``: node-level acceptance (HCAs, ports, firmware, stack, memlock, IPoIB, stray SMs).

The entry point of the nodes section (:data:`SECTION`). Collection (:mod:`.collect`) is thin Ansible
plumbing; parsing (:mod:`ibprov.probes.hostprobe`) and the checks (:mod:`.checks`) are pure, so the
report of canned observations needs no host at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.report.model import SectionReport
from ibprov.run.inventory import nodes_inventory
from ibprov.twinnet.limits import TwinLimits, read_limits
from ibprov.verify.nodes.checks import FAMILIES, Hosts, reached
from ibprov.verify.nodes.collect import AnsibleNodeCollector, NodeCollector
from ibprov.verify.nodes.facts import SCHEMA, NodesFacts
from ibprov.verify.nodes.plan import NodePlan, build_node_plan
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.skeleton import Skeleton

__all__ = ["NODES", "SECTION", "TITLE", "check_nodes", "verify_nodes"]

TITLE = "Nodes"


def nodes_facts(plan: NodePlan, hosts: Hosts) -> NodesFacts:
    return NodesFacts(hosts=len(plan.hosts), hosts_reached=reached(plan, hosts))


_SHOWN_LINES = 3  # lines of a host's probe notes quoted in the report


def nodes_notes(plan: NodePlan, hosts: Hosts) -> list[str]:
    """One note per host whose probe printed lines besides its tools' output (warnings, banners): they were
    read past; the first few are quoted."""
    notes = []
    for host in plan.hosts:
        h = hosts.get(host)
        if h is None or not h.notes:
            continue
        lines = h.notes
        more = f" (and {len(lines) - _SHOWN_LINES} more)" if len(lines) > _SHOWN_LINES else ""
        notes.append(
            f"{host}: the probe printed {len(lines)} line{'s' * (len(lines) != 1)} besides its tools' output "
            f"(read past): {'; '.join(lines[:_SHOWN_LINES])}{more}"
        )
    return notes


NODES: Skeleton[NodePlan, Hosts] = Skeleton("nodes", TITLE, FAMILIES, SCHEMA, facts=nodes_facts, notes=nodes_notes)
check_nodes = NODES.report  # the section report of the hosts' observations against the plan (no I/O)


def verify_nodes(
    loaded: LoadedSpec,
    collector: NodeCollector,
    *,
    twin: TwinLimits | None = None,
    inventory: Mapping[str, Any] | str | None = None,
) -> SectionReport:
    """Collect from every planned host through ``collector`` and check against ``loaded``; ``twin``: the
    hosts are the twin's, judged by what it can show (and the report says what it cannot); ``inventory``:
    what the collector reaches the hosts through (an unreachable host's hint names it)."""

    def observe() -> tuple[NodePlan, Hosts]:
        plan = build_node_plan(loaded, twin=twin, inventory=inventory)
        return plan, collector.collect(plan.hosts)

    notes = _twin_notes(loaded, twin) if twin is not None else ()
    return NODES.run(observe, collected_from=collector.where, notes=notes)


def _twin_notes(loaded: LoadedSpec, twin: TwinLimits) -> list[str]:
    notes = [*twin.notes(), *twin.limits]
    boxless = [n.name for n in loaded.spec.nodes if twin.containers and n.name not in twin.containers]
    if boxless:
        notes.append(
            f"{len(boxless)} node(s) are simulated HCAs only on the twin (no container), not checked: "
            + ", ".join(boxless)
        )
    return notes


def _run(loaded: LoadedSpec, options: VerifyOptions, _started: Any) -> SectionReport:
    """The section as the CLI runs it: the target's hosts through its inventory (judged by its limits), else
    the hosts through ``--inventory DIR``, else the spec's addresses."""
    source: str | dict[str, Any]
    twin: TwinLimits | None
    if options.target is not None:
        source, twin = str(options.target.inventory), options.target.limits
    else:
        source = str(options.inventory) if options.inventory else nodes_inventory(loaded)
        twin = read_limits(options.twin_limits) if options.twin_limits is not None else None
    return verify_nodes(loaded, AnsibleNodeCollector(source), twin=twin, inventory=source)


SECTION = NODES.section(_run)
