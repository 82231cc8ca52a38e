"""Prove a rendered configuration on the twin with the real OpenSM: the subnet comes up under the planned
master with the planned routing engine, no partition parse error, and every port holds exactly its
planned PKeys (and, with QoS on, the planned SL2VL and VL arbitration tables)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import QosTables
from ibprov.identity.guids import GuidBook, fmt_guid
from ibprov.identity.partitions import planned_pkeys
from ibprov.identity.smports import planned_master
from ibprov.pkey import PKey
from ibprov.probes import ParseError, ibnetdiscover, sminfo, smpquery
from ibprov.probes.runner import LocalRunner
from ibprov.report.model import Report
from ibprov.twin.bringup import TwinRun, start_twin
from ibprov.verify.causes import explain_report, fabric_of
from ibprov.verify.fabric.section import verify_fabric
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.routing.section import log_reader, verify_routing

# What OpenSM 3.3.23 logs when it throws the partition file away or cannot use its configuration.
LOG_FAILURES = (
    (re.compile(r"PARSE ERROR.*"), "partitions.conf parse error"),
    (re.compile(r"Partition configuration in error.*"), "OpenSM fell back to the default partition"),
    (re.compile(r"Falling back to default routing.*"), "routing engine fell back to minhop"),
    (re.compile(r"ERR [0-9A-F]{4}:.*"), "OpenSM error"),
)
_ERROR_LEVEL = re.compile(r" 0x01 -> (?!log_trap_info: Received Generic Notice type:4 num:144)(.*)")
# (trap 144 — CapabilityMask/priority changed — is logged at error level whenever a standby SM starts)


@dataclass
class ProofResult:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ibnetdiscover: str = ""  # the twin's fabric as `ibnetdiscover` printed it (input for `discover --from`)
    report: Report | None = None  # with verify=True: `verify --fabric` against the running twin
    notes: list[str] = field(default_factory=list)  # what the twin ran instead of the plan (its limits)


def log_failures(text: str) -> list[str]:
    """The lines of an OpenSM log that mean the configuration was not (fully) applied."""
    found = []
    for line in text.splitlines():
        for pattern, what in LOG_FAILURES:
            match = pattern.search(line)
            if match:
                found.append(f"{what}: {match.group(0).strip()}")
                break
        else:
            error = _ERROR_LEVEL.search(line)
            if error:
                found.append(f"OpenSM error: {error.group(1).strip()}")
    return found


def prove(
    loaded: LoadedSpec,
    workdir: Path,
    *,
    timeout: float = 120.0,
    before_start: Callable[[Path], None] | None = None,
    while_up: Callable[[TwinRun, str], None] | None = None,
    verify: bool = False,
    routing: bool = False,
) -> ProofResult:
    """Bring the plan up on the twin and check it. ``before_start(opensm_dir)`` may alter the rendered
    OpenSM files first (tests use it to prove that a broken configuration is caught); ``while_up(run, host)``
    runs once the proof passed, before the twin stops, with a port to run diags from. ``verify``: then
    run ``verify --fabric`` from that port (``result.report``); ``routing``: and ``verify --routing`` (the
    forwarding tables the real OpenSM programmed, audited for loops, dead ends and balance, with its log)."""
    result = ProofResult()
    run = start_twin(loaded, workdir, before_start=before_start)
    result.notes = [*(run.limits.notes() if run.limits is not None else []), *run.backend_notes]
    try:
        _prove(loaded, run, result, timeout)
        if not result.problems:
            host = _probe_host(loaded, run)
            if while_up is not None:
                while_up(run, host)
            if verify:
                result.report = verify_twin(loaded, run, host, routing=routing)
    finally:
        run.stop()
    return result


def verify_twin(loaded: LoadedSpec, run: TwinRun, host: str, *, routing: bool = False) -> Report:
    """``verify --fabric`` (and with ``routing``, ``verify --routing``) against the running twin, the diags
    running as ``host``, its GUIDs synthetic, the engine read from the twin's OpenSM log."""
    runner = LocalRunner(env=run.sim.env(host))
    try:
        sections = [verify_fabric(loaded, runner, synthetic_guids=True, twin=run.limits)]
        if routing:
            reader = log_reader(loaded, VerifyOptions(sm_log=run.master.log))
            sections.append(verify_routing(loaded, runner, reader, twin=True))
    finally:
        runner.close()
    report = Report.from_sections(
        cluster=loaded.spec.cluster.name, spec=str(loaded.path) if loaded.path else "", sections=sections
    )
    return explain_report(report, fabric_of(loaded))


