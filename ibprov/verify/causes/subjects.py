"""What a finding is about, read from its object against the plan: the hosts, HCAs, ports and cables it names.

Objects are written by the sections in a few forms, all built from the spec's names:

* a port: ``node07 mlx5_0 port 1`` (an HCA port) or ``leaf03 port 7`` (a switch port); a cable is named by
  one of its ends (the CA end, else the lower tier), so a cable's object is a port too;
* an endpoint as the spec writes it: ``node07/mlx5_0:1``, ``leaf03:7`` (perf pairs: ``a/mlx5_0:1 ->
  b/mlx5_0:1 ib_write_bw 64KiB``; cabling: ``leaf01:1 <-> cn01/mlx5_0:1``);
* an HCA: ``node01 mlx5_0``; a host: ``node01`` (``node01 eth0``, ``node01 openmpi``, ``node01 <-> node02``);
* a destination LID: ``LID 5 (node01 mlx5_0 port 1)``; ``fabric`` for the fabric as a whole.

A word is a host only when the spec plans a node of that name, a switch only when it plans that switch, and
an HCA only when that node has it: free text in an object (``planned``, ``port``) never names anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.types import Endpoint

__all__ = ["Fabric", "Subjects", "fabric_of", "port_text"]

_ENDPOINT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*?)(?:/([a-z][a-z0-9_]*))?:(\d{1,3})$")
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/-]*")


def port_text(end: Endpoint) -> str:
    """An endpoint as the reports name ports: ``node07 mlx5_0 port 1`` or ``leaf03 port 7``."""
    return f"{end.device} {end.hca} port {end.port}" if end.hca else f"{end.device} port {end.port}"


@dataclass(frozen=True)
class Subjects:
    """What one finding's object names."""

    hosts: frozenset[str] = frozenset()
    switches: frozenset[str] = frozenset()
    hcas: frozenset[tuple[str, str]] = frozenset()  # (host, device)
    ports: frozenset[Endpoint] = frozenset()


@dataclass(frozen=True)
class Fabric:
    """The plan as the cause rules need it: the names that exist and, for each port, its cable."""

    hosts: frozenset[str]
    switches: frozenset[str]
    hcas: Mapping[str, frozenset[str]]  # host -> its HCA devices
    cables: Mapping[Endpoint, tuple[Endpoint, Endpoint]]  # either end of a planned cable -> both its ends

    def cable(self, port: Endpoint) -> tuple[Endpoint, Endpoint] | None:
        return self.cables.get(port)

    def subjects(self, obj: str) -> Subjects:
        words = [w.rstrip(".-") for w in _WORD.findall(obj)]  # "node01." at the end of a sentence is node01
        hosts: set[str] = set()
        switches: set[str] = set()
        hcas: set[tuple[str, str]] = set()
        ports: set[Endpoint] = set()
        for i, word in enumerate(words):
            if (m := _ENDPOINT.match(word)) and (m[1] in self.hosts or m[1] in self.switches):
                end = Endpoint(m[1], m[2], int(m[3]))
                if end.hca is None or end.hca in self.hcas.get(end.device, ()):
                    ports.add(end)
            elif word in self.hosts:
                hosts.add(word)
                rest = words[i + 1 : i + 4]  # "node01 mlx5_0 port 1", or "node01 mlx5_0" (an HCA)
                if rest and rest[0] in self.hcas[word]:
                    hcas.add((word, rest[0]))
                    if rest[1:2] == ["port"] and rest[2:3] and rest[2].isdigit():
                        ports.add(Endpoint(word, rest[0], int(rest[2])))
            elif word in self.switches:
                switches.add(word)
                rest = words[i + 1 : i + 3]  # "leaf03 port 7"
                if rest[:1] == ["port"] and rest[1:2] and rest[1].isdigit():
                    ports.add(Endpoint(word, None, int(rest[1])))
        for end in ports:
            (hosts if end.hca else switches).add(end.device)
            if end.hca:
                hcas.add((end.device, end.hca))
        return Subjects(frozenset(hosts), frozenset(switches), frozenset(hcas), frozenset(ports))


def fabric_of(loaded: LoadedSpec) -> Fabric:
    """The :class:`Fabric` of a loaded spec."""
    spec, topo = loaded.spec, loaded.topology
    hcas = {node.name: frozenset(h.device for h in node.hcas) for node in spec.nodes}
    cables = {end: (link.a, link.b) for link in topo.links for end in (link.a, link.b)}
    return Fabric(hosts=frozenset(hcas), switches=frozenset(topo.switches), hcas=hcas, cables=cables)
