"""The error vocabulary of ibprov. Only ``ibprov.cli`` turns these into output and exit codes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1  # verify found problems / render --check found drift
    SPEC_ERROR = 2
    COLLECT_ERROR = 3
    INTERNAL_ERROR = 70


@dataclass(frozen=True, order=True)
class Problem:
    """One problem in a spec file, located at FILE:LINE:COL (1-based)."""

    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class IbprovError(Exception):
    """An expected, user-facing error. Printed as one line (or one line per problem), no traceback."""

    exit_code: ExitCode = ExitCode.SPEC_ERROR


class SpecError(IbprovError):
    """The spec could not be loaded or is invalid. Carries every problem found, sorted by position."""

    exit_code = ExitCode.SPEC_ERROR

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(set(problems))
        super().__init__("\n".join(str(p) for p in self.problems))


class InputFileError(IbprovError):
    """A file given on the command line besides the spec (a perf baseline, ...) cannot be read or is not
    what it should be: one line naming the file (and FILE:LINE:COL where it can), exit 2."""

    exit_code = ExitCode.SPEC_ERROR


class CollectError(IbprovError):
    exit_code = ExitCode.COLLECT_ERROR


class AnsibleError(CollectError):
    """Ansible could not start, or answered for no host (not: a host failed or was unreachable -- that is
    a per-host result). Exit 3, like every other failure to collect."""
