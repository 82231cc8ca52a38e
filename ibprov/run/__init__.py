"""Run ibprov's playbooks through ansible-runner: one typed entry point, progress events, per-host results.

A failing or unreachable host never stops the others (Ansible's default strategy, no any_errors_fatal);
the hosts that failed are remembered in the run directory so ``--limit @failed`` retries only them.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ibprov.errors import AnsibleError, IbprovError
from ibprov.resources import playbooks_dir, roles_dir
from ibprov.run.adhoc import AnsibleRun, ansible_runner_run, start, why_no_host
from ibprov.run.env import TUNED_CONFIG, ansible_config_found, ansible_env, control_path_dir
from ibprov.run.lock import PLAYBOOK_PID, note_playbook
from ibprov.run.secrets import ansible_secrets, env_secrets, secret_files, withhold

FAILED_FILE = "failed-hosts"


@dataclass
class HostResult:
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0

    @property
    def status(self) -> str:
        if self.unreachable:
            return "unreachable"
        if self.failed:
            return "failed"
        return "changed" if self.changed else "ok"


@dataclass
class Progress:
    """What the live display shows: the current task, and hosts finished with it out of all hosts."""

    play: str = ""
    task: str = ""
    hosts_total: int = 0
    hosts_done: int = 0


@dataclass
class RunResult:
    status: str
    rc: int
    hosts: dict[str, HostResult]
    artifact_dir: Path
    diffs: list[tuple[str, str, str]] = field(default_factory=list)  # (host, task, unified diff)
    waiting: list[str] = field(default_factory=list)  # steps left out until `ibprov discover`, and why

    @property
    def failed_hosts(self) -> list[str]:
        return sorted(h for h, r in self.hosts.items() if r.failed or r.unreachable)


def _stats(stats: dict[str, dict[str, int]] | None) -> dict[str, HostResult]:
    hosts: dict[str, HostResult] = {}
    if not stats:
        return hosts
    for key, attr in (
        ("ok", "ok"),
        ("changed", "changed"),
        ("failures", "failed"),
        ("dark", "unreachable"),
        ("skipped", "skipped"),
    ):
        for host, count in (stats.get(key) or {}).items():
            setattr(hosts.setdefault(host, HostResult()), attr, count)
    return hosts


def _diff_text(diff: dict[str, Any]) -> str:
    if "prepared" in diff:
        return str(diff["prepared"])
    before, after = str(diff.get("before", "")), str(diff.get("after", ""))
    if before == after:
        return ""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=str(diff.get("before_header", "before")),
            tofile=str(diff.get("after_header", "after")),
        )
    )


class _Events:
    """Turns ansible-runner events into Progress updates and collected diffs."""

    def __init__(
        self, hosts_total: int, on_progress: Callable[[Progress], None] | None, pid_file: Path | None = None
    ) -> None:
        self.progress = Progress(hosts_total=hosts_total)
        self.on_progress = on_progress
        self.diffs: list[tuple[str, str, str]] = []
        self._done: set[str] = set()
        self._pid_file = pid_file  # where ansible-playbook's PID is noted, from its first event

    def __call__(self, event: dict[str, Any]) -> bool:
        if self._pid_file is not None and isinstance(event.get("pid"), int):
            note_playbook(self._pid_file, event["pid"])
            self._pid_file = None
        kind = event.get("event", "")
        data = event.get("event_data", {}) or {}
        p = self.progress
        if kind == "playbook_on_play_start":
            p.play = str(data.get("play", ""))
        elif kind == "playbook_on_task_start":
            p.task, p.hosts_done = str(data.get("task", "")), 0
            self._done = set()
        elif kind.startswith("runner_on_") and kind not in ("runner_on_start",):
            host = str(data.get("host", ""))
            if host and host not in self._done:
                self._done.add(host)
                p.hosts_done = len(self._done)
            result = data.get("res", {}) or {}
            for diff in result.get("diff", []) if isinstance(result.get("diff"), list) else [result.get("diff")]:
                if isinstance(diff, dict):
                    text = _diff_text(diff)
                    if text:
                        self.diffs.append((host, p.task, text))
        if self.on_progress is not None:
            self.on_progress(p)
        return True


def read_failed(run_dir: Path) -> list[str]:
    path = run_dir / FAILED_FILE
    return [h for h in path.read_text().split() if h] if path.is_file() else []


@dataclass(frozen=True)
class ApplyOptions:
    """How a playbook runs: what the user chose on apply's command line, built once by the CLI and read by
    every layer below it. Where it runs (an inventory, the hosts there) is a :class:`Target`'s business."""

    check: bool = False  # change nothing, report what would change (ansible-playbook --check)
    diff: bool = False  # report the changes file by file (--diff)
    limit: str | None = None  # only these hosts/groups (--limit); "@failed": the hosts that failed last time
    tags: str | None = None  # only the tasks with these tags (comma separated)
    skip_tags: str | None = None  # not the tasks with these tags (comma separated)
    tuned: bool = True  # ibprov's settings for scale (ibprov/run/env.py, fact cache); False: Ansible's defaults

    def skipping(self, tags: Iterable[str]) -> ApplyOptions:
        """These options, also leaving out the tasks tagged ``tags``."""
        return replace(self, skip_tags=",".join(x for x in (self.skip_tags, *tags) if x))

    def within(self, hosts: Sequence[str]) -> ApplyOptions:
        """These options on ``hosts`` only: the limit intersected with them."""
        base = ",".join(hosts)
        return replace(self, limit=f"{base},&{self.limit}" if self.limit else base)

    def retrying(self, run_dir: Path) -> ApplyOptions:
        """These options with ``limit="@failed"`` replaced by the hosts that failed the last run in ``run_dir``;
        IbprovError when none did (a request that cannot be met, like a usage error: exit 2; Ansible is not asked)."""
        if self.limit != "@failed":
            return self
        failed = read_failed(run_dir)
        if not failed:
            raise IbprovError(f"no failed hosts recorded in {run_dir / FAILED_FILE}: nothing to retry")
        return replace(self, limit=",".join(failed))


