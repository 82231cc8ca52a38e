"""Faults on the twin rack, the ones verify must find, and how each is undone (``ibprov twin fault|heal``).

* ``unlink END``: ibsim console ``Unlink`` of the cable at END -> ``cabling.missing``.
* ``swap A B``: the cables at A and B exchange their far ends (``Unlink`` + ``Link``) -> ``cabling.swapped``.
* ``counters END [NAME=N ...]``: ibsim ``PerformanceSet`` on END's port (default SymbolErrorCounter=500)
  -> ``counters.threshold``.
* ``degrade END width=W | speed=S``: both ends' LinkWidthEnabled / LinkSpeed(Ext)Enabled set through SMPs
  (``ibportstate``); ibsim trains the link at once, without a retrain -> ``link.width`` / ``link.speed``.
* ``rogue-sm NODE [planned-key]``: an OpenSM (priority 0) on NODE's HCA, run on this host (its PID kept for
  ``heal`` and ``down``) -> ``sm.rogue``. With OpenSM's default sm_key (a stray distro OpenSM) beside planned
  SMs that set their own, OpenSM 3.3.23 may ignore their SMInfo and make itself a second MASTER (a fight
  verify can only partly read), or stay STANDBY; with ``planned-key`` (a second SM started from the site's
  own configuration) it defers to the planned master and stays STANDBY.
* ``pkey-drift NODE``: NODE's port GUID put into an unplanned partition in the master's partitions.conf, and
  a SIGHUP -> ``pkey.extra``.

Each fault is recorded in the rack's state with the operations that undo it; ``heal`` runs them newest first.
Endpoints are written as in the spec: ``leaf01:3`` or ``node01/mlx5_0:1``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.types import Endpoint, parse_endpoint
from ibprov.clusterspec.units import Speed, Width
from ibprov.identity.guids import GuidBook, fmt_guid
from ibprov.pkey import MAX_PARTITION_BASE, MIN_PARTITION_BASE, PKey
from ibprov.probes import ibnetdiscover
from ibprov.twin.rack import CONSOLE_FIFO, RackError, RackState, podman, poll, stop_rogue
from ibprov.twinnet.limits import stand_in_speed
from ibprov.twinnet.netfile import hca_id, switch_id

__all__ = ["KINDS", "heal", "inject", "rogue_state"]

KINDS = ("unlink", "swap", "counters", "degrade", "rogue-sm", "pkey-drift")
_WIDTH = {Width.X1: 1, Width.X4: 2, Width.X8: 4, Width.X12: 8, Width.X2: 16}
SM_LOGS = "/var/log/opensm.*.log"  # where the ib_sm role's units log (ib-opensm@GUID: --log_file)
SM_DUMP = "/var/log/opensm-subnet.lst"  # rewritten by every heavy sweep that succeeds (dump_file_dir)
# Bound on waiting for the master's sweep after a fault step (a second here, far more on a loaded machine);
# an SM still sweeping then is restarted and given as long again
SWEEP_WAIT_S = 90.0
_SPEED = {Speed.SDR: ("speed", 1), Speed.DDR: ("speed", 2), Speed.QDR: ("speed", 4)}
_SPEED |= {Speed.FDR: ("espeed", 1), Speed.EDR: ("espeed", 2), Speed.HDR: ("espeed", 4)}


def _node_id(end: Endpoint) -> str:
    return hca_id(end.device, end.hca) if end.hca else switch_id(end.device)


def _port(end: Endpoint) -> str:
    return f'"{_node_id(end)}"[{end.port}]'


def _peer(loaded: LoadedSpec, end: Endpoint) -> tuple[Endpoint, Width, Speed]:
    for link in loaded.topology.links:
        if end in (link.a, link.b):
            return (link.b if link.a == end else link.a), link.width, link.speed
    raise RackError(f"{end}: no planned cable ends there")


def _console(state: RackState, *commands: str) -> None:
    """Type commands at ibsim's console (its FIFO); a dead ibsim (no reader) is an error, not a hang."""
    write = "".join(
        f"timeout 5 sh -c {shlex.quote(f'echo {shlex.quote(c)} > {CONSOLE_FIFO}')} && sleep 0.2 && " for c in commands
    )
    try:
        podman("exec", state.ibsim, "sh", "-c", write + "true", timeout=60)
    except RackError as exc:
        raise RackError(f"ibsim's console does not answer (has ibsim exited? `ibprov twin status`): {exc}") from None


