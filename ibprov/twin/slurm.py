"""Slurm in the twin rack: the site's existing Slurm, played by the node image's packages (Debian 12: 22.05.8, Debian
13: 24.11.5; munge). The spec's topology plugin is the one slurm.conf names (topology/block needs Debian 13).

``twin up`` on a spec with a ``scheduler:`` section starts it after the node containers are up; ibprov's roles
never install Slurm nor write ``slurm.conf`` (the site owns both), so the twin does here what a site's admins
did once:

* one munge key per twin (``munge.key`` in the twin's state directory, 1024 random bytes), copied into every
  node container as ``/etc/munge/munge.key`` (munge:munge, 0400) before munged starts; the image carries no key;
* ``slurm.conf`` in ``scheduler.config_dir`` on the controller: the controller, every Slurm node that has a
  container (the scheduler's group, else every node; the rest are simply not in it) with ``CPUs=1`` and
  ``SlurmdParameters=config_overrides``, ``topology/tree``, ``proctrack/linuxproc`` and ``task/none`` (the
  rack's cgroups are not Slurm's to manage), no accounting, one default partition ``batch``; the slurmds run
  configless (``--conf-server``): they fetch slurm.conf and topology.conf from slurmctld, and ``scontrol
  reconfigure`` hands them a new topology.conf (with ``topology/tree`` slurmd reads topology.conf too: without
  one it retries for 60 s);
* ``/etc/hosts`` entries for every node container, so that node names resolve between containers;
* the daemons detached from the simulated HCA: systemd's DefaultEnvironment attaches every service to ibsim
  (:func:`ibprov.twin.rack._attach_script`), and ibsim serves at most 10 client processes, so drop-ins unset
  those variables for munge, slurmctld and slurmd;
* munged everywhere, slurmctld on the controller, slurmd on the Slurm nodes; ``up`` waits until ``sinfo`` on
  the controller lists every Slurm node idle.

The real ``topology.conf`` comes later, from ``ibprov apply`` (role ``ib_slurm_topology``); until then the
controller holds a placeholder: slurmctld with ``topology/tree`` and no topology.conf retries for 60 s, then
exits (``fatal: something wrong with opening/reading /etc/slurm/topology.conf``, measured on 22.05.8).
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.scheduler import scheduler_nodes
from ibprov.errors import ExitCode, IbprovError

__all__ = [
    "KEY_FILE",
    "PLACEHOLDER_SWITCH",
    "Podman",
    "Rack",
    "SlurmError",
    "SlurmPlan",
    "check_version",
    "munge_key",
    "plan_slurm",
    "slurm_conf",
    "start",
    "status_lines",
]

KEY_FILE = "munge.key"
KEY_BYTES = 1024
DEFAULT_CONF_DIR = "/etc/slurm"  # where Debian's Slurm looks without SLURM_CONF
STATE_SAVE = "/var/lib/slurm/slurmctld"
SPOOL = "/var/lib/slurm/slurmd"
LOG_DIR = "/var/log/slurm"
PLACEHOLDER_SWITCH = "twin-placeholder"  # the topology.conf the twin starts with, before `ibprov apply`
# the variables that attach a process to the simulated HCA (rack._attach_script sets them for every service)
SIM_ENV = ("LD_PRELOAD", "SIM_HOST", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT")
UNITS = ("munge.service", "slurmctld.service", "slurmd.service")
WAIT_SECONDS = 120.0
Podman = Callable[..., str]  # ibprov.twin.rack.podman: `podman ARGV...` (check=, timeout=), its stdout


class SlurmError(IbprovError):
    """The twin's Slurm could not be planned or started (exit 3, as the rack's own errors)."""

    exit_code = ExitCode.COLLECT_ERROR


class RackNodeView(Protocol):
    """What this module reads of a rack node (:class:`ibprov.twin.rack.RackNode`)."""

    @property
    def name(self) -> str: ...
    @property
    def container(self) -> str: ...
    @property
    def address(self) -> str: ...


class Rack(Protocol):
    """What this module reads of the rack (:class:`ibprov.twin.rack.RackState`, which calls it: no import back)."""

    @property
    def path(self) -> Path: ...
    @property
    def nodes(self) -> Mapping[str, RackNodeView]: ...


@dataclass(frozen=True)
class SlurmPlan:
    """What the twin's Slurm is: its controller, its nodes (with a container) and the nodes left out."""

    cluster: str
    controller: str
    nodes: tuple[str, ...]  # Slurm nodes with a container: in slurm.conf
    left_out: tuple[str, ...]  # Slurm nodes of the spec without a container: not in slurm.conf
    config_dir: str
    plugin: str = "tree"  # the spec's topology plugin (tree, block): the site's slurm.conf names the planned one

    @property
    def conf(self) -> str:
        return f"{self.config_dir}/slurm.conf"

    @property
    def env_prefix(self) -> str:
        """What a command run with ``podman exec`` needs to find slurm.conf."""
        return "" if self.config_dir == DEFAULT_CONF_DIR else f"SLURM_CONF={shlex.quote(self.conf)} "


