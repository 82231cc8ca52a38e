"""The ibprov command line. The only module that prints or exits."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.live import Live

from ibprov import __version__
from ibprov.errors import CollectError, ExitCode, IbprovError, SpecError
from ibprov.history.store import History
from ibprov.report import Report, to_html, to_json, to_junit
from ibprov.report.apply_table import hosts_table
from ibprov.report.console import facts_lines, findings_table, fix_lines, summary_text, table_width
from ibprov.report.failure import failure_json, failure_junit
from ibprov.report.model import Severity
from ibprov.run import ApplyOptions, Progress, apply_spec
from ibprov.verify.registry import SECTIONS, VerifyOptions, misplaced_options, prestart, run_sections

if TYPE_CHECKING:
    from ibprov.clusterspec import LoadedSpec
    from ibprov.discover.found import Found
    from ibprov.discover.match import MatchResult
    from ibprov.verify.target import VerifyTarget

F = TypeVar("F", bound=Callable[..., Any])
err_console = Console(stderr=True, highlight=False, soft_wrap=True)
out_console = Console(highlight=False, soft_wrap=True)


def handles_errors(func: F) -> F:
    """Turn ibprov errors into one line per problem and an exit code; anything else into a bug report."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except SpecError as exc:
            for problem in exc.problems:
                click.echo(str(problem), err=True)
            n = len(exc.problems)
            click.echo(f"{n} problem{'s' if n != 1 else ''} found", err=True)
            sys.exit(exc.exit_code)
        except IbprovError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt, SystemExit):
            raise
        except Exception:
            log = Path("ibprov-debug.log")
            try:
                log.write_text(traceback.format_exc())
                where = f"details in {log}"
            except OSError:
                where = "could not write ibprov-debug.log"
            click.echo(f"internal error: {sys.exc_info()[1]!r} ({where}); please report it as a bug", err=True)
            sys.exit(ExitCode.INTERNAL_ERROR)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ibprov")
def cli() -> None:
    """Provision and accept InfiniBand fabrics from one cluster.yaml.

    cluster.yaml -> validate -> render -> apply -> verify -> report
    """


def _sm_summary(sm: Any) -> str:
    if sm.backend == "switch" and sm.switch is not None:
        return f"SM in switch {sm.switch.name} (contract-tested back end)"
    count = f"{len(sm.instances)} subnet manager{'s' if len(sm.instances) != 1 else ''}"
    return f"{count} (UFM's, contract-tested back end)" if sm.backend == "ufm" else count


@cli.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("-q", "--quiet", is_flag=True, help="Print nothing when the spec is valid.")
@handles_errors
def validate(spec: Path, quiet: bool) -> None:
    """Check SPEC; print every problem as FILE:LINE:COL: field: message (exit 2), or a summary (exit 0).
    Warnings (FILE:LINE:COL: field: warning: message, on stderr, also with --quiet) do not change the exit."""
    loaded = _load_spec(spec)
    if not quiet:
        s = loaded.spec
        generated = sum(1 for sw in loaded.topology.switches.values() if sw.generated)
        n = len(loaded.warnings)
        click.echo(
            f"{spec}: valid — cluster {s.cluster.name}: {len(s.nodes)} nodes, "
            f"{len(loaded.topology.switches)} switches ({generated} generated), "
            f"{len(loaded.topology.links)} links, {len(s.partitions)} partitions, "
            f"{_sm_summary(s.subnet_manager)}, QoS {'on' if s.qos.enabled else 'off'}"
            + (f"; {n} warning{'s' if n != 1 else ''}" if n else "")
        )


@cli.command()
@handles_errors
def schema() -> None:
    """Print the JSON Schema of cluster.yaml (for editors and language servers)."""
    # lazy: the spec's models (pydantic) only for the command that reads them; `ibprov --help` starts without them
    from ibprov.clusterspec.schema import json_schema

    click.echo(json.dumps(json_schema(), indent=2, sort_keys=False))


@cli.command()
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@handles_errors
def example(output: Path | None, force: bool) -> None:
    """Write a commented example spec (a small rack) to start from."""
    # lazy: the spec's models (pydantic) only for the command that reads them; `ibprov --help` starts without them
    from ibprov.clusterspec.example import example_text

    text = example_text()
    if output is None:
        click.echo(text, nl=False)
        return
    if output.exists() and not force:
        raise IbprovError(f"{output} exists; use --force to overwrite it")
    output.write_text(text)
    click.echo(f"wrote {output}", err=True)


@cli.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(path_type=Path),
    help="Directory to write (inventory/, opensm/, fabric/); default inventories/<cluster>.",
)
@click.option("--check", is_flag=True, help="Change nothing; print a diff and exit 1 if DIR is out of date.")
@click.option(
    "--synthetic-guids",
    is_flag=True,
    help="Stand in stable synthetic GUIDs for GUIDs the spec and lock file lack (twin use only).",
)
@handles_errors
def render(spec: Path, out_dir: Path | None, check: bool, synthetic_guids: bool) -> None:
    """Render SPEC into the inventory, role variables, OpenSM files and the fabric twin."""
    # lazy: render (jinja2) only for render; `ibprov --help` starts without them
    from ibprov.render import diff_tree, render_files, write_tree

    loaded = _load_spec(spec)
    out_dir = out_dir or Path("inventories") / loaded.spec.cluster.name
    output = render_files(loaded, synthetic_guids=synthetic_guids)
    for note in output.notes:
        click.echo(f"note: {note}", err=True)
    if check:
        diffs = diff_tree(out_dir, output.files)
        for diff in diffs:
            click.echo(diff, nl=False)
        if diffs:
            click.echo(f"{out_dir}: {len(diffs)} file(s) out of date; run `ibprov render` to update", err=True)
            sys.exit(ExitCode.FINDINGS)
        click.echo(f"{out_dir}: up to date ({len(output.files)} files)", err=True)
        return
    changed = write_tree(out_dir, output.files)
    click.echo(f"{out_dir}: {len(output.files)} files, {len(changed)} changed")


