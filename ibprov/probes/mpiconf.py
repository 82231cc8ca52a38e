"""What ``verify --mpi`` reads on each node: UCX's, Open MPI's and NCCL's configuration files, the MPI-related
environment of a non-interactive login (what mpirun's ranks start with), ``ucx_info -d`` and which MPI
benchmarks are installed. One shell probe (:func:`probe_script`) prints them in sections; the parsers here are
pure.

Files are ``KEY=VALUE`` (ucx.conf, nccl.conf) or ``key = value`` (openmpi-mca-params.conf) lines; ``#``
comments and blank lines are read past, any other line is a ParseError (the file is not what the role wrote
and not what UCX/Open MPI/NCCL read either: a configuration file, not a tool's output, so no line of it is
noise). The ``tools`` section is output: a line in it that is neither a tool's path nor ``mpi4py VERSION`` is a
note on :class:`Tools` (proven on the section as Debian 12's Open MPI 4.1.4 and mpi4py 3.1.4 print it, with
and without bash's locale warning: tests/fixtures/mpiconf).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ibprov.probes._text import ParseError, note, probe_sections

__all__ = [
    "MARK",
    "MISSING",
    "Tools",
    "parse_env",
    "parse_kv_file",
    "parse_probe",
    "parse_tools",
    "probe_script",
]

MARK = "@@ibprov-mpi "
MISSING = "@@ibprov-missing"  # the section's file (or ucx_info) does not exist on the host
DISTRIBUTION_MCA = "@distribution"  # the distribution's Open MPI: Debian's path, else EL's per-architecture one
_KV = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_ENV = re.compile(r"^(UCX_|OMPI_MCA_|NCCL_)[A-Z0-9_a-z]*=")


def _cat(path: str) -> str:
    q = shlex.quote(path)
    return f"if [ -f {q} ]; then cat {q}; else echo '{MISSING}'; fi"


def probe_script(mca_files: Mapping[str, str], ucx_conf: str = "/etc/ucx/ucx.conf") -> str:
    """The shell probe: one section per file (``mca <flavour>`` for each of ``mca_files``: flavour -> path,
    :data:`DISTRIBUTION_MCA` for the distribution's Open MPI), ``env``, ``ucx_info`` and ``tools``."""
    lines = [f"echo '{MARK}ucx.conf'", _cat(ucx_conf)]
    for flavour, path in mca_files.items():
        lines.append(f"echo {shlex.quote(MARK + 'mca ' + flavour)}")
        if path == DISTRIBUTION_MCA:
            lines += [
                "f=/etc/openmpi/openmpi-mca-params.conf",
                '[ -f "$f" ] || f="/etc/openmpi-$(uname -m)/openmpi-mca-params.conf"',
                f'if [ -f "$f" ]; then cat "$f"; else echo \'{MISSING}\'; fi',
            ]
        else:
            lines.append(_cat(path))
    lines += [
        f"echo '{MARK}nccl.conf'",
        _cat("/etc/nccl.conf"),
        f"echo '{MARK}env'",
        "env | grep -E '^(UCX_|OMPI_MCA_|NCCL_)' || true",
        f"echo '{MARK}ucx_info'",
        f"if command -v ucx_info >/dev/null; then ucx_info -d 2>&1; else echo '{MISSING}'; fi",
        f"echo '{MARK}tools'",
        'for t in mpirun osu_latency osu_bw; do command -v "$t" || true; done',
        "python3 -c 'import mpi4py.bench; print(\"mpi4py \" + mpi4py.__version__)' 2>/dev/null || true",
        "exit 0",
    ]
    return "\n".join(lines) + "\n"


def parse_probe(stdout: str) -> dict[str, str | None]:
    """Section name -> its text; None where the probe found no such file (or no ucx_info)."""
    return {name: None if text == MISSING else text for name, text in probe_sections(stdout, MARK).items()}


def parse_kv_file(tool: str, text: str) -> dict[str, str]:
    """``KEY=VALUE`` / ``key = value`` lines; the last one of a key wins (as UCX and Open MPI read them)."""
    out: dict[str, str] = {}
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _KV.match(line)
        if m is None:
            raise ParseError(tool, line_no, raw, "expected KEY=VALUE")
        out[m.group(1)] = m.group(2)
    return out


def parse_env(text: str) -> dict[str, str]:
    """The ``UCX_*``, ``OMPI_MCA_*`` and ``NCCL_*`` variables of ``env`` output (other lines read past)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if _ENV.match(line):
            key, _, value = line.partition("=")
            out[key] = value
    return out


@dataclass(frozen=True)
class Tools:
    mpirun: str | None = None  # its path
    osu_latency: str | None = None
    osu_bw: str | None = None
    mpi4py: str | None = None  # its version
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line of the section that is none of the above

    @property
    def osu(self) -> bool:
        return self.osu_latency is not None and self.osu_bw is not None


def parse_tools(text: str) -> Tools:
    """The ``tools`` section: ``command -v`` paths and ``mpi4py VERSION``. Any other line (a shell's locale
    warning, a login banner: the probe merges stderr) is a note on the result, never a tool."""
    found: dict[str, str] = {}
    notes: list[str] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        name = line.rsplit("/", 1)[-1]
        if line.startswith("mpi4py ") and len(line.split()) == 2:
            found["mpi4py"] = line.split(None, 1)[1]
        elif line.startswith("/") and " " not in line and name in ("mpirun", "osu_latency", "osu_bw"):
            found.setdefault(name, line)
        elif line:
            notes.append(note(line_no, line))
    return Tools(found.get("mpirun"), found.get("osu_latency"), found.get("osu_bw"), found.get("mpi4py"), tuple(notes))


def first_reason(lines: Sequence[str]) -> str:
    """The line that says why an MPI launch failed, from its output: a known message, else the last line."""
    known = (
        "cannot be selected",
        "No components were able to be opened",
        "ORTE was unable to reliably start",
        "Host key verification failed",
        "Permission denied",
        "Could not resolve hostname",
        "Connection refused",
        "No route to host",
        "command not found",
        "No such file or directory",
        "not enough slots",
    )
    text = [ln.strip() for ln in lines if ln.strip() and not set(ln.strip()) <= {"-"}]
    for k in known:  # in that order: "PML ucx cannot be selected" says more than the banner before it
        for line in text:
            if k in line:
                return line
    return text[-1] if text else "no output"
