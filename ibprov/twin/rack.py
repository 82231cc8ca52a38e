"""The twin rack: the planned fabric on ibsim, and a systemd container per node that Ansible reaches over SSH.

``ibprov twin up SPEC`` builds it so that ``ibprov apply``, ``plan`` and ``verify`` run against it with
``--target twin`` and no other change:

* a podman network of its own (``ibprov-twin-<cluster>-<id>``), every container at a fixed address in it
  (:func:`fixed_addresses`), so that a node stopped and started again (a reboot) keeps its address, as a
  cluster node does, and its HCA finds ibsim where it was;
* one container running ``ibsim -r`` (remote mode: UDP 7070-7080 on that network) on the twin's net file,
  its console fed from a FIFO so that faults can be injected (:mod:`ibprov.twin.faults`);
* one container per node from the local Debian 12 node image (``images/ensure-images.sh``), systemd as
  PID 1, sshd with the rack's own key, and every process attached to the node's simulated HCA
  (``LD_PRELOAD=libumad2sim.so SIM_HOST=<HCA> IBSIM_SERVER_NAME=<ibsim>``): systemd's DefaultEnvironment
  and ``/etc/environment`` for SSH logins;
* with a ``scheduler:`` section, the site's Slurm played by Debian's (:mod:`ibprov.twin.slurm`);
* the state (``state.json``), the key, ``ssh_config``, an Ansible inventory of the containers and the
  twin's limits (``twin-limits.json``) in ``.ibprov/twin/<cluster>/``.

ibsim serves at most 10 client processes at once; each running OpenSM holds one for good and every diag
or fact-gathering process one while it runs. So at most :data:`MAX_CONTAINERS` nodes get a container (the
subnet manager nodes first, then by name); the others stay simulated HCAs: on the fabric, with no host.
``up`` says which, and the limits record it.

Every name carries the cluster and a run id, so twins of different specs (and test runs) never collide;
``down`` removes exactly what ``up`` created, found through the state file and podman labels.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.units import Speed
from ibprov.errors import ExitCode, IbprovError
from ibprov.identity.guids import GuidBook
from ibprov.resources import images_dir
from ibprov.run import Target
from ibprov.twin import slurm
from ibprov.twin.sim import UMAD2SIM
from ibprov.twinnet.limits import LIMITS_FILE, TwinLimits, read_limits, release_speeds
from ibprov.twinnet.netfile import build_twin
from ibprov.verify.target import VerifyTarget

__all__ = [
    "IBSIM_PORT",
    "MAX_CONTAINERS",
    "RackError",
    "RackNode",
    "RackState",
    "down",
    "ibsim_exit",
    "load_state",
    "state_dir",
    "status",
    "up",
    "verify_target",
]

IBSIM_PORT = 7070
MAX_CONTAINERS = 8  # ibsim's 10 client slots: room for the SMs, concurrent fact gathering and verify's diags
# Bound on each wait of `up` (ibsim ready, SSH to a node): seconds on an idle machine, much more on a loaded one;
# a wait that succeeds returns at once
UP_WAIT_S = 120.0
LABEL = "io.ibprov.twin"
STATE_FILE = "state.json"
CONSOLE_FIFO = "/run/ibsim.console"
CONSOLE_LOG = "/run/ibsim.log"
NET_IN_CONTAINER = "/etc/ibsim/twin.net"
SIM_LIB = str(UMAD2SIM)


class RackError(IbprovError):
    """The twin rack could not be built, found or removed (exit 3)."""

    exit_code = ExitCode.COLLECT_ERROR


@dataclass(frozen=True)
class RackNode:
    name: str  # the spec's node name (also the container's hostname and the inventory name)
    container: str
    address: str
    sim_host: str  # the node's first HCA in the net file, e.g. "H-node01-mlx5_0"


@dataclass
class RackState:
    cluster: str
    run_id: str
    directory: str
    network: str
    ibsim: str  # container name
    ibsim_address: str
    image: str
    nodes: dict[str, RackNode] = field(default_factory=dict)  # node -> its container
    simulated_only: list[str] = field(default_factory=list)  # nodes without a container
    sim_hosts: dict[str, str] = field(default_factory=dict)  # "node/device" -> SIM_HOST
    faults: list[dict[str, Any]] = field(default_factory=list)  # what `twin fault` injected, for `heal`

    @property
    def path(self) -> Path:
        return Path(self.directory)

    @property
    def containers(self) -> list[str]:
        return [self.ibsim, *(n.container for n in self.nodes.values())]

    @property
    def key(self) -> Path:
        return self.path / "id_ed25519"

    @property
    def ssh_config(self) -> Path:
        return self.path / "ssh_config"

    @property
    def inventory(self) -> Path:
        return self.path / "inventory.yml"

    @property
    def limits(self) -> TwinLimits:
        return read_limits(self.path / LIMITS_FILE)

    def diag_env(self, sim_host: str) -> dict[str, str]:
        """The environment that runs a diag on this host as ``sim_host`` (ibsim remote mode)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IBSIM_", "SIM_"))}
        env.update(
            LD_PRELOAD=SIM_LIB,
            IBSIM_SERVER_NAME=self.ibsim_address,
            IBSIM_SERVER_PORT=str(IBSIM_PORT),
            SIM_HOST=sim_host,
        )
        return env

    def probe_host(self) -> str:
        """An HCA to run host-side diags as: one with no container (nothing else runs there), else the last
        node's (SM nodes come first); never one whose cable a fault changed (it may see no fabric)."""
        faulted = {arg.split("/")[0].split(":")[0] for fault in self.faults for arg in fault["args"]}
        faulted |= {node for fault in self.faults for node in fault.get("nodes", ())}
        taken = [n.sim_host for n in self.nodes.values()]
        free = sorted(h for h in self.sim_hosts.values() if h not in taken)
        node_of = {host: key.split("/")[0] for key, host in self.sim_hosts.items()}
        candidates = [h for h in [*free, *reversed(taken)] if node_of.get(h) not in faulted]
        return (candidates or [*free, *reversed(taken)])[0]

    def save(self) -> None:
        data = asdict(self)
        (self.path / STATE_FILE).write_text(json.dumps(data, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> RackState:
        data = json.loads((path / STATE_FILE).read_text())
        data["nodes"] = {k: RackNode(**v) for k, v in data["nodes"].items()}
        return cls(**data)


def state_dir(cluster: str, base: Path | None = None) -> Path:
    """Where the twin rack of ``cluster`` keeps its state: ``$IBPROV_TWIN_DIR`` or ``.ibprov/twin``."""
    root = base or Path(os.environ.get("IBPROV_TWIN_DIR") or Path(".ibprov") / "twin")
    return root / cluster


def load_state(loaded: LoadedSpec, base: Path | None = None) -> RackState:
    """The running twin rack of this spec's cluster, or RackError with how to start one."""
    path = state_dir(loaded.spec.cluster.name, base)
    if not (path / STATE_FILE).is_file():
        raise RackError(f"no twin rack of cluster {loaded.spec.cluster.name} ({path}): run `ibprov twin up SPEC`")
    return RackState.load(path)


# ---------------------------------------------------------------------------------------------- podman
Run = Callable[..., subprocess.CompletedProcess[str]]


def _podman_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("CONTAINERS_CONF", str(images_dir() / "containers.conf"))
    return env


def podman(*argv: str, check: bool = True, timeout: float = 300.0, stdin: str | None = None) -> str:
    if shutil.which("podman") is None:
        raise RackError("podman is not installed: `make demo` installs it (apt install podman runc netavark ...)")
    proc = subprocess.run(
        ["podman", *argv], capture_output=True, text=True, env=_podman_env(), timeout=timeout, input=stdin
    )
    if check and proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise RackError(f"podman {' '.join(argv[:3])} failed ({proc.returncode}): {detail[0]}")
    return proc.stdout


def node_image() -> str:
    """The local Debian 12 node image (built or loaded from the cache on first use)."""
    script = images_dir() / "ensure-images.sh"
    proc = subprocess.run([str(script)], capture_output=True, text=True, env=_podman_env())
    if proc.returncode != 0:
        raise RackError(f"cannot get the node image ({script}): {proc.stderr.strip().splitlines()[-1:]}")
    return proc.stdout.strip().splitlines()[-1]


def image_simulator(image: str) -> tuple[str, frozenset[Speed]]:
    """The ibsim of a node image (its ibsim-utils package) and the speeds that release runs."""
    version = podman(
        "run", "--rm", "--network", "none", image, "dpkg-query", "-W", "-f", "${Version}", "ibsim-utils",
        timeout=120,
    ).strip()  # fmt: skip
    return release_speeds(version)


def _exec(container: str, script: str, *, timeout: float = 120.0) -> str:
    return podman("exec", container, "sh", "-c", script, timeout=timeout)


def _address(container: str) -> str:
    data = json.loads(podman("container", "inspect", container))
    networks = data[0]["NetworkSettings"]["Networks"]
    return str(next(iter(networks.values()))["IPAddress"])


def _restart_nodes(state: RackState, containers: Sequence[str]) -> bool:
    """Start stopped node containers again (a node rebooted, or the host), as ``up`` finds them: whether each
    came back at its fixed address and answers SSH (else the rack is rebuilt)."""
    by_container = {n.container: n for n in state.nodes.values()}
    if not all(c in by_container for c in containers):
        return False
    for container in containers:
        podman("start", container, check=False, timeout=120)
    for container in containers:
        node = by_container[container]
        if container not in _running([container]) or _address(container) != node.address:
            return False
        if not poll(functools.partial(_ssh_ok, state, node), UP_WAIT_S):
            return False
    return True


def fixed_addresses(subnet: str, gateway: str, containers: Sequence[str]) -> dict[str, str]:
    """The address of each container in ``subnet``: its hosts in order, the gateway skipped."""
    hosts = (str(a) for a in ipaddress.ip_network(subnet).hosts() if str(a) != gateway)
    pairs = dict(zip(containers, hosts, strict=False))
    if len(pairs) < len(containers):
        raise RackError(f"the twin's network {subnet} has no address left for {containers[len(pairs)]}")
    return pairs


def _subnet(network: str) -> tuple[str, str]:
    data = json.loads(podman("network", "inspect", network))
    first = data[0]["subnets"][0]
    return str(first["subnet"]), str(first["gateway"])


def _running(names: Sequence[str]) -> set[str]:
    out = podman("ps", "--filter", f"label={LABEL}", "--format", "{{.Names}}", check=False)
    return {n for n in out.split() if n in set(names)}


# ------------------------------------------------------------------------------------------------- up
def choose_containers(loaded: LoadedSpec, limit: int = MAX_CONTAINERS) -> tuple[list[str], list[str]]:
    """(nodes that get a container, nodes that stay simulated HCAs): the SM nodes first, then Slurm's controller
    (it runs slurmctld in its container), then by name."""
    sm_nodes = list(dict.fromkeys(i.node for i in loaded.spec.subnet_manager.instances))
    names = {n.name for n in loaded.spec.nodes}
    if (scheduler := loaded.spec.scheduler) is not None and scheduler.controller in names:
        sm_nodes = list(dict.fromkeys([*sm_nodes, scheduler.controller]))
    others = sorted(n.name for n in loaded.spec.nodes if n.name not in sm_nodes)
    order = sm_nodes + others
    return order[:limit], order[limit:]


def _attach_script(state: RackState, node: RackNode, pubkey: str) -> str:
    env = {
        "LD_PRELOAD": SIM_LIB,
        "SIM_HOST": node.sim_host,
        "IBSIM_SERVER_NAME": state.ibsim_address,
        "IBSIM_SERVER_PORT": str(IBSIM_PORT),
    }
    default_env = " ".join(f'"{k}={v}"' for k, v in env.items())
    environment = "".join(f"{k}={v}\n" for k, v in env.items())
    dropin = "[Unit]\nConditionPathExists=\n[Service]\nWorkingDirectory=/tmp\nTimeoutStopSec=2\n"  # umad2sim needs cwd
    units = ("opensm.service", "opensm@.service", "ib-opensm@.service")
    lines = [
        "set -e",
        "systemctl is-system-running --wait >/dev/null || true",
        "mkdir -p /root/.ssh /etc/systemd/system.conf.d && chmod 700 /root/.ssh",
        f"printf '%s\\n' '{pubkey}' > /root/.ssh/authorized_keys && chmod 600 /root/.ssh/authorized_keys",
        *_peer_login(state),
        f"printf '[Manager]\\nDefaultEnvironment={default_env}\\n' > /etc/systemd/system.conf.d/10-umad2sim.conf",
        f"printf '{environment}' > /etc/environment",
        *(
            f"mkdir -p /etc/systemd/system/{u}.d && printf '{dropin}' > /etc/systemd/system/{u}.d/10-ibsim.conf"
            for u in units
        ),
        # the image carries apt lists and .debs of what the roles install: keep them fresh (no network)
        "mkdir -p /var/lib/apt/periodic && touch /var/lib/apt/periodic/update-success-stamp",
        "systemctl daemon-reexec",
    ]
    return "\n".join(lines) + "\n"


def _peer_login(state: RackState) -> list[str]:
    """The nodes log in to each other with the rack's key, as a cluster's nodes do (mpirun starts its daemons
    over SSH: verify --mpi)."""
    if not state.key.is_file():
        return []
    key = base64.b64encode(state.key.read_bytes()).decode()
    return [
        f"printf '%s' '{key}' | base64 -d > /root/.ssh/id_ed25519 && chmod 600 /root/.ssh/id_ed25519",
        "printf 'Host *\\n  StrictHostKeyChecking no\\n  UserKnownHostsFile /dev/null\\n  LogLevel ERROR\\n'"
        " > /root/.ssh/config",
    ]


def _write_access(state: RackState) -> None:
    """ssh_config and an Ansible inventory of the containers (the spec's node names, the twin's addresses)."""
    lines = [f"Host {n.name} {n.container}\n  HostName {n.address}\n" for n in state.nodes.values()]
    lines.append(
        f"Host *\n  User root\n  IdentityFile {state.key}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
    )
    state.ssh_config.write_text("".join(lines))
    state.ssh_config.chmod(0o600)
    inventory = {
        "all": {
            "vars": {
                "ansible_user": "root",
                "ansible_ssh_private_key_file": str(state.key),
                "ansible_ssh_common_args": f"-F {state.ssh_config}",
            },
            "hosts": {n.name: {"ansible_host": n.address} for n in state.nodes.values()},
        }
    }
    state.inventory.write_text(json.dumps(inventory, indent=2) + "\n")


def up(loaded: LoadedSpec, *, base: Path | None = None, say: Callable[[str], None] = lambda _s: None) -> RackState:
    """Build the twin rack of ``loaded`` (or find the one running and reuse it)."""
    backend = loaded.spec.subnet_manager.backend
    if backend != "opensm":
        raise RackError(
            f"the twin rack runs the ib_sm role's host OpenSM; subnet_manager.backend: {backend} has none to run "
            "there (the switch or UFM SM is not played in the rack): `ibprov twin prove` plays it with OpenSM"
        )
    path = state_dir(loaded.spec.cluster.name, base)
    if (path / STATE_FILE).is_file():
        state = RackState.load(path)
        missing = set(state.containers) - _running(state.containers)
        if missing and state.ibsim not in missing and _restart_nodes(state, sorted(missing)):
            say(f"twin rack of {state.cluster}: node container(s) started again: {', '.join(sorted(missing))}")
            missing = set()
        if not missing and not _ibsim_alive(state):
            missing = {state.ibsim}
        if not missing:
            say(f"twin rack of {state.cluster} is up (reused): {len(state.nodes)} node containers on {state.network}")
            start_keeper(state)
            return state
        say(f"twin rack of {state.cluster}: {len(missing)} container(s) gone, rebuilding")
        down(loaded, base=base)
    path.mkdir(parents=True, exist_ok=True)
    book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)
    with_box, without = choose_containers(loaded)
    image = node_image()
    simulator, speeds = image_simulator(image)  # the rack's ibsim is the image's (Debian 12: 0.10, 13: 0.12)
    twin = build_twin(loaded, book, simulator=simulator, speeds=speeds)
    run_id = uuid.uuid4().hex[:6]
    prefix = f"ibprov-twin-{loaded.spec.cluster.name}-{run_id}"
    say(f"image: {image} ({simulator})")
    state = RackState(
        cluster=loaded.spec.cluster.name,
        run_id=run_id,
        directory=str(path.resolve()),
        network=prefix,
        ibsim=f"{prefix}-ibsim",
        ibsim_address="",
        image=image,
        simulated_only=without,
        sim_hosts=dict(twin.sim_hosts),
    )
    state.save()  # from here on, `down` can clean up whatever exists
    try:
        _build(loaded, state, twin.text, with_box, say)
        if loaded.spec.scheduler is not None:
            slurm.start(loaded, state, podman, say)
    except BaseException:
        say("twin up failed: removing what it created")
        down(loaded, base=base)
        raise
    limits = TwinLimits(
        cluster=twin.limits.cluster,
        links=twin.limits.links,
        simulator=twin.limits.simulator,
        speeds=twin.limits.speeds,
        containers=tuple(state.nodes),
        limits=twin.limits.limits,
        notes_extra=twin.limits.notes_extra,
    )
    (path / LIMITS_FILE).write_text(limits.to_json())
    (path / "twin.net").write_text(twin.text)
    state.save()
    start_keeper(state)
    return state


def _build(
    loaded: LoadedSpec, state: RackState, netfile: str, nodes: Sequence[str], say: Callable[[str], None]
) -> None:
    labels = ["--label", f"{LABEL}={state.cluster}", "--label", f"{LABEL}.run={state.run_id}"]
    podman("network", "create", *labels, state.network)
    common = ["-d", "--network", state.network, "--systemd", "always", *labels]
    hostnames = {state.ibsim: "ibsim", **{f"{state.network}-{name}": name for name in nodes}}
    address = fixed_addresses(*_subnet(state.network), list(hostnames))
    for container, hostname in hostnames.items():
        fixed = ["--ip", address[container], "--name", container, "--hostname", hostname]
        podman("run", *common, *fixed, state.image, "/sbin/init")
    state.ibsim_address = address[state.ibsim]
    podman("exec", "-i", state.ibsim, "sh", "-c", f"mkdir -p /etc/ibsim && cat > {NET_IN_CONTAINER}", stdin=netfile)
    _exec(
        state.ibsim,
        "systemctl is-system-running --wait >/dev/null || true\n"
        f"rm -f {CONSOLE_FIFO} && mkfifo {CONSOLE_FIFO}\n"
        # the FIFO held open for writing by `sleep` so that ibsim never sees EOF on its console
        f"systemd-run --unit ibsim --working-directory /tmp sh -c 'sleep infinity > {CONSOLE_FIFO} & "
        f"exec stdbuf -oL ibsim -r -l {IBSIM_PORT} -s {NET_IN_CONTAINER} < {CONSOLE_FIFO} > {CONSOLE_LOG} 2>&1'\n",
    )
    _wait_for(
        lambda: "Network simulator ready" in _exec(state.ibsim, f"cat {CONSOLE_LOG} 2>/dev/null || true"),
        UP_WAIT_S,
        f"ibsim in {state.ibsim} to print 'Network simulator ready' in {CONSOLE_LOG}",
    )
    if not state.key.exists():
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"ibprov-twin-{state.cluster}", "-f", str(state.key)],
            check=True,
        )
    pubkey = state.key.with_suffix(".pub").read_text().strip()
    spec_nodes = {n.name: n for n in loaded.spec.nodes}
    for name in nodes:
        device = spec_nodes[name].hcas[0].device
        container = f"{state.network}-{name}"
        node = RackNode(name, container, address[container], state.sim_hosts[f"{name}/{device}"])
        _exec(container, _attach_script(state, node, pubkey))
        state.nodes[name] = node
        state.save()
    _write_access(state)
    for node in state.nodes.values():
        _wait_for(functools.partial(_ssh_ok, state, node), UP_WAIT_S, f"SSH to {node.name} ({node.container})")
    say(
        f"twin rack of {state.cluster} is up: ibsim on {state.ibsim} ({state.ibsim_address}), "
        f"{len(state.nodes)} node containers on {state.network}"
    )
    if state.simulated_only:
        say(
            f"{len(state.simulated_only)} node(s) stay simulated HCAs without a container (ibsim serves "
            f"{10} clients): {', '.join(state.simulated_only)}"
        )