def plan_slurm(loaded: LoadedSpec, state: Rack) -> SlurmPlan:
    """The twin's Slurm for this spec and rack, or SlurmError when the rack cannot run it."""
    scheduler = loaded.spec.scheduler
    if scheduler is None:
        raise SlurmError(f"{loaded.spec.cluster.name} has no scheduler section: the twin runs no Slurm")
    spec_nodes = [n.name for n in loaded.spec.nodes]
    if scheduler.controller not in state.nodes:
        where = "has no container in the twin rack" if scheduler.controller in spec_nodes else "is not a node"
        raise SlurmError(
            f"scheduler.controller {scheduler.controller} {where}: the twin runs slurmctld in a node container "
            f"(containers: {', '.join(state.nodes) or 'none'})"
        )
    members = scheduler_nodes(loaded.spec)  # the same nodes render and verify plan
    nodes = tuple(n for n in members if n in state.nodes)
    if not nodes:
        raise SlurmError(
            f"no Slurm node of {loaded.spec.cluster.name} has a container in the twin rack "
            f"(Slurm nodes: {', '.join(members) or 'none'}; containers: {', '.join(state.nodes)})"
        )
    return SlurmPlan(
        cluster=loaded.spec.cluster.name.lower(),  # Slurm wants a lower-case ClusterName
        controller=scheduler.controller,
        nodes=nodes,
        left_out=tuple(n for n in members if n not in state.nodes),
        config_dir=scheduler.config_dir.rstrip("/") or "/",
        plugin=scheduler.topology.plugin,
    )


def munge_key(state: Rack) -> bytes:
    """The twin's munge key (made once, kept in its state directory, 0600)."""
    path = state.path / KEY_FILE
    if not path.is_file():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(os.urandom(KEY_BYTES))
    return path.read_bytes()


def slurm_conf(plan: SlurmPlan) -> str:
    """The site's slurm.conf, as the twin plays it."""
    lines = [
        "# slurm.conf of the ibprov twin rack: it plays the site's own file (ibprov's roles never write it).",
        f"ClusterName={plan.cluster}",
        f"SlurmctldHost={plan.controller}",
        "SlurmUser=slurm",
        "SlurmctldParameters=enable_configless",
        "AuthType=auth/munge",
        "CryptoType=crypto/munge",
        f"StateSaveLocation={STATE_SAVE}",
        f"SlurmdSpoolDir={SPOOL}",
        "SlurmctldPidFile=/run/slurmctld.pid",
        "SlurmdPidFile=/run/slurmd.pid",
        f"SlurmctldLogFile={LOG_DIR}/slurmctld.log",
        f"SlurmdLogFile={LOG_DIR}/slurmd.log",
        # no cgroups: the rack's containers run hybrid cgroup v1 that is not Slurm's to manage
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        # the containers see the host's CPUs and memory: the configured values win
        "SlurmdParameters=config_overrides",
        f"TopologyPlugin=topology/{plan.plugin}",
        "SchedulerParameters=max_switch_wait=60",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "MpiDefault=none",
        "ReturnToService=2",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        "InactiveLimit=0",
        "KillWait=5",
        "MinJobAge=300",
        *(f"NodeName={n} CPUs=1 RealMemory=512 State=UNKNOWN" for n in plan.nodes),
        "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
    ]
    return "\n".join(lines) + "\n"


def placeholder_topology(plan: SlurmPlan) -> str:
    """The topology.conf the controller starts with: one switch (topology/block: one block) over every node
    (apply writes the real one)."""
    record = "BlockName" if plan.plugin == "block" else "SwitchName"
    return (
        "# placeholder of the ibprov twin rack: `ibprov apply` (role ib_slurm_topology) writes the real file\n"
        f"{record}={PLACEHOLDER_SWITCH} Nodes={','.join(plan.nodes)}\n"
    )


BLOCK_SLURM = (23, 11)  # topology/block came with Slurm 23.11


