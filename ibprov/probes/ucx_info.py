"""``ucx_info -d``: the transports UCX can use on this host, and the device each runs on (pure parser).

The output is one ``# Memory domain: NAME`` block per memory domain (an HCA such as ``mlx5_0``, ``tcp``,
``posix`` ...), each with its transports: ``#      Transport: rc_mlx5`` then ``#         Device: mlx5_0:1``.
Older UCX (before 1.11) prints ``#   Transport: rc`` / ``#   Device: mlx5_0:1`` with less indentation; a
domain with no usable port says ``#   < no supported devices found >``. Every other line is a capability
(``bandwidth: ...``) or a connection manager, read past. A line that is not a ``#`` comment is not
``ucx_info -d`` output (an error message, a missing binary): ParseError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ibprov.probes._text import ParseError, lines

__all__ = ["VERBS_TRANSPORTS", "UcxInfo", "UcxResource", "parse"]

TOOL = "ucx_info -d"
# UCX transports that run over an RDMA device (IB verbs / mlx5 direct verbs / RDMA CM)
VERBS_TRANSPORTS = frozenset({"rc", "rc_verbs", "rc_mlx5", "ud", "ud_verbs", "ud_mlx5", "dc", "dc_mlx5", "rdmacm"})
_MD = re.compile(r"^#\s+Memory domain:\s+(\S+)\s*$")
_TRANSPORT = re.compile(r"^#\s+Transport:\s+(\S+)\s*$")
_DEVICE = re.compile(r"^#\s+Device:\s+(\S+)\s*$")
_NONE = re.compile(r"^#\s+< no supported devices found >\s*$")


@dataclass(frozen=True)
class UcxResource:
    memory_domain: str  # "mlx5_0", "tcp", "posix"; "" when the output starts inside a domain
    transport: str  # "rc_mlx5", "tcp", "posix"
    device: str  # "mlx5_0:1", "eth0", "memory"

    @property
    def verbs(self) -> bool:
        return self.transport in VERBS_TRANSPORTS


@dataclass(frozen=True)
class UcxInfo:
    resources: tuple[UcxResource, ...]
    idle_domains: tuple[str, ...] = ()  # memory domains with "< no supported devices found >"

    @property
    def verbs(self) -> tuple[UcxResource, ...]:
        return tuple(r for r in self.resources if r.verbs)

    def transports_on(self, device: str) -> tuple[str, ...]:
        return tuple(r.transport for r in self.resources if r.device == device)

    @property
    def transports(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.transport for r in self.resources))


def parse(text: str) -> UcxInfo:
    resources: list[UcxResource] = []
    idle: list[str] = []
    md = ""
    transport: tuple[int, str] | None = None
    for line_no, line in lines(TOOL, text):
        if not line.startswith("#"):
            raise ParseError(TOOL, line_no, line, "not ucx_info -d output")
        if m := _MD.match(line):
            md, transport = m.group(1), None
        elif m := _TRANSPORT.match(line):
            if transport is not None:
                raise ParseError(TOOL, line_no, line, f"transport {transport[1]} has no Device line")
            transport = (line_no, m.group(1))
        elif m := _DEVICE.match(line):
            if transport is None:
                raise ParseError(TOOL, line_no, line, "a Device line outside a transport")
            resources.append(UcxResource(md, transport[1], m.group(1)))
            transport = None
        elif _NONE.match(line):
            idle.append(md)
    if transport is not None:
        raise ParseError(TOOL, transport[0], f"Transport: {transport[1]}", "the output ends before its Device line")
    if not resources and not idle:
        raise ParseError(TOOL, 0, "", "no transport listed (is UCX installed?)")
    return UcxInfo(tuple(resources), tuple(idle))