def ibsim_exit(state: RackState) -> str:
    """Empty while the rack's ibsim runs; else that it has exited and the end of its log (an ibsim panic, e.g.
    on links whose ends share no enabled width or speed, ends the simulated fabric: the rack must be rebuilt)."""
    if _ibsim_alive(state):
        return ""
    log = podman("exec", state.ibsim, "sh", "-c", f"tail -n 5 {CONSOLE_LOG} 2>&1", check=False, timeout=20)
    tail = " | ".join(line.strip() for line in log.splitlines() if line.strip())
    return (
        f"the twin's ibsim has exited ({tail or 'no log'}); "
        "rebuild the rack: `ibprov twin down SPEC` then `ibprov twin up SPEC`"
    )


def _ibsim_alive(state: RackState) -> bool:
    """Whether ibsim still runs in its container (it exits on a fatal fault: the rack is then lost)."""
    out = podman("exec", state.ibsim, "systemctl", "is-active", "ibsim", check=False, timeout=20)
    return out.strip() == "active"


def _ssh_ok(state: RackState, node: RackNode) -> bool:
    proc = subprocess.run(
        ["ssh", "-F", str(state.ssh_config), "-o", "ConnectTimeout=3", node.name, "true"],
        capture_output=True,
        timeout=20,
    )
    return proc.returncode == 0


