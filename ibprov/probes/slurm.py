"""Slurm's own view, read on the controller: the topology it loaded (``scontrol show topology``), every node's
state and reason (``sinfo``), and the topology plugin in use (``scontrol show config``). Pure parsers of the
one shell probe :data:`PROBE_SCRIPT`, and the ``scontrol update`` command lines that drain and resume.

Proven on the output of Debian 12's Slurm 22.05.8 and Debian 13's Slurm 24.11.5 (``tests/fixtures/slurm``,
captured in the twin rack and the trixie molecule container) and written to the record format every Slurm
release since 2.x prints (``SwitchName=… Level=… LinkSpeed=… Nodes=… Switches=…``; key=value words, in any
order, with keys a release adds kept and ignored), and topology/block's records (Slurm >= 23.11:
``BlockName=… BlockIndex=… Nodes=… BlockSize=…``, then ``AggregatedBlock=b[1-2] …`` for each larger size the
blocks make up). Lines that are not records (a warning, a banner) are kept as notes, never the end of the
output.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from ibprov.hostlist import expand
from ibprov.probes._text import ParseError, probe_sections

__all__ = [
    "MARK",
    "PROBE_SCRIPT",
    "REASON_PREFIX",
    "SINFO_FORMAT",
    "SlurmBlock",
    "SlurmNode",
    "SlurmSwitch",
    "SlurmView",
    "parse_blocks",
    "parse_config",
    "parse_sinfo",
    "parse_topology",
    "parse_view",
    "update_argv",
]

MARK = "### ibprov-slurm "
REASON_PREFIX = "ibprov:"  # every reason ibprov sets starts with it; a reason without it is someone else's
SEP = "\x1f"  # the unit separator: no node name, state, user or reason carries it
# node, extended state, the user and time of the reason, the reason last (it may hold anything but SEP)
SINFO_FORMAT = SEP.join(("%N", "%T", "%u", "%H", "%E"))
PROBE_SCRIPT = "\n".join(
    [
        f"echo '{MARK}version'; sinfo --version 2>&1",
        f"echo '{MARK}config'; scontrol show config 2>&1 | grep -E '^(TopologyPlugin|TopologyParam|ClusterName) '",
        f"echo '{MARK}topology'; scontrol show topology 2>&1",
        f"echo '{MARK}nodes'; sinfo --Node --noheader --format={shlex.quote(SINFO_FORMAT)} 2>&1",
        "exit 0",
    ]
)

_WORD = re.compile(r"(\w+)=(\S*)")
_NULL = {"", "(null)", "none", "None"}


@dataclass(frozen=True)
class SlurmSwitch:
    """One record of ``scontrol show topology``."""

    name: str
    level: int
    nodes: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()


@dataclass(frozen=True)
class SlurmBlock:
    """One topology/block record of ``scontrol show topology``: a base block (``BlockName=``) or a larger one
    Slurm aggregates from consecutive base blocks (``AggregatedBlock=b[1-2]``), its nodes and its size."""

    name: str
    index: int
    nodes: tuple[str, ...] = ()
    size: int | None = None  # BlockSize; None when the release does not print it
    aggregated: bool = False


@dataclass(frozen=True)
class SlurmNode:
    """One node as ``sinfo`` shows it: ``state`` is the extended state in lower case ("idle", "drained",
    "draining", "down", "mixed", "allocated+drain"…), ``reason`` empty when it has none."""

    name: str
    state: str
    reason: str = ""
    user: str = ""  # who set the reason
    since: str = ""  # when

    @property
    def drained(self) -> bool:
        """Drained or draining (DRAIN is a flag on top of the base state)."""
        return "drain" in self.state

    @property
    def down(self) -> bool:
        return self.state.startswith(("down", "fail", "future", "unknown")) or "not_responding" in self.state


@dataclass(frozen=True)
class SlurmView:
    """What the controller said; ``error`` when Slurm could not be asked at all."""

    version: str = ""
    plugin: str = ""  # "topology/tree", "topology/block", "topology/none", "" when not read
    switches: Mapping[str, SlurmSwitch] = field(default_factory=dict)
    nodes: Mapping[str, SlurmNode] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    error: str | None = None
    blocks: Mapping[str, SlurmBlock] = field(default_factory=dict)  # topology/block: base and aggregated


def _words(line: str) -> dict[str, str]:
    return {k: v for k, v in _WORD.findall(line)}


def _hosts(value: str, tool: str, line_no: int, line: str) -> tuple[str, ...]:
    if value in _NULL:
        return ()
    try:
        return tuple(expand(value))
    except ValueError as exc:
        raise ParseError(tool, line_no, line, f"bad hostlist {value!r}: {exc}") from exc


_BLOCK_KEYS = ("BlockName", "AggregatedBlock")


def parse_topology(text: str) -> tuple[dict[str, SlurmSwitch], list[str]]:
    """``scontrol show topology`` -> switch name -> record, and the lines that were no record (notes).

    "No topology information available" (topology/none, or no topology.conf) gives no switch and that
    line as a note; topology/block's records are read by :func:`parse_blocks`."""
    tool = "scontrol show topology"
    switches: dict[str, SlurmSwitch] = {}
    notes: list[str] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        words = _words(line)
        if any(key in words for key in _BLOCK_KEYS):
            continue
        if "SwitchName" not in words:
            notes.append(f"{tool}: {line}")
            continue
        name = words["SwitchName"]
        level = words.get("Level", "0")
        if not level.isdigit():
            raise ParseError(tool, line_no, line, "Level is not a number")
        switches[name] = SlurmSwitch(
            name,
            int(level),
            _hosts(words.get("Nodes", ""), tool, line_no, line),
            _hosts(words.get("Switches", ""), tool, line_no, line),
        )
    return switches, notes


