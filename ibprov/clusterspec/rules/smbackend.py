"""Subnet-manager back ends (subnet_manager.backend): each has the section it needs and no other, the SM
runs where the back end says (a switch of the fabric; UFM's own server ports), and no host OpenSM is planned
beside a switch SM (a double SM: the most common bring-up mistake with embedded SMs). What a back end cannot
carry at all is an error here; what it leaves to the product's own settings is a warning (:mod:`..advice`)."""

from __future__ import annotations

from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.findings import Finding, hint
from ibprov.clusterspec.topology import Topology

__all__ = ["sm_backend_is_complete"]

SM: Path = ("subnet_manager",)


def sm_backend_is_complete(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    sm = spec.subnet_manager
    for other in ("switch", "ufm"):
        if other != sm.backend and getattr(sm, other) is not None:
            yield (
                (*SM, other),
                f"subnet_manager.{other} is read only with backend: {other} (the backend is {sm.backend}): "
                f"remove it, or set backend: {other}",
            )
    if sm.backend == "opensm":
        if not sm.instances:
            yield (*SM, "instances"), "backend: opensm needs at least one instance: the nodes that run OpenSM"
        return
    if sm.backend == "switch":
        yield from _switch(spec, topo)
    else:
        yield from _ufm(spec)


def _switch(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    sm = spec.subnet_manager
    if sm.switch is None:
        yield (*SM, "backend"), "backend: switch needs subnet_manager.switch (name, url, username, password)"
        return
    if sm.switch.name not in topo.switches:
        yield (
            (*SM, "switch", "name"),
            f"unknown switch {sm.switch.name!r}{hint(sm.switch.name, topo.switches)}: the SM runs in a switch "
            "of the fabric",
        )
    for i, inst in enumerate(sm.instances):
        yield (
            (*SM, "instances", i),
            f"a host OpenSM on {inst.node} beside the SM of switch {sm.switch.name} is a second SM (the two elect "
            "a master between them and the loser's settings are silently unused): remove instances, or set "
            "backend: opensm",
        )


def _ufm(spec: ClusterSpec) -> Iterator[Finding]:
    sm = spec.subnet_manager
    if sm.ufm is None:
        yield (*SM, "backend"), "backend: ufm needs subnet_manager.ufm (url, auth and its credentials)"
    if not sm.instances:
        yield (
            (*SM, "instances"),
            "backend: ufm needs instances: the UFM server's HCA port(s) where UFM's SM runs (ibprov installs no "
            "OpenSM there; verify checks that no other SM runs)",
        )
    for p_i, part in enumerate(spec.partitions):
        if part.defmember == "both":
            yield (
                ("partitions", p_i, "defmember"),
                "UFM holds a GUID as full or limited, not both: give full or limited",
            )
        for m_i, member in enumerate(part.members):
            if member.membership == "both":
                yield (
                    ("partitions", p_i, "members", m_i, "membership"),
                    "UFM holds a GUID as full or limited, not both: give full or limited",
                )
