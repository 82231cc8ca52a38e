"""Collect an :class:`Observation` of the fabric with infiniband-diags, through a :class:`Runner`.

Batch 1: ``ibnetdiscover --cache F`` (topology, LIDs; the one discovery for all of it) and ``base64 F``
  (the cache: the IsSM bits and every CA's PartitionCap, see :mod:`ibprov.probes.cache`).
Batch 2 (concurrently): ``iblinkinfo --load-cache F -l`` (state, physical state, width, speed of every
  port), ``ibqueryerrors --load-cache F`` (error counters; with ``-k`` when soaking, which clears them
  after reading), ``sminfo`` (the master as this port sees it) and the PKey-table probe for every CA port
  (one process, :mod:`ibprov.probes.pkeytables`).
Batch 3 (concurrently, at most 6 at a time): per SM port ``sminfo <lid>``; ``smpquery pkeys <lid> <port>``
  for a port the probe could not read; with QoS on, ``smpquery sl2vl`` and ``smpquery vlarb`` per CA port
  and per switch egress port (port 0 and every connected external port; on a fabric with more than
  :data:`SWITCH_QOS_BUDGET` of them, a sample per switch: see :func:`switch_qos_ports`).
Soak: wait until ``soak`` seconds have passed since the clear, then ``ibqueryerrors --load-cache F``
  again: what it reports is what accumulated during the soak.

A failed ibnetdiscover (no fabric reachable) raises CollectError; output a parser cannot read raises
ParseError (tool and line); a failed per-port query becomes a :class:`QueryFailure`. The lines a diag printed
besides its output (ibwarn, libibumad, kernel lines: its reader's ``notes``) are kept per diag in
``Observation.diag_notes`` (a per-port query's prefixed with its target), for the section's notes.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ibprov.errors import CollectError
from ibprov.probes import ParseError, collector, pkeytables
from ibprov.probes import ibnetdiscover as nd
from ibprov.probes.cache import FabricCache, decode
from ibprov.probes.ibqueryerrors import QueryErrors
from ibprov.probes.runner import CommandResult, Runner
from ibprov.verify.fabric.commands import CACHE, DISCOVER
from ibprov.verify.fabric.observation import (
    LinkState,
    Observation,
    ObservedLink,
    ObservedNode,
    ObservedSm,
    PortRef,
    QueryFailure,
    Soak,
)

__all__ = ["SWITCH_QOS_BUDGET", "Clock", "collect", "switch_qos_ports"]


@dataclass(frozen=True)
class Clock:
    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


NO_FABRIC_HINT = (
    "run verify on a host with an HCA on this fabric, or --via HOST to run the diags there; "
    "for the twin: `ibprov twin SPEC --verify`, or `--target twin` with a twin rack up"
)


def _ok(result: CommandResult, name: str) -> str:
    if not collector(name).succeeded(result.returncode):
        hint = f" ({NO_FABRIC_HINT})" if name == "ibnetdiscover" else ""
        raise CollectError(f"could not collect from the fabric: {result.reason()}{hint}")
    return result.stdout


def _nodes(fabric: nd.Fabric) -> dict[int, ObservedNode]:
    nodes: dict[int, ObservedNode] = {}
    for n in fabric.nodes:
        if n.guid is None:
            raise ParseError("ibnetdiscover", 0, "", "a node without a node GUID (was -p used?)")
        ports = {p.number: (p.guid, p.lid) for p in n.ports}
        nodes[n.guid] = ObservedNode(n.guid, n.type, n.description, ports, n.lid, n.port_guid)
    return nodes


def _links(fabric: nd.Fabric) -> list[ObservedLink]:
    out = []
    for link in fabric.links:
        if link.a.node_guid is None or link.b.node_guid is None:
            raise ParseError("ibnetdiscover", 0, "", "a link end without a node GUID")
        a, b = PortRef(link.a.node_guid, link.a.port), PortRef(link.b.node_guid, link.b.port)
        out.append(ObservedLink(a, b, link.width, link.speed))
    return out


def _counters(obs: Observation, errors: QueryErrors) -> dict[PortRef, Mapping[str, int]]:
    index = obs.guid_index()
    out: dict[PortRef, Mapping[str, int]] = {}
    for port in errors.ports:
        if port.port is None or port.data_only or not port.counters:
            continue  # a switch's "port ALL" sum repeats its ports
        ref = index.get(port.guid)
        if ref is None:
            continue
        ref = PortRef(ref.node_guid, port.port) if ref.port == 0 else ref
        out[ref] = dict(port.counters)
    return out


def _states(obs: Observation, text: str) -> dict[PortRef, LinkState]:
    index = obs.guid_index()
    out: dict[PortRef, LinkState] = {}
    parsed = collector("iblinkinfo").parse(text)
    obs.keep_notes("iblinkinfo", parsed)
    for port in parsed.ports:
        ref = index.get(port.guid) if port.guid is not None else None
        if ref is None:
            continue
        ref = PortRef(ref.node_guid, port.port) if ref.port == 0 else ref
        out[ref] = LinkState(port.state, port.phys_state)
    return out


def _cache(result: CommandResult) -> FabricCache | None:
    """The fabric cache ``base64 -w0 F`` printed, or None when it could not be read."""
    if result.returncode != 0:
        return None
    try:
        raw = base64.b64decode(result.stdout.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ParseError("base64", 1, result.stdout[:80], "not base64") from None
    return decode(raw)


def _sm_targets(obs: Observation, cache: FabricCache | None, master_lid: int | None) -> dict[int, PortRef]:
    """LID -> port of every port that may run an SM: IsSM ports from the cache (or, without a cache,
    every CA port and switch port 0), plus the master ``sminfo`` named."""
    index = obs.guid_index()
    targets: dict[int, PortRef] = {}
    if cache is not None:
        for port in cache.sm_ports():
            ref = index.get(port.guid)
            if port.lid and ref is not None:
                targets[port.lid] = ref
    else:
        for node in obs.nodes.values():
            if node.type == "SW" and node.lid:
                targets[node.lid] = PortRef(node.guid, 0)
            for number, (_guid, lid) in node.ports.items():
                if lid:
                    targets[lid] = PortRef(node.guid, number)
    if master_lid:
        for node in obs.nodes.values():
            if node.type == "SW" and node.lid == master_lid:
                targets[master_lid] = PortRef(node.guid, 0)
            for number, (_guid, lid) in node.ports.items():
                if lid == master_lid:
                    targets[master_lid] = PortRef(node.guid, number)
    return targets


def _ca_ports(obs: Observation) -> list[tuple[PortRef, int, int]]:
    """(port, port GUID, LID) of every CA port with a LID."""
    return [
        (PortRef(node.guid, number), guid, lid)
        for node in obs.nodes.values()
        if node.type != "SW"
        for number, (guid, lid) in sorted(node.ports.items())
        if guid is not None and lid
    ]


SWITCH_QOS_BUDGET = 256  # switch egress ports whose QoS tables are all read; above it, a sample per switch


def switch_qos_ports(obs: Observation, budget: int = SWITCH_QOS_BUDGET) -> tuple[list[tuple[PortRef, int]], int]:
    """(port, switch LID) of the switch egress ports whose SL2VL and VLArb tables are read, and how many
    egress ports there are: port 0 and every external port with a cable. ``smpquery sl2vl LID OUT`` reads
    one MAD per ingress port (37 on a 36-port switch), so above ``budget`` ports only a sample is read: per
    switch, port 0, its lowest-numbered host-facing port and its lowest-numbered switch-to-switch port.
    OpenSM programs every external port of a switch from the one qos_swe_* set, so a wrong set shows on
    any of them; what a sample cannot see is one port the switch did not take the tables on."""
    cabled: dict[int, dict[int, str]] = {}  # switch GUID -> external port -> peer type
    for link in obs.links:
        for end, peer in ((link.a, link.b), (link.b, link.a)):
            node, other = obs.nodes.get(end.node_guid), obs.nodes.get(peer.node_guid)
            if node is not None and other is not None and node.type == "SW" and end.port:
                cabled.setdefault(node.guid, {})[end.port] = other.type
    switches = sorted((n for n in obs.nodes.values() if n.type == "SW" and n.lid), key=lambda n: n.guid)
    everything = [(PortRef(n.guid, p), n.lid or 0) for n in switches for p in [0, *sorted(cabled.get(n.guid, {}))]]
    if len(everything) <= budget:
        return everything, len(everything)
    sample = []
    for n in switches:
        ports = cabled.get(n.guid, {})
        host = [p for p, kind in sorted(ports.items()) if kind != "SW"][:1]
        inter = [p for p, kind in sorted(ports.items()) if kind == "SW"][:1]
        sample += [(PortRef(n.guid, p), n.lid or 0) for p in [0, *host, *inter]]
    return sample, len(everything)


Job = tuple[str, PortRef, int | None, tuple[str, ...]]  # (collector, port, CA port GUID, argv)


def _per_port(
    obs: Observation,
    runner: Runner,
    sm_targets: dict[int, PortRef],
    qos: bool,
    ca_ports: list[tuple[PortRef, int, int]],
    tables: dict[tuple[int, int], pkeytables.PortPkeys],
) -> None:
    jobs: list[Job] = []
    for sm_lid, sm_ref in sorted(sm_targets.items()):
        jobs.append(("sminfo", sm_ref, None, ("sminfo", str(sm_lid))))
    ops = ("sl2vl", "vlarb") if qos else ()
    for ref, port_guid, lid in ca_ports:
        found = tables.get((lid, ref.port))
        if found is not None and found.error is None:
            obs.pkeys[port_guid] = found.pkeys
        else:  # the one-process probe could not read this port: ask smpquery, as an admin would
            jobs.append(("smpquery pkeys", ref, port_guid, ("smpquery", "pkeys", str(lid), str(ref.port))))
        jobs += [(f"smpquery {op}", ref, port_guid, ("smpquery", op, str(lid), str(ref.port))) for op in ops]
    if qos:
        switch_ports, total = switch_qos_ports(obs)
        obs.switch_qos_ports = (len(switch_ports), total)
        for ref, lid in switch_ports:
            jobs += [(f"smpquery {op}", ref, None, ("smpquery", op, str(lid), str(ref.port))) for op in ops]
    results = runner.run_batch([argv for *_, argv in jobs], parallel=True)
    for (name, ref, guid, argv), result in zip(jobs, results, strict=True):
        if not collector(name).succeeded(result.returncode):
            if name != "sminfo":  # a port with the IsSM bit whose SM just stopped answers nothing
                obs.failures.append(QueryFailure(ref, name, result.reason()))
            continue
        target = f"lid {argv[1]}" if name == "sminfo" else f"lid {argv[-2]} port {argv[-1]}"
        _record(obs, name, ref, guid, collector(name).parse(result.stdout), target)


def _record(obs: Observation, name: str, ref: PortRef, guid: int | None, parsed: Any, target: str = "") -> None:
    """Put one per-port query's parsed answer into the observation (and what its output had besides it)."""
    obs.keep_notes(name, parsed, target)
    if name == "sminfo":
        state = parsed.state_name.removeprefix("SMINFO_")
        obs.sms.append(ObservedSm(ref, parsed.guid, parsed.lid, parsed.priority, state, parsed.activity_count))
    elif name == "smpquery pkeys" and guid is not None:
        obs.pkeys[guid] = parsed.pkeys
    elif name == "smpquery sl2vl" and guid is not None:
        obs.sl2vl[guid] = parsed.rows[0][2] if parsed.rows else ()
    elif name == "smpquery sl2vl":  # a switch port: one row per ingress port into this egress port
        obs.switch_sl2vl[ref] = tuple((row_in, vls) for row_in, row_out, vls in parsed.rows if row_out == ref.port)
    elif guid is not None:
        obs.vlarb[guid] = (parsed.high, parsed.low)
    elif parsed.low_cap is not None:  # a base switch port 0 has no VLArb tables: nothing to judge
        obs.switch_vlarb[ref] = (parsed.high, parsed.low)


