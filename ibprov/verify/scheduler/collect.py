"""Reaching Slurm: one shell probe on the controller through Ansible (:data:`ibprov.probes.slurm.PROBE_SCRIPT`,
parsed by :func:`~ibprov.probes.slurm.parse_view`), and the ``scontrol update`` commands of a drain or a
resume, run there the same way (as every other remote action of ibprov: over SSH, never a local scontrol).

A controller that cannot be reached is a view with ``error`` set, never an exception; only when Ansible could
not start at all is that an :class:`~ibprov.errors.AnsibleError` (exit 3), from :mod:`ibprov.run.adhoc`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ibprov.clusterspec import LoadedSpec
from ibprov.probes.slurm import PROBE_SCRIPT, SlurmView, parse_view
from ibprov.run.adhoc import AdHoc, AnsibleRun, ansible_runner_run, failure
from ibprov.run.inventory import host_inventory

__all__ = ["AnsibleSlurm", "CommandResult", "Slurm", "controller_inventory"]

RESULT_MARK = "### ibprov-scontrol "


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    ok: bool
    output: str  # what scontrol printed (its error, when it failed)


class Slurm(Protocol):
    @property
    def where(self) -> str: ...

    def view(self) -> SlurmView: ...

    def run(self, commands: Sequence[Sequence[str]]) -> list[CommandResult]: ...


def controller_inventory(loaded: LoadedSpec) -> dict[str, Any]:
    """An inventory of the controller alone, from the spec: a node's address and user, or the scheduler's
    controller_address and controller_user for a controller that is no node."""
    scheduler = loaded.spec.scheduler
    assert scheduler is not None
    inventory = host_inventory(loaded, scheduler.controller)
    entry = inventory["all"]["hosts"][scheduler.controller]
    if not any(n.name == scheduler.controller for n in loaded.spec.nodes):
        entry["ansible_host"] = scheduler.controller_address or scheduler.controller
        if scheduler.controller_user:
            entry["ansible_user"] = scheduler.controller_user
    return inventory


def run_script(commands: Sequence[Sequence[str]]) -> str:
    """One shell script that runs each command and prints its exit status and output after a marker line,
    going on after a failure (each node's drain stands alone)."""
    lines = []
    for i, argv in enumerate(commands):
        command = " ".join(shlex.quote(a) for a in argv)
        lines.append(f"out=$({command} 2>&1); rc=$?; echo '{RESULT_MARK}{i}' \"$rc\"; printf '%s\\n' \"$out\"")
    lines.append("exit 0")
    return "\n".join(lines)


def parse_results(commands: Sequence[Sequence[str]], stdout: str) -> list[CommandResult]:
    """The outcome of each command of :func:`run_script`; a command with no marker did not run."""
    seen: dict[int, tuple[int, list[str]]] = {}
    current: list[str] | None = None
    for line in stdout.splitlines():
        if line.startswith(RESULT_MARK):
            index, _, status = line[len(RESULT_MARK) :].partition(" ")
            current = []
            seen[int(index)] = (int(status) if status.strip().isdigit() else 1, current)
        elif current is not None:
            current.append(line)
    out = []
    for i, argv in enumerate(commands):
        if i not in seen:
            out.append(CommandResult(tuple(argv), False, "did not run"))
            continue
        code, text = seen[i]
        out.append(CommandResult(tuple(argv), code == 0, "\n".join(text).strip()))
    return out


class AnsibleSlurm:
    """Slurm on ``controller``, reached through ``inventory`` (a path or a mapping); ``run`` stands in for
    ``ansible_runner.run`` (tests)."""

    def __init__(
        self, controller: str, inventory: Mapping[str, Any] | str, *, run: AnsibleRun = ansible_runner_run
    ) -> None:
        self.controller = controller
        self.ansible = AdHoc(inventory, run, forks=1)

    @property
    def where(self) -> str:
        return f"{self.controller} (ansible)"

    def _shell(self, script: str) -> tuple[str | None, str]:
        done = self.ansible.module([self.controller], "ansible.builtin.shell", {"cmd": script})
        outcome = done.get(self.controller)
        error = failure(outcome, "the Slurm probe")
        return error, str(outcome.res.get("stdout", "")) if outcome is not None else ""

    def view(self) -> SlurmView:
        error, stdout = self._shell(PROBE_SCRIPT)
        return SlurmView(error=error) if error is not None else parse_view(stdout)

    def run(self, commands: Sequence[Sequence[str]]) -> list[CommandResult]:
        if not commands:
            return []
        error, stdout = self._shell(run_script(commands))
        if error is not None:
            return [CommandResult(tuple(a), False, error) for a in commands]
        return parse_results(commands, stdout)
