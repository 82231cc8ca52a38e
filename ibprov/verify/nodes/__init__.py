"""``verify --nodes``: node-level acceptance (HCAs, ports, firmware, stack, memlock, IPoIB, stray SMs).

Collection (:mod:`.collect`) is thin Ansible plumbing; parsing (:mod:`.parse`) and the checks
(:mod:`.checks`) are pure, so the report of canned observations needs no host at all.
"""

from __future__ import annotations

import time

from ibprov.report.model import Report, utc_now_text
from ibprov.spec import LoadedSpec
from ibprov.verify.nodes.checks import NODE_CHECKS, NodePlan, build_node_plan, check_nodes, run_node_checks
from ibprov.verify.nodes.collect import AnsibleNodeCollector, NodeCollector
from ibprov.verify.nodes.observation import DeviceFacts, HostObservation, PortFacts

__all__ = [
    "NODE_CHECKS",
    "AnsibleNodeCollector",
    "DeviceFacts",
    "HostObservation",
    "NodeCollector",
    "NodePlan",
    "PortFacts",
    "build_node_plan",
    "check_nodes",
    "run_node_checks",
    "verify_nodes",
]


def verify_nodes(loaded: LoadedSpec, collector: NodeCollector) -> Report:
    """Collect from every planned host through ``collector`` and check against ``loaded``."""
    started = utc_now_text()
    t0 = time.monotonic()
    plan = build_node_plan(loaded)
    hosts = collector.collect(plan.hosts)
    return check_nodes(
        plan,
        hosts,
        started=started,
        duration=time.monotonic() - t0,
        collected_from=collector.where,
    )