def _diag(state: RackState, argv: Sequence[str]) -> str:
    proc = subprocess.run(
        list(argv), capture_output=True, text=True, env=state.diag_env(state.probe_host()), cwd="/tmp", timeout=60
    )
    if proc.returncode != 0:
        raise RackError(f"{argv[0]} on the twin failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return proc.stdout


def _by_description(loaded: LoadedSpec) -> dict[str, str]:
    """NodeDescription (as ibnetdiscover prints it) -> net-file node id."""
    by_desc = {sw.node_desc: switch_id(name) for name, sw in loaded.topology.switches.items()}
    for node in loaded.spec.nodes:
        for hca in node.hcas:
            by_desc[node.description or f"{node.name} {hca.device}"] = hca_id(node.name, hca.device)
    return by_desc


def _cable_rate(state: RackState, loaded: LoadedSpec, end: Endpoint) -> str:
    """The width and speed the cable at ``end`` runs at now, as ibnetdiscover prints them (``1x QDR``), or
    what was found instead."""
    fabric = ibnetdiscover.parse(_diag(state, ["ibnetdiscover"]))
    by_desc, wanted = _by_description(loaded), (_node_id(end), end.port)
    for link in fabric.links:
        if wanted in {(by_desc.get(e.description), e.port) for e in (link.a, link.b)}:
            return f"{link.width or '??'} {link.speed or '???'}"
    return "no link there"


def _lids(state: RackState, loaded: LoadedSpec) -> dict[str, int]:
    """Net-file node id -> LID (a switch's port 0, a CA's port), as the twin's SM assigned them."""
    fabric = ibnetdiscover.parse(_diag(state, ["ibnetdiscover"]))
    by_desc = _by_description(loaded)
    out: dict[str, int] = {}
    for found in fabric.nodes:
        lid = found.lid if found.type == "SW" else next((p.lid for p in found.ports if p.lid), None)
        if found.description in by_desc and lid:
            out[by_desc[found.description]] = lid
    if not out:
        raise RackError("no LIDs on the twin (is a subnet manager running? `ibprov apply SPEC --target twin`)")
    return out


SWEEP_ERRORS = "ERRORS DURING INITIALIZATION"  # OpenSM 3.3.23's box for a heavy sweep a MAD failed in


def _sweep_mark(container: str) -> str:
    """What changes each time the OpenSM(s) in ``container`` finish a heavy sweep as master, read without
    trusting the log to be written yet: OpenSM flushes its log only after an ERROR or SYS message
    (libopensm/osm_log.c, unless force_log_flush), so an INFO ``SUBNET UP`` can sit in its buffer for
    minutes. A sweep that succeeded rewrites :data:`SM_DUMP` (osm_dump_all, just before SUBNET UP); one
    that ended with the ERRORS DURING INITIALIZATION box (an ERROR, flushed at once) is counted in the log,
    and is a finished sweep too (the next is already signalled, and what the fault changed is on the
    fabric)."""
    script = (
        f"stat -c %y {SM_DUMP} 2>/dev/null || echo no-dump; "
        f"cat {SM_LOGS} 2>/dev/null | grep -c '{SWEEP_ERRORS}' || true"
    )
    return " ".join(podman("exec", container, "sh", "-c", script, check=False, timeout=60).split())


def _sm_log_tail(container: str, lines: int = 15) -> str:
    """The last lines of the OpenSM log(s) in ``container``, for an error that gave up on them."""
    return podman("exec", container, "sh", "-c", f"tail -q -n {lines} {SM_LOGS}", check=False, timeout=60)


def _swept_since(container: str, before: str, timeout: float) -> bool:
    """Whether the SM in ``container`` finishes a sweep (its :func:`_sweep_mark` moves on from ``before``)
    within ``timeout``. A mark that could not be read (podman timed out on a loaded machine) is no sweep;
    without a ``before``, the first mark read is the one to move on from."""

    def moved_on() -> bool:
        nonlocal before
        mark = _sweep_mark(container)
        before = before or mark
        return bool(mark) and mark != before

    return poll(moved_on, timeout, 0.5)


def _sm_units(container: str) -> list[str]:
    """The ib_sm role's OpenSM units in ``container`` (``ib-opensm@GUID.service``), running or not."""
    out = podman(
        "exec", container, "systemctl", "list-units", "--all", "--plain", "--no-legend", "ib-opensm@*",
        check=False, timeout=60,
    )  # fmt: skip
    return [line.split()[0] for line in out.splitlines() if line.startswith("ib-opensm@")]


def _cold_restart(containers: Sequence[str]) -> bool:
    """Stop the OpenSMs in every SM container, start the first container's (the highest priority) alone, and
    once it has swept as master the others' (they come up STANDBY: no handover on the way); returns whether
    the first swept within :data:`SWEEP_WAIT_S`."""
    units = {c: _sm_units(c) for c in containers}
    for container in containers:
        if units[container]:
            podman("exec", container, "systemctl", "stop", *units[container], check=False, timeout=120)
    first = containers[0]
    before = _sweep_mark(first)
    podman("exec", first, "systemctl", "start", *units[first], check=False, timeout=120)
    swept = _swept_since(first, before, SWEEP_WAIT_S)
    for container in containers[1:]:
        if units[container]:
            podman("exec", container, "systemctl", "start", *units[container], check=False, timeout=120)
    return swept


def _run(state: RackState, op: dict[str, Any]) -> None:
    """One step of a fault or its undo; with ``swept: CONTAINER``, it returns once the SM in that container
    has finished a sweep after the step (its effect is then on the fabric), not after a guessed time.

    A sweep takes well under a second on an idle rack (see :func:`_sweep_mark` for how its end is seen).
    umad2sim takes the timeout off every MAD, so a MAD ibsim forwards to another SM (SMInfo, a handover)
    that is never answered leaves an OpenSM's sweep waiting for ever where the kernel would have timed it
    out. A sweep that has not finished in :data:`SWEEP_WAIT_S` is taken as that: the planned SMs (``sms``,
    highest priority first) are restarted from cold, as an admin would, and given as long again."""
    before = _sweep_mark(op["swept"]) if "swept" in op else ""
    _step(state, op)
    if "swept" in op:
        container, what = op["swept"], next(k for k in op if k not in ("swept", "sms"))
        sms = list(op.get("sms") or [container])
        if not _swept_since(container, before, SWEEP_WAIT_S) and not _cold_restart(sms):
            raise RackError(
                f"gave up waiting for the SM in {container} to finish a sweep ({SM_DUMP} rewritten, or a new "
                f"'{SWEEP_ERRORS}' in {SM_LOGS}) "
                f"after the fault's {what} step: {SWEEP_WAIT_S:g} s, then {SWEEP_WAIT_S:g} s more after "
                f"restarting the SMs ({', '.join(sms)}) from cold; the log's last lines:\n{_sm_log_tail(container)}"
            )


def _step(state: RackState, op: dict[str, Any]) -> None:
    if "console" in op:
        _console(state, *op["console"])
    elif "portstate" in op:  # an SMP by LID: while the SM re-sweeps after an earlier fault, routes may lag
        for attempt in range(10):
            try:
                _diag(state, ["ibportstate", *map(str, op["portstate"])])
                break
            except RackError:
                if attempt == 9:
                    raise
                time.sleep(1)
    elif "exec" in op:
        podman("exec", op["exec"][0], "sh", "-c", op["exec"][1])
    elif "rogue" in op:  # OpenSM on this host, attached as the node's HCA (ibsim remote mode), detached
        log = state.path / "rogue-opensm.log"
        argv = [
            "opensm",
            "-p",
            "0",
            "-t",
            "1000",
            "-f",
            str(log),
            "-d2",
            *(["-k", op["sm_key"]] if "sm_key" in op else []),
        ]
        started = subprocess.run(
            ["sh", "-c", 'setsid "$@" </dev/null >/dev/null 2>&1 & echo $!', "sh", *argv],
            env=state.diag_env(op["rogue"]), cwd=state.path, capture_output=True, text=True, check=True,
        )  # fmt: skip
        (state.path / "rogue-opensm.pid").write_text(started.stdout.strip() + "\n")
        _rogue_settled(state, log)
    elif "kill" in op:
        stop_rogue(state.path)
    elif "restart_sms" in op:  # the planned SMs, highest priority first (as the ib_sm role starts them)
        for container in op["restart_sms"]:
            podman("exec", container, "systemctl", "restart", "ib-opensm@*")
            time.sleep(2)
    elif "sweep" in op:  # a heavy sweep of the planned master: links that changed come up at once
        podman("exec", op["sweep"], "systemctl", "kill", "-s", "HUP", "ib-opensm@*", check=False)


ROGUE_STATES = ("Entering STANDBY state", "Entering MASTER state")  # OpenSM's SYS lines (flushed at once)
ROGUE_WAIT_S = 120.0


PLANNED_KEY = "planned-key"  # rogue-sm NODE planned-key: the rogue holds the planned SMs' sm_key


def _planned_sm_key(loaded: LoadedSpec) -> str | None:
    """The planned SMs' sm_key (the spec's ``env:`` reference resolved); None: the spec sets none, and OpenSM's
    default key is theirs and the rogue's alike."""
    ref = loaded.spec.subnet_manager.sm_key
    if not ref:
        return None
    name = str(ref).removeprefix("env:")
    if name == str(ref) or not os.environ.get(name):
        raise RackError(f"rogue-sm ... {PLANNED_KEY}: the spec's sm_key {ref} is not an env: variable that is set here")
    return os.environ[name]


def rogue_state(path: Path) -> str | None:
    """The state the rogue OpenSM of a rack (its log in ``path``) last entered: STANDBY, MASTER or None."""
    log = path / "rogue-opensm.log"
    text = log.read_text(errors="replace") if log.is_file() else ""
    seen = [(text.rfind(line), line.split()[1]) for line in ROGUE_STATES if line in text]
    return max(seen)[1] if seen else None


def _rogue_settled(state: RackState, log: Path) -> None:
    """Wait (bounded) until the rogue OpenSM has entered STANDBY (beside a live master of higher priority)
    or MASTER (it did not hear the master in its discovery); one that does neither is stopped again."""
    if not poll(lambda: rogue_state(state.path) is not None, ROGUE_WAIT_S, 0.5):
        stop_rogue(state.path)
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:]) if log.is_file() else "(no log)"
        raise RackError(
            f"gave up after {ROGUE_WAIT_S:g} s waiting for the rogue OpenSM to enter STANDBY or MASTER "
            f"({log}); stopped it again; its last lines:\n{tail}"
        )


