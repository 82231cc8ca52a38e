"""The subnet managers running on a live fabric, for the skeleton: their ports, priorities and states.

They are found the way ``verify --fabric`` finds them, so that a skeleton verifies against the fabric it
came from: the fabric cache ``ibnetdiscover --cache`` writes holds every port's CapabilityMask, whose IsSM
bit marks each port an SM runs on (the master and the standbys); plain ``sminfo`` names the master as this
port sees it (should its bit be missing, or the cache unreadable); ``sminfo <lid>`` asks each of them for
its priority and state. (``saquery SMInfoRecord`` would answer in one query, but only with the SMs the
master knows of, and only where the SA answers this host; one ``sminfo`` per IsSM port asks each SM itself.)

Nothing here is judged: what did not answer becomes a note, and the skeleton says what it could not find.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ibprov.discover.found import TIMEOUT, Found, Port, found_from_text, run_ibnetdiscover
from ibprov.probes import ParseError, collector
from ibprov.probes.cache import FabricCache, decode
from ibprov.probes.runner import LocalRunner, Runner

__all__ = ["FoundSm", "SmSurvey", "read_live", "survey_sms"]

CACHE_NAME = "fabric.cache"


@dataclass(frozen=True)
class FoundSm:
    node_guid: int
    port: int  # 0: a switch's SM
    port_guid: int  # the GUID sminfo reports
    lid: int
    priority: int
    state: str  # MASTER, STANDBY, DISCOVER, NOTACT

    def describe(self) -> str:
        return f"{self.state} priority {self.priority}, lid {self.lid}, port GUID 0x{self.port_guid:016x}"


@dataclass(frozen=True)
class SmSurvey:
    """What discover learnt about the SMs: the ones that answered, and whether anything live was asked."""

    sms: tuple[FoundSm, ...] = ()
    asked: bool = True  # False: the fabric was read from a saved file, nothing live could be asked
    notes: tuple[str, ...] = ()  # what could not be asked or did not answer

    @classmethod
    def not_asked(cls) -> SmSurvey:
        return cls(asked=False)


def _state(name: str) -> str:
    return name.removeprefix("SMINFO_")


def survey_sms(runner: Runner, found: Found, cache: FabricCache | None, cache_problem: str = "") -> SmSurvey:
    """Ask every port with the IsSM bit (from ``cache``) and the master (plain ``sminfo``) for its SMInfo.
    ``found`` maps a LID the cache does not know (no cache) to its port; ``cache_problem`` says why there
    is no cache."""
    lids: dict[int, Port] = dict(found.lids)
    targets: dict[int, Port] = {}
    notes: list[str] = []
    if cache is not None:
        switch = {g for g, kind in cache.node_types.items() if kind == "SW"}
        lids.update(
            {p.lid: (p.node_guid, p.number) for p in cache.ports if p.lid and not (p.number and p.node_guid in switch)}
        )
        for cached in cache.sm_ports():
            if cached.lid:
                targets[cached.lid] = (cached.node_guid, cached.number)
            else:
                notes.append(f"port {_where(found, (cached.node_guid, cached.number))} has the IsSM bit but no LID")
    else:
        notes.append(
            f"the fabric cache could not be read ({cache_problem or 'none was written'}): "
            "only the master SM (plain sminfo) was looked for; add any standby by hand"
        )
    tool = collector("sminfo")
    order = sorted(targets)
    master, *answers = runner.run_batch([tool.argv(), *(tool.argv(lid) for lid in order)], parallel=True)
    sms: dict[Port, FoundSm] = {}
    for lid, result in zip(order, answers, strict=True):
        port = targets[lid]
        if not tool.succeeded(result.returncode):  # an SM that just stopped answers nothing
            notes.append(f"port {_where(found, port)} has the IsSM bit but did not answer: {result.reason()}")
            continue
        info = tool.parse(result.stdout)
        sms[port] = FoundSm(port[0], port[1], info.guid, lid, info.priority, _state(info.state_name))
    if tool.succeeded(master.returncode):
        info = tool.parse(master.stdout)
        at = lids.get(info.lid)
        if at is None:
            notes.append(f"the master SM (sminfo: lid {info.lid}) is at a LID no discovered port has")
        elif at not in sms:  # its IsSM bit was not seen (or there is no cache): what sminfo said stands
            sms[at] = FoundSm(at[0], at[1], info.guid, info.lid, info.priority, _state(info.state_name))
    elif not sms:
        notes.append(f"no subnet manager answered (sminfo: {master.reason()})")
    ranked = sorted(sms.values(), key=lambda s: (s.state != "MASTER", -s.priority, s.port_guid))
    return SmSurvey(tuple(ranked), True, tuple(notes))


def _where(found: Found, port: Port) -> str:
    dev = found.devices.get(port[0])
    name = dev.label() if dev is not None else f"0x{port[0]:016x}"
    return f"{port[1]} of {name}"


def read_live(*, sms: bool = True, timeout: float = TIMEOUT) -> tuple[Found, SmSurvey]:
    """Discover the fabric this host reaches (``ibnetdiscover --cache``, with this process's environment)
    and, with ``sms``, survey its subnet managers the same way."""
    if not sms:
        return found_from_text(run_ibnetdiscover(timeout)), SmSurvey.not_asked()
    with tempfile.TemporaryDirectory(prefix="ibprov-discover-") as tmp:
        cache_path = Path(tmp) / CACHE_NAME
        found = found_from_text(run_ibnetdiscover(timeout, cache=cache_path))
        cache, problem = _read_cache(cache_path)
    runner = LocalRunner(timeout=60.0)
    try:
        return found, survey_sms(runner, found, cache, problem)
    finally:
        runner.close()


def _read_cache(path: Path) -> tuple[FabricCache | None, str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"ibnetdiscover --cache wrote no {path.name}: {exc.strerror or exc}"
    try:
        return decode(data), ""
    except ParseError as exc:
        return None, str(exc)
