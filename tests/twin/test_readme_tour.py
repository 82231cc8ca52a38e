"""The README's tour, run as written: every `$ ` command of its code blocks, in order, in one empty directory,
with the output the README shows.

An ``export`` holds for the commands after it, as in the reader's shell. A command's shown output lines must
appear in its output in that order (`...` stands for lines left out); the exit code must be what the README
says: 2 where the shown output ends in "N problems found", 1 where the comment says FAIL (and the words after
it appear in the output), else 0. The tour brings a twin rack up and takes it down again; the rack is taken
down here too whatever happens (its names carry a random run id, its state lives in this test's directory).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.twin
README = Path(__file__).resolve().parents[2] / "README.md"


@dataclass(frozen=True)
class Step:
    command: str
    comment: str  # what follows the command's " # ", if anything
    shown: tuple[str, ...]  # the output lines the README shows ("..." for lines left out)

    @property
    def exit_code(self) -> int:
        if self.shown and re.fullmatch(r"\d+ problems? found", self.shown[-1]):
            return 2
        return 1 if self.comment.startswith("FAIL") else 0


def tour(text: str) -> list[Step]:
    """The steps of the README's "A short tour" section (up to the next second-level heading)."""
    section = text.split("\n## A short tour\n", 1)[1].split("\n## ", 1)[0]
    steps: list[Step] = []
    for block in re.findall(r"^```\n(.*?)^```$", section, flags=re.M | re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                command, _, comment = line[2:].partition("  # ")
                steps.append(Step(command.strip(), comment.strip(), ()))
            elif steps and line.strip():
                last = steps[-1]
                steps[-1] = Step(last.command, last.comment, (*last.shown, line))
    return steps


def shows(output: str, shown: tuple[str, ...]) -> bool:
    """Whether ``output`` has the ``shown`` lines in this order (``...`` marks lines the README leaves out; without
    it, shown lines follow each other in the output too)."""
    lines = output.splitlines()
    at = 0
    gap = True  # the first shown line may come after any lines (a note, a progress line)
    for want in shown:
        if want == "...":
            gap = True
            continue
        try:
            found = lines.index(want, at) if gap else (at if at < len(lines) and lines[at] == want else -1)
        except ValueError:
            return False
        if found < 0:
            return False
        at, gap = found + 1, False
    return True


def test_the_tour_is_read_from_the_readme_with_its_outputs_and_exit_codes() -> None:
    steps = tour(README.read_text())
    commands = [s.command for s in steps]
    assert commands[:2] == ["ibprov example -o cluster.yaml", "ibprov validate cluster.yaml"]
    assert commands[-1] == "ibprov twin down cluster.yaml", "the tour cleans up after itself"
    assert [s.exit_code for s in steps if s.command.startswith("ibprov render")] == [2, 0, 0]
    assert any(s.exit_code == 1 for s in steps)
    assert shows("note\na\nb\nc", ("a", "...", "c"))
    assert not shows("a\nx\nb", ("a", "b")), "shown lines without ... follow each other"


def test_the_readme_tour_runs_as_written(tmp_path: Path) -> None:
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/molecule.sh installs it)")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
        "IBPROV_TWIN_DIR": str(tmp_path / "twins"),
        "NO_COLOR": "1",
    }
    work = tmp_path / "tour"
    work.mkdir()
    rack_up = False
    try:
        for step in tour(README.read_text()):
            if step.command.startswith("export "):  # the next commands see it, as in the reader's shell
                name = step.command.removeprefix("export ").split("=", 1)[0]
                argv = ["bash", "-c", f'{step.command}; printf %s "${name}"']
                env[name] = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
                assert env[name], step.command
                continue
            ran = subprocess.run(
                ["bash", "-c", step.command], cwd=work, env=env, capture_output=True, text=True, timeout=1500
            )
            said = ran.stdout + ran.stderr
            rack_up = rack_up or step.command.startswith("ibprov twin up")
            assert ran.returncode == step.exit_code, f"$ {step.command}\n(exit {ran.returncode})\n{said[-4000:]}"
            assert shows(said, step.shown), f"$ {step.command}\nshown: {step.shown}\nsaid:\n{said[-4000:]}"
            if step.exit_code == 1:
                assert all(word in said for word in step.comment.removeprefix("FAIL:").split()), said[-4000:]
            if step.command == "ibprov twin down cluster.yaml":
                rack_up = False
    finally:
        if rack_up:
            subprocess.run(["ibprov", "twin", "down", "cluster.yaml"], cwd=work, env=env, timeout=600, check=False)