def slurm_version(text: str) -> tuple[int, int] | None:
    """``sinfo --version`` (``slurm-wlm 24.11.5``) or the package's (``slurm 22.05.8-4+deb12u3``) -> (24, 11); None
    when it names no version."""
    match = re.search(r"(\d+)\.(\d+)", text)
    return (int(match[1]), int(match[2])) if match else None


def check_version(plan: SlurmPlan, version: str) -> None:
    """SlurmError when the nodes' Slurm cannot run the spec's topology plugin."""
    found = slurm_version(version)
    if plan.plugin == "block" and found is not None and found < BLOCK_SLURM:
        raise SlurmError(
            f"scheduler.topology.plugin block needs Slurm >= 23.11; the twin's nodes run {version.strip()} "
            "(Debian 12). Debian 13's nodes run Slurm 24.11: IBPROV_SUITE=trixie ibprov twin up ..."
        )


def _dropin(plan: SlurmPlan, unit: str) -> str:
    """The drop-in that detaches a daemon from the simulated HCA; slurmd runs configless (no local slurm.conf:
    the Debian unit's condition on it cleared), slurmctld reads ``config_dir``."""
    text = ["[Service]", f"UnsetEnvironment={' '.join(SIM_ENV)}"]
    if unit == "slurmd.service":
        text += ["[Unit]", "ConditionPathExists="]
    if unit == "slurmctld.service" and plan.config_dir != DEFAULT_CONF_DIR:
        text += [
            f"Environment=SLURM_CONF={plan.conf}",
            "[Unit]",
            "ConditionPathExists=",
            f"ConditionPathExists={plan.conf}",
        ]
    return "\n".join(text) + "\n"


def _put(path: str, data: bytes, *, owner: str = "root:root", mode: str = "0644") -> str:
    encoded = base64.b64encode(data).decode()
    tmp = shlex.quote(path + ".ibprov-tmp")
    return (
        f"printf '%s' '{encoded}' | base64 -d > {tmp} && chown {owner} {tmp} && chmod {mode} {tmp} "
        f"&& mv -f {tmp} {shlex.quote(path)}"
    )


def _node_script(plan: SlurmPlan, state: Rack, name: str, key: bytes) -> str:
    hosts = "".join(f"{n.address} {n.name}\n" for n in state.nodes.values())
    lines = [
        "set -e",
        # node names resolve between the containers (podman's DNS knows the container names only)
        f"grep -q '# ibprov-twin-slurm' /etc/hosts || printf '# ibprov-twin-slurm\\n{hosts}' >> /etc/hosts",
        "install -d -o munge -g munge -m 0700 /etc/munge",
        _put("/etc/munge/munge.key", key, owner="munge:munge", mode="0400"),
        f"install -d -o slurm -g slurm -m 0755 {STATE_SAVE} {SPOOL} {LOG_DIR}",
        # configless: slurmd fetches slurm.conf and topology.conf from slurmctld
        _put("/etc/default/slurmd", f'SLURMD_OPTIONS="--conf-server {plan.controller}"\n'.encode()),
        *(
            f"mkdir -p /etc/systemd/system/{u}.d && "
            + _put(f"/etc/systemd/system/{u}.d/20-ibprov-twin-slurm.conf", _dropin(plan, u).encode())
            for u in UNITS
        ),
    ]
    units = ["munge"]
    if name == plan.controller:
        topology = f"{plan.config_dir}/topology.conf"
        lines += [
            f"install -d -m 0755 {shlex.quote(plan.config_dir)}",
            _put(plan.conf, slurm_conf(plan).encode()),
            f"[ -s {shlex.quote(topology)} ] || {_put(topology, placeholder_topology(plan).encode())}",
        ]
        if plan.config_dir != DEFAULT_CONF_DIR:  # logins (scontrol over SSH) find the site's slurm.conf too
            lines.append(
                f"grep -q '^SLURM_CONF=' /etc/environment || echo 'SLURM_CONF={plan.conf}' >> /etc/environment"
            )
        units.append("slurmctld")
    if name in plan.nodes:
        units.append("slurmd")
    lines += ["systemctl daemon-reload", f"systemctl enable --now {' '.join(units)} 2>&1"]
    return "\n".join(lines) + "\n"


