"""The registry of verify sections, read by the CLI (its flags), the reports (the JSON schema) and the docs
generator (the checks catalogue).

A section is a package under ``ibprov/verify/`` with the same four parts: collect (commands and pure
parsers, in :mod:`ibprov.probes`), an observation (plain data), checks (pure: plan x observation ->
findings, declared in :class:`~ibprov.verify.judge.CheckFamily`) and an entry point, a ``section.py`` that
fills in the one skeleton (:class:`~ibprov.verify.skeleton.Skeleton`) and defines ``SECTION`` (a
:class:`Section`). Adding a section is one :class:`SectionInfo` line here and one package; no other section
changes.

This module is import-light (the CLI reads it for ``--help`` and starts a section's :attr:`~SectionInfo.prestart`
before it loads the spec); a section's module is imported only when it runs or is documented.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ibprov.report.failure import ERROR_SCHEMA
from ibprov.report.json_report import report_schema as compose
from ibprov.report.model import Report, SectionReport, utc_now_text
from ibprov.verify.judge import Check, CheckFamily, catalogue

if TYPE_CHECKING:
    from ibprov.clusterspec import LoadedSpec
    from ibprov.verify.target import VerifyTarget

__all__ = [
    "SECTIONS",
    "Section",
    "SectionInfo",
    "Started",
    "VerifyOptions",
    "load_section",
    "misplaced_options",
    "prestart",
    "report_schema",
    "run_sections",
    "section_info",
]


@dataclass(frozen=True)
class VerifyOptions:
    """Every option a section may read; each section declares the ones it reads (:attr:`SectionInfo.options`)."""

    via: str | None = None  # fabric: run the diags on this host through Ansible
    soak: float | None = None  # fabric: seconds between clearing and re-reading the counters
    from_host: str | None = None  # fabric, twin only: the ibsim node the diags run as
    synthetic_guids: bool = False  # fabric: the fabric is the twin
    inventory: Path | None = None  # nodes: the Ansible inventory that reaches the hosts
    twin_limits: Path | None = None  # the fabric is the twin: its twin-limits.json (or the directory)
    target: VerifyTarget | None = None  # where every section runs (--target, resolved); None: the spec's hosts
    contrast_tcp: bool = False  # mpi: also run the MPI benchmark forced onto TCP, shown beside the fabric's
    pairs: str | None = None  # perf: the pair schedule (default: the spec's acceptance.pairs)
    baseline: Path | None = None  # perf: flag results worse than this baseline file
    save_baseline: Path | None = None  # perf: write the measured results to this baseline file
    dry_run: bool = False  # perf: print the schedule, run nothing
    sm_log: Path | None = None  # routing: read the engine OpenSM used from this log file (this host)
    lfts: Path | None = None  # routing: the forwarding tables from this file, not from the switches

    def given(self) -> list[str]:
        """The names of the options that differ from their defaults."""
        default = VerifyOptions()
        return [f.name for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)]


class Started(Protocol):
    """What a section's prestart returns: something to close whatever happens next."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class SectionInfo:
    name: str  # "fabric": the CLI flag --fabric, the report's section key
    help: str  # the CLI flag's help
    module: str  # the module defining SECTION
    options: frozenset[str] = frozenset()  # the VerifyOptions fields the section reads
    prestart: str | None = None  # "module:function" (options) -> Started | None, run before the spec loads
    default: bool = True  # run when no section flag is given (perf runs only when asked for: it loads the fabric)


@dataclass(frozen=True)
class Section:
    """A section's entry point: what it checks and how it runs."""

    name: str
    title: str
    families: tuple[CheckFamily[Any, Any], ...]
    facts_schema: Mapping[str, Any]  # the JSON Schema of its facts in report.json
    run: Callable[[LoadedSpec, VerifyOptions, Any], SectionReport]  # (spec, options, what prestart returned)

    @property
    def checks(self) -> tuple[Check[Any, Any], ...]:
        return catalogue(self.families)