class _TwinGroup(click.Group):
    """``ibprov twin SPEC`` (the one-shot proof) and ``ibprov twin up|down|status|fault|heal SPEC``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["prove", *args]
        return super().parse_args(ctx, args)


@cli.group(cls=_TwinGroup)
def twin() -> None:
    """The fabric twin: `twin SPEC` proves the rendered OpenSM configuration on ibsim (one shot);
    `twin up SPEC` builds a twin rack (ibsim + one container per node) that apply, plan and verify reach
    with --target twin."""


@twin.command("prove", hidden=True)
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("-w", "--workdir", type=click.Path(path_type=Path), help="Keep the twin's files here.")
@click.option("--timeout", default=120.0, show_default=True, help="Seconds to wait for SUBNET UP.")
@click.option(
    "--save-ibnetdiscover",
    type=click.Path(path_type=Path),
    help="Save the twin's `ibnetdiscover` output here (input for `ibprov discover --from`).",
)
@click.option(
    "--verify",
    "run_verify",
    is_flag=True,
    help="Then run `verify --fabric` against the running twin (with its stand-in GUIDs).",
)
@click.option(
    "--routing",
    is_flag=True,
    help="With --verify: also run `verify --routing` on the tables the real OpenSM programmed: credit loops, "
    "dead ends, up*/down* and balance of the planned engine on the planned cabling, before any hardware exists.",
)
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="With --verify: write report.json.")
@click.option("--junit", "junit_path", type=click.Path(path_type=Path), help="With --verify: write junit.xml.")
@click.option("--html", "html_path", type=click.Path(path_type=Path), help="With --verify: write report.html.")
@click.option(
    "--synthetic-guids",
    is_flag=True,
    hidden=True,
    help="Accepted for symmetry with render and verify: the twin always stands in synthetic GUIDs.",
)
@handles_errors
def twin_prove(
    spec: Path,
    workdir: Path | None,
    timeout: float,
    save_ibnetdiscover: Path | None,
    run_verify: bool,
    routing: bool,
    json_path: Path | None,
    junit_path: Path | None,
    html_path: Path | None,
    synthetic_guids: bool,
) -> None:
    """Bring the planned fabric up on the twin (ibsim + the rendered OpenSM config) and report."""
    # lazy: the twin (ibsim, OpenSM) only for its commands; `ibprov --help` starts without them
    from ibprov.twin.prove import prove

    if routing and not run_verify:
        raise click.UsageError("--routing: only with --verify (it audits the running twin's tables)")
    loaded = _load_spec(spec)
    with tempfile.TemporaryDirectory(prefix="ibprov-twin-") as tmp:
        result = prove(loaded, workdir or Path(tmp), timeout=timeout, verify=run_verify, routing=routing)
    for line in result.lines:
        click.echo(line)
    if result.report is None:  # else the report carries them: each note is shown once
        for note in result.notes:
            click.echo(f"note: {note}", err=True)
    if save_ibnetdiscover is not None and result.ibnetdiscover:
        save_ibnetdiscover.write_text(result.ibnetdiscover)
        click.echo(f"saved the twin's ibnetdiscover output to {save_ibnetdiscover}")
    if result.problems:
        for problem in result.problems:
            click.echo(f"FAIL: {problem}", err=True)
        cluster = loaded.spec.cluster.name
        _write_failure(
            "twin", spec, result.problems, ExitCode.FINDINGS, json_path, junit_path, cluster=cluster, kind="failure"
        )
        sys.exit(ExitCode.FINDINGS)
    if result.report is not None:
        _print_report(result.report, json_path, junit_path, html_path)


@twin.command("up")
@click.argument("spec", type=click.Path(path_type=Path))
@handles_errors
def twin_up(spec: Path) -> None:
    """Build the twin rack of SPEC (or reuse the one running): ibsim and a container per node, reachable over
    SSH; then `ibprov apply SPEC --target twin`."""
    # lazy: the twin (podman) only for its commands; `ibprov --help` starts without them
    from ibprov.twin.rack import up

    loaded = _load_spec(spec)
    state = up(loaded, say=lambda line: click.echo(line, err=True))
    for note in state.limits.notes():
        click.echo(f"note: {note}", err=True)
    click.echo(f"state, key, ssh_config, inventory: {state.path}")
    click.echo(f"next: ibprov apply {spec} --target twin")


@twin.command("status")
@click.argument("spec", type=click.Path(path_type=Path))
@handles_errors
def twin_status(spec: Path) -> None:
    """What of the twin rack of SPEC runs, which nodes are simulated HCAs only, the faults injected, and who holds
    ibsim's ten client slots (those of processes that are gone are taken back)."""
    # lazy: the twin (podman) only for its commands; `ibprov --help` starts without them
    from ibprov.clusterspec import load_spec
    from ibprov.twin.keeper import slot_report
    from ibprov.twin.rack import RackError, load_state, status

    loaded = load_spec(spec)
    for line in status(loaded):
        click.echo(line)
    try:
        state = load_state(loaded)
    except RackError:
        return  # no rack: status said so
    try:
        lines = slot_report(state).lines()
    except RackError as exc:
        lines = [f"ibsim client slots: unknown ({exc})"]
    for line in lines:
        click.echo(f"  {line}")


@twin.command("fault", context_settings={"ignore_unknown_options": True})
@click.argument("spec", type=click.Path(path_type=Path))
@click.argument("kind", type=click.Choice(["unlink", "swap", "counters", "degrade", "rogue-sm", "pkey-drift"]))
@click.argument("args", nargs=-1)
@handles_errors
def twin_fault(spec: Path, kind: str, args: tuple[str, ...]) -> None:
    """Inject a fault that verify must find into the twin rack of SPEC:

    \b
      unlink END             pull the cable at END (leaf01:3 or node01/mlx5_0:1)
      swap A B               exchange the far ends of the cables at A and B
      counters END [N=V ...] set error counters (default SymbolErrorCounter=500)
      degrade END width=1x   retrain the link narrower (or speed=EDR: slower)
      rogue-sm NODE          start an OpenSM on NODE's HCA (OpenSM's default sm_key: beside
                             a planned sm_key it may make itself a second MASTER)
      rogue-sm NODE planned-key   the same with the planned sm_key (it stays STANDBY)
      pkey-drift NODE        put NODE's port into an unplanned partition
    """
    # lazy: the twin (podman) only for its commands; `ibprov --help` starts without them
    from ibprov.clusterspec import load_spec
    from ibprov.twin.faults import inject
    from ibprov.twin.rack import load_state

    loaded = load_spec(spec)
    click.echo(inject(load_state(loaded), loaded, kind, args))


@twin.command("heal")
@click.argument("spec", type=click.Path(path_type=Path))
@handles_errors
def twin_heal(spec: Path) -> None:
    """Undo every fault injected into the twin rack of SPEC, newest first."""
    # lazy: the twin (podman) only for its commands; `ibprov --help` starts without them
    from ibprov.clusterspec import load_spec
    from ibprov.twin.faults import heal
    from ibprov.twin.rack import load_state

    healed = heal(load_state(load_spec(spec)))
    click.echo("\n".join(f"healed: {h}" for h in healed) if healed else "nothing to heal")