def poll(predicate: Callable[[], bool], timeout: float, interval: float = 0.3) -> bool:
    """Whether ``predicate`` holds within ``timeout`` seconds (asked every ``interval``, once more at the end)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True


def _wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait for ``predicate`` at most ``timeout`` seconds; else a RackError saying what was awaited."""
    if not poll(predicate, timeout):
        raise RackError(f"the twin rack did not come up: gave up after {timeout:g} s waiting for {what}")


# ------------------------------------------------------------------------------------- status, down
def status(loaded: LoadedSpec, *, base: Path | None = None) -> list[str]:
    """Lines about the twin rack of ``loaded``: what runs, what is missing, the faults injected."""
    path = state_dir(loaded.spec.cluster.name, base)
    if not (path / STATE_FILE).is_file():
        return [f"no twin rack of cluster {loaded.spec.cluster.name} ({path})"]
    state = RackState.load(path)
    running = _running(state.containers)
    out = [f"twin rack of {state.cluster} ({state.path}), network {state.network}"]
    alive = state.ibsim in running and _ibsim_alive(state)
    out.append(f"  ibsim     {state.ibsim} {state.ibsim_address}: {'up' if alive else 'DOWN'}")
    for node in state.nodes.values():
        out.append(
            f"  {node.name:9s} {node.container} {node.address} as {node.sim_host}: "
            f"{'up' if node.container in running else 'DOWN'}"
        )
    if state.simulated_only:
        out.append(f"  simulated HCAs only (no container): {', '.join(state.simulated_only)}")
    if loaded.spec.scheduler is not None:
        out += slurm.status_lines(loaded, state, sorted(running), podman)
    for fault in state.faults:
        out.append(f"  fault: {fault['text']}")
    return out