SECTIONS: tuple[SectionInfo, ...] = (
    SectionInfo(
        "fabric",
        "The fabric against the plan with infiniband-diags: cabling, links, error counters, SMs, partitions, QoS.",
        "ibprov.verify.fabric.section",
        frozenset({"via", "soak", "from_host", "synthetic_guids", "twin_limits", "target"}),
        prestart="ibprov.verify.fabric.commands:prestart",
    ),
    SectionInfo(
        "nodes",
        "Every host through Ansible: HCAs, ports, firmware, stack, memlock, IPoIB, stray SMs.",
        "ibprov.verify.nodes.section",
        frozenset({"inventory", "twin_limits", "target"}),
    ),
    SectionInfo(
        "mpi",
        "MPI over the fabric: UCX/Open MPI/NCCL configuration, a fall-back to TCP (ucx_info -d), an MPI run.",
        "ibprov.verify.mpi.section",
        frozenset({"inventory", "target", "contrast_tcp"}),
        default=False,
    ),
    SectionInfo(
        "perf",
        "RDMA latency and bandwidth with perftest between node pairs (route-aware schedule), and a TCP probe.",
        "ibprov.verify.perf.section",
        frozenset({"target", "pairs", "baseline", "save_baseline", "dry_run", "via"}),
        default=False,
    ),
    SectionInfo(
        "routing",
        "The SM's forwarding tables: the engine in use, every pair reachable, no credit loop, up*/down*, "
        "minimal and balanced routes.",
        "ibprov.verify.routing.section",
        frozenset({"via", "from_host", "synthetic_guids", "twin_limits", "target", "sm_log", "lfts", "inventory"}),
        default=False,
    ),
    SectionInfo(
        "scheduler",
        "Slurm against the plan (spec's scheduler:): every planned node known and under its planned leaf, the "
        "topology's switches and plugin, nodes Slurm has that the spec does not.",
        "ibprov.verify.scheduler.section",
        frozenset({"inventory", "target"}),
        default=False,
    ),
    SectionInfo(
        "physical",
        "The physical layer against the plan (mstlink/mlxlink, sysfs, nvidia-smi): effective and raw BER, link "
        "error rates, cables and optics, PCIe links, GPU locality, NUMA, firmware; the cable report.",
        "ibprov.verify.physical.section",
        frozenset({"inventory", "via", "twin_limits", "target"}),
        default=False,
    ),
    SectionInfo(
        "backend",
        "The SM back end's own view (switch or UFM; contract-tested, not run against the product): every planned "
        "partition held as planned, none the spec does not name, the switch's SM on with its priority.",
        "ibprov.verify.backend.section",
        frozenset(),
        default=False,
    ),
)


def section_info(name: str) -> SectionInfo:
    for info in SECTIONS:
        if info.name == name:
            return info
    raise KeyError(f"no verify section {name!r}; known: {', '.join(i.name for i in SECTIONS)}")


def load_section(info: SectionInfo) -> Section:
    section = importlib.import_module(info.module).SECTION
    if not isinstance(section, Section) or section.name != info.name:
        raise TypeError(f"{info.module}.SECTION is not the {info.name!r} Section")
    return section


def _function(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def misplaced_options(infos: Sequence[SectionInfo], given: Iterable[str]) -> dict[str, list[str]]:
    """Option -> the sections that read it, for every ``given`` option (:meth:`VerifyOptions.given`, and
    ``target`` when one was named) that no selected section reads."""
    wanted = {o for info in infos for o in info.options}
    return {name: [i.name for i in SECTIONS if name in i.options] for name in given if name not in wanted}


def prestart(info: SectionInfo, options: VerifyOptions) -> Started | None:
    """Start what the section can start before the spec loads (e.g. the fabric discovery)."""
    if info.prestart is None:
        return None
    started: Started | None = _function(info.prestart)(options)
    return started


def run_sections(
    loaded: LoadedSpec,
    infos: Sequence[SectionInfo],
    options: VerifyOptions,
    started: Mapping[str, Started | None] | None = None,
) -> Report:
    """Run each section in order against ``loaded`` and put their reports together."""
    stamp, t0 = utc_now_text(), time.monotonic()
    # lazy: the registry stays import-light (the fabric discovery starts before the spec and pydantic load)
    from ibprov.verify.causes import explain_report, fabric_of
    from ibprov.verify.portids import PortIndex, identify_ports

    parts = [load_section(i).run(loaded, options, (started or {}).get(i.name)) for i in infos]
    report = Report.from_sections(
        cluster=loaded.spec.cluster.name,
        spec=str(loaded.path) if loaded.path else "",
        sections=parts,
        started=stamp,
        duration_seconds=time.monotonic() - t0,
    )
    fabric = fabric_of(loaded)
    index = PortIndex.for_spec(loaded, fabric, synthetic_guids=options.synthetic_guids)
    return identify_ports(explain_report(report, fabric), index)


def report_schema() -> dict[str, Any]:
    """The JSON Schema of report.json for every registered section."""
    schema = compose({info.name: load_section(info).facts_schema for info in SECTIONS})
    head = {k: schema.pop(k) for k in ("$schema", "title")}
    return {**head, "oneOf": [schema, ERROR_SCHEMA]}
