"""Where the diags run: here (``LocalRunner``) or on a node through Ansible (``AnsibleRunner``).

Both run *batches* of commands and return one :class:`CommandResult` per command. An argument may
contain ``{scratch}``: a directory private to this verify run, kept until :meth:`close` (verify puts
the fabric cache there, so later batches can ``--load-cache`` it).

The local runner inherits this process's environment, so the diags reach whatever fabric it does (a
real HCA, or the twin through ``LD_PRELOAD=libumad2sim.so`` with ``IBSIM_SOCKNAME``/``SIM_HOST``), and
runs independent commands on a bounded thread pool. The Ansible runner turns a batch into one shell
script run by one ad-hoc ``ansible.builtin.command`` task (``sh -c``), so a batch costs one Ansible round
trip however many commands it holds; each command's exit status, stdout and stderr come back framed by a
random marker. It goes through :func:`ibprov.run.adhoc.run_module`: when Ansible cannot start, or does not
answer for the host, that is an :class:`~ibprov.errors.AnsibleError` (exit 3).
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ibprov.errors import AnsibleError, CollectError
from ibprov.run.adhoc import AnsibleRun, ansible_runner_run, run_module

__all__ = ["SCRATCH", "AnsibleRunner", "CommandResult", "LocalRunner", "Runner", "batch_script", "parse_batch"]

SCRATCH = "{scratch}"
MAX_WORKERS = 6  # ibsim serves 10 clients at once and the OpenSMs hold some of them


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def reason(self) -> str:
        """A one-line account of a failure, for error messages."""
        lines = [line.strip() for line in (self.stderr + "\n" + self.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if "iberror" in line or "ibpanic" in line or "rror" in line]
        detail = (errors or lines or ["no output"])[0]
        return f"{self.argv[0]} exited {self.returncode}: {detail}"


class Runner(Protocol):
    @property
    def where(self) -> str:
        """Where the commands run, for the report: "this host", "node01 (ansible)"."""
        ...

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        """Run every command (in order, or concurrently when ``parallel``); never raises for a command
        that fails -- its CommandResult says so."""
        ...

    def close(self) -> None: ...


class LocalRunner:
    """Runs the diags on this host with this process's environment (plus ``env``)."""

    def __init__(
        self, *, env: Mapping[str, str] | None = None, workers: int = MAX_WORKERS, timeout: float = 300.0
    ) -> None:
        self.env = {**os.environ, **(env or {})}
        self.workers = max(1, min(workers, MAX_WORKERS))
        self.timeout = timeout
        self._scratch: Path | None = None
        self._early: dict[tuple[str, ...], tuple[subprocess.Popen[bytes], Path]] = {}

    @property
    def where(self) -> str:
        return "this host"

    @property
    def scratch(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="ibprov-verify-"))
        return self._scratch

    def _expand(self, argv: Sequence[str]) -> tuple[str, ...]:
        return tuple(a.replace(SCRATCH, str(self.scratch)) for a in argv)

    def prefetch(self, argv: Sequence[str]) -> None:
        """Start ``argv`` now, in the background (output to files, so a full pipe cannot stall it); a later
        batch that asks for the same command gets this run's result instead of starting it again. verify
        starts the fabric discovery this way while the spec is still loading."""
        key = self._expand(argv)
        if key in self._early:
            return
        out = self.scratch / f"prefetch-{len(self._early)}"
        try:
            with open(f"{out}.stdout", "wb") as stdout, open(f"{out}.stderr", "wb") as stderr:
                proc = subprocess.Popen(key, env=self.env, cwd=self.scratch, stdout=stdout, stderr=stderr)
        except FileNotFoundError:
            return  # the batch will run it and report the missing command
        self._early[key] = (proc, out)

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        argvs = [self._expand(argv) for argv in commands]
        if not parallel or self.workers == 1 or len(argvs) < 2:
            return [self._run(argv) for argv in argvs]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(self._run, argvs))

    def _collect_early(self, argv: tuple[str, ...]) -> CommandResult:
        proc, out = self._early.pop(argv)
        try:
            returncode = proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return CommandResult(argv, 124, "", f"{argv[0]}: no answer within {self.timeout:g}s")
        stdout, stderr = (Path(f"{out}.{name}").read_bytes().decode(errors="replace") for name in ("stdout", "stderr"))
        return CommandResult(argv, returncode, stdout, stderr)

    def _run(self, argv: tuple[str, ...]) -> CommandResult:
        if argv in self._early:
            return self._collect_early(argv)
        try:
            done = subprocess.run(
                argv,
                env=self.env,
                cwd=self.scratch,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            return CommandResult(argv, 127, "", f"{argv[0]}: command not found (install infiniband-diags)")
        except subprocess.TimeoutExpired:
            return CommandResult(argv, 124, "", f"{argv[0]}: no answer within {self.timeout:g}s")
        return CommandResult(argv, done.returncode, done.stdout, done.stderr)

    def close(self) -> None:
        for proc, _out in self._early.values():  # prefetched, never asked for (the spec did not load)
            proc.kill()
            proc.wait()
        self._early.clear()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


# ----------------------------------------------------------------------------------------- ansible
def _quote(arg: str) -> str:
    """Quote for sh, with {scratch} turned into "$d" (the scratch directory variable)."""
    return '"$d"'.join(shlex.quote(part) if part else "" for part in arg.split(SCRATCH)) or "''"


def batch_script(
    commands: Sequence[Sequence[str]], scratch: str, token: str, env: Mapping[str, str] | None = None
) -> str:
    """A POSIX sh script that runs ``commands`` in order and frames each result for :func:`parse_batch`.

    Per command it prints ``@@<token> <index> <exit status>``, then stdout and stderr each line
    prefixed with ``|``, separated by ``@@<token> stderr``. ``env`` is exported first."""
    lines = [f"export {name}={shlex.quote(value)}" for name, value in sorted((env or {}).items())]
    lines += [
        f"d={shlex.quote(scratch)}",
        'mkdir -p "$d" && cd "$d" || exit 97',
        'frame() { awk \'{ print "|" $0 }\' "$1"; }',
    ]
    for i, argv in enumerate(commands):
        command = " ".join(_quote(a) for a in argv)
        lines.append(
            f'{command} >"$d/.out" 2>"$d/.err" </dev/null; r=$?; echo "@@{token} {i} $r"; frame "$d/.out"; '
            f'echo "@@{token} stderr"; frame "$d/.err"'
        )
    lines.append(f'rm -f "$d/.out" "$d/.err"; echo "@@{token} end"')
    return "\n".join(lines) + "\n"


def parse_batch(stdout: str, commands: Sequence[Sequence[str]], token: str) -> list[CommandResult]:
    """Split the output of :func:`batch_script` back into one CommandResult per command."""
    results: list[CommandResult] = []
    out: list[str] = []
    err: list[str] = []
    current: tuple[int, int] | None = None
    target = out
    ended = False

    def flush() -> None:
        if current is not None:
            i, rc = current
            text_out = "".join(line + "\n" for line in out)
            text_err = "".join(line + "\n" for line in err)
            results.append(CommandResult(tuple(commands[i]), rc, text_out, text_err))

    for line in stdout.split("\n"):
        if line.startswith(f"@@{token} "):
            word = line.split(" ", 2)[1:]
            if word == ["stderr"]:
                target = err
            elif word == ["end"]:
                flush()
                current, ended = None, True
            else:
                flush()
                out, err = [], []
                target = out
                current = (int(word[0]), int(word[1]))
        elif line.startswith("|") and current is not None:
            target.append(line[1:])
    if not ended or len(results) != len(commands):
        raise CollectError(f"the batch of {len(commands)} diag commands stopped after {len(results)}")
    return results


class AnsibleRunner:
    """Runs the diags on ``host`` through ansible-runner (ad-hoc ``ansible.builtin.command``); ``env`` is
    exported for them there. ``run`` stands in for ``ansible_runner.run`` (tests)."""

    def __init__(
        self,
        host: str,
        inventory: Mapping[str, Any] | str,
        *,
        run: AnsibleRun = ansible_runner_run,
        env: Mapping[str, str] | None = None,
        max_script: int = 100_000,
        private_data_dir: Path | None = None,
    ) -> None:
        self.host = host
        self.inventory = inventory
        self.env = dict(env or {})
        self._run = run
        self.max_script = max_script  # one argument may not exceed 128 KiB on Linux
        self._token = secrets.token_hex(6)
        self.scratch = f"/tmp/ibprov-verify-{self._token}"
        self._pdd = private_data_dir  # None: a temporary directory per Ansible call
        self._used = False

    @property
    def where(self) -> str:
        return f"{self.host} (ansible)"

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        results: list[CommandResult] = []
        for chunk in self._chunks(commands):
            script = batch_script(chunk, self.scratch, self._token, self.env)
            results += parse_batch(self._command(["sh", "-c", script]), chunk, self._token)
        self._used = True
        return results

    def _chunks(self, commands: Sequence[Sequence[str]]) -> list[list[Sequence[str]]]:
        chunks: list[list[Sequence[str]]] = [[]]
        size = 0
        for argv in commands:
            cost = 200 + sum(len(a) + 3 for a in argv)
            if chunks[-1] and size + cost > self.max_script:
                chunks.append([])
                size = 0
            chunks[-1].append(argv)
            size += cost
        return [c for c in chunks if c]

    def _command(self, argv: list[str]) -> str:
        """Run ``argv`` on the host; its stdout, or CollectError with Ansible's reason."""
        outcomes = run_module(
            self.inventory,
            [self.host],
            "ansible.builtin.command",
            {"argv": argv},
            private_data_dir=self._pdd,
            run=self._run,
        )
        outcome = outcomes.get(self.host)
        if outcome is None:
            raise AnsibleError(f"ansible answered for {', '.join(sorted(outcomes))}, not for {self.host}")
        if outcome.status == "unreachable":
            raise CollectError(f"{self.host} is unreachable: {outcome.reason()}")
        stdout = outcome.res.get("stdout")
        if not isinstance(stdout, str) or (outcome.res.get("rc") not in (0, None) and "@@" not in stdout):
            raise CollectError(f"ansible could not run the diags on {self.host}: {outcome.reason()}")
        return stdout

    def close(self) -> None:
        if self._used:
            self._command(["rm", "-rf", self.scratch])
