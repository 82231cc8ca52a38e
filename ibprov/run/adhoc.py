"""Every Ansible call of ibprov outside playbooks: one ad-hoc module run over one or many hosts, one outcome
per host (ok / failed / unreachable, with the module's ``res``).

A host that fails or cannot be reached is an outcome, never an exception: the other hosts go on. Only when
Ansible cannot start (ansible-runner raises, ``ansible`` is not found, the inventory is unusable) or answers
for no host at all is that an :class:`~ibprov.errors.AnsibleError` (exit 3). ``run`` stands in for
``ansible_runner.run`` (tests); :func:`start` is shared with :func:`ibprov.run.run_playbook`.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ibprov.errors import AnsibleError
from ibprov.run.env import ansible_env
from ibprov.run.secrets import child_env, scrub_run_dir

__all__ = [
    "AdHoc",
    "AnsibleRun",
    "HostOutcome",
    "ansible_runner_run",
    "failure",
    "host_outcomes",
    "outcome_of",
    "run_module",
    "start",
    "why_no_host",
]

AnsibleRun = Callable[..., Any]
Status = Literal["ok", "failed", "unreachable"]
_OUTCOMES: dict[str, Status] = {
    "runner_on_ok": "ok",
    "runner_on_failed": "failed",
    "runner_on_unreachable": "unreachable",
}


@dataclass(frozen=True)
class HostOutcome:
    """How the module ended on one host, and what it returned (``res``: stdout, rc, msg, ansible_facts ...)."""

    status: Status
    res: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def reason(self) -> str:
        """The first line of the module's message (or stderr), for error messages."""
        text = str(self.res.get("msg") or self.res.get("stderr") or "").strip()
        return text.splitlines()[0] if text else "no reason given"


def failure(outcome: HostOutcome | None, kind: str) -> str | None:
    """Why ``kind`` (e.g. "the probe") gave a host nothing to read, or None when it ran: no answer, unreachable,
    or failed with its reason. The one wording of every host section's collection error."""
    if outcome is None:
        return f"no answer to {kind}"
    if outcome.ok:
        return None
    reason = outcome.reason()
    return f"unreachable: {reason}" if outcome.status == "unreachable" else f"{kind} failed: {reason}"


def ansible_runner_run(**kwargs: Any) -> Any:
    """``ansible_runner.run`` itself (imported on first use), with nothing secret written: no input files
    (``suppress_env_files``), and an environment without secrets, which ansible-runner records in the run's
    ``command`` artifact (:mod:`ibprov.run.secrets`); what earlier runs left there is scrubbed first."""
    # lazy: 66 ms to import; `ibprov --help`, validate and render never run Ansible
    from ansible_runner.interface import init_runner

    if kwargs.get("private_data_dir"):
        scrub_run_dir(Path(kwargs["private_data_dir"]))
    runner = init_runner(suppress_env_files=True, **kwargs)
    runner.config.env = child_env(runner.config.env)
    runner.run()
    return runner


def start(run: AnsibleRun, command: str, **kwargs: Any) -> Any:
    """``run(quiet=True, **kwargs)``; ansible-runner raises plain exceptions for setup problems: AnsibleError."""
    try:
        return run(quiet=True, **kwargs)
    except Exception as exc:
        raise AnsibleError(f"could not start {command}: {exc}") from exc


def outcome_of(event: str, res: object) -> HostOutcome | None:
    """The outcome an ansible-runner event (``runner_on_ok`` ...) with its ``res`` stands for; None for others."""
    status = _OUTCOMES.get(event)
    return None if status is None else HostOutcome(status, res if isinstance(res, dict) else {})


def host_outcomes(events: Sequence[Mapping[str, Any]]) -> dict[str, HostOutcome]:
    """host -> its last outcome, from ansible-runner's events."""
    out: dict[str, HostOutcome] = {}
    for event in events:
        data = event.get("event_data") or {}
        host, outcome = data.get("host"), outcome_of(str(event.get("event")), data.get("res"))
        if outcome is not None and isinstance(host, str):
            out[host] = outcome
    return out


def why_no_host(result: Any, events: Sequence[Mapping[str, Any]]) -> str:
    """Why Ansible answered for no host: its status, exit code and the last line it printed."""
    said = ""
    for event in events:
        lines = [line.strip() for line in str(event.get("stdout") or "").splitlines() if line.strip()]
        said = lines[-1] if lines else said
    status, rc = getattr(result, "status", "unknown"), getattr(result, "rc", None)
    return f"status {status}, rc {rc}" + (f": {said}" if said else "")


@contextmanager
def _data_dir(given: Path | None) -> Iterator[str]:
    if given is not None:
        yield str(given)
        return
    with tempfile.TemporaryDirectory(prefix="ibprov-ansible-") as tmp:
        yield tmp


def run_module(
    inventory: Mapping[str, Any] | str,
    hosts: str | Sequence[str],
    module: str,
    args: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    forks: int | None = None,
    private_data_dir: Path | None = None,
    run: AnsibleRun = ansible_runner_run,
) -> dict[str, HostOutcome]:
    """Run ``module`` with ``args`` on ``hosts`` (a pattern, or host names) of ``inventory`` (a path or an
    inventory mapping), with :func:`~ibprov.run.env.ansible_env` plus ``env``; the outcome of every host
    that answered (a host that did not is absent). Artifacts go to a temporary directory unless
    ``private_data_dir`` is given. AnsibleError when Ansible cannot start or answers for no host."""
    pattern = hosts if isinstance(hosts, str) else ":".join(hosts)
    with _data_dir(private_data_dir) as pdd:
        result = start(
            run,
            "ansible",
            private_data_dir=pdd,
            inventory=inventory,
            host_pattern=pattern,
            module=module,
            module_args=json.dumps(dict(args)) if args is not None else None,
            envvars=ansible_env(env),
            forks=forks,
        )
        events = list(getattr(result, "events", ()) or ())  # read from the artifacts, before they go
    outcomes = host_outcomes(events)
    if not outcomes:
        where = pattern if isinstance(hosts, str) or len(hosts) == 1 else f"any of {len(hosts)} hosts"
        raise AnsibleError(f"ansible could not run {module} on {where} ({why_no_host(result, events)})")
    return outcomes


@dataclass(frozen=True)
class AdHoc:
    """Where ad-hoc module calls go: ``inventory`` (a path, e.g. a rendered inventory directory or the twin's,
    or an inventory mapping), at most ``forks`` hosts at once; ``run`` stands in for ``ansible_runner.run``
    (tests). What verify's host sections (nodes, mpi) collect through."""

    inventory: Mapping[str, Any] | str
    run: AnsibleRun = ansible_runner_run
    forks: int = 20

    def module(
        self,
        hosts: str | Sequence[str],
        module: str,
        args: Mapping[str, Any] | None = None,
        *,
        env: Mapping[str, str] | None = None,
    ) -> dict[str, HostOutcome]:
        """:func:`run_module` on ``hosts`` of this inventory."""
        return run_module(self.inventory, hosts, module, args, env=env, forks=self.forks, run=self.run)
