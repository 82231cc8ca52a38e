"""Benchmark: the per-host cost of a no-op re-apply on an 8-node rig, `ibprov apply` against plain ansible-playbook.

Measured in what grows with the fleet: module executions per host and the controller's CPU-seconds per host
(ibprov's tuned settings against Ansible's defaults).

The rig: nine podman containers from the local Debian 12 node image on a network of their own, one running
ibsim with the planned fabric (the twin's net file: one leaf switch, eight HCAs), eight nodes each attached
to its own simulated HCA (molecule/shared/ibsim.yml), reached over real SSH. The spec names the nodes by their
container addresses; node01 runs OpenSM.

1. `ibprov apply` converges the rig once (packages, OpenSM, IPoIB files), and once more to prove it is a no-op.
2. Then, alternating, N times each:
   - tuned: `ibprov apply SPEC` (ansible-runner, pipelining, ControlPersist, 50 forks, smart gathering
     of the minimal fact subset with the fact cache, no ansible_* fact variables, the controller polling
     its workers every 20 ms: ibprov/run/env.py);
   - plain: `ansible-playbook -i <the same rendered inventory> playbooks/site.yml` with Ansible's defaults
     (5 forks, no pipelining, facts gathered in every play); only what connecting needs is set (the key, no
     host-key prompts for throwaway containers, the roles path, where the SSH control sockets go).
   Every timed run must report changed=0 on every host, or the benchmark fails.
Both skip the tasks tagged molecule-notest, as the molecule scenarios do: containers share the host's kernel
(no modprobe) and have no ib0 to bring up.

What is measured, per run:
- module executions per host, counted the same way for both kinds from result events: ansible-runner's
  job_events for the tuned run, the same events written by a small callback plugin (bench_events, enabled
  for the plain run only) for the plain run. A task result counts when it is runner_on_ok, _failed or
  _unreachable and its action runs a module on the node (controller-only actions such as set_fact, debug,
  assert, include_* and meta never do); a loop counts its items that were not skipped; a skipped task
  counts nothing. Fact gathering (`setup`) counts as one.
- controller CPU-seconds: getrusage(RUSAGE_CHILDREN) of this process around the run, which covers
  `ibprov apply` or `ansible-playbook`, ansible-runner, every forked worker and every ssh client. The
  ControlPersist masters daemonize out of that tree; this process is their child subreaper
  (PR_SET_CHILD_SUBREAPER), and after every run it closes them (`ssh -O exit`) and reaps them, so their
  CPU (the session encryption) counts in the run that opened them. Every run therefore starts without SSH
  masters, as a re-apply after a pause does.
- the nodes' CPU-seconds (cpuacct of the node containers) and the whole machine's (/proc/stat: includes
  anything else running on the machine).

Run as root: .venv/bin/python bench/apply_8.py [--runs N] [--keep] [--update-docs]
(podman, the collections and the node image come from scripts/molecule.sh: run `make molecule` once first
on a fresh machine)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
NODES = [f"node{i:02d}" for i in range(1, 9)]
DOCS = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- BEGIN_BENCH_APPLY -->", "<!-- END_BENCH_APPLY -->"
SKIP = "molecule-notest"
# Module executions per host of a tuned no-op re-apply with the roles as they were before issue 10's
# changes (commit 06c02c0), counted as module_executions() does: 29 on node01 (the SM), 16 on each other
# node. The target is fewer.
BEFORE = (29 + 7 * 16) / 8
# The roles that count was taken on; roles added to the playbooks since (ib_mpi) are reported on their own.
BEFORE_ROLES = ("ib_facts", "ib_stack", "ib_ipoib", "ib_sm")


def sh(*argv: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None, check: bool = True) -> str:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr}")
    return proc.stdout


def spec_text(addresses: dict[str, str]) -> str:
    """Eight nodes on one leaf; GUIDs given in ibsim's convention (port GUID = node GUID + 1)."""
    nodes = []
    links = []
    for i, name in enumerate(NODES, start=1):
        guid = 0x0002C90300B00000 + 0x10 * i
        nodes.append(
            f"  - name: {name}\n    address: {addresses[name]}\n    groups: [{'sm' if i == 1 else 'compute'}]\n"
            f"    hcas:\n      - device: ibsim0\n        node_guid: {guid:#018x}\n"
            f"        port_guids: {{1: {guid + 1:#018x}}}\n"
        )
        links.append(f"    - leaf01:{i} <-> {name}/ibsim0:1\n")
    return (
        "version: 1\ncluster:\n  name: bench8\n  ssh_user: root\nnodes:\n"
        + "".join(nodes)
        + "switches:\n  - name: leaf01\n    role: leaf\n    ports: 36\n    node_guid: 0x0002c90300b0f000\n"
        + "fabric:\n  speed: HDR\n  width: 4x\n  links:\n"
        + "".join(links)
        + "  empty_ports: []\n"
        + "stack:\n  kind: inbox\n"
        + "subnet_manager:\n  routing_engine: minhop\n  sweep_interval: 10\n"
        + "  instances:\n    - {node: node01, priority: 14}\n"
        + "default_partition:\n  membership: full\n  ipoib: true\n"
        + "partitions:\n  - name: storage\n    pkey: 0x0010\n    ipoib: true\n    defmember: full\n"
        + "    members:\n      - group: compute\n      - {node: node01, membership: limited}\n"
        + "ipoib:\n  - partition: default\n    subnet: 10.30.0.0/24\n    pool_start: 10.30.0.11\n"
        + "  - partition: storage\n    subnet: 10.31.0.0/24\n    pool_start: 10.31.0.11\n"
    )


