"""The collect half of verify: which command to run, and how to read its output (pure parsers).

The fabric and routing sections' diag commands are registered here; the nodes section's probe and facts parsers are
in :mod:`.hostprobe`.

Each collector pairs an argv builder with a pure ``parse(stdout) -> typed result``. Nothing here runs
a command: the verify step runs ``collector.argv(...)`` locally or through Ansible, checks the exit
status against ``ok_returncodes`` and hands stdout to ``collector.parse``. Parsers skip blank lines,
comments and ``ibwarn:`` warnings, and raise :class:`ParseError` (tool, 1-based line, offending line)
on anything else they cannot read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from ibprov.probes import (
    iblinkinfo,
    ibnetdiscover,
    ibqueryerrors,
    lfts,
    pathrecords,
    sminfo,
    smpquery,
)
from ibprov.probes._text import ParseError

__all__ = ["COLLECTORS", "Collector", "ParseError", "collector"]

T = TypeVar("T")


@dataclass(frozen=True)
class Collector(Generic[T]):
    tool: str  # the executable
    argv: Callable[..., tuple[str, ...]]
    parse: Callable[[str], T]
    ok_returncodes: frozenset[int] = field(default=frozenset({0}))

    def succeeded(self, returncode: int) -> bool:
        """Whether this exit status still means the output is complete and worth parsing."""
        return returncode in self.ok_returncodes


def _smp(operation: str) -> Callable[..., tuple[str, ...]]:
    return partial(smpquery.argv, operation)


COLLECTORS: Mapping[str, Collector[Any]] = MappingProxyType(
    {
        "ibnetdiscover": Collector("ibnetdiscover", ibnetdiscover.argv, ibnetdiscover.parse),
        "iblinkinfo": Collector("iblinkinfo", iblinkinfo.argv, iblinkinfo.parse),
        "ibqueryerrors": Collector(
            "ibqueryerrors", ibqueryerrors.argv, ibqueryerrors.parse, ibqueryerrors.OK_RETURNCODES
        ),
        "sminfo": Collector("sminfo", sminfo.argv, sminfo.parse),
        "smpquery pkeys": Collector("smpquery", _smp("pkeys"), smpquery.parse_pkeys),
        "smpquery sl2vl": Collector("smpquery", _smp("sl2vl"), smpquery.parse_sl2vl),
        "smpquery vlarb": Collector("smpquery", _smp("vlarb"), smpquery.parse_vlarb),
        "dump_lfts": Collector("dump_lfts", lfts.argv, lfts.parse),
        "saquery -p": Collector("saquery", pathrecords.pair_argv, pathrecords.parse),
    }
)


def collector(name: str) -> Collector[Any]:
    """The collector registered as ``name`` (e.g. ``"ibnetdiscover"``, ``"smpquery pkeys"``)."""
    try:
        return COLLECTORS[name]
    except KeyError:
        raise KeyError(f"no collector {name!r}; known: {', '.join(sorted(COLLECTORS))}") from None