def _enable_steps(ends: Sequence[tuple[int, int]], field: str, old: int, new: int) -> list[dict[str, Any]]:
    """The SMPs that move both ends of a cable from enabling ``old`` to enabling ``new`` (LinkWidthEnabled or
    LinkSpeed(Ext)Enabled, bit masks) without a moment in which the two ends enable nothing in common: ibsim
    recomputes a link's active width whenever it is asked, and panics (``get_active_linkwidth: mismatched
    enabled width``) when the ends share none, taking the whole twin down. Both ends first add ``new`` to
    ``old``, then keep ``new`` alone; at every step they share ``old`` or ``new``."""
    both = old | new
    return [{"portstate": [lid, port, field, mask]} for mask in (both, new) for lid, port in ends]


def _sm_containers(state: RackState, loaded: LoadedSpec) -> list[str]:
    """The containers of the planned SM nodes, highest priority first."""
    ordered = sorted(loaded.spec.subnet_manager.instances, key=lambda i: -i.priority)
    return list(dict.fromkeys(state.nodes[i.node].container for i in ordered if i.node in state.nodes))


def _container(state: RackState, node: str) -> str:
    if node not in state.nodes:
        raise RackError(f"{node} has no container on the twin (simulated HCA only)")
    return state.nodes[node].container


