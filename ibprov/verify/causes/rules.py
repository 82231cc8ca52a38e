"""The rules by which one finding explains another, each stated as an admin would say it.

A rule names the checks whose findings can be a cause, the checks whose findings can be its symptoms, and
what must tie the two: the same port, cable, HCA or host, or the cause's name in the symptom's words. The
tie is the evidence, kept in words on the symptom (``caused by``). Rules are tried in the order of
:data:`RULES`; a symptom takes the first rule and cause that tie (:mod:`.graph`).

What a rule does not claim: a time order (a single run cannot tell which came first; a rogue SM explains
partition drift only while it is, or makes, a second master), and routes through switch-to-switch cables
(a lost spine link explains the findings at its own two ports, not the perf pairs whose routes crossed it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ibprov.clusterspec.types import Endpoint
from ibprov.report.model import Finding
from ibprov.verify.causes.subjects import Fabric, Subjects, port_text

__all__ = ["RULES", "Rule", "Tie"]

Tie = Callable[[Finding, Subjects, Finding, Subjects, Fabric], str | None]

# what a master SM writes: every CA port's PKey and QoS tables and every switch's routes
PROGRAMMED = (
    "pkey.missing",
    "pkey.extra",
    "pkey.membership",
    "qos.",
    "routing.engine",
    "routing.reachable",
    "routing.lft_loop",
    "routing.credit_loops",
    "routing.updown",
    "routing.balance",
    "routing.minimal",
)
# what sits on one port (or is about it): lost with the port's link
PORT_BOUND = (
    "node.port_state",
    "node.rate",
    "pkey.",
    "qos.",
    "collect.incomplete",
    "counters.",
    "sm.standby_missing",
    "sm.priority",
    "routing.reachable",
    "routing.lft_loop",
    "phy.",
)
TRAFFIC = (
    "perf.latency",
    "perf.bandwidth",
    "perf.baseline",
    "perf.tcp",
    "perf.suspect",
    "mpi.run",
    "mpi.latency",
    "mpi.bandwidth",
)
# the sections' "did not answer", in the order one explains the next
UNREACHABLE = ("node.unreachable", "mpi.unreachable", "perf.reach", "phy.unreachable")
ON_A_HOST = ("node.", "mpi.", "perf.", "phy.", "scheduler.node_state")


def _is(check: str, ids: tuple[str, ...]) -> bool:
    """``check`` is one of ``ids`` (an id ending in "." is a family: every check under it)."""
    return any(check.startswith(i) if i.endswith(".") else check == i for i in ids)


@dataclass(frozen=True)
class Rule:
    id: str
    says: str  # the rule in words (docs/verify.md lists them)
    causes: tuple[str, ...]
    symptoms: tuple[str, ...]
    tie: Tie

    def may_cause(self, check: str) -> bool:
        return _is(check, self.causes)

    def rank(self, check: str) -> int:
        """Where ``check`` comes in :attr:`causes` (the first cause a rule lists is the one it prefers)."""
        return next(i for i, c in enumerate(self.causes) if _is(check, (c,)))

    def may_suffer(self, check: str) -> bool:
        return _is(check, self.symptoms)


# --- ties -----------------------------------------------------------------------------------------------


def _names_the_rogue(cause: Finding, _cs: Subjects, symptom: Finding, _ss: Subjects, _f: Fabric) -> str | None:
    if f"{cause.object} MASTER" in symptom.observed:
        return f"the unplanned SM {cause.object} is a MASTER ({symptom.observed})"
    return None


def _masters_wrong(cause: Finding, _cs: Subjects, symptom: Finding, _ss: Subjects, _f: Fabric) -> str | None:
    seen = cause.observed
    if seen.startswith("no MASTER"):
        if symptom.check == "sm.standby_missing":
            return None  # a planned SM not running is its own fault, not the missing master's
        return f"no master SM ({seen}): no port is made ACTIVE and no table is programmed"
    if symptom.check == "node.port_state":
        return None
    if "MASTERs:" in seen or "not a planned SM" in seen:
        if symptom.check == "sm.standby_missing" and not symptom.observed.startswith("MASTER"):
            return None
        return f"{seen}: a master the plan does not have writes PKey, QoS and routing tables that are not the plan's"
    return None


def _rogue_is_master(cause: Finding, _cs: Subjects, _s: Finding, _ss: Subjects, _f: Fabric) -> str | None:
    if cause.observed.startswith("MASTER"):
        return f"the unplanned SM {cause.object} is MASTER: it writes every port's PKey and QoS tables and the routes"
    return None


def _same_host(cause: Finding, cs: Subjects, symptom: Finding, ss: Subjects, _f: Fabric) -> str | None:
    if _is(symptom.check, UNREACHABLE) and UNREACHABLE.index(symptom.check) < UNREACHABLE.index(cause.check):
        return None  # an unreachable host is explained only by an earlier reader's failure to reach it
    hosts = cs.hosts & ss.hosts
    if not hosts:
        return None
    return f"{min(hosts)} did not answer ({cause.check}): nothing on it could be read or run"


def _port_gone(cause: Finding, cs: Subjects, symptom: Finding, ss: Subjects, _f: Fabric) -> str | None:
    # the symptoms (the cable's loss, the host's view of the port) are all named by the HCA port itself
    if lost := sorted(cs.ports & ss.ports):
        port = lost[0]
        return f"{port_text(port)} is not on {port.device} ({cause.check}): its cable has nothing to train with"
    return None


def _cable_ends(cs: Subjects, f: Fabric) -> tuple[Endpoint, set[Endpoint]] | None:
    """The cause's cable: its named end and both its ends (None: the cause names no planned port)."""
    for port in sorted(cs.ports):
        cable = f.cable(port)
        if cable is not None:
            return port, set(cable)
    return None


