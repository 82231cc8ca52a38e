"""``ucx_info -d``: the transports UCX can use on this host, and the device each runs on (pure parser).

The output is one ``# Memory domain: NAME`` block per memory domain (an HCA such as ``mlx5_0``, ``tcp``,
``posix`` ...), each with its transports, in one of three layouts:

- UCX 1.6 and older: ``#   Transport: tcp`` then ``#   Device: eth2``, ``#   Device: ib0`` ... (one Transport
  line for all its devices, blank ``#`` lines between them; memory domains named ``ib/mlx5_0``);
- UCX 1.7 to 1.10: ``#   Transport: rc_mlx5`` / ``#      Device: mlx5_0:1``, one Transport line per device;
- UCX 1.11 and newer: ``#      Transport: rc_mlx5`` / ``#         Device: mlx5_0:1`` then ``Type:`` and
  ``System device:`` lines.

A Device line belongs to the last Transport line of its memory domain, so the three read alike: each device
is one (memory domain, transport, device) :class:`UcxResource`. A domain with no usable port says
``#   < no supported devices found >`` (an idle domain); ``# Connection manager: NAME`` blocks (1.9 and newer)
end the domain before them and list no device. Every other ``#`` line is a capability, read past.

A line that is not a ``#`` comment (a UCX log line such as ``[1700000000.123456] [node01:1234 :0]
ucp_context.c:1234 UCX  WARN  ...``, a shell or loader warning: the probe merges stderr into stdout) is kept as
a note on the result, never the end of the output. Output with no transport and no idle domain is not
``ucx_info -d``'s (a missing binary, an error message) and output that ends inside a transport or a memory
domain was cut short: both are a ParseError that says what was expected and quotes the line that came.

Proven on (tests/fixtures/ucx_info, one real capture each): UCX 1.6 (Open MPI 4.0.2, CentOS 7.6), 1.9.0
(CentOS 8.1, ConnectX-5), 1.13.1 (Debian 12, no RDMA), 1.15 (HPC-X 2.15, Azure), 1.16.0 (RHEL 8.9, ConnectX-6;
the end of the output) and 1.17.0 (Ubuntu 24.04, Azure).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.probes._text import ParseError, lines

__all__ = ["VERBS_TRANSPORTS", "UcxInfo", "UcxResource", "parse"]

TOOL = "ucx_info -d"
# UCX transports that run over an RDMA device (IB verbs / mlx5 direct verbs / RDMA CM; cm: IB CM, UCX <= 1.8)
VERBS_TRANSPORTS = frozenset(
    {"rc", "rc_verbs", "rc_mlx5", "ud", "ud_verbs", "ud_mlx5", "dc", "dc_mlx5", "rdmacm", "cm"}
)
_MD = re.compile(r"^#\s+Memory domain:\s+(\S+)\s*$")
_CM = re.compile(r"^#\s+Connection manager:\s+(\S+)\s*$")
_TRANSPORT = re.compile(r"^#\s+Transport:\s+(\S+)\s*$")
_DEVICE = re.compile(r"^#\s+Device:\s+(\S+)\s*$")
_NONE = re.compile(r"^#\s+< no supported devices found >\s*$")
_EXPECTED = "'# Memory domain:', '# Transport:' and '# Device:' lines"


@dataclass(frozen=True)
class UcxResource:
    memory_domain: str  # "mlx5_0", "tcp", "posix" ("ib/mlx5_0" before UCX 1.7); "" when the output starts inside one
    transport: str  # "rc_mlx5", "tcp", "posix"
    device: str  # "mlx5_0:1", "eth0", "memory"

    @property
    def verbs(self) -> bool:
        return self.transport in VERBS_TRANSPORTS


@dataclass(frozen=True)
class UcxInfo:
    resources: tuple[UcxResource, ...]
    idle_domains: tuple[str, ...] = ()  # memory domains with "< no supported devices found >"
    notes: tuple[str, ...] = ()  # "line N: TEXT" for each line that is not ucx_info's (UCX warnings, log lines)

    @property
    def verbs(self) -> tuple[UcxResource, ...]:
        return tuple(r for r in self.resources if r.verbs)

    def transports_on(self, device: str) -> tuple[str, ...]:
        return tuple(r.transport for r in self.resources if r.device == device)

    @property
    def transports(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.transport for r in self.resources))


class _Reader:
    """The state of one parse: the memory domain and transport the next Device line belongs to."""

    def __init__(self) -> None:
        self.resources: list[UcxResource] = []
        self.idle: list[str] = []
        self.notes: list[str] = []
        self.first_foreign: tuple[int, str] | None = None
        self.md = ""
        self.md_at: tuple[int, str] | None = None  # the open domain's header while it has listed nothing
        self.transport: tuple[int, str, str] | None = None  # (line_no, line, name)
        self.devices = 0  # Device lines of the open transport

    def close_transport(self) -> None:
        if self.transport is not None and self.devices == 0:
            line_no, line, name = self.transport
            raise ParseError(TOOL, line_no, line, f"transport {name} has no Device line before the next block")
        self.transport, self.devices = None, 0

    def read(self, line_no: int, line: str) -> None:
        if not line.startswith("#"):
            self.notes.append(f"line {line_no}: {line.strip()}")
            if self.first_foreign is None:
                self.first_foreign = (line_no, line)
        elif m := _MD.match(line):
            self.close_transport()
            self.md, self.md_at = m.group(1), (line_no, line)
        elif _CM.match(line):
            self.close_transport()
            self.md, self.md_at = "", None
        elif m := _TRANSPORT.match(line):
            self.close_transport()
            self.transport, self.md_at = (line_no, line, m.group(1)), None
        elif m := _DEVICE.match(line):
            if self.transport is None:
                raise ParseError(TOOL, line_no, line, "expected a '# Transport:' line before this Device line")
            self.resources.append(UcxResource(self.md, self.transport[2], m.group(1)))
            self.devices += 1
        elif _NONE.match(line):
            self.close_transport()
            self.idle.append(self.md)
            self.md_at = None

    def result(self) -> UcxInfo:
        if self.transport is not None and self.devices == 0:
            line_no, line, name = self.transport
            raise ParseError(TOOL, line_no, line, f"cut short: the output ends before transport {name}'s Device line")
        if self.md_at is not None:
            line_no, line = self.md_at
            raise ParseError(
                TOOL, line_no, line, "cut short: the output ends before this memory domain lists a transport"
            )
        if not self.resources and not self.idle:
            if self.first_foreign is not None:
                line_no, line = self.first_foreign
                raise ParseError(TOOL, line_no, line, f"not ucx_info -d output: expected {_EXPECTED}, got")
            raise ParseError(TOOL, 0, "", f"no transport listed (is UCX installed?): expected {_EXPECTED}")
        return UcxInfo(tuple(self.resources), tuple(self.idle), tuple(self.notes))


def parse(text: str) -> UcxInfo:
    reader = _Reader()
    for line_no, line in lines(TOOL, text):
        reader.read(line_no, line)
    return reader.result()