def inject(state: RackState, loaded: LoadedSpec, kind: str, args: Sequence[str]) -> str:
    """Inject one fault; returns what was done. Raises RackError for what cannot be done."""
    do: list[dict[str, Any]]
    undo: list[dict[str, Any]]
    expect: tuple[str | None, str | None] = (None, None)  # degrade: the width, speed the cable must run at
    if kind == "unlink" and len(args) == 1:
        end = parse_endpoint(args[0])
        _peer(loaded, end)
        do, undo = [{"console": [f"Unlink {_port(end)}"]}], [{"console": [f"ReLink {_port(end)}"]}]
        text = f"unlinked the cable at {end}"
    elif kind == "swap" and len(args) == 2:
        a, b = (parse_endpoint(x) for x in args)
        pa, pb = _peer(loaded, a)[0], _peer(loaded, b)[0]
        unlink = [f"Unlink {_port(a)}", f"Unlink {_port(b)}"]
        do = [{"console": [*unlink, f"Link {_port(a)} {_port(pb)}", f"Link {_port(b)} {_port(pa)}"]}]
        undo = [{"console": [*unlink, f"Link {_port(a)} {_port(pa)}", f"Link {_port(b)} {_port(pb)}"]}]
        text = f"swapped the cables at {a} and {b}"
    elif kind == "counters" and args:
        end = parse_endpoint(args[0])
        values = [a.split("=", 1) for a in args[1:]] or [["SymbolErrorCounter", "500"]]
        sets = [f"PerformanceSet {_port(end)} PortCounters.{name}={value}" for name, value in values]
        clears = [f"PerformanceSet {_port(end)} PortCounters.{name}=0" for name, _value in values]
        do, undo = [{"console": sets}], [{"console": clears}]
        text = f"set {', '.join(f'{n}={v}' for n, v in values)} on {end}"
    elif kind == "degrade" and len(args) == 2:
        do, undo, text, expect = _degrade(state, loaded, *args)
    elif kind == "rogue-sm" and (len(args) == 1 or (len(args) == 2 and args[1] == PLANNED_KEY)):
        node = args[0]
        spec_node = next((n for n in loaded.spec.nodes if n.name == node), None)
        if spec_node is None or node in {i.node for i in loaded.spec.subnet_manager.instances}:
            raise RackError(f"{node}: pick a node of the spec that runs no planned SM")
        sim_host = state.sim_hosts[f"{node}/{spec_node.hcas[0].device}"]
        key = _planned_sm_key(loaded) if args[1:] else None
        do = [{"rogue": sim_host, **({"sm_key": key} if key else {})}]
        # the rogue may make itself a second MASTER (it ignores the planned SMs' SMInfo: their sm_key is not its
        # own) and rewrites the PKey tables: once it is gone, the planned SMs restart, master first, and the
        # step returns when the master has swept the fabric back
        sms = _sm_containers(state, loaded)
        undo = [{"kill": "rogue"}, {"restart_sms": sms, **({"swept": sms[0], "sms": sms} if sms else {})}]
        text = f"started a rogue OpenSM (priority 0{', the planned sm_key' if args[1:] else ''}) on {node}'s HCA"
    elif kind == "pkey-drift" and len(args) == 1:
        do, undo, text = _pkey_drift(state, loaded, args[0])
    else:
        raise RackError(
            f"twin fault {kind} {' '.join(args)}: unknown fault or wrong arguments (kinds: {', '.join(KINDS)})"
        )
    sms = _sm_containers(state, loaded)
    if kind in ("unlink", "swap", "degrade") and sms:  # let the master see the new links at once
        sweep = {"sweep": sms[0], "swept": sms[0], "sms": sms}
        do, undo = [*do, sweep], [*undo, sweep]
    # the nodes at both ends of every cable the fault changes: host-side diags never run as one of them (a
    # swapped or unlinked HCA sees no fabric, or one whose routes the SM is still changing)
    changed = [parse_endpoint(a) for a in args[: {"unlink": 1, "swap": 2, "degrade": 1}.get(kind, 0)]]
    touched = sorted({e.device for e in changed} | {_peer(loaded, e)[0].device for e in changed})
    fault = {"kind": kind, "args": list(args), "text": text, "undo": undo, "nodes": touched}
    _do(state, fault, do)
    if kind == "degrade":
        _check_degraded(state, loaded, changed[0], expect, do)
    if kind == "rogue-sm":  # what it did decides what verify sees: an SM in STANDBY, or a second MASTER
        text = f"{text}: it entered {rogue_state(state.path)}"
    return text


