"""Gathering for ``verify --nodes``: two ad-hoc Ansible runs over all planned hosts (the ib_facts module,
and one shell probe); everything they return is parsed by :mod:`ibprov.verify.nodes.parse`.

A host Ansible cannot reach, or whose module fails, becomes a :class:`HostObservation` with ``error``
set: never an exception, and the other hosts go on. Only when Ansible answers for no host at all (it
could not start) is that a :class:`~ibprov.errors.CollectError` (exit 3).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ibprov.errors import CollectError
from ibprov.verify.nodes.observation import HostObservation
from ibprov.verify.nodes.parse import (
    PROBE_SCRIPT,
    parse_ib_facts,
    parse_ip_addr,
    parse_memlock,
    parse_opensm,
    parse_probe,
    parse_stack_version,
)

__all__ = ["AnsibleNodeCollector", "NodeCollector", "host_results", "observe_host"]

AnsibleRun = Callable[..., Any]
_DONE = ("runner_on_ok", "runner_on_failed", "runner_on_unreachable")


class NodeCollector(Protocol):
    @property
    def where(self) -> str: ...

    def collect(self, hosts: Sequence[str]) -> dict[str, HostObservation]: ...


def _ansible_run(**kwargs: Any) -> Any:
    """``ansible_runner.run`` with the ``ansible`` of the interpreter running ibprov (the venv's) first on PATH
    (ansible-runner resolves it with this process's PATH)."""
    import ansible_runner

    saved = os.environ.get("PATH", "")
    path = f"{Path(sys.executable).parent}{os.pathsep}{saved}"
    os.environ["PATH"] = path
    try:
        return ansible_runner.run(**{**kwargs, "envvars": {**kwargs.get("envvars", {}), "PATH": path}})
    except Exception as exc:  # ansible-runner raises plain exceptions for setup problems
        raise CollectError(f"could not start ansible: {exc}") from exc
    finally:
        os.environ["PATH"] = saved


def host_results(events: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, dict[str, Any]]]:
    """host -> (outcome event, its ``res``) from ansible-runner's events (the last outcome per host)."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for event in events:
        if event.get("event") in _DONE:
            data = event.get("event_data", {})
            host = data.get("host")
            if isinstance(host, str):
                res = data.get("res")
                out[host] = (str(event["event"]), res if isinstance(res, dict) else {})
    return out


def _failure(kind: str, outcome: tuple[str, dict[str, Any]] | None) -> str | None:
    if outcome is None:
        return f"no answer to {kind}"
    event, res = outcome
    if event == "runner_on_ok":
        return None
    reason = str(res.get("msg") or res.get("stderr") or "no reason given").strip().splitlines()[0]
    return f"unreachable: {reason}" if event == "runner_on_unreachable" else f"{kind} failed: {reason}"


def observe_host(
    host: str, facts: tuple[str, dict[str, Any]] | None, probe: tuple[str, dict[str, Any]] | None
) -> HostObservation:
    """One host's observation from its ib_facts and probe outcomes (pure)."""
    error = _failure("ib_facts", facts)
    if error is None:
        error = _failure("the probe", probe)
    if error is not None or facts is None or probe is None:
        return HostObservation(host, error=error or "not collected")
    sections = parse_probe(str(probe[1].get("stdout", "")))
    return HostObservation(
        host,
        devices=parse_ib_facts(facts[1].get("ansible_facts") or {}),
        memlock=parse_memlock(sections.get("memlock", "")),
        opensm=parse_opensm(sections.get("opensm", "")),
        addresses=parse_ip_addr(sections.get("ip", "")),
        stack_version=parse_stack_version(sections.get("stack", "")),
    )


class AnsibleNodeCollector:
    """Runs ib_facts and the probe on every host through ansible-runner. ``inventory`` is a path (a rendered
    inventory directory) or an inventory mapping; ``run`` stands in for ``ansible_runner.run`` (tests)."""

    def __init__(self, inventory: Mapping[str, Any] | str, *, run: AnsibleRun = _ansible_run, forks: int = 20) -> None:
        self.inventory = inventory
        self._run = run
        self.forks = forks

    @property
    def where(self) -> str:
        return "each host (ansible)"

    def _adhoc(self, hosts: Sequence[str], module: str, args: str, envvars: Mapping[str, str]) -> Any:
        with tempfile.TemporaryDirectory(prefix="ibprov-nodes-") as pdd:
            result = self._run(
                private_data_dir=pdd,
                inventory=self.inventory,
                host_pattern=":".join(hosts),
                module=module,
                module_args=args,
                envvars=dict(envvars),
                forks=self.forks,
                quiet=True,
            )
            outcomes = host_results(list(getattr(result, "events", ()) or ()))
        if not outcomes:  # Ansible itself did not run (not installed, a bad inventory): no host was asked
            status, rc = getattr(result, "status", "unknown"), getattr(result, "rc", None)
            raise CollectError(f"ansible could not run {module} on any host (status {status}, rc {rc})")
        return outcomes

    def collect(self, hosts: Sequence[str]) -> dict[str, HostObservation]:
        from ibprov.resources import roles_dir

        library = str(roles_dir() / "ib_facts" / "library")
        env = {"ANSIBLE_LIBRARY": library, "ANSIBLE_HOST_KEY_CHECKING": "False"}
        facts = self._adhoc(hosts, "ib_facts", "", env)
        probe = self._adhoc(hosts, "ansible.builtin.shell", json.dumps({"cmd": PROBE_SCRIPT}), env)
        return {h: observe_host(h, facts.get(h), probe.get(h)) for h in hosts}
