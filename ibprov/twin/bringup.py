"""Bring the planned fabric up on the twin: ibsim on twin.net, OpenSM with the rendered configuration."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ibprov.clusterspec import LoadedSpec
from ibprov.identity.guids import GuidBook
from ibprov.identity.smports import planned_sms
from ibprov.render import render_sm_files
from ibprov.render.sm import build_sm_data
from ibprov.twin.backends import SWITCH_DEVICE, play_backend
from ibprov.twin.sim import OpenSM, SimFabric, simulator, start_sim
from ibprov.twinnet.limits import LIMITS_FILE, TwinLimits
from ibprov.twinnet.netfile import Twin, build_twin, hca_id, switch_id

TWIN_HEADER = "Rendered by ibprov for the fabric twin"


@dataclass
class TwinRun:
    sim: SimFabric
    sms: list[tuple[str, int, OpenSM]] = field(default_factory=list)  # (node, priority, process)
    sim_hosts: dict[str, str] = field(default_factory=dict)
    limits: TwinLimits | None = None  # what this twin cannot show (also in twin-limits.json beside twin.net)
    backend_notes: list[str] = field(default_factory=list)  # how the twin plays a switch or UFM SM

    @property
    def master(self) -> OpenSM:
        """The planned master: the SM with the highest priority."""
        return max(self.sms, key=lambda s: s[1])[2]

    def stop(self) -> None:
        self.sim.stop()


def write_twin(loaded: LoadedSpec, workdir: Path) -> tuple[Path, dict[str, Path], Twin, list[str]]:
    """Write twin.net, its limits (twin-limits.json) and the OpenSM files (paths pointing into ``workdir``)
    for the twin, with synthetic GUIDs where the spec has none. Returns the net file,
    {"node/device:port": opensm.conf}, the twin (its sim hosts and limits) and how it plays a switch or UFM SM."""
    workdir = workdir.resolve()  # the files name each other by path; the processes run in other directories
    book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)
    name, speeds = simulator()  # what the ibsim this twin runs takes (measured, cached)
    twin = build_twin(loaded, book, simulator=name, speeds=speeds)
    workdir.mkdir(parents=True, exist_ok=True)
    netfile = workdir / "twin.net"
    netfile.write_text(twin.text)
    (workdir / LIMITS_FILE).write_text(twin.limits.to_json())
    sm = build_sm_data(loaded, book)
    backend_notes = play_backend(loaded, book, sm) if loaded.spec.subnet_manager.backend != "opensm" else []
    conf_dir = workdir / "opensm"
    conf_dir.mkdir(exist_ok=True)
    configs: dict[str, Path] = {}
    for rel, text in render_sm_files(sm, str(conf_dir), TWIN_HEADER).items():
        path = conf_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        host, _, name = rel.partition("/")
        if name.startswith("opensm."):
            device_port = name.removeprefix("opensm.").removesuffix(".conf")
            device, _, port = device_port.rpartition("-")
            configs[f"{host}/{device}:{port}"] = path
    return netfile, configs, twin, backend_notes


def start_twin(
    loaded: LoadedSpec,
    workdir: Path,
    *,
    start_sms: bool = True,
    socket: str | None = None,
    before_start: Callable[[Path], None] | None = None,
    master_timeout: float = 120.0,
) -> TwinRun:
    """Start ibsim and (optionally) every planned OpenSM instance: the planned master first, the
    standbys once it has brought the subnet up (or ``master_timeout`` passed). A relative ``workdir`` is
    taken from the current directory: ibsim and OpenSM run elsewhere and are given absolute paths."""
    workdir = workdir.resolve()
    netfile, configs, twin, backend_notes = write_twin(loaded, workdir)
    if before_start is not None:
        before_start(workdir / "opensm")
    nodes = sum(len(n.hcas) for n in loaded.spec.nodes) + len(loaded.topology.switches)
    sim = start_sim(netfile, workdir / "sim", socket=socket, max_nodes=max(4096, nodes + 16))
    run = TwinRun(sim, sim_hosts=twin.sim_hosts, limits=twin.limits, backend_notes=backend_notes)
    if not start_sms:
        return run
    try:
        planned = sorted(planned_sms(loaded), key=lambda p: -p.priority)  # the planned master first
        for i, inst in enumerate(planned):
            sim_host = switch_id(inst.node) if inst.device is None else hca_id(inst.node, inst.device)
            device = inst.device or SWITCH_DEVICE
            conf = configs[f"{inst.node}/{device}:{inst.port}"]
            sm = sim.start_opensm(sim_host, conf, name=f"opensm-{inst.node}-{device}-{inst.port}")
            run.sms.append((inst.node, inst.priority, sm))
            if i == 0 and len(planned) > 1:
                # let the planned master bring the subnet up before the standbys start: when they all race
                # for the first sweep on a loaded machine, a standby can win it and stall the master
                sm.wait_for("SUBNET UP", master_timeout)
    except Exception:
        run.stop()
        raise
    return run
