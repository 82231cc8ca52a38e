"""``verify --fabric``: observe the fabric, compare it with the plan, and return the report."""

from __future__ import annotations

import time
from typing import Any

from ibprov.render.guids import GuidBook, fmt_guid
from ibprov.report.model import Report, utc_now_text
from ibprov.spec import LoadedSpec
from ibprov.verify.checks import run_checks
from ibprov.verify.checks.sm import planned_instance, sm_name
from ibprov.verify.observation import Observation
from ibprov.verify.observe import Clock, collect
from ibprov.verify.plan import Plan, build_plan
from ibprov.verify.runner import Runner

__all__ = ["check_observation", "verify_fabric"]


def verify_fabric(
    loaded: LoadedSpec,
    runner: Runner,
    *,
    soak: float | None = None,
    synthetic_guids: bool = False,
    clock: Clock | None = None,
) -> Report:
    """Collect through ``runner`` and check against ``loaded``. ``soak`` None takes the spec's
    acceptance.soak_seconds. ``synthetic_guids``: the fabric is the twin (its stand-in GUIDs)."""
    started = utc_now_text()
    t0 = time.monotonic()
    seconds = float(loaded.spec.acceptance.soak_seconds if soak is None else soak)
    obs = collect(runner, soak=seconds, qos=loaded.spec.qos.enabled, clock=clock)
    book = GuidBook.for_spec(loaded, allow_synthetic=synthetic_guids, twin=synthetic_guids)
    plan = build_plan(loaded, book, obs.nodes.values())
    return check_observation(
        plan,
        obs,
        started=started,
        duration=time.monotonic() - t0,
        collected_from=runner.where,
    )


def check_observation(
    plan: Plan, obs: Observation, *, started: str = "", duration: float = 0.0, collected_from: str = ""
) -> Report:
    """The report of one observation against the plan (no I/O)."""
    notes = list(plan.notes)
    if plan.book.synthetic:
        notes.append(f"synthetic GUIDs stand in for {len(plan.book.synthetic)} devices (twin)")
    if obs.from_port:
        notes.append(f"diags ran from {obs.from_port}")
    return Report(
        command="verify --fabric",
        cluster=plan.cluster,
        spec=str(plan.loaded.path) if plan.loaded.path else "",
        started=started,
        duration_seconds=duration,
        collected_from=collected_from,
        checks=tuple(run_checks(plan, obs)),
        soak_seconds=obs.soak.seconds if obs.soak is not None else None,
        fabric=_facts(plan, obs),
        notes=tuple(notes),
    )


def _facts(plan: Plan, obs: Observation) -> dict[str, Any]:
    sms = [
        {
            "object": sm_name(plan, obs, sm),
            "port_guid": fmt_guid(sm.port_guid),
            "lid": sm.lid,
            "priority": sm.priority,
            "state": sm.state,
            "planned": planned_instance(plan, sm) is not None,
        }
        for sm in sorted(obs.sms, key=lambda s: (s.state != "MASTER", -s.priority, s.port_guid))
    ]
    masters = [s for s in sms if s["state"] == "MASTER"]
    return {
        "switches": sum(1 for n in obs.nodes.values() if n.type == "SW"),
        "channel_adapters": sum(1 for n in obs.nodes.values() if n.type == "CA"),
        "links": len(obs.links),
        "master_sm": masters[0] if len(masters) == 1 else None,
        "subnet_managers": sms,
    }
