"""Collect a :class:`~.observation.RoutingObservation` through the fabric's diag runner.

Batch 1 (concurrently): ``ibnetdiscover`` (switches, cables, CA LIDs) and ``dump_lfts`` (every switch's
table). Batch 2, only where routes may use SLs (an SL-based engine, or QoS on): ``saquery -p`` (every path
record with its SL, from the SA) and ``smpquery sl2vl <switch LID> <egress port>`` for every switch port with
a cable to another switch (one query returns the rows of every ingress port), at most
:data:`SL2VL_BUDGET` queries; above that the credit-loop check is SL-unaware and says so. The SM's log is
read by the section (:mod:`.section`), here only parsed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from ibprov.errors import CollectError
from ibprov.probes import ParseError, collector, lfts, pathrecords, smlog, smpquery
from ibprov.probes import ibnetdiscover as nd
from ibprov.probes.pathrecords import PathRecords
from ibprov.probes.runner import CommandResult, Runner
from ibprov.routing.model import RoutingModel, from_discovery
from ibprov.verify.routing.observation import EngineLog, RoutingObservation, SlTables
from ibprov.verify.routing.plan import RoutingPlan

__all__ = ["PAIR_BUDGET", "SL2VL_BUDGET", "collect", "engine_log", "tool_notes"]

SL2VL_BUDGET = 4000  # smpquery sl2vl queries (one per switch-to-switch port)
PAIR_BUDGET = 4000  # saquery -p --slid --dlid queries where the SA's table comes cut short


def _stdout(result: CommandResult, name: str) -> str:
    if not collector(name).succeeded(result.returncode):
        raise CollectError(f"could not read the routing from the fabric: {result.reason()}")
    return result.stdout


def collect(
    runner: Runner, plan: RoutingPlan, read_log: Callable[[], EngineLog], *, tables_file: Path | None = None
) -> RoutingObservation:
    """``tables_file``: read the tables from this file (``dump_lfts`` output or OpenSM's ``opensm-lfts.dump``)
    instead of running ``dump_lfts``."""
    if tables_file is None:
        topo, dump = runner.run_batch([nd.argv(), lfts.argv()], parallel=True)
        tables, source = lfts.parse(_stdout(dump, "dump_lfts")), "dump_lfts"
    else:
        (topo,) = runner.run_batch([nd.argv()])
        try:
            tables, source = lfts.parse_any(tables_file.read_text(errors="replace")), str(tables_file)
        except OSError as exc:
            raise CollectError(f"cannot read the forwarding tables from {tables_file}: {exc.strerror or exc}") from None
    fabric = nd.parse(_stdout(topo, "ibnetdiscover"))
    model = from_discovery(
        fabric, tables, switch_names=plan.switch_names, ca_names=plan.ca_names, lmc=plan.lmc, source=source
    )
    obs = RoutingObservation(model, read_log(), notes=tool_notes(source, tables.notes))
    if plan.uses_sls:
        obs.sls = _sl_tables(runner, model)
    return obs


_SHOWN_LINES = 3  # lines of a tool's notes quoted in the report


def tool_notes(tool: str, lines: tuple[str, ...], where: str = "") -> tuple[str, ...]:
    """One note saying that ``tool`` printed lines besides its output (warnings, log lines: read past), with
    the first few quoted; none when it printed none."""
    if not lines:
        return ()
    more = f" (and {len(lines) - _SHOWN_LINES} more)" if len(lines) > _SHOWN_LINES else ""
    return (
        f"{tool}{where} printed {len(lines)} line{'s' * (len(lines) != 1)} besides its output (read past): "
        f"{'; '.join(lines[:_SHOWN_LINES])}{more}",
    )


def _sl_tables(runner: Runner, model: RoutingModel) -> SlTables:
    queries = [
        (s, int(p))
        for s in range(model.switch_count)
        if model.lids[s]
        for p in range(model.peer.shape[1])
        if model.peer[s, p] >= 0
    ]
    if len(queries) > SL2VL_BUDGET:
        return SlTables(None, {}, (f"{len(queries)} switch ports to read SL2VL tables from (budget {SL2VL_BUDGET})",))
    commands = [pathrecords.argv(), *(smpquery.argv("sl2vl", model.lids[s], p) for s, p in queries)]
    results = runner.run_batch(commands, parallel=True)
    missing: list[str] = []
    paths, why, sa_notes = _path_records(runner, model, results[0])
    if why:
        missing.append(why)
    tables: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
    unread = 0
    noted: list[str] = []  # the sl2vl queries' lines besides their tables
    noisy = 0  # queries that printed any
    for (s, p), result in zip(queries, results[1:], strict=True):
        try:
            parsed = smpquery.parse_sl2vl(result.stdout) if result.returncode == 0 else None
        except ParseError:
            parsed = None
        if parsed is None:
            unread += 1
            continue
        if parsed.notes:
            noisy += 1
            noted += (f"LID {model.lids[s]} port {p}: {n}" for n in parsed.notes)
        tables[(s, p)] = {
            (row_in, sl): vl for row_in, row_out, vls in parsed.rows if row_out == p for sl, vl in enumerate(vls)
        }
    if unread:
        missing.append(f"the SL2VL tables of {unread} switch ports could not be read")
    where = f" (on {noisy} of {len(queries)} switch ports)" if noisy else ""
    notes = (*tool_notes("saquery -p", sa_notes), *tool_notes("smpquery sl2vl", tuple(noted), where))
    return SlTables(paths, tables, tuple(missing), notes)


def _path_records(
    runner: Runner, model: RoutingModel, table: CommandResult
) -> tuple[PathRecords | None, str, tuple[str, ...]]:
    """Every CA pair's path record: the SA's whole table (``saquery -p``) where it came whole, else one query
    per missing pair (libumad2sim, the twin, passes only the first MAD of a multi-MAD answer: the table comes
    cut short), within :data:`PAIR_BUDGET` queries; why they are incomplete ("" when they are not); and the
    lines saquery printed besides its records (warnings: read past)."""
    wanted = [(a.lid, lid) for a in model.cas for b in model.cas if b is not a for lid in b.lids]
    records: list[pathrecords.PathRecord] = []
    notes: list[str] = []
    if table.returncode == 0:
        with contextlib.suppress(ParseError):  # a cut-short table: the pairs are asked one by one below
            whole = pathrecords.parse(table.stdout)
            records += whole.records
            notes += whole.notes
    have = {(r.slid, r.dlid) for r in records}
    todo = [pair for pair in wanted if pair not in have]
    if len(todo) > PAIR_BUDGET:
        return (
            None,
            f"{len(todo)} CA pairs missing from the SA's path table (saquery -p), more than {PAIR_BUDGET} "
            "to ask one by one",
            tuple(notes),
        )
    failed = 0
    for pair, result in zip(
        todo, runner.run_batch([pathrecords.pair_argv(*p) for p in todo], parallel=True), strict=True
    ):
        try:
            pair_read = pathrecords.parse(result.stdout) if result.returncode == 0 else None
        except ParseError:
            pair_read = None
        found = pair_read.records if pair_read else ()
        notes += (f"--slid {pair[0]} --dlid {pair[1]}: {n}" for n in (pair_read.notes if pair_read else ()))
        if not any((r.slid, r.dlid) == pair for r in found):
            failed += 1
        records += found
    parsed = PathRecords(tuple(records), ())
    return parsed, (f"{failed} CA pairs without a path record from the SA" if failed else ""), tuple(notes)


def engine_log(text: str | None, where: str) -> EngineLog:
    """The SM's log as read from ``where`` (``text`` None: it could not be, and ``where`` says why)."""
    if text is None:
        return EngineLog(None, where)
    parsed = smlog.parse(text)
    return EngineLog(parsed, where)
