"""`make mutate`: mutation testing of the modules a change touches, with mutmut.

    python scripts/mutate.py                       # ibprov modules changed since MUTATE_BASE (default HEAD~1)
    python scripts/mutate.py ibprov/hostlist.py    # these modules
    python scripts/mutate.py --record ...          # and update their rows in docs/mutation.md

mutmut mutates the named modules one point at a time (a comparison flipped, a constant changed, `and`/`or`
swapped, an argument dropped...) and, for each mutant, runs only the unit tests that call the mutated function
(its stats run maps tests to functions once; the map is kept under ``.mutate/``). A mutant the tests fail on is
killed; one that makes them hang past mutmut's timeout counts as killed too (in `make test`, pytest-timeout
turns such a hang into a failure). A mutant nothing fails on survives: either a test is missing, or the mutant
changes nothing anyone can observe. The latter are listed once, with why, in ``tests/mutation/equivalents.toml``
(matched by module, function and the changed line, so renumbered mutants still match) and left out of the score.

mutmut reads its settings from ``pyproject.toml`` in the directory it runs in: this script runs it in
``.mutate/<modules' digest>/``, whose entries link to the repository's and whose pyproject.toml is the
repository's plus ``only_mutate`` for the modules asked for. The repository itself is never modified.

Exit status: 0 when every module measured reaches ``--target`` (90 % killed, after equivalents), else 1; 2 on
bad arguments or when mutmut itself fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / ".mutate"
EQUIVALENTS = REPO / "tests" / "mutation" / "equivalents.toml"
TABLE = REPO / "docs" / "mutation.md"
TARGET = 0.90
KILLED = {"killed", "timeout", "caught by type check", "segfault"}
NOT_LINKED = {".git", ".mutate", "mutants", "pyproject.toml", ".venv", "out", ".pytest_cache", ".hypothesis"}
# Packages whose own tests judge them: every other unit test that loads a spec calls every spec rule, so mutating
# a rules module with the whole unit suite as its tests ran hundreds of tests per mutant (2,828 mutants of the
# rules: past 40 minutes at half-way). A run whose modules all lie under one of these is given only its tests.
OWN_TESTS = {"ibprov/clusterspec/": "tests/unit/clusterspec/"}
RESULT_LINE = re.compile(r"^\s+(?P<name>[\w.]+): (?P<status>.+)$")
MUTANT_NAME = re.compile(r"^(?P<module>.+)\.x(?P<function>[^.]+?)__mutmut_\d+$")  # x_f, xǁClassǁmethod


@dataclass(frozen=True)
class Equivalent:
    module: str  # ibprov/hostlist.py
    function: str
    before: str  # the line as it is
    after: str  # the line as the mutant has it
    why: str


@dataclass
class ModuleScore:
    module: str
    status: Counter[str] = field(default_factory=Counter)
    survivors: list[tuple[str, str, str, str]] = field(default_factory=list)  # (mutant, status, before, after)
    equivalent: list[tuple[str, Equivalent]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.status.values())

    @property
    def killed(self) -> int:
        return sum(n for s, n in self.status.items() if s in KILLED)

    @property
    def score(self) -> float:
        judged = self.total - len(self.equivalent)
        return self.killed / judged if judged else 1.0


def changed_modules(base: str) -> list[str]:
    """ibprov's Python modules that differ from ``base`` (committed or not), and untracked ones."""
    diff = subprocess.run(
        ["git", "diff", "--name-only", base, "--", "ibprov"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    new = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "ibprov"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted({p for p in diff + new if p.endswith(".py") and (REPO / p).is_file()})


def load_equivalents(path: Path = EQUIVALENTS) -> list[Equivalent]:
    data = tomllib.loads(path.read_text()) if path.is_file() else {}
    return [Equivalent(**entry) for entry in data.get("equivalent", [])]


def work_dir(modules: list[str]) -> Path:
    """A directory where mutmut sees the repository with only ``modules`` to mutate; kept between runs (mutmut's
    mutants and its test-to-function map are reused while the modules' code is unchanged)."""
    digest = hashlib.sha256("\n".join(modules).encode()).hexdigest()[:12]
    work = WORK / digest
    work.mkdir(parents=True, exist_ok=True)
    for entry in REPO.iterdir():
        link = work / entry.name
        if entry.name in NOT_LINKED or link.is_symlink() or link.exists():
            continue
        link.symlink_to(entry)
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    if "mutmut" not in project.get("tool", {}):
        raise SystemExit("mutate: pyproject.toml has no [tool.mutmut] section")
    text = (
        (REPO / "pyproject.toml")
        .read_text()
        .replace("[tool.mutmut]\n", "[tool.mutmut]\nonly_mutate = [" + ", ".join(f'"{m}"' for m in modules) + "]\n", 1)
    )
    own = tests_for(modules)
    if own is not None:
        selection = "pytest_add_cli_args_test_selection = "
        text = text.replace(f'{selection}["tests/unit/"]', f'{selection}["{own}"]', 1)
    pyproject = work / "pyproject.toml"
    if not pyproject.is_file() or pyproject.read_text() != text:
        pyproject.write_text(text)
    return work


def tests_for(modules: list[str]) -> str | None:
    """The test directory that alone judges ``modules`` (:data:`OWN_TESTS`), None for the whole unit suite."""
    for prefix, tests in OWN_TESTS.items():
        if modules and all(m.startswith(prefix) for m in modules):
            return tests
    return None


def mutant_globs(modules: list[str]) -> list[str]:
    return [m.removesuffix(".py").removesuffix("/__init__").replace("/", ".") + ".*" for m in modules]


def mutmut(work: Path, *argv: str, capture: bool = True) -> str:
    exe = Path(sys.executable).with_name("mutmut")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [str(exe), *argv], cwd=work, env=env, capture_output=capture, text=True, check=False, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        tail = (done.stdout or "")[-3000:] + (done.stderr or "")[-3000:]
        raise SystemExit(f"mutate: mutmut {' '.join(argv)} failed ({done.returncode})\n{tail}")
    return done.stdout or ""


def changed_line(diff: str) -> tuple[str, str]:
    """The mutant's one changed line, before and after (stripped), from mutmut's unified diff."""
    before = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    after = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " / ".join(before), " / ".join(after)


def module_of(name: str, modules: list[str]) -> tuple[str, str]:
    """(module path, function) of a mutant name such as ``ibprov.hostlist.x_expand__mutmut_11``."""
    match = MUTANT_NAME.match(name)
    if match is None:
        raise ValueError(f"unexpected mutant name {name!r}")
    dotted = match["module"]
    function = match["function"].removeprefix("_").strip("ǁ").replace("ǁ", ".")
    for module in modules:
        if module.removesuffix(".py").removesuffix("/__init__").replace("/", ".") == dotted:
            return module, function
    raise ValueError(f"mutant {name!r} is in no module asked for")


DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import find_mutant, get_diff_for_mutant
names = json.load(sys.stdin)
json.dump({n: get_diff_for_mutant(n, path=find_mutant(n).path) for n in names}, sys.stdout)
"""


def diffs(work: Path, names: list[str]) -> dict[str, str]:
    """mutmut's diff of each mutant in ``names`` (what `mutmut show` prints), asked in one process."""
    if not names:
        return {}
    done = subprocess.run(
        [sys.executable, "-c", DIFFS], cwd=work, input=json.dumps(names), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"mutate: reading the mutants' diffs failed ({done.returncode})\n{done.stderr[-3000:]}")
    answer: dict[str, str] = json.loads(done.stdout)
    return answer


def score(work: Path, modules: list[str], equivalents: list[Equivalent]) -> list[ModuleScore]:
    scores = {m: ModuleScore(m) for m in modules}
    results = [m for m in map(RESULT_LINE.match, mutmut(work, "results", "--all=true").splitlines()) if m]
    shown = diffs(work, [m["name"] for m in results if m["status"] not in KILLED])
    for match in results:
        module, function = module_of(match["name"], modules)
        entry = scores[module]
        status = match["status"]
        entry.status[status] += 1
        if status in KILLED:
            continue
        before, after = changed_line(shown[match["name"]])
        same = [
            e for e in equivalents if (e.module, e.function, e.before, e.after) == (module, function, before, after)
        ]
        if same:
            entry.equivalent.append((match["name"], same[0]))
        else:
            entry.survivors.append((match["name"], status, before, after))
    return [scores[m] for m in modules]


def report(scores: list[ModuleScore], target: float) -> str:
    out = [f"{'module':44} {'mutants':>7} {'killed':>6} {'equiv':>5} {'surv':>5} {'score':>6}"]
    for s in scores:
        survived = s.total - s.killed - len(s.equivalent)
        flag = "" if s.score >= target else "  < target"
        out.append(f"{s.module:44} {s.total:7} {s.killed:7} {len(s.equivalent):5} {survived:5} {s.score:6.1%}{flag}")
    for s in scores:
        for name, status, before, after in s.survivors:
            out += [f"\n{name} ({s.module}) {status}:", f"  - {before}", f"  + {after}"]
    return "\n".join(out)


def _commit() -> str:
    """The checkout's commit, or "no git" outside a git checkout (a copy, a release tarball)."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    except FileNotFoundError:
        return "no git"
    return done.stdout.strip() if done.returncode == 0 else "no git"


def record(scores: list[ModuleScore], table: Path = TABLE) -> None:
    """Replace or add each module's row in the score table of docs/mutation.md (between its markers)."""
    text = table.read_text()
    start, end = "<!-- scores:start -->\n", "<!-- scores:end -->"
    head, rest = text.split(start, 1)
    body, tail = rest.split(end, 1)
    rows = {ln.split("|")[1].strip().strip("`"): ln for ln in body.splitlines() if ln.startswith("| `")}
    commit = _commit()
    day = dt.date.today().isoformat()
    for s in scores:
        survived = s.total - s.killed - len(s.equivalent)
        rows[s.module] = (
            f"| `{s.module}` | {s.total} | {s.killed} | {len(s.equivalent)} | {survived} | {s.score:.1%} "
            f"| {day}, {commit} |"
        )
    header = (
        "| module | mutants | killed | equivalent | survived | score | measured |\n|---|---:|---:|---:|---:|---:|---|\n"
    )
    table.write_text(head + start + header + "\n".join(rows[k] for k in sorted(rows)) + "\n" + end + tail)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="ibprov/... .py files (default: those changed since --base)")
    parser.add_argument("--base", default=os.environ.get("MUTATE_BASE", "HEAD~1"))
    parser.add_argument("--target", type=float, default=TARGET)
    parser.add_argument("--record", action="store_true", help="update the modules' rows in docs/mutation.md")
    args = parser.parse_args(argv)
    modules = sorted(set(args.modules)) or changed_modules(args.base)
    bad = [m for m in modules if not (m.startswith("ibprov/") and m.endswith(".py") and (REPO / m).is_file())]
    if bad:
        print(f"mutate: not a module of ibprov: {', '.join(bad)}", file=sys.stderr)
        return 2
    if not modules:
        print(f"mutate: no ibprov module changed since {args.base}: nothing to mutate")
        return 0
    work = work_dir(modules)
    print(f"mutate: {len(modules)} module(s) in {work.relative_to(REPO)}: {', '.join(modules)}", flush=True)
    mutmut(work, "run", *mutant_globs(modules), capture=False)
    scores = score(work, modules, load_equivalents())
    print(report(scores, args.target))
    if args.record:
        record(scores)
    return 0 if all(s.score >= args.target for s in scores) else 1


if __name__ == "__main__":
    sys.exit(main())