@twin.command("down")
@click.argument("spec", type=click.Path(path_type=Path))
@handles_errors
def twin_down(spec: Path) -> None:
    """Remove the twin rack of SPEC: its containers, network, key and files, nothing else."""
    # lazy: the twin (podman) only for its commands; `ibprov --help` starts without them
    from ibprov.clusterspec import load_spec
    from ibprov.twin.rack import down

    removed = down(load_spec(spec))
    click.echo(f"removed {len(removed)}: {', '.join(removed)}" if removed else "nothing to remove")


def _apply_options(*, plan: bool) -> Callable[[F], F]:
    """SPEC and the flags of apply, or of plan (apply --check --diff: no flags for those two). The command gets
    where to run as ``run_dir`` and ``target``, and how as one ApplyOptions, ``options``, built here."""
    flags = [
        click.argument("spec", type=click.Path(path_type=Path)),
        click.option(
            "--run-dir",
            type=click.Path(path_type=Path),
            help="Where the rendered inventory and Ansible artifacts go (default: the inventory in "
            "inventories/<cluster>, the artifacts in .ibprov/<cluster>).",
        ),
        click.option("--limit", help="Only these hosts/groups; '@failed' retries the hosts that failed last time."),
        click.option("--tags", help="Only tasks with these tags."),
        click.option("--skip-tags", help="Not the tasks with these tags (e.g. molecule-notest in containers)."),
        click.option("--untuned", is_flag=True, help="Plain ansible-playbook defaults (for comparison)."),
        click.option(
            "--target",
            type=click.Choice(["twin"]),
            help="Run against the twin rack (`ibprov twin up SPEC`) instead of the spec's hosts.",
        ),
    ]
    if not plan:
        flags += [
            click.option(
                "--check", is_flag=True, help="Change nothing: what would change, with diffs (same as `plan`)."
            ),
            click.option("--diff/--no-diff", default=True, show_default=True, help="Show the changes file by file."),
        ]

    def decorate(func: F) -> F:
        @wraps(func)
        def command(
            *,
            limit: str | None,
            tags: str | None,
            skip_tags: str | None,
            untuned: bool,
            check: bool = plan,
            diff: bool = plan,
            **where: Any,
        ) -> Any:
            how = ApplyOptions(check=check, diff=diff, limit=limit, tags=tags, skip_tags=skip_tags, tuned=not untuned)
            return func(options=how, **where)

        for flag in reversed(flags):
            command = flag(command)
        return command  # type: ignore[return-value]

    return decorate


def _run_apply(spec: Path, options: ApplyOptions, *, run_dir: Path | None, target: str | None) -> None:
    loaded = _load_spec(spec)
    directory = run_dir or Path(".ibprov") / loaded.spec.cluster.name
    rendered = None if run_dir else Path("inventories") / loaded.spec.cluster.name
    where = None
    if target == "twin":  # rendered with the twin's stand-in GUIDs: never over the real inventory
        from ibprov.twin.rack import apply_target, load_state  # lazy: the twin (podman) only when targeted

        where = apply_target(load_state(loaded))
        directory = run_dir or Path(".ibprov") / "twin-runs" / loaded.spec.cluster.name
        rendered = None
    from ibprov.run.lock import run_lock  # lazy: with the run

    # one apply or plan of a cluster at a time (a second one is refused at once, naming the first)
    with run_lock(directory, f"{'plan' if options.check else 'apply'} of cluster {loaded.spec.cluster.name}"):
        # the switch or UFM SM first, then the hosts: the vendor SM holds the partitions before the role stops the
        # host OpenSMs it replaces (a migration hands over without a gap); a failing back end never stops the hosts
        backend_ok, backend_error = True, None
        if loaded.spec.subnet_manager.backend != "opensm":
            try:
                backend_ok = _run_backend(loaded, check=options.check)
            except CollectError as exc:
                backend_ok, backend_error = False, exc
                click.echo(str(exc), err=True)
        with Live(console=err_console, transient=True, refresh_per_second=8) as live:

            def show(p: Progress) -> None:
                live.update(f"[bold]{p.play}[/] › {p.task}  ({p.hosts_done}/{p.hosts_total} hosts)")

            result = apply_spec(loaded, directory, options, target=where, rendered=rendered, on_progress=show)
    for host, task, text in result.diffs:
        out_console.print(f"[bold]--- {host}: {task}[/]")
        click.echo(text, nl=not text.endswith("\n"))
    out_console.print(hosts_table(result, f"{'plan' if options.check else 'apply'}: {loaded.spec.cluster.name}"))
    click.echo(f"artifacts: {result.artifact_dir}")
    if result.waiting:  # a new rack: the stack and IPoIB ran, the subnet managers wait for the GUIDs
        for problem in result.waiting:
            click.echo(f"waiting: {problem}", err=True)
        click.echo(
            "the subnet managers (ib_sm: OpenSM, partitions, QoS) wait for port GUIDs: once the stack is up, run "
            f"`ibprov discover -o {spec}` on a node of the fabric (it writes the lock file), then apply again",
            err=True,
        )
    if result.failed_hosts:
        click.echo(
            f"failed or unreachable: {', '.join(result.failed_hosts)}; retry them with --limit @failed", err=True
        )
        sys.exit(ExitCode.FINDINGS)
    if backend_error is not None:
        sys.exit(backend_error.exit_code)
    if not backend_ok:
        sys.exit(ExitCode.FINDINGS)
    if result.rc != 0:
        click.echo(f"ansible-playbook exited {result.rc} ({result.status}); see {result.artifact_dir}", err=True)
        sys.exit(ExitCode.FINDINGS)