def _pkey_tables(result: CommandResult) -> dict[tuple[int, int], pkeytables.PortPkeys]:
    """The CA ports' PKey tables the probe read; empty when the probe cannot run there (no python3 or no
    libibmad on the collecting host): every port is then asked with smpquery."""
    if result.returncode != 0:
        return {}
    try:
        return pkeytables.parse(result.stdout)
    except ParseError:
        return {}


def collect(runner: Runner, *, soak: float = 0.0, qos: bool = False, clock: Clock | None = None) -> Observation:
    """Observe the fabric the runner reaches. ``soak`` > 0 clears the error counters and reads them
    again after that many seconds (counting from the clear)."""
    clock = clock or Clock()
    clear = ("-k",) if soak > 0 else ()
    discover, cache = runner.run_batch([DISCOVER, ("base64", "-w0", CACHE)])
    fabric = nd.parse(_ok(discover, "ibnetdiscover"))
    obs = Observation(nodes=_nodes(fabric), links=_links(fabric))
    obs.keep_notes("ibnetdiscover", fabric)
    fabric_cache = _cache(cache)
    ca_ports = _ca_ports(obs)
    caps = fabric_cache.partition_caps if fabric_cache is not None else {}
    probe_targets = [(lid, ref.port, caps.get(ref.node_guid)) for ref, _guid, lid in ca_ports]
    second = [
        ("iblinkinfo", "--load-cache", CACHE, "-l"),
        ("ibqueryerrors", "--load-cache", CACHE, *clear),
        ("sminfo",),
    ] + ([pkeytables.argv(probe_targets)] if probe_targets else [])
    linkinfo, errors, master, *probe = runner.run_batch(second, parallel=True)
    cleared_at = clock.now()
    obs.states = _states(obs, _ok(linkinfo, "iblinkinfo"))
    obs.counters = _counters(obs, _errors(obs, "ibqueryerrors", errors))
    master_lid = None
    if master.returncode == 0:
        master_info = collector("sminfo").parse(master.stdout)
        obs.keep_notes("sminfo", master_info)
        master_lid = master_info.lid
    tables = _pkey_tables(probe[0]) if probe else {}
    _per_port(obs, runner, _sm_targets(obs, fabric_cache, master_lid), qos, ca_ports, tables)
    if soak > 0:
        remaining = soak - (clock.now() - cleared_at)
        if remaining > 0:
            clock.sleep(remaining)
        (again,) = runner.run_batch([("ibqueryerrors", "--load-cache", CACHE)])
        elapsed = clock.now() - cleared_at
        deltas = _counters(obs, _errors(obs, "ibqueryerrors (soak)", again))
        obs.soak = Soak(elapsed, deltas)
    obs.from_port = _from_port(fabric, obs)
    return obs


def _errors(obs: Observation, label: str, result: CommandResult) -> QueryErrors:
    """ibqueryerrors' answer, its notes kept under ``label``."""
    parsed: QueryErrors = collector("ibqueryerrors").parse(_ok(result, "ibqueryerrors"))
    obs.keep_notes(label, parsed)
    return parsed


def _from_port(fabric: nd.Fabric, obs: Observation) -> str | None:
    """``node01 mlx5_0``: the NodeDescription of the node the discovery ran from."""
    node = obs.nodes.get(fabric.initiated_from) if fabric.initiated_from is not None else None
    return node.description if node is not None else None