KEEPER_PID = "keeper.pid"


def _keeper_pid(path: Path) -> int | None:
    """The pid of the rack's slot keeper while it runs (its pid file names a live ``ibprov.twin.keeper``)."""
    try:
        pid = int((path / KEEPER_PID).read_text().split()[0])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        return None
    return pid if b"ibprov.twin.keeper" in cmdline else None


def start_keeper(state: RackState) -> int:
    """Start the rack's slot keeper (:mod:`ibprov.twin.keeper`) unless it runs; its pid."""
    if (pid := _keeper_pid(state.path)) is not None:
        return pid
    # started by a shell that exits at once: the keeper outlives this process (the CLI's `up` returns) and
    # is nobody's child to reap; a session of its own keeps a terminal's ^C away from it
    started = subprocess.run(
        ["sh", "-c", '"$@" </dev/null >>"$0" 2>&1 & echo $!', str(state.path / "keeper.log"),
         sys.executable, "-m", "ibprov.twin.keeper", str(state.path)],
        capture_output=True, text=True, check=True, start_new_session=True, timeout=30,
    )  # fmt: skip
    pid = int(started.stdout.strip())
    (state.path / KEEPER_PID).write_text(f"{pid}\n")
    return pid


def stop_keeper(path: Path) -> bool:
    """Stop the rack's slot keeper by the pid it recorded (never another process)."""
    pid = _keeper_pid(path)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _keeper_pid(path) == pid:
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        if _keeper_pid(path) == pid:
            os.kill(pid, signal.SIGKILL)
    (path / KEEPER_PID).unlink(missing_ok=True)
    return True


