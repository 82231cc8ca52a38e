"""Gathering for ``verify --nodes``: two ad-hoc Ansible runs over all planned hosts (the ib_facts module,
and one shell probe); everything they return is parsed by :mod:`ibprov.probes.hostprobe`.

A host Ansible cannot reach, or whose module fails, becomes a :class:`HostObservation` with ``error``
set: never an exception, and the other hosts go on. Only when Ansible answers for no host at all (it
could not start) is that an :class:`~ibprov.errors.AnsibleError` (exit 3), from :mod:`ibprov.run.adhoc`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ibprov.probes.hostprobe import (
    PROBE_SCRIPT,
    parse_ib_facts,
    parse_ip_addr,
    parse_memlock,
    parse_memlock_config,
    parse_networkd,
    parse_opensm,
    parse_probe,
    parse_stack_version,
)
from ibprov.resources import roles_dir
from ibprov.run.adhoc import AdHoc, AnsibleRun, HostOutcome, ansible_runner_run, failure
from ibprov.verify.nodes.observation import HostObservation

__all__ = ["AnsibleNodeCollector", "NodeCollector", "observe_host"]


class NodeCollector(Protocol):
    @property
    def where(self) -> str: ...

    def collect(self, hosts: Sequence[str]) -> dict[str, HostObservation]: ...


def observe_host(host: str, ib_facts_done: HostOutcome | None, probe_done: HostOutcome | None) -> HostObservation:
    """One host's observation from its ib_facts and probe outcomes (pure)."""
    error = failure(ib_facts_done, "ib_facts")
    if error is None:
        error = failure(probe_done, "the probe")
    if error is not None or ib_facts_done is None or probe_done is None:
        return HostObservation(host, error=error or "not collected")
    sections = parse_probe(str(probe_done.res.get("stdout", "")))
    notes: dict[str, list[str]] = {"memlock": [], "ip": [], "stack": []}  # lines besides each tool's output
    return HostObservation(
        host,
        devices=parse_ib_facts(ib_facts_done.res.get("ansible_facts") or {}),
        memlock=parse_memlock(sections.get("memlock", ""), notes["memlock"]),
        opensm=parse_opensm(sections.get("opensm", "")),
        addresses=parse_ip_addr(sections.get("ip", ""), notes["ip"]),
        stack_version=parse_stack_version(sections.get("stack", ""), notes["stack"]),
        memlock_configured=parse_memlock_config(sections.get("limits", "")),
        ipoib_configured=parse_networkd(sections.get("networkd", "")),
        notes=tuple(f"{_TOOLS[name]}: {line}" for name, lines in notes.items() for line in lines),
    )


_TOOLS = {"memlock": "ulimit -l", "ip": "ip -j addr", "stack": "the rdma-core version (dpkg/rpm)"}


class AnsibleNodeCollector:
    """Runs ib_facts and the probe on every host through :class:`~ibprov.run.adhoc.AdHoc`. ``inventory`` is
    a path (a rendered inventory directory) or an inventory mapping; ``run`` stands in for
    ``ansible_runner.run`` (tests)."""

    def __init__(
        self, inventory: Mapping[str, Any] | str, *, run: AnsibleRun = ansible_runner_run, forks: int = 20
    ) -> None:
        self.ansible = AdHoc(inventory, run, forks)

    @property
    def where(self) -> str:
        return "each host (ansible)"

    def collect(self, hosts: Sequence[str]) -> dict[str, HostObservation]:
        env = {"ANSIBLE_LIBRARY": str(roles_dir() / "ib_facts" / "library")}
        ib_facts = self.ansible.module(hosts, "ib_facts", env=env)
        probe = self.ansible.module(hosts, "ansible.builtin.shell", {"cmd": PROBE_SCRIPT}, env=env)
        return {h: observe_host(h, ib_facts.get(h), probe.get(h)) for h in hosts}
