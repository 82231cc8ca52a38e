"""``verify --nodes``: node-level acceptance (HCAs, ports, firmware, stack, memlock, IPoIB, stray SMs).

The entry point of the nodes section (:data:`SECTION`). Collection (:mod:`.collect`) is thin Ansible
plumbing; parsing (:mod:`ibprov.probes.hostfacts`) and the checks (:mod:`.checks`) are pure, so the
report of canned observations needs no host at all.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.report.model import SectionReport, utc_now_text
from ibprov.twinnet.limits import TwinLimits, read_limits
from ibprov.verify.checking import run_checks
from ibprov.verify.nodes.checks import FAMILIES, Hosts, reached
from ibprov.verify.nodes.collect import AnsibleNodeCollector, NodeCollector
from ibprov.verify.nodes.facts import SCHEMA, NodesFacts
from ibprov.verify.nodes.plan import NodePlan, build_node_plan
from ibprov.verify.sections import Section, VerifyOptions

__all__ = ["SECTION", "TITLE", "check_nodes", "verify_nodes"]

TITLE = "Nodes"


def verify_nodes(loaded: LoadedSpec, collector: NodeCollector, *, twin: TwinLimits | None = None) -> SectionReport:
    """Collect from every planned host through ``collector`` and check against ``loaded``; ``twin``: the
    hosts are the twin's, judged by what it can show (and the report says what it cannot)."""
    started = utc_now_text()
    t0 = time.monotonic()
    plan = build_node_plan(loaded, twin=twin, inventory=getattr(collector, "inventory", None))
    hosts = collector.collect(plan.hosts)
    return check_nodes(
        plan,
        hosts,
        started=started,
        duration=time.monotonic() - t0,
        collected_from=collector.where,
        notes=_twin_notes(loaded, twin) if twin is not None else (),
    )


def _twin_notes(loaded: LoadedSpec, twin: TwinLimits) -> list[str]:
    notes = [*twin.notes(), *twin.limits]
    boxless = [n.name for n in loaded.spec.nodes if twin.containers and n.name not in twin.containers]
    if boxless:
        notes.append(
            f"{len(boxless)} node(s) are simulated HCAs only on the twin (no container), not checked: "
            + ", ".join(boxless)
        )
    return notes


def check_nodes(
    plan: NodePlan,
    hosts: Hosts,
    *,
    started: str = "",
    duration: float = 0.0,
    collected_from: str = "",
    notes: Sequence[str] = (),
) -> SectionReport:
    """The section report of the hosts' observations against the plan (no I/O)."""
    return SectionReport(
        name="nodes",
        title=TITLE,
        collected_from=collected_from,
        started=started,
        duration_seconds=duration,
        checks=run_checks(FAMILIES, plan, hosts),
        facts=NodesFacts(hosts=len(plan.hosts), hosts_reached=reached(plan, hosts)),
        notes=tuple(notes),
    )


def _run(loaded: LoadedSpec, options: VerifyOptions, _started: Any) -> SectionReport:
    """The section as the CLI runs it: the hosts through ``--inventory DIR``, else the spec's addresses."""
    from ibprov.run.inventory import nodes_inventory

    twin = read_limits(options.twin_limits) if options.twin_limits is not None else None
    source: str | dict[str, Any] = str(options.inventory) if options.inventory else nodes_inventory(loaded)
    if options.target == "twin":  # the twin rack's containers, through its inventory
        from ibprov.twin.rack import load_state

        state = load_state(loaded)
        source, twin = str(state.inventory), state.limits
    return verify_nodes(loaded, AnsibleNodeCollector(source), twin=twin)


SECTION = Section(name="nodes", title=TITLE, families=FAMILIES, facts_schema=SCHEMA, run=_run)
