"""Rails: which HCA ports of each node carry which rail. One meaning for every part of ibprov that speaks of
rails (the fat-tree generator and its rail plan, ``verify --fabric``'s ``cabling.rail``, ``verify --perf``'s
rail-aware and quick schedules).

* With ``mpi.rails``, rail *i* is ``mpi.rails[i]``: on each node, the port that one of its ``DEVICE:PORT``
  entries names. A node may lack a rail (its slot on that rail stays free); a port no rail names (a storage
  HCA) is on no rail. A node with two ports of one rail, or a port listed by two rails, is a spec error
  (:meth:`Rails.problems`).
* Without, rail *i* is the *i*-th port among a node's HCA ports, in the spec's order (HCAs, then each HCA's
  ports): every port is on a rail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ibprov.clusterspec.model import ClusterSpec, Node, Rail
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.types import Endpoint

__all__ = ["Rails", "rail_ports"]

Port = tuple[str, int]  # (device, port)


def rail_ports(rail: Rail) -> frozenset[Port]:
    """The rail's ``DEVICE:PORT`` entries as (device, port)."""
    return frozenset((device, int(port)) for device, _, port in (d.partition(":") for d in rail.devices))


@dataclass(frozen=True)
class Rails:
    """The rails of a spec: :meth:`ports` answers "which ports of node N carry which rail"."""

    names: tuple[str, ...] = ()  # mpi.rails' names; () when rails are positions among a node's ports
    index: dict[tuple[str, int], int] = field(default_factory=dict)  # (device, port) -> its rail (mpi.rails)

    @classmethod
    def of(cls, spec: ClusterSpec) -> Rails:
        index: dict[Port, int] = {}
        for r, rail in enumerate(spec.mpi.rails):
            for key in rail_ports(rail):
                index.setdefault(key, r)  # a port in two rails: the first (a problem)
        return cls(tuple(r.name for r in spec.mpi.rails), index)

    @property
    def named(self) -> bool:
        """The rails are mpi.rails (else positions among each node's ports)."""
        return bool(self.names)

    def ports(self, node: Node) -> list[Endpoint | None]:
        """The node's ports by rail: item *i* carries rail *i* (None: the node lacks that rail). Without
        mpi.rails, every port of the node in the spec's order; with, ``len(mpi.rails)`` items (a node with two
        ports of one rail: the first)."""
        if not self.names:
            return [Endpoint(node.name, hca.device, port) for hca in node.hcas for port in hca.ports]
        out: list[Endpoint | None] = [None] * len(self.names)
        for hca in node.hcas:
            for port in hca.ports:
                r = self.index.get((hca.device, port))
                if r is not None and out[r] is None:
                    out[r] = Endpoint(node.name, hca.device, port)
        return out

    def rail_of(self, node: Node) -> dict[Endpoint, int]:
        """Each of the node's ports that is on a rail -> its rail."""
        return {end: r for r, end in enumerate(self.ports(node)) if end is not None}

    def off_rail(self, node: Node) -> list[Endpoint]:
        """The node's ports on no rail (only with mpi.rails: e.g. a storage HCA)."""
        if not self.names:
            return []
        return [
            Endpoint(node.name, hca.device, port)
            for hca in node.hcas
            for port in hca.ports
            if (hca.device, port) not in self.index
        ]

    def label(self, rail: int) -> str:
        """'rail 2' (positions) or the rail's name ('rail0'; 'rail fast' when the name does not say rail)."""
        if not self.names:
            return f"rail {rail}"
        name = self.names[rail]
        return name if name.lower().startswith("rail") else f"rail {name}"

    def problems(self, spec: ClusterSpec, nodes: Iterable[int] | None = None) -> list[tuple[Path, str]]:
        """mpi.rails that do not say which port carries a rail: a port in two rails, a node (of ``nodes``, by
        index; default all) with two ports of one rail."""
        if not self.names:
            return []
        out: list[tuple[Path, str]] = []
        first: dict[tuple[str, int], tuple[int, int]] = {}
        for r, rail in enumerate(spec.mpi.rails):
            for j, dev in enumerate(rail.devices):
                name, _, number = dev.partition(":")
                key = (name, int(number))
                if key in first and first[key][0] != r:
                    out.append(
                        (
                            ("mpi", "rails", r, "devices", j),
                            f"{dev} is also in rail {spec.mpi.rails[first[key][0]].name} "
                            f"(mpi.rails[{first[key][0]}]): a port carries one rail",
                        )
                    )
                first.setdefault(key, (r, j))
        for i in range(len(spec.nodes)) if nodes is None else nodes:
            node = spec.nodes[i]
            seen: dict[int, str] = {}
            for j, hca in enumerate(node.hcas):
                for port in hca.ports:
                    which = self.index.get((hca.device, port))
                    if which is None:
                        continue
                    if which in seen:
                        out.append(
                            (
                                ("nodes", i, "hcas", j, "device"),
                                f"{node.name} has two ports of rail {self.names[which]} (mpi.rails[{which}]): "
                                f"{seen[which]} and {hca.device}:{port}; a node carries each rail on one port "
                                "(keep one of them in the rail's devices, or make the other a rail of its own)",
                            )
                        )
                    else:
                        seen[which] = f"{hca.device}:{port}"
        return out