def _run_backend(loaded: LoadedSpec, *, check: bool) -> bool:
    """plan or apply the switch or UFM back end (before the hosts; a failing back end never stops them); False when the
    back end refused a change (located at the partition it came from). An unreachable back end raises."""
    # lazy: the back ends only for a spec that has one
    from ibprov.identity.guids import GuidBook
    from ibprov.smbackend import BackendError
    from ibprov.smbackend.sync import backend_apply, backend_label, backend_plan, refusal_path

    book = GuidBook.for_spec(loaded)
    out_console.print(f"[bold]SM back end: {backend_label(loaded)}[/]")
    try:
        if check:
            plan, result = backend_plan(loaded, book), None
        else:
            result = backend_apply(loaded, book)
            plan = result.plan
    except BackendError as exc:
        raise CollectError(str(loaded.source.problem(exc.path, exc.message))) from None
    changes = [a for a in plan.actions if a.changes_state]
    for action in changes:
        done = result is None or action in result.done
        mark = "would send" if result is None else ("sent" if done else "not sent")
        if result is not None and result.broken and action is result.failed:
            mark = "failed (carried out or not: unknown)"
        click.echo(f"  {mark}: {action.text}")
    for note in plan.notes:
        click.echo(f"  note: {note}")
    if not changes:
        click.echo("  in sync: nothing to send")
    if result is not None and result.failed is not None and result.broken:
        raise CollectError(_broken_backend(loaded, result, refusal_path(loaded, result.failed)))
    if result is not None and result.failed is not None:
        where = loaded.source.problem(
            refusal_path(loaded, result.failed), f"refused {result.failed.text!r}: {result.message}"
        )
        click.echo(f"{where}; nothing after it was sent", err=True)
        return False
    return True


ACCEPTED_SHOWN = 10


def _broken_backend(loaded: LoadedSpec, result: Any, path: tuple[str | int, ...]) -> str:
    """The back end failed while a change was sent: where it came from, what was accepted before it, what to do."""
    spec = loaded.source.file
    accepted = [a.text for a in result.done if a.changes_state]
    shown = "; ".join(accepted[:ACCEPTED_SHOWN]) + (
        f"; +{len(accepted) - ACCEPTED_SHOWN} more" if len(accepted) > ACCEPTED_SHOWN else ""
    )
    before = (
        f"the back end accepted {len(accepted)} change(s) before it: {shown}"
        if accepted
        else ("the back end accepted no change before it")
    )
    message = (
        f"sending {result.failed.text!r} failed: {result.message}; {before}; whether it was carried out is "
        f"unknown and nothing after it was sent: `ibprov plan {spec}` reads the back end and shows what is left, "
        f"`ibprov apply {spec}` completes it"
    )
    return str(loaded.source.problem(path, message))


@cli.command()
@_apply_options(plan=False)
@handles_errors
def apply(spec: Path, run_dir: Path | None, target: str | None, options: ApplyOptions) -> None:
    """Validate SPEC, render it, and run the roles on every node (failing hosts never stop the others); with
    subnet_manager.backend switch or ufm, then send the SM back end only what differs (switch JSON API, UFM
    REST; contract-tested, not run against the product)."""
    _run_apply(spec, options, run_dir=run_dir, target=target)


@cli.command()
@_apply_options(plan=True)
@handles_errors
def plan(spec: Path, run_dir: Path | None, target: str | None, options: ApplyOptions) -> None:
    """What `apply` would change, with diffs; changes nothing (ansible-playbook --check --diff). A switch or UFM
    back end is read and the commands or REST calls apply would send are listed (contract-tested, not run
    against the product)."""
    _run_apply(spec, options, run_dir=run_dir, target=target)


@cli.command()
@click.option(
    "-o",
    "--output",
    "spec",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The spec: written as a skeleton if it does not exist, else matched (only its lock file is written).",
)
@click.option(
    "--from",
    "source",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Read saved `ibnetdiscover` output (default format) instead of running ibnetdiscover here.",
)
@click.option(
    "--slurm-topology",
    "slurm_topology",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write Slurm's topology file of the discovered fabric here; with a SPEC that has a scheduler "
    "section, its nodes and options, and every host under another leaf than planned is a cabling finding.",
)
@handles_errors
def discover(spec: Path, source: Path | None, slurm_topology: Path | None) -> None:
    """Discover the fabric: write a spec skeleton (with the subnet managers found running, when the fabric
    is live), or match an existing SPEC and write SPEC's lock file.

    Exit 0 when every device matched, 1 when something did not (the lock file holds what did),
    2 on spec errors, 3 when ibnetdiscover cannot run or its output cannot be read.
    """
    # lazy: discover only for discover; `ibprov --help` starts without them
    from ibprov.discover import SmSurvey, found_from_text, read_live, read_saved, write_lock, write_skeleton

    skeleton_wanted = not spec.exists()
    if source:
        found, sms = found_from_text(read_saved(source)), SmSurvey.not_asked()
    else:  # the SMs only for a skeleton: the lock file holds GUIDs alone
        found, sms = read_live(sms=skeleton_wanted)
    if skeleton_wanted:
        skeleton = write_skeleton(spec, found, source.name if source else "ibnetdiscover", sms)
        for note in skeleton.notes:
            click.echo(f"note: {note}", err=True)
        click.echo(
            f"wrote {spec}: {skeleton.switches} switches, {skeleton.hcas} HCAs on {skeleton.nodes} nodes, "
            f"{skeleton.links} links; review the lines marked REVIEW"
        )
        click.echo(skeleton.sm_status)
        if slurm_topology is not None:
            _write_discovered_topology(slurm_topology, found, None, None, source)
        return
    lock_path, result = write_lock(spec, found)
    for line in result.lines():
        click.echo(line)
    click.echo(f"wrote {lock_path}")
    moved = _write_discovered_topology(slurm_topology, found, spec, result, source) if slurm_topology else []
    if not result.complete or moved:
        sys.exit(ExitCode.FINDINGS)


def _write_discovered_topology(
    path: Path, found: Found, spec: Path | None, match: MatchResult | None, source: Path | None
) -> list[str]:
    """Write Slurm's topology file of ``found`` to ``path``; with a spec, print (and return) every host that sits
    under another leaf than planned: cabling findings, not a new topology."""
    # lazy: Slurm's tree only for --slurm-topology
    from ibprov.clusterspec.model import SlurmTopology
    from ibprov.discover.slurm import discovered_names, discovered_tree, leaf_differences
    from ibprov.render.slurm import plan_tree, scheduler_nodes, tree_vars, variables_text

    loaded = _load_spec(spec) if spec is not None else None
    scheduler = loaded.spec.scheduler if loaded is not None else None
    options = scheduler.topology if scheduler is not None else SlurmTopology()
    hosts = scheduler_nodes(loaded.spec) if loaded is not None and scheduler is not None else None
    tree = discovered_tree(found, discovered_names(found, match), options, hosts)
    variables = tree_vars(tree, options, scheduler.config_dir if scheduler is not None else "/etc/slurm")
    _name, text = variables_text(variables, f"the fabric ({source.name if source else 'ibnetdiscover'})")
    try:
        path.write_text(text)
    except OSError as exc:
        raise IbprovError(f"cannot write {path}: {exc.strerror or exc}") from None
    click.echo(f"wrote {path}: {len(tree.leaves)} Slurm leaves, {len(tree.node_leaf)} hosts")
    moved = leaf_differences(plan_tree(loaded), tree) if loaded is not None and scheduler is not None else []
    for line in moved:
        click.echo(line)
    return moved