def parse_blocks(text: str) -> dict[str, SlurmBlock]:
    """The topology/block records of ``scontrol show topology``: block name -> record (an aggregated block is
    named as Slurm prints it, ``b[1-2]``); every other line is :func:`parse_topology`'s."""
    tool = "scontrol show topology"
    blocks: dict[str, SlurmBlock] = {}
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        words = _words(line)
        key = next((k for k in _BLOCK_KEYS if k in words), None)
        if key is None:
            continue
        index, size = words.get("BlockIndex", "0"), words.get("BlockSize", "")
        if not index.isdigit() or (size and not size.isdigit()):
            raise ParseError(tool, line_no, line, "BlockIndex or BlockSize is not a number")
        blocks[words[key]] = SlurmBlock(
            words[key],
            int(index),
            _hosts(words.get("Nodes", ""), tool, line_no, line),
            int(size) if size else None,
            aggregated=key == "AggregatedBlock",
        )
    return blocks


def parse_sinfo(text: str) -> tuple[dict[str, SlurmNode], list[str]]:
    """``sinfo --Node --noheader --format=SINFO_FORMAT`` -> node -> state; a node listed once per partition is
    one node; lines without the separators (an error, a warning) are notes."""
    nodes: dict[str, SlurmNode] = {}
    notes: list[str] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        parts = raw.split(SEP, 4)
        if len(parts) != 5 or not parts[0].strip():
            notes.append(f"sinfo: {raw.strip()}")
            continue
        name, state, user, since, reason = (p.strip() for p in parts)
        reason = "" if reason in _NULL else reason
        user = "" if user in _NULL or user == "Unknown" else user
        since = "" if since in _NULL or since == "Unknown" else since
        nodes.setdefault(name, SlurmNode(name, state.lower(), reason, user, since))
    return nodes, notes


def parse_config(text: str) -> dict[str, str]:
    """The ``Key = value`` lines of ``scontrol show config`` that were kept."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def parse_view(stdout: str) -> SlurmView:
    """The output of :data:`PROBE_SCRIPT`. A controller without Slurm's commands, or a slurmctld that does not
    answer, gives a view with ``error`` saying which."""
    sections = probe_sections(stdout, MARK)
    if "nodes" not in sections:
        return SlurmView(error="the Slurm probe printed nothing (no shell on the controller?)")
    version = sections.get("version", "")
    if "not found" in version or not version:
        return SlurmView(error=f"Slurm's commands are not on the controller ({version or 'sinfo printed nothing'})")
    nodes, node_notes = parse_sinfo(sections["nodes"])
    if not nodes and node_notes:
        return SlurmView(version=version, error=f"sinfo failed: {node_notes[0].removeprefix('sinfo: ')}")
    switches, topo_notes = parse_topology(sections.get("topology", ""))
    blocks = parse_blocks(sections.get("topology", ""))
    # no TopologyPlugin line (the config section missing, scontrol show config failed): not read, never "none"
    plugin = parse_config(sections.get("config", "")).get("TopologyPlugin")
    return SlurmView(
        version=version.removeprefix("slurm ").strip(),
        plugin="" if plugin is None else "topology/none" if plugin in _NULL else plugin,
        switches=switches,
        nodes=nodes,
        notes=(*topo_notes, *node_notes),
        blocks=blocks,
    )


def update_argv(node: str, state: str, reason: str | None = None) -> list[str]:
    """The ``scontrol update`` command that sets ``node`` to ``state`` (DRAIN or RESUME) with ``reason``."""
    argv = ["scontrol", "update", f"NodeName={node}", f"State={state}"]
    if reason is not None:
        argv.append(f"Reason={reason}")
    return argv
