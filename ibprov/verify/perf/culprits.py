"""Culprit analysis: from the pairs that failed, the HCA port or the link most likely to blame.

A pair *fails* when any of its tests has no result or misses its threshold. Then:

* an HCA port (a node's rail) in at least two pairs, every one of which failed, while some other pairs
  passed, is a suspect: "node12 mlx5_0 port 1: 7/7 pairs failed: suspect its HCA or cable". When every
  pair of the run failed, no port is singled out (something they share is wrong: the fabric, the SM, the
  thresholds).
* with routes (route-aware), the inter-switch cables that every failing pair crosses (either way) and no
  passing pair crosses are suspects, when at least two pairs failed: "leaf03:37 <-> spine02:5". A bad
  cable slows both directions, and a route-aware schedule loads each direction: its two pairs point to it.

Pure: pairs and their verdicts in, suspects out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ibprov.clusterspec.types import Endpoint
from ibprov.verify.perf.routes import LinkDirection
from ibprov.verify.perf.schedule import Pair

__all__ = ["Suspect", "suspects"]


@dataclass(frozen=True)
class Suspect:
    object: str  # "node12 mlx5_0 port 1" or "leaf03:37 <-> spine02:5"
    failed: int
    total: int  # pairs this object took part in
    kind: str  # "port" or "link"

    @property
    def text(self) -> str:
        return f"{self.failed}/{self.total} pairs failed"


def port_name(end: Endpoint) -> str:
    return f"{end.device} {end.hca} port {end.port}"


def suspects(verdicts: Mapping[Pair, bool], paths: Mapping[Pair, Sequence[LinkDirection]] = {}) -> list[Suspect]:
    """``verdicts``: pair -> passed. The suspect ports, then the suspect links (module docstring)."""
    failing = [p for p, ok in verdicts.items() if not ok]
    passing = [p for p, ok in verdicts.items() if ok]
    if not failing:
        return []
    out: list[Suspect] = []
    if passing:
        taking: dict[Endpoint, list[Pair]] = {}
        for pair in verdicts:
            for end in (pair.client, pair.server):
                taking.setdefault(end, []).append(pair)
        for end, pairs in taking.items():
            bad = [p for p in pairs if not verdicts[p]]
            if len(pairs) >= 2 and len(bad) == len(pairs):
                out.append(Suspect(port_name(end), len(bad), len(pairs), "port"))
    routed = [p for p in failing if p in paths]
    if len(routed) >= 2:
        cables = {p: {_cable(d) for d in paths[p]} for p in verdicts if p in paths}
        shared = set(cables[routed[0]])
        for pair in routed[1:]:
            shared &= cables[pair]
        for pair in passing:
            shared -= cables.get(pair, set())
        for cable in sorted(shared):
            total = sum(1 for p in cables if cable in cables[p])
            out.append(Suspect(cable, len(routed), total, "link"))
    return out


def _cable(direction: LinkDirection) -> str:
    """Both directions of a cable as one name, the lower-tier end first: ``leaf01:33 <-> spine01:1``."""
    a, b = sorted((str(direction.src), str(direction.dst)))
    return f"{a} <-> {b}"