DEGRADE_TRIES = 3


def _check_degraded(
    state: RackState, loaded: LoadedSpec, end: Endpoint, expect: tuple[str | None, str | None],
    do: Sequence[dict[str, Any]],
) -> None:  # fmt: skip
    """Read the degraded cable back (ibnetdiscover, as verify will) and send the fault's SMPs again while it
    does not run at ``expect`` (width, speed; None: not changed): a fault is in place when inject returns, not
    when its SMPs were sent. Up to :data:`DEGRADE_TRIES` rounds; then an error that says what runs there."""
    seen = ""
    for attempt in range(DEGRADE_TRIES):
        seen = _cable_rate(state, loaded, end)
        width, _, speed = seen.partition(" ")
        if (expect[0] is None or width.lower() == expect[0]) and (expect[1] is None or speed == expect[1]):
            return
        if attempt < DEGRADE_TRIES - 1:
            for op in do:
                _run(state, op)
    raise RackError(
        f"the cable at {end} runs at {seen} after {DEGRADE_TRIES} rounds of the degrade's SMPs, not "
        f"{' '.join(x for x in expect if x)} (the fault is recorded: `ibprov twin heal` undoes what it did)"
    )


def _do(state: RackState, fault: dict[str, Any], do: Sequence[dict[str, Any]]) -> None:
    """Run a fault's steps and record it; a fault whose steps changed the fabric before one failed (a sweep
    wait gave up after its step ran) is recorded too, so that `twin heal` restores what was changed."""
    for done, op in enumerate(do):
        try:
            _run(state, op)
        except RackError as exc:
            if done or "swept" in op:
                state.faults.append(fault)
                state.save()
                raise RackError(f"{exc}\n(the fault is partly in place: `ibprov twin heal` undoes it)") from None
            raise
    state.faults.append(fault)
    state.save()


