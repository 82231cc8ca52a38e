"""What the rules share: a finding (where in the spec, what is wrong), the shape of a rule, and the few
phrases several rules put in their messages (a duplicate and where the first one is, "did you mean")."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path, format_path
from ibprov.clusterspec.topology import Topology

__all__ = ["Finding", "Rule", "dupes", "hint"]

Finding = tuple[Path, str]
Rule = Callable[[ClusterSpec, Topology], Iterator[Finding]]


def dupes(items: list[tuple[object, Path]], what: str) -> Iterator[Finding]:
    """Each key of ``items`` seen before, at its path, naming where it was first (an int key as a GUID)."""
    first: dict[object, Path] = {}
    for key, path in items:
        if key in first:
            shown = f"0x{key:016x}" if isinstance(key, int) else key
            yield path, f"duplicate {what} {shown} (also at {format_path(first[key])})"
        else:
            first[key] = path


def hint(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, else nothing (the same whatever their order)."""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
