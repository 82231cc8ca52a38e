"""What the twin cannot simulate: one description, written by the twin beside its files and read by
everything that judges the twin (verify's fabric and nodes sections, the proof, the CLI).

Measured, not assumed (Debian 12: ibsim-utils 0.10-2, opensm 3.3.23, infiniband-diags 44):

* **Speeds.** ibsim 0.10's net-file parser takes ``s=`` (LinkSpeedEnabled: 1 SDR, 2 DDR, 4 QDR) and ``e=``
  (LinkSpeedExtEnabled: 1 FDR, 2 EDR, 4 HDR); ``e=8`` (NDR) is a parse error ("is_linkspeedext_valid: bad
  extended speed 8"), and XDR has no encoding there at all. Upstream ibsim 0.11 and later (not in Debian 12)
  take ``e=8``: with it OpenSM 3.3.23 brings NDR links up and infiniband-diags 44 reads them as ``4xNDR`` /
  ``2xNDR`` (measured with ibsim built from linux-rdma/ibsim at 0.12, run as ``$IBPROV_IBSIM``). The twin
  therefore asks the ibsim it runs (:func:`ibprov.twin.sim.simulator`) which speeds it takes, and substitutes
  only the others: FDR10, a Mellanox vendor extension (ExtendedPortInfo) that no ibsim answers, at QDR (the
  same 10 Gb/s lane signalling); NDR and XDR at the fastest speed the simulator has.
* **Per release.** Debian 13 (trixie) packages ibsim and libumad2sim 0.12. Against 0.10 (read in
  linux-rdma/ibsim, ``git diff ibsim-0.10 ibsim-0.12``): NDR (``e=8``, LinkSpeedExtActive NDR, PortInfo's
  IsLinkSpeedNDRSupported bit, libumad2sim's sysfs rate ``(4X NDR)``); a linear forwarding table of 48K LIDs
  instead of 30K; a port's speed 0 taken as QDR; HCAs no longer claim IsVendorClassSupported. Unchanged: the
  10 clients (IBSIM_MAX_CLIENTS), one answer per MAD, no MAD timeouts (libumad2sim's MAD path is the same), at
  most 2,048 nodes and 256 switches. The twin rack runs its node image's ibsim (:data:`IBSIM_RELEASES`): a
  Debian 13 rack runs NDR links as NDR, measured in ``tests/twin/test_twin_slurm_block.py``.
* **Widths.** ibsim runs every width the spec accepts: ``w=16`` gives 2X links (LinkWidthActive 2X,
  iblinkinfo ``2X``, ibnetdiscover ``2xHDR``), like 1x/4x/8x/12x. No width is substituted.
* **Clients.** ibsim serves at most 10 client processes at once (IBSIM_MAX_CLIENTS, a compile-time
  constant); every running OpenSM and diag holds one.
* **No RDMA data path and no IB kernel.** ibsim answers management datagrams only: no verbs device, no
  ``/sys/class/infiniband`` in a container, no IPoIB interface. RDMA tests are skipped with that reason,
  IPoIB is judged on its files and units.

A link the plan runs at a rate the twin cannot is a :class:`LinkStandIn`: verify judges it against the
twin's rate (so a degraded link is still an error) and says so; it never reports the planned rate as
verified.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.topology import PlannedLink
from ibprov.clusterspec.types import Endpoint
from ibprov.clusterspec.units import Speed, Width
from ibprov.errors import IbprovError

__all__ = [
    "IBSIM_RELEASES",
    "LIMITS_FILE",
    "MAX_CLIENTS",
    "NO_PHYSICAL_LAYER",
    "SIMULATOR",
    "LinkStandIn",
    "TwinLimits",
    "link_key",
    "read_limits",
    "release_speeds",
    "twin_limits",
    "twin_rate",
]

LIMITS_FILE = "twin-limits.json"
DEVICE_NAME = "ibsim0"  # the device name libumad2sim gives the simulated HCA
SIMULATOR = "ibsim 0.10"  # Debian 12's
MAX_CLIENTS = 10  # ibsim's IBSIM_MAX_CLIENTS
_ORDER = (Speed.SDR, Speed.DDR, Speed.QDR, Speed.FDR, Speed.EDR, Speed.HDR, Speed.NDR)
# what ibsim 0.10 takes (measured); 0.11 adds NDR; no ibsim has FDR10 or XDR
SIM_SPEEDS: frozenset[Speed] = frozenset(_ORDER[:6])
# the speeds of each packaged ibsim release (Debian 12: 0.10, Debian 13: 0.12), for the twin rack, whose ibsim is
# its node image's and cannot be probed on this host before the rack exists
IBSIM_RELEASES: Mapping[tuple[int, int], frozenset[Speed]] = {
    (0, 10): SIM_SPEEDS,
    (0, 11): SIM_SPEEDS | {Speed.NDR},
    (0, 12): SIM_SPEEDS | {Speed.NDR},
}


def release_speeds(version: str) -> tuple[str, frozenset[Speed]]:
    """The simulator and its speeds for an ibsim package version (``0.12-1``, ``0.10-2``): the release's row of
    :data:`IBSIM_RELEASES`, or for a release not in it the nearest older one."""
    parts = version.split("-")[0].split(".")
    try:
        release = (int(parts[0]), int(parts[1]))
    except (IndexError, ValueError):
        return SIMULATOR, SIM_SPEEDS
    known = [r for r in sorted(IBSIM_RELEASES) if r <= release]
    speeds = IBSIM_RELEASES[known[-1]] if known else SIM_SPEEDS
    return f"ibsim {release[0]}.{release[1]}", speeds


WIDTH_STAND_IN: Mapping[Width, Width] = {}  # measured: ibsim runs 1x, 2x, 4x, 8x and 12x


NO_PHYSICAL_LAYER = (
    "no physical layer: the simulator has no SerDes, FEC, cable modules, PCIe or GPUs, so bit error rates, "
    "cables and optics, PCIe links and GPU locality (verify --physical) cannot be shown and are skipped"
)


def _always(simulator: str) -> tuple[str, ...]:
    return (
        NO_PHYSICAL_LAYER,
        "no RDMA data path: the twin simulates management datagrams only, so RDMA (perftest) tests are skipped",
        "no InfiniBand kernel: no verbs device and no IPoIB interface; IPoIB is judged on its files and units",
        f"{simulator} serves at most {MAX_CLIENTS} client processes at once (each OpenSM and diag holds one)",
        "no MAD timeouts: libumad2sim drops a MAD's timeout and retries, so a reply the simulator loses is "
        "waited for for ever (an SM's sweep can hang; the twin's own waits are bounded and say so)",
    )


ALWAYS = _always(SIMULATOR)


def stand_in_speed(speed: Speed, speeds: frozenset[Speed] = SIM_SPEEDS) -> Speed:
    """The speed a simulator that runs ``speeds`` runs a link planned at ``speed``."""
    if speed in speeds:
        return speed
    if speed == Speed.FDR10:
        return Speed.QDR
    return max((s for s in speeds if s in _ORDER), key=_ORDER.index)


def twin_rate(width: Width, speed: Speed, speeds: frozenset[Speed] = SIM_SPEEDS) -> tuple[Width, Speed]:
    """The width and speed the twin runs a link planned at ``width`` x ``speed``."""
    return WIDTH_STAND_IN.get(width, width), stand_in_speed(speed, speeds)


def _why(planned: Speed, simulator: str, speeds: Iterable[str]) -> str:
    if planned == Speed.FDR10:
        return "FDR10 is a Mellanox extension ibsim does not answer"
    known = [s for s in _ORDER if s in set(speeds)]
    return f"{simulator} runs speeds up to {known[-1] if known else '?'}"


def link_key(a: Endpoint | str, b: Endpoint | str) -> tuple[str, str]:
    """A cable's key, the same whichever end comes first: its two ends as spec endpoints, sorted."""
    x, y = str(a), str(b)
    return (x, y) if x <= y else (y, x)