@cli.command()
@click.option("--nodes", type=click.IntRange(min=1), required=True, help="Hosts to cable.")
@click.option("--radix", type=click.IntRange(4, 254), required=True, help="Ports per switch.")
@click.option(
    "--blocking",
    default="1:1",
    show_default=True,
    help="Host ports : uplinks per leaf (1:1, 2:1, ...); with --compare, a comma-separated list (1:1,2:1).",
)
@click.option("--rails", type=click.IntRange(1, 254), default=1, show_default=True, help="HCA ports per node.")
@click.option(
    "--layout",
    type=click.Choice(["rail-optimized", "node-grouped"]),
    help="How a node's HCA ports meet the leaves (default: rail-optimized with --rails 2 or more).",
)
@click.option("--unit-nodes", type=click.IntRange(min=1), help="Rail-optimized: nodes per scalable unit.")
@click.option(
    "--dac-max-tier",
    type=click.Choice(["none", "host-leaf", "leaf-spine", "spine-core"]),
    default="host-leaf",
    show_default=True,
    help="Highest cable tier that is copper (DAC); the tiers above are optical (2 transceivers per cable).",
)
@click.option(
    "--prices",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Unit prices (YAML: switches by port count, cables by medium, transceiver): adds the cost.",
)
@click.option("--compare", is_flag=True, help="Plan each --blocking ratio and print them side by side.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--speed",
    type=click.Choice(["SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"], case_sensitive=False),
    default="HDR",
    show_default=True,
    help="Link speed written to the spec.",
)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="Write the spec here.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option(
    "--prove",
    is_flag=True,
    help="With -o: then bring the written spec up on the twin (ibsim + the real OpenSM with its rendered "
    "configuration) and run verify --fabric and --routing on it, as `ibprov twin SPEC --verify --routing`: the "
    "planned engine routes the planned tree without credit loops or dead ends, before anything is bought.",
)
@handles_errors
def design(
    nodes: int,
    radix: int,
    blocking: str,
    rails: int,
    layout: str | None,
    unit_nodes: int | None,
    dac_max_tier: str,
    prices: Path | None,
    compare: bool,
    fmt: str,
    speed: str,
    output: Path | None,
    force: bool,
    prove: bool,
) -> None:
    """Plan a fat tree for NODES hosts with RADIX-port switches and its bill of materials; with -o, write it
    as a spec."""
    # lazy: design only for design; `ibprov --help` starts without them
    from ibprov import design as d
    from ibprov.clusterspec import load_spec_text

    if output is not None and compare:
        raise IbprovError("-o writes one design: drop --compare (or give one --blocking)")
    if prove and output is None:
        raise click.UsageError("--prove: only with -o (the twin is brought up from the written spec)")
    price_list = d.load_prices(prices) if prices is not None else None
    ratios = [d.parse_blocking(b) for b in blocking.split(",")] if compare else [d.parse_blocking(blocking)]
    rows = []
    for ratio in ratios:
        result = d.design(nodes, radix, ratio, rails=rails, layout=layout, unit_nodes=unit_nodes)
        bom = d.bill_of_materials(result, dac_max_tier)
        rows.append((result, bom, d.cost(bom, price_list) if price_list is not None else None))
    if fmt == "json":
        data = [d.to_json(*row) for row in rows]
        click.echo(json.dumps(data if compare else data[0], indent=2))
    elif compare:
        for line in d.compare_lines(rows):
            click.echo(line)
    else:
        for line in [*d.plan_lines(rows[0][0]), *d.bom_lines(rows[0][1], rows[0][2])]:
            click.echo(line)
    if output is None:
        return
    if output.exists() and not force:
        raise IbprovError(f"{output} exists; use --force to overwrite it")
    text = d.spec_text(rows[0][0], cluster=d.cluster_name(output.stem), speed=speed.upper())
    load_spec_text(text, str(output))  # design never writes what validate rejects
    output.write_text(text)
    click.echo(f"wrote {output}", err=True)
    if prove:
        click.echo(f"proving {output} on the twin (verify --fabric --routing)")
        click.get_current_context().invoke(
            twin_prove,
            spec=output,
            workdir=None,
            timeout=120.0,
            save_ibnetdiscover=None,
            run_verify=True,
            routing=True,
            json_path=None,
            junit_path=None,
            html_path=None,
            synthetic_guids=False,
        )


def _section_flags(func: F) -> F:
    """One flag per registered verify section (--fabric, --nodes, ...)."""
    for info in reversed(SECTIONS):
        func = click.option(f"--{info.name}", f"section_{info.name}", is_flag=True, help=info.help)(func)
    return func