def start(
    loaded: LoadedSpec,
    state: Rack,
    podman: Podman,
    say: Callable[[str], None] = lambda _s: None,
    *,
    wait: float | None = None,
) -> SlurmPlan:
    """Start the twin's Slurm (munge key, slurm.conf, daemons) and wait until every Slurm node is idle."""
    plan = plan_slurm(loaded, state)
    # the package's version: sinfo --version needs a slurm.conf, which is not written yet
    version = podman(
        "exec", state.nodes[plan.controller].container, "dpkg-query", "-W", "-f", "slurm ${Version}", "slurm-client",
        check=False, timeout=30,
    )  # fmt: skip
    check_version(plan, version)
    key = munge_key(state)
    began = time.monotonic()
    # the controller first: slurmd registers with it as soon as it starts
    order = [plan.controller, *(n for n in state.nodes if n != plan.controller)]
    for name in order:
        podman("exec", state.nodes[name].container, "sh", "-c", _node_script(plan, state, name, key), timeout=120)
    idle = wait_idle(plan, state, podman, WAIT_SECONDS if wait is None else wait)
    say(
        f"Slurm of {plan.cluster} is up in {time.monotonic() - began:.1f} s: slurmctld on {plan.controller}, "
        f"{len(idle)} node(s) idle ({', '.join(idle)})"
    )
    if plan.left_out:
        say(f"Slurm nodes without a container, not in the twin's slurm.conf: {', '.join(plan.left_out)}")
    return plan


def node_states(plan: SlurmPlan, state: Rack, podman: Podman) -> dict[str, str] | str:
    """Every node's state as ``sinfo`` on the controller lists it, or what sinfo said when it failed."""
    container = state.nodes[plan.controller].container
    out = podman(
        "exec", container, "sh", "-c", f"{plan.env_prefix}sinfo --Node --noheader --format='%N %T' 2>&1; echo rc=$?",
        check=False, timeout=30,
    )  # fmt: skip
    body, _, rc = out.rpartition("rc=")
    if rc.strip() != "0":
        return " | ".join(line.strip() for line in body.splitlines() if line.strip()) or f"sinfo exited {rc.strip()}"
    states: dict[str, str] = {}
    for line in body.splitlines():
        words = line.split()
        if len(words) == 2:
            states[words[0]] = words[1]
    return states


def wait_idle(plan: SlurmPlan, state: Rack, podman: Podman, timeout: float) -> list[str]:
    """Wait until ``sinfo`` on the controller lists every Slurm node idle; SlurmError with the last word if not."""
    deadline = time.monotonic() + timeout
    last: dict[str, str] | str = "no answer yet"
    while time.monotonic() < deadline:
        last = node_states(plan, state, podman)
        if isinstance(last, dict) and all(last.get(n) == "idle" for n in plan.nodes):
            return list(plan.nodes)
        time.sleep(1.0)
    seen = last if isinstance(last, str) else ", ".join(f"{n} {last.get(n, 'not listed')}" for n in plan.nodes)
    container = state.nodes[plan.controller].container
    raise SlurmError(
        f"the twin's Slurm did not come up within {timeout:g} s: waited for `sinfo` on {plan.controller} to list "
        f"{', '.join(plan.nodes)} idle; last seen: {seen} (logs: podman exec {container} journalctl -u slurmctld, "
        f"{LOG_DIR}/slurmctld.log, and {LOG_DIR}/slurmd.log on each node)"
    )


def status_lines(loaded: LoadedSpec, state: Rack, running: Sequence[str], podman: Podman) -> list[str]:
    """``twin status`` lines about Slurm: whether the controller answers, and every Slurm node's state."""
    try:
        plan = plan_slurm(loaded, state)
    except SlurmError as exc:
        return [f"  slurm     not running: {exc}"]
    controller = state.nodes[plan.controller].container
    if controller not in running:
        return [f"  slurm     controller {plan.controller}: DOWN (its container is not running)"]
    ping = podman(
        "exec", controller, "sh", "-c", f"{plan.env_prefix}scontrol ping 2>&1", check=False, timeout=30
    ).strip()
    up = "is UP" in ping
    said = ping.splitlines()[0] if ping else "no answer"
    out = [f"  slurm     slurmctld on {plan.controller}: {'up' if up else 'DOWN'} ({said})"]
    if up:
        states = node_states(plan, state, podman)
        if isinstance(states, str):
            out.append(f"  slurm     sinfo failed: {states}")
        else:
            out.append("  slurm     nodes: " + ", ".join(f"{n} {states.get(n, 'not listed')}" for n in plan.nodes))
    if plan.left_out:
        out.append(f"  slurm     not in the twin's slurm.conf (no container): {', '.join(plan.left_out)}")
    return out