@dataclass(frozen=True)
class LinkStandIn:
    ends: tuple[str, str]  # link_key of the cable
    planned_width: Width
    planned_speed: Speed
    twin_width: Width
    twin_speed: Speed

    @property
    def planned(self) -> str:
        return f"{self.planned_width} {self.planned_speed}"

    @property
    def twin(self) -> str:
        return f"{self.twin_width} {self.twin_speed}"

    def as_dict(self) -> dict[str, Any]:
        return {"ends": list(self.ends), "planned": self.planned, "twin": self.twin}


@dataclass(frozen=True)
class TwinLimits:
    """What the twin of one spec cannot show, and what it runs instead."""

    cluster: str
    links: tuple[LinkStandIn, ...] = ()  # the links the twin runs at another rate than planned
    simulator: str = SIMULATOR
    speeds: tuple[str, ...] = tuple(s.value for s in _ORDER if s in SIM_SPEEDS)  # what the simulator runs
    max_clients: int = MAX_CLIENTS
    containers: tuple[str, ...] = ()  # nodes with a node container; the others are simulated HCAs only
    limits: tuple[str, ...] = ALWAYS  # what no run of the twin can show
    notes_extra: tuple[str, ...] = field(default=())  # other things the twin changes (e.g. port GUIDs)
    # on a node container: umad2sim shows the node's one simulated HCA (its first) under this name
    device_name: str = DEVICE_NAME
    # judged on their configuration files: a container cannot raise RLIMIT_MEMLOCK (runc: "error setting
    # rlimit type 7: operation not permitted", measured), and without an IB kernel there is no ib0
    judged_on_files: tuple[str, ...] = ("memlock", "ipoib")
    # not shown at all: libumad2sim's simulated HCA reports firmware "1" whatever the plan names
    unseen: tuple[str, ...] = ("firmware",)
    physical: str = NO_PHYSICAL_LAYER  # why the physical layer is not judged on the twin (verify --physical)

    def stand_in(self, a: Endpoint | str, b: Endpoint | str) -> LinkStandIn | None:
        return self._index.get(link_key(a, b))

    @cached_property
    def _index(self) -> dict[tuple[str, str], LinkStandIn]:
        return {s.ends: s for s in self.links}

    def notes(self) -> list[str]:
        """One note per kind of substitution (``11 links planned 4x NDR run at 4x HDR on the twin (...)``),
        then the other things the twin changes."""
        counts = Counter((s.planned_width, s.planned_speed, s.twin_width, s.twin_speed) for s in self.links)
        out = []
        for (pw, ps, tw, ts), n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            why = _why(ps, self.simulator, self.speeds)
            out.append(
                f"{n} link{'s' if n != 1 else ''} planned {pw} {ps} run{'s' if n == 1 else ''} at {tw} {ts} "
                f"on the twin ({why}): judged at {tw} {ts}, not verified at {pw} {ps}"
            )
        return out + list(self.notes_extra)

    def as_dict(self) -> dict[str, Any]:
        return {
            "simulator": self.simulator,
            "speeds": list(self.speeds),
            "cluster": self.cluster,
            "max_clients": self.max_clients,
            "containers": list(self.containers),
            "limits": list(self.limits),
            "notes": list(self.notes_extra),
            "device_name": self.device_name,
            "judged_on_files": list(self.judged_on_files),
            "unseen": list(self.unseen),
            "physical": self.physical,
            "links": [
                {
                    "ends": list(s.ends),
                    "planned": {"width": str(s.planned_width), "speed": str(s.planned_speed)},
                    "twin": {"width": str(s.twin_width), "speed": str(s.twin_speed)},
                }
                for s in self.links
            ],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TwinLimits:
        links = tuple(
            LinkStandIn(
                link_key(*link["ends"]),
                Width(link["planned"]["width"]),
                Speed(link["planned"]["speed"]),
                Width(link["twin"]["width"]),
                Speed(link["twin"]["speed"]),
            )
            for link in data.get("links", [])
        )
        return cls(
            cluster=str(data["cluster"]),
            links=links,
            simulator=str(data.get("simulator", SIMULATOR)),
            speeds=tuple(data.get("speeds", ())),
            max_clients=int(data.get("max_clients", MAX_CLIENTS)),
            containers=tuple(data.get("containers", ())),
            limits=tuple(data.get("limits", ALWAYS)),
            notes_extra=tuple(data.get("notes", ())),
            device_name=str(data.get("device_name", DEVICE_NAME)),
            judged_on_files=tuple(data.get("judged_on_files", ("memlock", "ipoib"))),
            unseen=tuple(data.get("unseen", ("firmware",))),
            physical=str(data.get("physical", NO_PHYSICAL_LAYER)),
        )


def _stand_ins(links: Iterable[PlannedLink], speeds: frozenset[Speed]) -> tuple[LinkStandIn, ...]:
    links = list(links)
    rates = {(width, speed) for _a, _b, speed, width, _s in links}  # a fabric has a few rates, not one per link
    changed = {rate: twin for rate in rates if (twin := twin_rate(*rate, speeds)) != rate}
    if not changed:
        return ()
    out = []
    for link in links:
        stand_in = changed.get((link.width, link.speed))
        if stand_in is not None:
            out.append(LinkStandIn(link_key(link.a, link.b), link.width, link.speed, *stand_in))
    return tuple(out)


def twin_limits(
    loaded: LoadedSpec,
    *,
    notes: Iterable[str] = (),
    containers: Iterable[str] = (),
    simulator: str = SIMULATOR,
    speeds: frozenset[Speed] = SIM_SPEEDS,
) -> TwinLimits:
    """The limits of the twin of ``loaded`` on a simulator that runs ``speeds`` (pure: the same spec and
    simulator always give the same description)."""
    return TwinLimits(
        cluster=loaded.spec.cluster.name,
        links=_stand_ins(loaded.topology.links, speeds),
        simulator=simulator,
        speeds=tuple(s.value for s in _ORDER if s in speeds),
        containers=tuple(containers),
        limits=_always(simulator),
        notes_extra=tuple(notes),
    )


def read_limits(path: Path) -> TwinLimits:
    """The limits a twin wrote (``twin-limits.json``); a directory is searched for that file."""
    file = path / LIMITS_FILE if path.is_dir() else path
    try:
        data = json.loads(file.read_text())
        return TwinLimits.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IbprovError(f"cannot read the twin's limits from {file}: {exc}") from None