@cli.command()
@click.argument("spec", metavar="SPEC", type=click.Path(path_type=Path))
@_section_flags
@click.option(
    "--inventory",
    metavar="DIR",
    type=click.Path(path_type=Path, exists=True),
    help="nodes: the Ansible inventory to reach the hosts (default: addresses and users from SPEC).",
)
@click.option(
    "--via",
    metavar="HOST",
    help="fabric, perf: run the diags (perf: the SM's LFTs) on HOST through Ansible instead of on this host.",
)
@click.option(
    "--soak",
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="fabric: clear the error counters, wait, read them again (default: acceptance.soak_seconds).",
)
@click.option("--json", "json_path", metavar="FILE", type=click.Path(path_type=Path), help="Write report.json here.")
@click.option("--junit", "junit_path", metavar="FILE", type=click.Path(path_type=Path), help="Write junit.xml here.")
@click.option(
    "--html", "html_path", metavar="FILE", type=click.Path(path_type=Path), help="Write report.html (one file) here."
)
@click.option(
    "--from-host",
    metavar="SIM_HOST",
    help="fabric, twin only: run the diags as this ibsim node (sets SIM_HOST for them, also with --via).",
)
@click.option(
    "--synthetic-guids",
    is_flag=True,
    help="fabric: the fabric is the twin; expect the stable synthetic GUIDs it uses where the spec has none.",
)
@click.option(
    "--target",
    type=click.Choice(["twin"]),
    help="Verify the twin rack (`ibprov twin up SPEC`): its fabric and its node containers.",
)
@click.option(
    "--pairs",
    type=click.Choice(["quick", "all-pairs", "rail-aware", "route-aware"]),
    help="perf: the pair schedule (default: the spec's acceptance.pairs).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="perf: print the schedule and link coverage, run nothing; with --drain/--resume: verify, then print the "
    "scontrol commands instead of running them.",
)
@click.option(
    "--drain",
    is_flag=True,
    help="After verifying, drain in Slurm every scheduler node with a finding of scheduler.drain_severity or worse "
    "(reason 'ibprov: CHECK OBJECT'; a node drained by someone else keeps its reason).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="After verifying, resume the nodes ibprov drained (reason 'ibprov: ...') whose check passes now.",
)
@click.option(
    "--sm-log",
    metavar="FILE",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="routing: read the engine OpenSM used from this log on this host (default: the master SM's node's "
    "logs, through Ansible).",
)
@click.option(
    "--lfts",
    metavar="FILE",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="routing: audit the forwarding tables in FILE (dump_lfts output, or OpenSM's opensm-lfts.dump) "
    "instead of reading them from the switches.",
)
@click.option(
    "--contrast-tcp", is_flag=True, help="mpi: also run the MPI benchmark forced onto TCP and show it beside."
)
@click.option(
    "--baseline",
    metavar="FILE",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="perf: flag results more than acceptance.baseline_tolerance worse than this baseline.",
)
@click.option(
    "--save-baseline",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
    help="perf: write every measured result to FILE (a baseline for later runs).",
)
@click.option(
    "--twin-limits",
    metavar="FILE",
    type=click.Path(path_type=Path, exists=True),
    help="The fabric is the twin: judge it by what its twin-limits.json (or a directory holding it) says it "
    "can show (implies --synthetic-guids).",
)
@click.option(
    "--history",
    "history_dir",
    metavar="DIR",
    type=click.Path(path_type=Path, file_okay=False),
    help="Keep this run in DIR/<cluster>/ (report.json), compare it with the previous run (findings new, "
    "resolved, persisting; counter rates against acceptance.error_rates_per_hour; the master SM), and hold "
    "DIR/<cluster>/.lock while running: a second run of the cluster is refused (exit 3).",
)
@click.option(
    "--keep",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --history: keep the newest N runs (default 90).",
)
@click.option(
    "--metrics",
    "metrics_path",
    metavar="FILE.prom",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the run's metrics (OpenMetrics text) to FILE.prom, replaced atomically: for node_exporter's "
    "textfile collector. Also written when the run fails (the run's outcome; the last kept findings).",
)
@handles_errors
def verify(
    spec: Path,
    inventory: Path | None,
    via: str | None,
    soak: float | None,
    json_path: Path | None,
    junit_path: Path | None,
    html_path: Path | None,
    from_host: str | None,
    synthetic_guids: bool,
    twin_limits: Path | None,
    target: str | None,
    pairs: str | None,
    dry_run: bool,
    contrast_tcp: bool,
    baseline: Path | None,
    save_baseline: Path | None,
    sm_log: Path | None,
    lfts: Path | None,
    drain: bool,
    resume: bool,
    history_dir: Path | None,
    keep: int | None,
    metrics_path: Path | None,
    **sections: bool,
) -> None:
    """Compare the live fabric and hosts with SPEC, section by section (no section flag: every section but
    --perf, which loads the fabric and runs only when asked for); exit 0 (pass), 1 (findings), 2 (spec),
    3 (cannot collect)."""
    chosen = [i for i in SECTIONS if sections.get(f"section_{i.name}")] or [i for i in SECTIONS if i.default]
    options = VerifyOptions(  # and the target, once the spec is loaded (it is found through the spec)
        via=via,
        soak=soak,
        from_host=from_host,
        synthetic_guids=synthetic_guids,
        inventory=inventory,
        twin_limits=twin_limits,
        contrast_tcp=contrast_tcp,
        pairs=pairs,
        dry_run=dry_run,
        baseline=baseline,
        save_baseline=save_baseline,
        sm_log=sm_log,
        lfts=lfts,
    )
    acting = drain or resume  # the scheduler's nodes follow the findings (with --dry-run: only said)
    given = [o for o in options.given() if not (acting and o == "dry_run")]
    misplaced = misplaced_options(chosen, [*given, *(["target"] if target else [])])
    if misplaced:
        raise click.UsageError(
            "; ".join(
                f"--{name.replace('_', '-')}: only with {' or '.join('--' + s for s in owners)}"
                for name, owners in misplaced.items()
            )
        )
    if dry_run and not acting:
        _perf_dry_run(spec, options, [i.name for i in chosen], target)
        return
    if acting:
        options = replace(options, dry_run=False)  # the sections run for real; only the scontrol commands are dry
    _check_history_options(history_dir, keep, metrics_path)
    started: dict[str, Any] = {}
    command = "verify " + " ".join(f"--{i.name}" for i in chosen)
    _show_progress()
    began = datetime.now(UTC)
    history: History | None = None
    loaded = None
    try:
        with contextlib.ExitStack() as stack:
            loaded = _load_spec(spec) if target or history_dir else None
            if loaded is not None and history_dir is not None:  # held until the run is kept
                history = History(history_dir, loaded.spec.cluster.name)
                stack.enter_context(history.lock())
            if (
                loaded is not None and target
            ):  # every section runs on the target, resolved once (found through the spec)
                options = replace(options, target=_verify_target(loaded))
            for info in chosen:  # e.g. the fabric discovery: it needs no spec, so it runs while the spec loads
                started[info.name] = prestart(info, options)
            loaded = loaded or _load_spec(spec)
            report = run_sections(loaded, chosen, options, started)
            if acting:
                report = _drain_and_resume(loaded, report, options, drain=drain, resume=resume, dry_run=dry_run)
            if history is not None or metrics_path is not None:
                report = _keep(loaded, report, history, keep, metrics_path, synthetic_guids=synthetic_guids)
    except IbprovError as exc:  # CI reads the report files on every outcome: write the failure into them
        problems = [str(p) for p in exc.problems] if isinstance(exc, SpecError) else [str(exc)]
        _write_failure(command, spec, problems, int(exc.exit_code), json_path, junit_path)
        if metrics_path is not None:  # monitoring reads the metrics on every outcome too
            _failed_metrics(loaded, history_dir, metrics_path, int(exc.exit_code), began, synthetic_guids)
        raise
    finally:
        for handle in started.values():
            if handle is not None:
                handle.close()
    if save_baseline is not None:
        _save_baseline(report, save_baseline)
    _print_report(report, json_path, junit_path, html_path)


def _check_history_options(history_dir: Path | None, keep: int | None, metrics_path: Path | None) -> None:
    if keep is not None and history_dir is None:
        raise click.UsageError("--keep: only with --history")
    if metrics_path is not None and metrics_path.suffix != ".prom":
        raise click.UsageError(f"--metrics {metrics_path}: node_exporter's textfile collector reads only *.prom")