def _on_the_cable(cs: Subjects, symptom: Finding, ss: Subjects, f: Fabric) -> Endpoint | None:
    """The cable end the symptom is about: a port of the cable, or (pairs naming hosts only: MPI) the host
    at its HCA end. None when the symptom is about something else."""
    found = _cable_ends(cs, f)
    if found is None:
        return None
    _named, ends = found
    if shared := sorted(ss.ports & ends):
        return shared[0]
    ca = next((e for e in sorted(ends) if e.hca), None)
    if ca is not None and not ss.ports and ca.device in ss.hosts and _is(symptom.check, TRAFFIC):
        return ca
    return None


def _link_lost(cause: Finding, cs: Subjects, symptom: Finding, ss: Subjects, f: Fabric) -> str | None:
    end = _on_the_cable(cs, symptom, ss, f)
    if end is None:
        return None
    what = "missing" if cause.check == "cabling.missing" else "down"
    return f"the cable at {cause.object} is {what} ({cause.check}): {port_text(end)} has no link"


def _link_degraded(cause: Finding, cs: Subjects, symptom: Finding, ss: Subjects, f: Fabric) -> str | None:
    end = _on_the_cable(cs, symptom, ss, f)
    if end is None:
        return None
    return f"the link at {cause.object} is degraded ({cause.check}: {cause.observed}); {port_text(end)} uses it"


def _switch_gone(cause: Finding, _cs: Subjects, _s: Finding, ss: Subjects, f: Fabric) -> str | None:
    ends = {end for p in ss.ports for end in (f.cable(p) or (p,))}
    if any(end.device == cause.object and end.hca is None for end in ends):
        return f"{cause.object} is not in the fabric ({cause.check}): every cable to it is lost"
    return None


def _hca_firmware(cause: Finding, cs: Subjects, _s: Finding, ss: Subjects, _f: Fabric) -> str | None:
    # an HCA port names its cable too (a cable is named by its HCA end)
    if any((p.device, p.hca) in cs.hcas for p in ss.ports):
        return f"{cause.object} runs firmware {cause.observed}, not {cause.expected} ({cause.check})"
    return None


def _host_stack(cause: Finding, cs: Subjects, _s: Finding, ss: Subjects, _f: Fabric) -> str | None:
    if cs.hosts & ss.hosts:
        return f"{cause.object} runs the RDMA stack {cause.observed}, not {cause.expected} ({cause.check})"
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "sm.rogue_master",
        "An SM the plan does not name that is MASTER explains the master finding that names it.",
        ("sm.rogue",),
        ("sm.master",),
        _names_the_rogue,
    ),
    Rule(
        "sm.wrong_master",
        "No master SM, or a master the plan does not have (a second MASTER, an unplanned one), explains the "
        "PKey, QoS and routing tables that are not the plan's (with no master: the ports not ACTIVE too) and a "
        "planned standby that is MASTER.",
        ("sm.master",),
        (*PROGRAMMED, "node.port_state", "sm.standby_missing"),
        _masters_wrong,
    ),
    Rule(
        "sm.rogue_programs",
        "An unplanned SM that is MASTER explains the PKey, QoS and routing tables that are not the plan's.",
        ("sm.rogue",),
        PROGRAMMED,
        _rogue_is_master,
    ),
    Rule(
        "host.unreachable",
        "A host that did not answer explains every finding about it (its ports, HCAs, MPI and perf pairs, its "
        "Slurm state), and a later section's failure to reach it.",
        UNREACHABLE,
        ON_A_HOST,
        _same_host,
    ),
    Rule(
        "switch.gone",
        "A planned switch that is not in the fabric explains the loss of every cable to it.",
        ("cabling.switch_missing",),
        ("cabling.missing", "link.down"),
        _switch_gone,
    ),
    Rule(
        "hca.missing",
        "An HCA port that is not on its host explains the loss of its cable.",
        ("node.hca_missing",),
        ("cabling.missing", "link.down", "node.port_state", "node.rate"),
        _port_gone,
    ),
    Rule(
        "link.lost",
        "A missing or down cable explains the findings at either of its ports (port state and rate, PKey and "
        "QoS tables, an SM behind it, routes to its HCA) and the perf and MPI pairs that use its HCA port.",
        ("cabling.missing", "link.down"),
        (*PORT_BOUND, *TRAFFIC),
        _link_lost,
    ),
    Rule(
        "link.degraded",
        "A link at the wrong width or speed, or with error counters over their limits, explains the host's view "
        "of the same link's rate and the perf and MPI pairs that use its HCA port.",
        ("link.width", "link.speed", "counters.threshold", "counters.soak_rate"),
        ("node.rate", *TRAFFIC),
        _link_degraded,
    ),
    Rule(
        "hca.firmware",
        "An HCA's wrong firmware explains the rate its ports train at, in the host's and the fabric's view, "
        "and their physical-layer findings.",
        ("node.firmware",),
        ("node.rate", "link.speed", "link.width", "phy."),
        _hca_firmware,
    ),
    Rule(
        "host.stack",
        "A host's wrong RDMA stack explains its missing verbs transports and RDMA devices.",
        ("node.stack_version",),
        ("mpi.verbs_transports", "perf.rdma_device"),
        _host_stack,
    ),
)