class Rig:
    """The containers and their network, named after this process so runs cannot collide."""

    def __init__(self, work: Path, image: str, env: dict[str, str]) -> None:
        self.work, self.image, self.env = work, image, env
        self.prefix = f"ibprov-bench{os.getpid()}"
        self.network = self.prefix
        self.containers = [f"{self.prefix}-ibsim"] + [f"{self.prefix}-{n}" for n in NODES]

    def podman(self, *argv: str, check: bool = True) -> str:
        return sh("podman", *argv, env=self.env, check=check)

    def create(self) -> dict[str, str]:
        self.podman("network", "create", self.network)
        for name in self.containers:
            self.podman(
                "run", "-d", "--name", name, "--hostname", name.removeprefix(f"{self.prefix}-"),
                "--network", self.network, "--systemd", "always", self.image, "/sbin/init",
            )  # fmt: skip
        inspected = json.loads(self.podman("container", "inspect", *self.containers))
        return {c["Name"]: next(iter(c["NetworkSettings"]["Networks"].values()))["IPAddress"] for c in inspected}

    def node_cgroups(self) -> list[Path]:
        """The CPU accounting files of the node containers' cgroups: cgroup v1 cpuacct.usage (ns) or cgroup v2
        cpu.stat; empty when neither is found (the nodes' CPU is then not reported)."""
        found = []
        for name in self.containers[1:]:
            path = self.podman("container", "inspect", "--format", "{{.State.CgroupPath}}", name).strip().lstrip("/")
            for candidate in (
                Path("/sys/fs/cgroup/cpuacct", path, "cpuacct.usage"),
                Path("/sys/fs/cgroup", path, "cpu.stat"),
            ):
                if candidate.is_file():
                    found.append(candidate)
                    break
            else:
                return []
        return found

    def destroy(self) -> None:
        self.podman("rm", "-f", "-t", "2", *self.containers, check=False)
        self.podman("network", "rm", "-f", self.network, check=False)


def prepare(rig: Rig, netfile: Path, sim_hosts: dict[str, str], env: dict[str, str]) -> None:
    """SSH key and ssh_config, then the simulated fabric: the molecule scenarios' shared prepare playbooks."""
    inventory = {
        "all": {
            "vars": {
                "ansible_connection": "ssh",
                "ansible_ssh_common_args": f"-F {rig.work}/ssh_config",
                "ansible_ssh_pipelining": True,
                "ibsim_netfile": str(netfile),
                "ibsim_port": 7070,
            },
            "children": {
                "ibsim": {"hosts": {rig.containers[0]: {}}},
                "ib_nodes": {
                    "hosts": {f"{rig.prefix}-{n}": {"ibsim_hca": sim_hosts[f"{n}/ibsim0"]} for n in NODES},
                },
            },
        }
    }
    inv = rig.work / "rig-inventory.json"
    inv.write_text(json.dumps(inventory))
    playbook = rig.work / "prepare.yml"
    playbook.write_text(
        f"- ansible.builtin.import_playbook: {REPO}/molecule/shared/connect-ssh.yml\n"
        f"- ansible.builtin.import_playbook: {REPO}/molecule/shared/ibsim.yml\n"
    )
    penv = dict(env, MOLECULE_EPHEMERAL_DIRECTORY=str(rig.work), MOLECULE_PROJECT_DIRECTORY=str(REPO))
    penv["ANSIBLE_COLLECTIONS_PATH"] = str(REPO / ".venv" / "ansible-collections")
    sh(VENV_BIN / "ansible-playbook", "-i", inv, playbook, env=penv, cwd=rig.work)


