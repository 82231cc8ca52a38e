"""Hand-built observations for the check tests: the fabric exactly as planned, then broken on purpose.

``perfect(plan)`` is what the diags would show on a fabric built exactly to the plan (ibsim's GUID
convention: CA port GUID = node GUID + port; a switch's port-0 GUID = its node GUID). Tests mutate it.
"""

from __future__ import annotations

import copy
from pathlib import Path

from ibprov.clusterspec import LoadedSpec, load_spec, load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.identity.guids import GuidBook
from ibprov.report.model import Finding
from ibprov.verify.fabric.checks import FAMILIES
from ibprov.verify.fabric.observation import LinkState, Observation, ObservedLink, ObservedNode, ObservedSm, PortRef
from ibprov.verify.fabric.plan import Plan, build_plan
from ibprov.verify.judge import run_checks

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ACTIVE = LinkState("Active", "LinkUp")


def example(name: str) -> LoadedSpec:
    return load_spec(EXAMPLES / f"{name}.yaml")


def plan_of(loaded: LoadedSpec, *, synthetic: bool = True) -> Plan:
    return build_plan(loaded, GuidBook.for_spec(loaded, allow_synthetic=synthetic, twin=synthetic))


def plan_text(text: str) -> Plan:
    return plan_of(load_spec_text(text, "test.yaml"))


def ref(plan: Plan, end: Endpoint) -> PortRef:
    """The observed port of a planned end in :func:`perfect` observations."""
    if end.hca is None:
        guid = plan.switch_guids[end.device]
        assert guid is not None
        return PortRef(guid, end.port)
    node = plan.book.hca_guid(end.device, end.hca)
    assert node is not None
    return PortRef(node, end.port)


def perfect(plan: Plan) -> Observation:
    obs = Observation()
    lid = 1
    for name, guid in plan.switch_guids.items():
        assert guid is not None, name
        desc = plan.loaded.topology.switches[name].node_desc
        obs.nodes[guid] = ObservedNode(guid, "SW", desc, {}, lid, guid)
        lid += 1
    for (node, device), desc in plan.hca_descriptions.items():
        guid = plan.book.hca_guid(node, device)
        assert guid is not None
        ports = {}
        for end, port_guid in plan.port_guids.items():
            if (end.device, end.hca) == (node, device):
                ports[end.port] = (port_guid, lid)
                lid += 1
        obs.nodes[guid] = ObservedNode(guid, "CA", desc, ports)
    for link in plan.links:
        a, b = ref(plan, link.a), ref(plan, link.b)
        obs.links.append(ObservedLink(a, b, str(link.width), str(link.speed)))
        obs.states[a] = obs.states[b] = ACTIVE
    top = min(plan.sms, key=lambda s: (-s.priority, s.port_guid or 0))
    for sm in plan.sms:
        assert sm.port_guid is not None
        port = ref(plan, sm.endpoint)
        sm_lid = obs.nodes[port.node_guid].ports[port.port][1] or 0
        obs.sms.append(ObservedSm(port, sm.port_guid, sm_lid, sm.priority, "MASTER" if sm is top else "STANDBY"))
    obs.pkeys = {guid: tuple(sorted(keys)) for guid, keys in plan.pkeys.items()}
    if plan.qos is not None:
        for guid in plan.pkeys:
            obs.sl2vl[guid] = tuple(plan.qos.sl2vl or range(16))
            high = tuple(plan.qos.vlarb_high or ()) + ((0, 0),) * 4
            low = tuple(plan.qos.vlarb_low or ()) + ((0, 0),) * 4
            obs.vlarb[guid] = (high, low)
    return obs


def copy_of(obs: Observation) -> Observation:
    return copy.deepcopy(obs)


def findings(plan: Plan, obs: Observation, prefix: str = "") -> list[Finding]:
    """Every finding of every check (optionally only check ids starting with ``prefix``)."""
    return [f for result in run_checks(FAMILIES, plan, obs) for f in result.findings if f.check.startswith(prefix)]


def pairs(plan: Plan, obs: Observation, prefix: str = "") -> set[tuple[str, str]]:
    return {(f.check, f.object) for f in findings(plan, obs, prefix)}


def rewire(plan: Plan, obs: Observation, a: Endpoint, b: PortRef) -> None:
    """Move the cable at planned end ``a`` so that it ends at port ``b`` instead of its planned peer."""
    here = ref(plan, a)
    for i, link in enumerate(obs.links):
        if here in (link.a, link.b):
            obs.states.pop(link.b if link.a == here else link.a, None)
            obs.links[i] = ObservedLink(here, b, link.width, link.speed)
            obs.states[b] = ACTIVE
            return
    raise AssertionError(f"no observed link at {a}")


def unplug(plan: Plan, obs: Observation, a: Endpoint, *, state: LinkState | None = None) -> None:
    here = ref(plan, a)
    for link in list(obs.links):
        if here in (link.a, link.b):
            obs.links.remove(link)
            for end in (link.a, link.b):
                obs.states[end] = state or LinkState("Down", "Polling")
            return
    raise AssertionError(f"no observed link at {a}")