def _degrade(
    state: RackState, loaded: LoadedSpec, where: str, change: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str, tuple[str | None, str | None]]:
    """The SMPs that degrade the cable at ``where`` (``width=1x`` / ``speed=EDR``), those that undo it, what
    was done, and the (width, speed) the cable must then run at."""
    end = parse_endpoint(where)
    peer, width, speed = _peer(loaded, end)
    switch_end, other = (end, peer) if not end.hca else (peer, end)
    if switch_end.hca:
        raise RackError(f"{end}: degrade needs a cable with a switch end")
    lids = _lids(state, loaded)
    what, value = change.split("=", 1) if "=" in change else ("", "")
    if what == "width":
        field, new, old = "width", _WIDTH[Width(value)], _WIDTH[width]
    elif what == "speed":
        field, new = _SPEED[Speed(value.upper())]
        planned_field, old = _SPEED[stand_in_speed(speed)]
        if planned_field != field:
            raise RackError(f"{end}: degrade within the same speed family ({planned_field})")
    else:
        raise RackError("degrade END width=1x | speed=EDR")
    # no Unlink/ReLink: ibsim trains both ends at the mask's best width/speed as each SMP lands, and a
    # ReLink is where it panics on ends that enable nothing in common; the port stays ACTIVE. OpenSM's heavy
    # sweeps write LinkWidthEnabled 255 ("set to supported", force_link_width's default) to every port whose
    # enabled widths differ from its supported ones, which ibsim ignores (sim_mad.c takes masks only); the
    # cable is read back after the sweep (_check_degraded), as verify reads it
    ends = [(lids[_node_id(switch_end)], switch_end.port), (lids[_node_id(other)], other.port)]
    do = _enable_steps(ends, field, old, new)
    undo = _enable_steps(ends, field, new, old)
    text = f"degraded the cable at {end} to {what} {value}"
    expect = (str(Width(value)).lower(), None) if what == "width" else (None, Speed(value.upper()).value)
    return do, undo, text, expect


def _pkey_drift(
    state: RackState, loaded: LoadedSpec, node: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    spec = loaded.spec
    target = next((n for n in spec.nodes if n.name == node), None)
    if target is None:
        raise RackError(f"{node}: no such node in the spec")
    if spec.subnet_manager.backend != "opensm":
        raise RackError(
            "pkey-drift edits the host OpenSM's partitions.conf; this spec's SM is backend: "
            f"{spec.subnet_manager.backend}"
        )
    master = max(spec.subnet_manager.instances, key=lambda i: i.priority).node
    container = _container(state, master)
    book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)
    guid = book.port_guid(node, target.hcas[0].device, target.hcas[0].ports[0])
    if guid is None:
        raise RackError(f"{node}: no port GUID")
    conf = "/etc/opensm/partitions.conf"
    # a new partition, full membership, for this one port: an extra PKey the plan does not have
    used = {p.pkey for p in spec.partitions}
    drift = PKey(next(b for b in range(MAX_PARTITION_BASE, MIN_PARTITION_BASE - 1, -1) if b not in used), full=True)
    line = f"ibprov_drift=0x{drift.base:04x}, ipoib : {fmt_guid(guid)}={drift.membership} ;"
    hup = "systemctl kill -s HUP 'ib-opensm@*'"
    add = f"cp {conf} {conf}.ibprov-heal && echo '{line}' >> {conf} && {hup}"
    sms = _sm_containers(state, loaded)
    do = [{"exec": [container, add], "swept": container, "sms": sms}]
    undo = [{"exec": [container, f"mv {conf}.ibprov-heal {conf} && {hup}"], "swept": container, "sms": sms}]
    return do, undo, f"added {node}'s port to an unplanned partition 0x{drift.base:04x} on {master}"


def heal(state: RackState) -> list[str]:
    """Undo every injected fault, newest first; returns what was undone."""
    healed = []
    while state.faults:
        fault = state.faults[-1]
        for op in fault["undo"]:
            _run(state, op)
        state.faults.pop()
        state.save()
        healed.append(fault["text"])
    return healed