@dataclass(frozen=True)
class Target:
    """Where apply runs when it is not the spec's own hosts: e.g. the twin rack's containers. How it runs
    there is the :class:`ApplyOptions`; a target only narrows them (its hosts, the tasks it cannot run)."""

    name: str  # "twin"
    inventory: Path  # an inventory that overrides the rendered one's connection variables
    hosts: tuple[str, ...]  # the hosts that exist there (the others are left out with --limit)
    unsupported_tags: tuple[str, ...] = ()  # tags of the tasks that cannot run there (kernel modules in a container)
    synthetic_guids: bool = False  # render with the target's stand-in GUIDs where the spec has none


def run_playbook(
    playbook: Path,
    inventory: Path | Sequence[Path],
    run_dir: Path,
    options: ApplyOptions = ApplyOptions(),
    *,
    roles_path: Path,
    extra_env: dict[str, str] | None = None,
    hosts_total: int = 0,
    on_progress: Callable[[Progress], None] | None = None,
    run: AnsibleRun = ansible_runner_run,
) -> RunResult:
    """Run ``playbook`` against ``inventory`` as ``options`` say; artifacts (events, stdout, status) stay in
    ``run_dir``, and the hosts that failed, for ``limit="@failed"`` next time.

    AnsibleError (exit 3) when ansible-playbook cannot start or fails before any host ran (it then leaves
    the hosts recorded for ``--limit @failed`` as they were); ``run`` stands in for ``ansible_runner.run``."""
    options = options.retrying(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {"ANSIBLE_ROLES_PATH": str(roles_path)}
    settings: dict[str, Any] = {}
    if options.tuned:
        # an absolute path survives ansible-runner's join with the per-run artifact dir: facts persist
        settings = {"fact_cache_type": "jsonfile", "fact_cache": str((run_dir / "fact-cache").resolve())}
        env["ANSIBLE_SSH_CONTROL_PATH_DIR"] = str(control_path_dir(run_dir))
        if not ansible_config_found({**os.environ, **(extra_env or {})}, playbook.parent.resolve()):
            config = run_dir / "ansible.cfg"
            config.write_text(TUNED_CONFIG)
            env["ANSIBLE_CONFIG"] = str(config.resolve())
    cmdline = " ".join(flag for flag, on in (("--check", options.check), ("--diff", options.diff)) if on)
    events = _Events(hosts_total, on_progress, run_dir / PLAYBOOK_PID)
    try:
        runner = start(
            run,
            "ansible-playbook",
            private_data_dir=str(run_dir),
            project_dir=str(playbook.parent.resolve()),
            playbook=playbook.name,
            settings=settings,
            inventory=str(inventory) if isinstance(inventory, Path) else [str(p.resolve()) for p in inventory],
            envvars=ansible_env({**env, **(extra_env or {})}, tuned=options.tuned),
            cmdline=cmdline or None,
            limit=options.limit,
            tags=options.tags,
            skip_tags=options.skip_tags,
            event_handler=events,
            rotate_artifacts=10,
        )
    finally:
        (run_dir / PLAYBOOK_PID).unlink(missing_ok=True)  # the play is over (a killed ibprov leaves it: see lock)
    stats = runner.stats
    if stats is None and runner.rc:  # no play recap: ansible-playbook stopped before any host ran
        reason = why_no_host(runner, list(runner.events))
        where = runner.config.artifact_dir
        raise AnsibleError(f"ansible-playbook could not run {playbook.name} ({reason}); see {where}")
    hosts = _stats(stats)
    result = RunResult(str(runner.status), int(runner.rc or 0), hosts, Path(runner.config.artifact_dir), events.diffs)
    (run_dir / FAILED_FILE).write_text("".join(f"{h}\n" for h in result.failed_hosts))
    return result


def missing_secrets(loaded: Any, environ: Mapping[str, str]) -> list[str]:
    """The spec's ``env:VARIABLE`` secret references whose variable is not set: Ansible would fail on them
    with its output hidden (no_log), so apply names them first."""
    sm = loaded.spec.subnet_manager
    refs = [(f"subnet_manager.{name}", getattr(sm, name)) for name in ("sm_key", "m_key")]
    return [
        f"{where}: {ref} is not set in the environment"
        for where, ref in refs
        if isinstance(ref, str) and ref.startswith("env:") and not environ.get(ref.removeprefix("env:"))
    ]


def apply_spec(
    loaded: Any,
    run_dir: Path,
    options: ApplyOptions = ApplyOptions(),
    *,
    target: Target | None = None,
    rendered: Path | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunResult:
    """Render ``loaded`` (a LoadedSpec) into ``rendered`` (default ``run_dir/rendered``) and run the site
    playbook on it as ``options`` say, its artifacts in ``run_dir/runner``; with a ``target``, on the target's
    hosts through its inventory."""
    # lazy: render imports pydantic and the spec model, which the ad-hoc runs of ibprov.run.adhoc must not wait
    # for (verify's fabric discovery starts before the spec loads)
    from ibprov.render import render_files, write_tree

    missing = missing_secrets(loaded, os.environ)
    if missing:
        raise IbprovError("; ".join(missing) + " (export it, or refer to a vault: variable)")
    # a new rack has no drivers yet, so nothing can read its GUIDs: everything but the subnet managers runs
    output = render_files(loaded, synthetic_guids=target is not None and target.synthetic_guids, defer_sm=True)
    rendered = rendered or run_dir / "rendered"
    write_tree(rendered, output.files)
    if output.sm_waits_for:
        options = options.skipping(["ib_sm"])
    runner_dir = run_dir / "runner"
    inventory: list[Path] = [rendered / "inventory"]
    if target is not None:
        inventory.append(target.inventory)
        # @failed first: within the target's hosts ("h1,h2,&@failed") Ansible would read it as a host name
        options = options.retrying(runner_dir).within(target.hosts).skipping(target.unsupported_tags)
    withhold(env_secrets(loaded.spec))
    with secret_files(ansible_secrets(loaded.spec)) as secrets:
        result = run_playbook(
            playbooks_dir() / "site.yml",
            inventory,
            runner_dir,
            options,
            roles_path=roles_dir(),
            extra_env=secrets,
            hosts_total=len(target.hosts) if target is not None else len(loaded.spec.nodes),
            on_progress=on_progress,
        )
    result.waiting = output.sm_waits_for
    return result