def _keep(
    loaded: LoadedSpec,
    report: Report,
    history: History | None,
    keep: int | None,
    metrics_path: Path | None,
    *,
    synthetic_guids: bool = False,
) -> Report:
    """Keep the run in its history, say what changed since the previous run, write its metrics; the report
    with first-seen times and counter trends (for report.html)."""
    from ibprov.history.keep import keep_run  # lazy: the history only when asked for
    from ibprov.history.metrics import write_metrics  # lazy: the history only when asked for
    from ibprov.verify.portids import port_lookup  # lazy: the history only when asked for

    kept = keep_run(
        report,
        history,
        limits={str(k): v for k, v in loaded.spec.acceptance.error_rates_per_hour.items()},
        links_planned=len(loaded.topology.links),
        ports=port_lookup(loaded, synthetic_guids=synthetic_guids),
        **({"keep": keep} if keep is not None else {}),
    )
    if kept.run is not None:
        click.echo(f"history: kept run {kept.run.id} in {kept.run.path.parent}", err=True)
        if kept.diff is None:
            click.echo("history: the first run kept: nothing to compare with", err=True)
        for line in kept.diff.lines() if kept.diff is not None else []:
            click.echo(f"since the previous run: {line}", err=True)
    if metrics_path is not None:
        write_metrics(metrics_path, kept.metrics)
    return kept.report


def _failed_metrics(
    loaded: LoadedSpec | None,
    history_dir: Path | None,
    metrics_path: Path,
    exit_code: int,
    began: datetime,
    synthetic_guids: bool = False,
) -> None:
    """The metrics of a run that failed (best effort: the failure is the news, already being raised)."""
    from ibprov.history.keep import failed_run  # lazy: the history only when asked for
    from ibprov.history.metrics import write_metrics  # lazy: the history only when asked for

    if loaded is None:  # the spec did not load: no cluster name to label the metrics with
        return
    with contextlib.suppress(IbprovError, OSError, ValueError, KeyError):
        history = History(history_dir, loaded.spec.cluster.name) if history_dir is not None else None
        from ibprov.verify.portids import port_lookup  # lazy: the history only when asked for

        ports = port_lookup(loaded, synthetic_guids=synthetic_guids)
        text = failed_run(
            loaded.spec.cluster.name, exit_code, began, history, links_planned=len(loaded.topology.links), ports=ports
        )
        write_metrics(metrics_path, text)


@cli.group()
def report() -> None:
    """Read verify's reports: compare two runs."""


@report.command("diff")
@click.argument("files", nargs=-1, metavar="[OLD.json NEW.json]", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--history",
    "history_dir",
    metavar="DIR",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Compare the newest two runs kept in DIR/<cluster>/ (verify --history DIR).",
)
@click.option("--spec", "spec", metavar="SPEC", type=click.Path(path_type=Path), help="The cluster and its rate limits "
              "(acceptance.error_rates_per_hour; default: the built-in defaults).")  # fmt: skip
@click.option("--cluster", metavar="NAME", help="With --history and no --spec: the cluster's name.")
@click.option("--json", "json_path", metavar="FILE", type=click.Path(path_type=Path), help="Write the comparison here.")
@handles_errors
def report_diff(
    files: tuple[Path, ...], history_dir: Path | None, spec: Path | None, cluster: str | None, json_path: Path | None
) -> None:
    """What changed between two verify runs: findings new, resolved and persisting; error counters as rates
    per hour, judged against acceptance.error_rates_per_hour; the master SM. Exit 1 when a new finding
    fails verify or a rate is over its limit."""
    from ibprov.clusterspec.model import ERROR_RATES_PER_HOUR_DEFAULT  # lazy: the spec models (0.2 s)
    from ibprov.history.diff import diff_runs  # lazy: the history only for this command
    from ibprov.history.store import REPORT  # lazy: the history only for this command

    loaded = _load_spec(spec) if spec is not None else None
    limits = dict(ERROR_RATES_PER_HOUR_DEFAULT)
    if loaded is not None:
        limits = {str(k): v for k, v in loaded.spec.acceptance.error_rates_per_hour.items()}
    if (files and history_dir is not None) or len(files) not in (0, 2):
        raise click.UsageError("give two reports (OLD.json NEW.json) or --history DIR, not both")
    if files:
        old, new = (_read_report(f / REPORT if f.is_dir() else f) for f in files)
    else:
        if history_dir is None:
            raise click.UsageError("give two reports (OLD.json NEW.json) or --history DIR")
        name = cluster or (loaded.spec.cluster.name if loaded is not None else None)
        if not name:
            raise click.UsageError("--history: name the cluster (--spec SPEC or --cluster NAME)")
        runs = History(history_dir, name).runs()
        if len(runs) < 2:
            raise IbprovError(f"{history_dir / name}: {len(runs)} run(s) kept ({REPORT}); two are needed to compare")
        click.echo(f"comparing runs {runs[-2].id} and {runs[-1].id} of {name}", err=True)
        old, new = runs[-2].report(), runs[-1].report()
    diff = diff_runs(old, new, limits)
    for line in diff.lines():
        click.echo(line)
    if json_path is not None:
        try:
            json_path.write_text(json.dumps(diff.as_dict(), indent=2) + "\n")
        except OSError as exc:
            raise IbprovError(f"cannot write {json_path}: {exc.strerror or exc}") from None
    sys.exit(diff.exit_code)


@report.command("cables")
@click.argument("report_file", metavar="REPORT.json", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--csv", "csv_path", metavar="FILE", type=click.Path(path_type=Path), help="Write it as CSV.")
@click.option("--json", "json_path", metavar="FILE", type=click.Path(path_type=Path), help="Write it as JSON.")
@handles_errors
def report_cables(report_file: Path, csv_path: Path | None, json_path: Path | None) -> None:
    """The cable report of a verify --physical run: every planned link, planned against found at both ends
    (medium, length, vendor and part, serial, temperature, BER). Prints a line per link that is not as planned
    or not read, and a count; exit 1 when a cable is not as planned."""
    from ibprov.report.csv_table import table_csv  # lazy: only this command
    from ibprov.verify.physical.facts import cable_table  # lazy: only this command

    data = _read_report(report_file)
    section = (data.get("sections") or {}).get("physical")
    if not isinstance(section, dict) or not isinstance((section.get("facts") or {}).get("cables"), list):
        raise IbprovError(f"{report_file}: no physical section with cables (run verify --physical --json FILE)")
    facts = section["facts"]
    rows = facts["cables"]
    if facts.get("skipped_because"):
        click.echo(f"skipped: {facts['skipped_because']}")
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("as planned", "not as planned", "not read")}
    for row in rows:
        if row["status"] == "not as planned":
            click.echo(f"{row['link']}: not as planned: {'; '.join(row.get('differences') or [])}")
    click.echo(", ".join(f"{n} {s}" for s, n in counts.items()) + f" of {len(rows)} planned links")
    try:
        if csv_path is not None:
            csv_path.write_text(table_csv(cable_table(rows)), encoding="utf-8")
        if json_path is not None:
            json_path.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise IbprovError(f"cannot write the cable report: {exc}") from None
    sys.exit(1 if counts["not as planned"] else 0)


