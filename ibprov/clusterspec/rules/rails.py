"""mpi.rails: each DEVICE:PORT entry is a port some node has, and each rail has its own name; what is said
of a rail name mpi.rails does not define (a partition member's or an IPoIB interface's ``rail``). Which port
carries which rail is :mod:`ibprov.clusterspec.rails`."""

from __future__ import annotations

from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.rules.findings import Finding, dupes, hint
from ibprov.clusterspec.topology import Topology


def mpi_rails_exist(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    ports = {(h.device, p) for n in spec.nodes for h in n.hcas for p in h.ports}
    for i, rail in enumerate(spec.mpi.rails):
        for j, dev in enumerate(rail.devices):
            name, _, port = dev.partition(":")
            if (name, int(port)) not in ports:
                yield ("mpi", "rails", i, "devices", j), f"no node has HCA port {dev}"
    yield from dupes([(r.name, ("mpi", "rails", i, "name")) for i, r in enumerate(spec.mpi.rails)], "rail")


def unknown_rail(name: str, spec: ClusterSpec) -> str:
    names = [r.name for r in spec.mpi.rails]
    if not names:
        return f"unknown rail {name!r}: mpi.rails defines no rail (add it there with its DEVICE:PORT entries)"
    return f"unknown rail {name!r}{hint(name, names)}: mpi.rails defines {', '.join(names)}"