def stop_rogue(path: Path) -> bool:
    """Stop the rogue OpenSM a `twin fault rogue-sm` started on this host (by the PID it recorded)."""
    pidfile = path / "rogue-opensm.pid"
    if not pidfile.is_file():
        return False
    pid = int(pidfile.read_text().split()[0])
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            time.sleep(0.1)
            os.kill(pid, 0)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pidfile.unlink()
    return True


def down(loaded: LoadedSpec, *, base: Path | None = None) -> list[str]:
    """Remove the twin rack of ``loaded``: its containers, its network, its files and the processes it
    started (a rogue SM); nothing else."""
    path = state_dir(loaded.spec.cluster.name, base)
    removed: list[str] = []
    if stop_keeper(path):
        removed.append("the slot keeper")
    if stop_rogue(path):
        removed.append("the rogue OpenSM")
    if (path / STATE_FILE).is_file():
        state = RackState.load(path)
        run_label = f"label={LABEL}.run={state.run_id}"
        names = podman("ps", "-a", "--filter", run_label, "--format", "{{.Names}}", check=False).split()
        if names:
            podman("rm", "-f", "-t", "2", *names, check=False)
            removed += names
        nets = podman("network", "ls", "--filter", run_label, "--format", "{{.Name}}", check=False).split()
        for net in nets:
            podman("network", "rm", "-f", net, check=False)
            removed.append(net)
    if path.exists():
        shutil.rmtree(path)
        removed.append(str(path))
    return removed


def apply_target(state: RackState) -> Target:
    """Where `apply --target twin` runs: the rack through its inventory (addresses, key), only the nodes with a
    container, without the tasks a container cannot run (kernel modules, bringing up ib0: tag
    molecule-notest, as in the molecule scenarios), with the twin's stand-in GUIDs."""
    return Target(
        "twin",
        inventory=state.inventory,
        hosts=tuple(state.nodes),
        unsupported_tags=("molecule-notest",),
        synthetic_guids=True,
    )


def verify_target(state: RackState) -> VerifyTarget:
    """How `verify --target twin` reaches the rack: the diags on this host as the rack's probe HCA, the node
    containers (as root) through the rack's inventory and SSH config, judged by the twin's limits; and,
    when the diags fail, whether ibsim has exited."""
    return VerifyTarget(
        hosts={name: node.address for name, node in state.nodes.items()},
        user="root",
        inventory=state.inventory,
        ssh_config=state.ssh_config,
        diag_env=state.diag_env(state.probe_host()),
        limits=state.limits,
        exited=functools.partial(ibsim_exit, state),
    )