def recap(text: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP of ansible-playbook's default output: host -> {ok, changed, unreachable, failed, ...}."""
    hosts = {}
    for m in re.finditer(r"^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$", text, re.MULTILINE):
        hosts[m.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
    return hosts


# --- module executions ------------------------------------------------------------------------------------

# Actions that never run a module on the node: the action plugin does all its work on the controller.
CONTROLLER_ONLY = {
    "add_host", "assert", "debug", "fail", "group_by", "import_role", "import_tasks", "include", "include_role",
    "include_tasks", "include_vars", "meta", "pause", "set_fact", "set_stats", "validate_argument_spec",
}  # fmt: skip
EXECUTED = ("runner_on_ok", "runner_on_failed", "runner_on_unreachable")

# The plain run's events: the fields of ansible-runner's job_events that the count reads, written by this
# callback (enabled for the plain run through ANSIBLE_CALLBACKS_ENABLED), so both kinds are counted by the
# same function.
EVENTS_CALLBACK = '''"""bench/apply_8.py: result events in ansible-runner's job_events shape, one JSON object a line."""
import json
import os

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_events"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._events = []

    def _add(self, event, result):
        res = getattr(result, "result", None)
        res = result._result if res is None else res
        task = getattr(result, "task", None) or result._task
        host = getattr(result, "host", None) or result._host
        kept = {k: res[k] for k in ("changed", "failed", "skipped") if k in res}
        if isinstance(res.get("results"), list):
            kept["results"] = [{"skipped": bool(r.get("skipped"))} for r in res["results"] if isinstance(r, dict)]
        role = task._role.get_name() if task._role else ""
        data = {"host": host.get_name(), "task": task.get_name(), "task_action": task.action, "role": role, "res": kept}
        self._events.append({"event": event, "event_data": data})

    def v2_runner_on_ok(self, result):
        self._add("runner_on_ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._add("runner_on_failed", result)

    def v2_runner_on_skipped(self, result):
        self._add("runner_on_skipped", result)

    def v2_runner_on_unreachable(self, result):
        self._add("runner_on_unreachable", result)

    def v2_playbook_on_stats(self, stats):
        with open(os.environ["BENCH_EVENTS_FILE"], "w") as out:
            out.writelines(json.dumps(e) + "\\n" for e in self._events)
'''


def runner_events(artifacts: Path) -> list[dict[str, Any]]:
    """ansible-runner's job_events of one run, in the order they happened."""
    files = sorted((artifacts / "job_events").glob("*.json"), key=lambda p: int(p.name.split("-", 1)[0]))
    return [json.loads(p.read_text()) for p in files]


def module_executions(events: list[dict[str, Any]], by: str = "task_action") -> dict[str, Counter[str]]:
    """host -> Counter(action -> module executions), from result events: ok, failed and unreachable results of
    actions that run a module on the node; a loop counts its items that were not skipped; skipped tasks count 0.
    With by="role": host -> Counter(role -> module executions) (fact gathering: role "")."""
    counts: dict[str, Counter[str]] = {}
    for event in events:
        data = event.get("event_data") or {}
        host, action = data.get("host"), str(data.get("task_action") or "").rsplit(".", 1)[-1]
        if event.get("event") not in EXECUTED or not host or action in CONTROLLER_ONLY:
            continue
        res = data.get("res") or {}
        results = res.get("results")
        n = sum(1 for r in results if not r.get("skipped")) if isinstance(results, list) else 1
        key = action if by == "task_action" else str(data.get("role") or "")
        counts.setdefault(host, Counter())[key] += n
    return counts


# --- CPU ----------------------------------------------------------------------------------------------------


def become_subreaper() -> None:
    """Orphaned descendants (the daemonized ssh ControlPersist masters) become this process's children, so
    reaping them adds their CPU to RUSAGE_CHILDREN."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def close_masters(root: Path, timeout: float = 15.0) -> int:
    """Close the SSH control masters whose sockets are under ``root`` and reap them (and any other orphan
    this process adopted); returns how many were closed."""
    sockets = [p for p in root.rglob("*") if p.is_socket()]
    for sock in sockets:
        subprocess.run(["ssh", "-O", "exit", "-o", f"ControlPath={sock}", "bench"], capture_output=True)
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # no children left
            return len(sockets)
        if pid == 0:
            if time.monotonic() > deadline:
                print(f"warning: child processes still running after closing {len(sockets)} SSH masters")
                return len(sockets)
            time.sleep(0.02)


def cpu_seconds(node_cgroups: list[Path]) -> tuple[float, float, float]:
    """(CPU seconds of this process's finished children: the controller side; CPU seconds of the node
    containers; CPU seconds the whole machine spent busy: controller, containers, ibsim, anything else)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    nodes = 0.0
    for path in node_cgroups:
        text = path.read_text()
        nodes += int(text) / 1e9 if path.name == "cpuacct.usage" else int(text.split()[1]) / 1e6  # usage_usec
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return children.ru_utime + children.ru_stime, nodes, (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def failures(log: str) -> str:
    """The failed tasks and the recap of an ansible-playbook log."""
    keep = [ln for ln in log.splitlines() if ln.startswith(("fatal:", "failed:", "TASK [")) or " : ok=" in ln]
    out = [
        ln
        for i, ln in enumerate(keep)
        if not ln.startswith("TASK [") or (i + 1 < len(keep) and not keep[i + 1].startswith("TASK ["))
    ]
    return "\n".join(out[-60:]) + "\n"


@dataclass
class Run:
    wall: float
    controller: float  # CPU-seconds of the controller side
    nodes: float  # CPU-seconds of the eight node containers
    machine: float  # CPU-seconds of the whole machine
    executions: dict[str, Counter[str]]  # host -> action -> module executions
    by_role: dict[str, Counter[str]]  # host -> role -> module executions


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def per_host(executions: dict[str, Counter[str]]) -> dict[str, int]:
    return {n: sum(executions.get(n, Counter()).values()) for n in NODES}


def summary(kind: str, runs: list[Run]) -> list[str]:
    """Report lines for one kind of run: wall time, CPU and module executions."""
    wall = ", ".join(f"{r.wall:.1f}" for r in runs)
    cpu = ", ".join(f"{r.controller:.1f}" for r in runs)
    counts = per_host(runs[-1].executions)
    others = sorted({counts[n] for n in NODES[1:]})
    compute = Counter[str]()
    for node in NODES[1:]:
        compute.update(runs[-1].executions.get(node, Counter()))
    actions = ", ".join(f"{a} {c / (len(NODES) - 1):g}" for a, c in compute.most_common())
    roles = Counter[str]()
    for node in NODES:
        roles.update(runs[-1].by_role.get(node, Counter()))
    by_role = ", ".join(f"{r or 'fact gathering'} {c / len(NODES):g}" for r, c in sorted(roles.items()))
    controller = median([r.controller for r in runs])
    return [
        f"{kind}: wall median {median([r.wall for r in runs]):.1f} s ({wall})",
        f"  controller CPU median {controller:.1f} s ({cpu}) = {controller / len(NODES):.2f} s per host; "
        + (f"nodes {median([r.nodes for r in runs]) / len(NODES):.2f} s per host; " if runs[0].nodes else "")
        + f"whole machine {median([r.machine for r in runs]):.1f} s",
        f"  module executions per host: {sum(counts.values()) / len(NODES):.1f} "
        f"(node01, the SM: {counts['node01']}; the others: {'/'.join(map(str, others))})",
        f"  on a compute node: {actions}",
        f"  per host by role: {by_role}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed no-op runs of each kind (default 3)")
    parser.add_argument("--keep", action="store_true", help="leave the rig running (prints its names)")
    parser.add_argument("--update-docs", action="store_true", help="write the result into docs/benchmarks.md")
    args = parser.parse_args()
    if shutil.which("podman") is None:
        raise SystemExit("podman is missing: run `make molecule` (scripts/molecule.sh installs it) first")

    sys.path.insert(0, str(REPO))
    from ibprov.clusterspec import load_spec
    from ibprov.twin.bringup import write_twin

    env = dict(os.environ, CONTAINERS_CONF=str(REPO / "images" / "containers.conf"), ANSIBLE_NOCOLOR="1")
    image = sh(REPO / "images" / "ensure-images.sh", env=env).strip().splitlines()[-1]
    work = Path(tempfile.mkdtemp(prefix="ibprov-bench-apply-"))
    rig = Rig(work, image, env)
    t0 = time.perf_counter()
    try:
        addresses = rig.create()
        spec = work / "bench8.yaml"
        spec.write_text(spec_text({n: addresses[f"{rig.prefix}-{n}"] for n in NODES}))
        netfile, _configs, twin = write_twin(load_spec(spec), work / "twin")
        sim_hosts = twin.sim_hosts
        prepare(rig, netfile, sim_hosts, env)
        print(f"rig up in {time.perf_counter() - t0:.0f} s: {', '.join(rig.containers)} on {rig.network}")
        node_cgroups = rig.node_cgroups()
        become_subreaper()

        # connecting, not tuning: the rig's key, throwaway host keys (both runs)
        key = work / "id_ed25519"
        conn = {
            "ANSIBLE_PRIVATE_KEY_FILE": str(key),
            "ANSIBLE_HOST_KEY_CHECKING": "False",
            "ANSIBLE_SSH_COMMON_ARGS": "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        }
        run_dir = work / "ibprov-run"
        plugins = work / "callback_plugins"
        plugins.mkdir()
        (plugins / "bench_events.py").write_text(EVENTS_CALLBACK)
        events_file = work / "plain-events.jsonl"

        def tuned() -> tuple[float, dict[str, dict[str, int]], list[dict[str, Any]]]:
            start = time.perf_counter()
            proc = subprocess.run(
                [VENV_BIN / "ibprov", "apply", spec, "--run-dir", run_dir, "--skip-tags", SKIP],
                capture_output=True, text=True, env=dict(env, **conn),
            )  # fmt: skip
            took = time.perf_counter() - start
            found = re.findall(r"^artifacts: (.+)$", proc.stdout, re.MULTILINE)
            log = (Path(found[-1]) / "stdout").read_text() if found else proc.stdout
            if proc.returncode != 0:
                raise SystemExit(f"ibprov apply failed ({proc.returncode}):\n{failures(log)}{proc.stderr}")
            return took, recap(log), runner_events(Path(found[-1]))

        def plain() -> tuple[float, dict[str, dict[str, int]], list[dict[str, Any]]]:
            start = time.perf_counter()
            penv = {k: v for k, v in env.items() if not k.startswith("ANSIBLE_")}
            penv.update(conn, ANSIBLE_ROLES_PATH=str(REPO / "roles"), ANSIBLE_NOCOLOR="1")
            # where the control sockets go (Ansible's default: ~/.ansible/cp), and the events for the count
            penv.update(
                ANSIBLE_SSH_CONTROL_PATH_DIR=str(work / "cp-plain"),
                ANSIBLE_CALLBACK_PLUGINS=str(plugins),
                ANSIBLE_CALLBACKS_ENABLED="bench_events",
                BENCH_EVENTS_FILE=str(events_file),
            )
            inventory = run_dir / "rendered" / "inventory"
            proc = subprocess.run(
                [VENV_BIN / "ansible-playbook", "-i", inventory, "--skip-tags", SKIP, REPO / "playbooks" / "site.yml"],
                capture_output=True, text=True, env=penv, cwd=work,
            )  # fmt: skip
            took = time.perf_counter() - start
            if proc.returncode != 0:
                raise SystemExit(f"ansible-playbook failed ({proc.returncode}):\n{failures(proc.stdout)}{proc.stderr}")
            events = [json.loads(line) for line in events_file.read_text().splitlines()]
            return took, recap(proc.stdout), events

        t1 = time.perf_counter()
        tuned()
        converge = time.perf_counter() - t1
        close_masters(work)
        _took, stats, _events = tuned()
        close_masters(work)
        print(f"converge {converge:.0f} s; second apply: {sum(h['changed'] for h in stats.values())} changed")
        runs: dict[str, list[Run]] = {"tuned": [], "plain": []}
        # other work on the machine stretches the wall times (CPU-seconds much less): the load shows it
        load_before = f"{os.getloadavg()[0]:.2f}"
        for i in range(args.runs):
            for kind, func in (("plain", plain), ("tuned", tuned)):
                before = cpu_seconds(node_cgroups)
                took, stats, events = func()
                closed = close_masters(work)
                after = cpu_seconds(node_cgroups)
                changed = {h: s["changed"] for h, s in stats.items() if s.get("changed")}
                if changed or not set(NODES) <= set(stats):  # (+ localhost: the inventory check)
                    raise SystemExit(f"{kind} run {i + 1} was not a no-op on all {len(NODES)} nodes: {stats}")
                executions = module_executions(events)
                controller, nodes, machine = (a - b for a, b in zip(after, before, strict=True))
                run = Run(took, controller, nodes, machine, executions, module_executions(events, by="role"))
                runs[kind].append(run)
                print(
                    f"run {i + 1} {kind}: {took:.1f} s, controller CPU {run.controller:.1f} s, module executions "
                    f"per host {sum(per_host(executions).values()) / len(NODES):.1f} ({closed} SSH masters closed)"
                )
    finally:
        if args.keep:
            print(f"kept: containers {' '.join(rig.containers)}, network {rig.network}, files {work}")
        else:
            rig.destroy()
            shutil.rmtree(work, ignore_errors=True)

    cpu = sh("sh", "-c", "lscpu | sed -n 's/^Model name: *//p'").strip()
    lines = [
        f"machine: {platform.node()}, {cpu}, {os.cpu_count()} cores; Python {platform.python_version()}; "
        f"{time.strftime('%Y-%m-%d')}; load average {load_before} before the timed runs, "
        f"{os.getloadavg()[0]:.2f} after",
        f"rig: {len(NODES)} node containers + ibsim, SSH; converge {converge:.0f} s; "
        f"{args.runs} no-op runs of each kind, alternating",
    ]
    for kind in ("plain", "tuned"):
        lines += summary(kind, runs[kind])
    cpu_ratio = median([r.controller for r in runs["tuned"]]) / median([r.controller for r in runs["plain"]])
    tuned_count = sum(per_host(runs["tuned"][-1].executions).values()) / len(NODES)
    tuned_roles = Counter[str]()
    for node in NODES:
        tuned_roles.update(runs["tuned"][-1].by_role.get(node, Counter()))
    same_roles = sum(tuned_roles[r] for r in BEFORE_ROLES) / len(NODES)
    added = sorted(r for r in tuned_roles if r and r not in BEFORE_ROLES)
    verdict = "met" if same_roles < BEFORE else "NOT met"
    split = f", {same_roles:.1f} in {', '.join(BEFORE_ROLES)} (not counting {', '.join(added)}: added since)"
    split = split if added else ""
    wall_ratio = median([r.wall for r in runs["tuned"]]) / median([r.wall for r in runs["plain"]])
    lines += [
        f"controller CPU per host, tuned / plain: {cpu_ratio:.2f} "
        f"(target <= 0.5: {'met' if cpu_ratio <= 0.5 else 'NOT met'})",
        f"module executions per host, tuned: {tuned_count:.1f}"
        + split
        + f"; the same roles before issue 10: {BEFORE:.1f} (target fewer: {verdict})",
        f"wall time, tuned / plain: {wall_ratio:.2f} (no target: the nodes share the controller's cores)",
    ]
    print("\n".join(lines))
    if args.update_docs:
        sys.path.insert(0, str(REPO / "scripts"))
        from docblock import replace_block

        DOCS.write_text(replace_block(DOCS.read_text(), BEGIN, END, "```\n" + "\n".join(lines) + "\n```\n", where=DOCS))
        print(f"updated {DOCS}")


if __name__ == "__main__":
    main()