def _prove(loaded: LoadedSpec, run: TwinRun, result: ProofResult, timeout: float) -> None:
    spec = loaded.spec
    master = run.master
    if not master.wait_for("SUBNET UP", timeout):
        result.problems.append(
            f"no SUBNET UP within {timeout:g}s; last log lines: "
            + " / ".join(master.log_text().strip().splitlines()[-3:])
        )
        return
    result.lines.append(
        f"SUBNET UP on the twin ({len(loaded.topology.switches)} switches, "
        f"{sum(len(n.hcas) for n in spec.nodes)} HCAs, {len(loaded.topology.links)} links)"
    )
    for _node, _prio, sm in run.sms:
        result.problems += [f"{sm.sim_host}: {p}" for p in log_failures(sm.log_text())]
    engine = spec.subnet_manager.routing_engine[0]
    if f"{engine} tables configured" not in master.log_text():
        result.problems.append(f"routing engine {engine} did not configure the switches (see {master.log})")
    else:
        result.lines.append(f"routing engine {engine} in use")
    book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)
    probe = _probe_host(loaded, run)
    _check_master(loaded, run, book, probe, result)
    fabric = _discover(run, probe, result)
    if fabric is None:
        return
    lids = {
        fmt_guid(p.guid): (p.lid, p.number)
        for n in fabric.nodes
        if n.type == "CA"
        for p in n.ports
        if p.guid is not None and p.lid is not None
    }
    _check_pkeys(loaded, run, book, probe, lids, result)
    if spec.qos.enabled:
        _check_qos(loaded, run, probe, lids, result)


def _probe_host(loaded: LoadedSpec, run: TwinRun) -> str:
    """A port to run diags from: one that hosts no SM, as an admin's login node would be."""
    sm_hosts = {sm.sim_host for _n, _p, sm in run.sms}
    free = sorted(h for h in run.sim_hosts.values() if h not in sm_hosts)
    return free[0] if free else sorted(run.sim_hosts.values())[0]


def _check_master(loaded: LoadedSpec, run: TwinRun, book: GuidBook, probe: str, result: ProofResult) -> None:
    top = planned_master(loaded, book)
    out = run.sim.run(["sminfo"], probe)
    try:
        info = sminfo.parse(out.stdout)
    except ParseError as exc:
        result.problems.append(f"sminfo: {exc}")
        return
    if info.state_name != "SMINFO_MASTER" or info.guid != top.port_guid or info.priority != top.priority:
        result.problems.append(
            f"master SM: planned {top.node} ({fmt_guid(top.port_guid or 0)}, priority {top.priority}), "
            f"found {fmt_guid(info.guid)} priority {info.priority} {info.state_name}"
        )
    else:
        result.lines.append(f"master SM is {top.where} with priority {top.priority}")


def _discover(run: TwinRun, probe: str, result: ProofResult) -> ibnetdiscover.Fabric | None:
    out = run.sim.run(["ibnetdiscover"], probe)
    result.ibnetdiscover = out.stdout
    try:
        return ibnetdiscover.parse(out.stdout)
    except ParseError as exc:
        result.problems.append(f"ibnetdiscover: {exc}")
        return None


