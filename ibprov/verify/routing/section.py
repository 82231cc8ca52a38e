"""``verify --routing``: audit the forwarding tables the SM wrote — the engine in use, every CA pair and
switch LID reachable, no credit loop, up*/down* on a fat tree, minimal and balanced routes.

The entry point of the routing section (:data:`SECTION`): the diags through the fabric's runner (as
``verify --fabric``: this host, ``--via HOST``, or the target) -> :class:`~.observation.RoutingObservation`
-> the analysis (:mod:`.analysis`, pure) -> the checks (:mod:`.checks`) -> a report with
:class:`~.facts.RoutingFacts`. The engine OpenSM used is read from its log: ``--sm-log FILE`` on this
host, else on every planned SM node through Ansible (the target's inventory, ``--inventory``, or the
spec's addresses): the log of the node that configured the tables last, the master's (after a failover, a
planned standby's).
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.errors import AnsibleError, CollectError
from ibprov.identity.guids import GuidBook
from ibprov.probes import ParseError, smlog
from ibprov.probes.runner import Runner
from ibprov.probes.smlog import LOG_PATTERN, RoutingLog
from ibprov.report.model import SectionReport
from ibprov.run.adhoc import AdHoc
from ibprov.run.inventory import nodes_inventory
from ibprov.verify.fabric.commands import diag_runner
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.routing.analysis import analyse
from ibprov.verify.routing.checks import FAMILIES, Audited
from ibprov.verify.routing.collect import collect, engine_log
from ibprov.verify.routing.facts import SCHEMA, routing_facts
from ibprov.verify.routing.observation import EngineLog, RoutingObservation
from ibprov.verify.routing.plan import RoutingPlan, build_plan
from ibprov.verify.skeleton import Skeleton

__all__ = ["ROUTING", "SECTION", "TITLE", "audit_observation", "latest_router", "log_reader", "verify_routing"]

TITLE = "Routing"
SM_LOGS = "/var/log/opensm.log /var/log/opensm.*.log"  # Debian's packaged OpenSM; the ib_sm role's instances


def _notes(plan: RoutingPlan, audited: Audited) -> list[str]:
    notes = [*plan.notes, *audited.obs.notes, *(audited.obs.sls.notes if audited.obs.sls else ())]
    an = audited.analysis
    if an.sl_caveat:
        notes.append(f"credit loops checked on one VL (SL-unaware): {an.sl_caveat}")
    elif an.layered:
        notes.append(f"credit loops checked over (port, VL) with the SA's path SLs; VLs in use: {list(an.vls_used)}")
    return notes


ROUTING: Skeleton[RoutingPlan, Audited] = Skeleton(
    "routing", TITLE, FAMILIES, SCHEMA, facts=routing_facts, notes=_notes
)


def audit_observation(plan: RoutingPlan, obs: RoutingObservation) -> SectionReport:
    """The section report of one observation against the plan (no I/O)."""
    return ROUTING.report(plan, Audited(obs, analyse(plan, obs)))


def verify_routing(
    loaded: LoadedSpec,
    runner: Runner,
    read_log: Callable[[], EngineLog],
    *,
    twin: bool,
    tables_file: Path | None = None,
) -> SectionReport:
    """Collect through ``runner`` (the diags) and ``read_log`` (the SM's log), audit against ``loaded``;
    ``twin``: the fabric is the twin (its stand-in GUIDs name the switches); ``tables_file``: the forwarding
    tables from this file (``dump_lfts`` output, or OpenSM's ``opensm-lfts.dump``) rather than the switches."""

    def observe() -> tuple[RoutingPlan, Audited]:
        plan = build_plan(loaded, GuidBook.for_spec(loaded, allow_synthetic=twin, twin=twin))
        obs = collect(runner, plan, read_log, tables_file=tables_file)
        return plan, Audited(obs, analyse(plan, obs))

    return ROUTING.run(observe, collected_from=runner.where)


def log_reader(loaded: LoadedSpec, options: VerifyOptions) -> Callable[[], EngineLog]:
    """How the SM's log is read: ``--sm-log FILE`` here, else on every planned SM node through Ansible (the
    one that routed last is the master: after a failover that is a standby's log)."""
    if options.sm_log is not None:
        path = options.sm_log
        return lambda: _local_log(path)
    source: Mapping[str, Any] | str
    if options.target is not None:
        source = str(options.target.inventory)
    else:
        source = str(options.inventory) if options.inventory else nodes_inventory(loaded)
    nodes = [i.node for i in sorted(loaded.spec.subnet_manager.instances, key=lambda i: -i.priority)]
    return lambda: _remote_logs(AdHoc(source), list(dict.fromkeys(nodes)))


def _local_log(path: Path) -> EngineLog:
    try:
        return engine_log(path.read_text(errors="replace"), str(path))
    except OSError as exc:
        return engine_log(None, f"the SM's log {path} could not be read ({exc.strerror or exc})")


def _remote_logs(ansible: AdHoc, hosts: list[str]) -> EngineLog:
    """The routing lines of the OpenSM logs on the SM ``hosts`` (grep there: a log can be large); the log of
    the host that configured the tables last."""
    cmd = f"grep -h -E {shlex.quote(LOG_PATTERN)} {SM_LOGS} 2>/dev/null | tail -n 2000; true"
    try:
        outcomes = ansible.module(hosts, "ansible.builtin.shell", {"cmd": cmd})
    except AnsibleError as exc:
        return engine_log(None, f"the SMs' logs on {', '.join(hosts)} could not be read ({exc})")
    logs: dict[str, RoutingLog] = {}
    unread: list[str] = []
    for host in hosts:
        outcome = outcomes.get(host)
        if outcome is None or not outcome.ok:
            unread.append(f"{host}: {outcome.reason() if outcome is not None else 'no answer'}")
            continue
        with contextlib.suppress(ParseError):  # no OpenSM log line at all: nothing to say of this host
            logs[host] = smlog.parse(str(outcome.res.get("stdout", "")))
    router = latest_router(logs)
    if router is None:
        why = "; ".join(unread) or "no routing lines in " + SM_LOGS
        return engine_log(None, f"the SMs' logs could not be read ({why})")
    others = f" (read on {len(logs)} of {len(hosts)} SM nodes; {'; '.join(unread)})" if unread else ""
    return EngineLog(logs[router], f"{router}:{SM_LOGS}{others}")


def latest_router(logs: Mapping[str, RoutingLog]) -> str | None:
    """The host whose log configured the tables last (OpenSM's log stamps: month, day, time; a standby has no
    such line after it stood by), else the first host with a log."""
    stamped = {host: _stamp(log) for host, log in logs.items()}
    dated = {host: t for host, t in stamped.items() if t is not None}
    if dated:
        return max(dated, key=lambda h: dated[h])
    return next(iter(logs), None)


def _stamp(log: RoutingLog) -> datetime | None:
    line = log.engine_line or (log.last.no_engine_line if log.last else None)
    if line is None:
        return None
    try:
        # OpenSM's stamp has no year; a leap year parses Feb 29 (Python 3.13 warns on a yearless date, 3.15 fails)
        return datetime.strptime("2000 " + " ".join(line.text.split()[:4]), "%Y %b %d %H:%M:%S %f")
    except ValueError:
        return None


def _run(loaded: LoadedSpec, options: VerifyOptions, started: Any) -> SectionReport:
    runner, twin = diag_runner(loaded, options, started)
    try:
        return verify_routing(
            loaded,
            runner,
            log_reader(loaded, options),
            twin=options.synthetic_guids or twin is not None,
            tables_file=options.lfts,
        )
    except CollectError as exc:
        if options.target is None:
            raise
        exited = options.target.exited()
        raise CollectError(f"{exc}; {exited}" if exited else str(exc)) from None
    finally:
        runner.close()


SECTION = ROUTING.section(_run)
