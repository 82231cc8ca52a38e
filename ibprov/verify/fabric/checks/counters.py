"""Error counters: none above spec.acceptance.error_thresholds; with a soak, none rising during it.

A counter is over its threshold when its value is greater than the threshold (as ibqueryerrors counts
"errors beyond threshold"). Counters without a threshold in the spec are not judged.

During a soak (counters cleared, read again N seconds later) a link-health counter -- one that only
moves when the physical link misbehaves -- fails on any increase; the others (discards, congestion,
VL15 drops) only when the increase is above their threshold.
"""

from __future__ import annotations

from collections.abc import Mapping

from ibprov.report.model import Finding, Severity
from ibprov.verify.fabric.checks.objects import seen_ports
from ibprov.verify.fabric.observation import Observation, PortRef
from ibprov.verify.fabric.plan import Plan, port_name
from ibprov.verify.judge import Check

__all__ = ["CHECKS", "LINK_HEALTH", "check"]

# Counters that do not move on a healthy link, whatever the traffic.
LINK_HEALTH = frozenset(
    {
        "SymbolErrorCounter",
        "LinkErrorRecoveryCounter",
        "LinkDownedCounter",
        "PortRcvErrors",
        "PortRcvRemotePhysicalErrors",
        "LocalLinkIntegrityErrors",
        "ExcessiveBufferOverrunErrors",
    }
)

THRESHOLD = Check(
    "counters.threshold",
    "No error counter is above its threshold",
    Severity.ERROR,
    "reseat or replace the cable/transceiver of this port and its peer, clear the counters "
    "(ibqueryerrors -k) and confirm with `ibprov verify --fabric SPEC --soak 300`",
    seen_ports,
    object_kind="the port",
)


def _soak_ports(plan: Plan, obs: Observation) -> list[str]:
    return list(seen_ports(plan, obs)) if obs.soak is not None else []


SOAK = Check(
    "counters.soak_rate",
    "No link-health counter rises during the soak",
    Severity.ERROR,
    "the link is degrading now: replace the cable/transceiver of this port and its peer",
    _soak_ports,
    object_kind="the port",
)
CHECKS = (THRESHOLD, SOAK)


def _over(counters: Mapping[str, int], thresholds: Mapping[str, int]) -> dict[str, int]:
    return {n: v for n, v in sorted(counters.items()) if n in thresholds and v > thresholds[n]}


def _rising(deltas: Mapping[str, int], thresholds: Mapping[str, int]) -> dict[str, int]:
    return {
        n: v
        for n, v in sorted(deltas.items())
        if v > 0 and (n in LINK_HEALTH or (n in thresholds and v > thresholds[n]))
    }


def _name(plan: Plan, obs: Observation, ref: PortRef) -> str:
    return port_name(plan, obs.nodes, ref)


def check(plan: Plan, obs: Observation) -> list[Finding]:
    out: list[Finding] = []
    limits = plan.thresholds
    for ref, counters in sorted(obs.counters.items()):
        over = _over(counters, limits)
        if over:
            expected = ", ".join(f"{n} <= {limits[n]}" for n in over)
            found = ", ".join(f"{n} = {v}" for n, v in over.items())
            out.append(THRESHOLD.finding(_name(plan, obs, ref), expected, found))
    if obs.soak is not None:
        seconds = max(obs.soak.seconds, 1e-9)
        for ref, deltas in sorted(obs.soak.deltas.items()):
            rising = _rising(deltas, limits)
            if rising:
                expected = (
                    ", ".join(f"{n} +0" if n in LINK_HEALTH else f"{n} +{limits[n]} at most" for n in rising)
                    + f" in {obs.soak.seconds:.0f} s"
                )
                found = ", ".join(f"{n} +{v} ({v / seconds:.2f}/s)" for n, v in rising.items())
                out.append(SOAK.finding(_name(plan, obs, ref), expected, found))
    return out