def _check_pkeys(
    loaded: LoadedSpec,
    run: TwinRun,
    book: GuidBook,
    probe: str,
    lids: dict[str, tuple[int, int]],
    result: ProofResult,
) -> None:
    expected = planned_pkeys(loaded, book)
    names = {
        fmt_guid(g): f"{node.name} {hca.device} port {port}"
        for node in loaded.spec.nodes
        for hca in node.hcas
        for port in hca.ports
        if (g := book.port_guid(node.name, hca.device, port)) is not None
    }
    bad = 0
    for port_guid, want in sorted(expected.items()):
        guid = fmt_guid(port_guid)
        name = names.get(guid, f"port {guid}")
        if guid not in lids:
            result.problems.append(f"{name} ({guid}) is not on the twin")
            continue
        lid, port = lids[guid]
        out = run.sim.run(["smpquery", "pkeys", str(lid), str(port)], probe)
        try:
            have = set(smpquery.parse_pkeys(out.stdout).pkeys)
        except ParseError as exc:
            result.problems.append(f"smpquery pkeys {lid}: {exc}")
            continue
        if have != want:
            bad += 1
            result.problems.append(f"{name} ({guid}, lid {lid}) PKeys: planned {_keys(want)}, found {_keys(have)}")
    result.lines.append(f"PKey tables: {len(expected) - bad} of {len(expected)} ports exactly as planned")


def _keys(keys: Iterable[PKey]) -> str:
    return "[" + ", ".join(k.hex for k in sorted(keys)) + "]"


def _check_qos(
    loaded: LoadedSpec, run: TwinRun, probe: str, lids: dict[str, tuple[int, int]], result: ProofResult
) -> None:
    qos = loaded.spec.qos
    tables = QosTables(
        max_vls=(qos.ca.max_vls if qos.ca and qos.ca.max_vls else qos.max_vls),
        sl2vl=(qos.ca.sl2vl if qos.ca and qos.ca.sl2vl else qos.sl2vl),
        vlarb_high=(qos.ca.vlarb_high if qos.ca and qos.ca.vlarb_high else qos.vlarb_high),
        vlarb_low=(qos.ca.vlarb_low if qos.ca and qos.ca.vlarb_low else qos.vlarb_low),
    )
    for guid, (lid, port) in sorted(lids.items()):
        if tables.sl2vl is not None:
            result.problems += _sl2vl_problems(run, probe, guid, lid, port, tables.sl2vl)
        if tables.vlarb_high is not None or tables.vlarb_low is not None:
            result.problems += _vlarb_problems(run, probe, guid, lid, port, tables)
    result.lines.append(f"QoS tables read back from {len(lids)} CA ports")


def _sl2vl_problems(run: TwinRun, probe: str, guid: str, lid: int, port: int, planned: tuple[int, ...]) -> list[str]:
    out = run.sim.run(["smpquery", "sl2vl", str(lid), str(port)], probe)
    try:
        rows = smpquery.parse_sl2vl(out.stdout).rows
    except ParseError as exc:
        return [f"smpquery sl2vl {lid}: {exc}"]
    found = rows[0][2] if rows else ()
    if tuple(found) != tuple(planned):
        return [f"port {guid} SL2VL: planned {list(planned)}, found {list(found)}"]
    return []


def _vlarb_problems(run: TwinRun, probe: str, guid: str, lid: int, port: int, tables: QosTables) -> list[str]:
    out = run.sim.run(["smpquery", "vlarb", str(lid), str(port)], probe)
    try:
        arb = smpquery.parse_vlarb(out.stdout)
    except ParseError as exc:
        return [f"smpquery vlarb {lid}: {exc}"]
    problems = []
    for name, planned, table in (("high", tables.vlarb_high, arb.high), ("low", tables.vlarb_low, arb.low)):
        if planned is not None and not _arb_matches(planned, table):
            problems.append(f"port {guid} VLArb {name}: planned {list(planned)}, found {list(table)}")
    return problems


def _arb_matches(planned: tuple[tuple[int, int], ...], have: tuple[tuple[int, int], ...]) -> bool:
    """The port's table starts with the planned entries and every entry after them has weight 0."""
    n = len(planned)
    return list(have[:n]) == list(planned) and all(weight == 0 for _vl, weight in have[n:])