def _read_report(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise IbprovError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or "findings" not in data or "started" not in data:
        raise IbprovError(f"{path}: not a report.json of ibprov verify")
    return data


def _drain_and_resume(
    loaded: LoadedSpec, report: Report, options: VerifyOptions, *, drain: bool, resume: bool, dry_run: bool
) -> Report:
    """``report`` with what --drain / --resume did to the scheduler's nodes (Slurm's state read just before)."""
    # lazy: the scheduler section only when asked to act
    from ibprov.verify.scheduler.drain import carry_out, plan_actions
    from ibprov.verify.scheduler.plan import build_scheduler_plan
    from ibprov.verify.scheduler.section import slurm_of

    slurm = slurm_of(loaded, options)  # an error without a scheduler section
    scheduler = loaded.spec.scheduler
    assert scheduler is not None
    if not scheduler.drain:
        raise click.UsageError("--drain/--resume: the spec's scheduler.drain is false")
    view = slurm.view()
    if view.error is not None:
        raise CollectError(f"--drain/--resume: cannot read Slurm's nodes on {scheduler.controller}: {view.error}")
    plan = build_scheduler_plan(loaded)
    severity = Severity(scheduler.drain_severity)
    actions, notes = plan_actions(report, plan.nodes, view, drain=drain, resume=resume, severity=severity)
    done = carry_out(actions, slurm, dry_run=dry_run)
    return replace(report, actions=tuple(done), notes=(*report.notes, *notes))


def _load_spec(spec: Path) -> LoadedSpec:
    """The spec at ``spec``, its warnings printed to stderr (once: each command loads its spec once)."""
    # lazy: the spec's models (pydantic, 0.2 s) for the commands that read one, and for verify after its prestart
    from ibprov.clusterspec import load_spec
    from ibprov.run.secrets import env_secrets, withhold  # lazy: with the spec's models

    loaded = load_spec(spec)
    for warning in loaded.warnings:
        click.echo(str(replace(warning, message=f"warning: {warning.message}")), err=True)
    withhold(env_secrets(loaded.spec))  # no Ansible run of this command is given them
    return loaded


def _verify_target(loaded: LoadedSpec) -> VerifyTarget:
    """What `verify --target twin` runs on: the running twin rack of the spec's cluster (RackError without)."""
    from ibprov.twin.rack import load_state, verify_target  # lazy: the twin (podman) only when targeted

    return verify_target(load_state(loaded))


def _perf_dry_run(spec: Path, options: VerifyOptions, chosen: list[str], target: str | None) -> None:
    from ibprov.verify.perf.section import dry_run_lines  # lazy: the perf section only for its dry run

    if chosen != ["perf"]:
        raise click.UsageError("--dry-run prints the perf schedule: use it with --perf alone")
    loaded = _load_spec(spec)
    if target and (options.pairs or loaded.spec.acceptance.pairs) == "route-aware":  # it reads the target's LFTs
        options = replace(options, target=_verify_target(loaded))
    for line in dry_run_lines(loaded, options.pairs, options):  # type: ignore[arg-type]
        click.echo(line)


def _show_progress() -> None:
    """Long sections (perf) log their progress to ``ibprov.progress``: shown on a terminal, quiet in CI."""
    logger = logging.getLogger("ibprov.progress")
    if sys.stderr.isatty() and not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _save_baseline(report: Report, path: Path) -> None:
    from ibprov.verify.perf.section import save_baseline  # lazy: the perf section only when it ran

    try:
        count = save_baseline(report.section("perf"), report.cluster, path)
    except OSError as exc:
        raise IbprovError(f"cannot write {path}: {exc.strerror or exc}") from None
    click.echo(f"wrote baseline {path} ({count} measured results)", err=True)


def _write_failure(
    command: str,
    spec: Path,
    problems: list[str],
    exit_code: int,
    json_path: Path | None,
    junit_path: Path | None,
    *,
    cluster: str = "",
    kind: str = "error",
) -> None:
    """report.json / junit.xml of a run that produced no report (best effort: the failure is the news)."""
    texts = (
        (json_path, failure_json(command, cluster, str(spec), problems, exit_code)),
        (junit_path, failure_junit(command, cluster, problems, kind=kind)),
    )
    for path, text in texts:
        if path is not None:
            with contextlib.suppress(OSError):
                path.write_text(text)


def _print_report(
    report: Report, json_path: Path | None, junit_path: Path | None, html_path: Path | None = None
) -> None:
    """Write the JSON / JUnit / HTML files asked for, print the findings table and summary, exit 1 on
    findings."""
    views = ((json_path, to_json), (junit_path, to_junit), (html_path, to_html))
    for path, text in ((p, view(report)) for p, view in views if p is not None):
        if path is not None:
            try:
                path.write_text(text)
            except OSError as exc:
                raise IbprovError(f"cannot write {path}: {exc.strerror or exc}") from None
    # a terminal too narrow for the fix column gets the fixes below the table, once per check; a pipe or a
    # CI log gets every cell on one line (report.json has everything)
    narrow = out_console.is_terminal and table_width(report) > out_console.width
    table = findings_table(report, with_fix=not narrow)
    if table is not None:
        wide = Console(highlight=False, width=max(out_console.width, table_width(report, with_fix=not narrow)))
        wide.print(table)
        if narrow:
            for line in fix_lines(report):
                out_console.print(line, soft_wrap=False)
    for note in report.all_notes:
        click.echo(f"note: {note}", err=True)
    for line in facts_lines(report):
        click.echo(line, err=True)
    for action in report.actions:  # verify --drain / --resume
        click.echo(f"slurm: {action.line()}")
    out_console.print(summary_text(report))
    if report.exit_code:
        sys.exit(report.exit_code)


def main() -> None:
    cli(prog_name="ibprov")
