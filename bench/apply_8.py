"""Benchmark: a no-op re-apply on an 8-node container rig, ibprov's tuned settings against plain ansible-playbook.

The rig: nine podman containers from the local Debian 12 node image on a network of their own, one running
ibsim with the planned fabric (the twin's net file: one leaf switch, eight HCAs), eight nodes each attached
to its own simulated HCA (molecule/shared/ibsim.yml), reached over real SSH. The spec names the nodes by their
container addresses; node01 runs OpenSM.

1. `ibprov apply` converges the rig once (packages, OpenSM, IPoIB files), and once more to prove it is a no-op.
2. Then, alternating, N times each:
   - tuned: `ibprov apply SPEC` (ansible-runner, pipelining, ControlPersist, 50 forks, smart gathering
     with the fact cache);
   - plain: `ansible-playbook -i <the same rendered inventory> playbooks/site.yml` with Ansible's defaults
     (5 forks, no pipelining, facts gathered in every play); only what connecting needs is set (the key, no
     host-key prompts for throwaway containers, the roles path).
   Every timed run must report changed=0 on every host, or the benchmark fails.
Both skip the tasks tagged molecule-notest, as the molecule scenarios do: containers share the host's kernel
(no modprobe) and have no ib0 to bring up.

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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
NODES = [f"node{i:02d}" for i in range(1, 9)]
DOCS = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- BEGIN_BENCH_APPLY -->", "<!-- END_BENCH_APPLY -->"
SKIP = "molecule-notest"


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


def cpu_seconds() -> tuple[float, float]:
    """(CPU seconds of this process's finished children: the controller side, ansible-playbook and ssh;
    CPU seconds the whole machine spent busy: controller, containers, ibsim)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return children.ru_utime + children.ru_stime, (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def failures(log: str) -> str:
    """The failed tasks and the recap of an ansible-playbook log."""
    keep = [ln for ln in log.splitlines() if ln.startswith(("fatal:", "failed:", "TASK [")) or " : ok=" in ln]
    out = [
        ln
        for i, ln in enumerate(keep)
        if not ln.startswith("TASK [") or (i + 1 < len(keep) and not keep[i + 1].startswith("TASK ["))
    ]
    return "\n".join(out[-60:]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed no-op runs of each kind (default 3)")
    parser.add_argument("--keep", action="store_true", help="leave the rig running (prints its names)")
    parser.add_argument("--update-docs", action="store_true", help="write the result into docs/benchmarks.md")
    args = parser.parse_args()
    if shutil.which("podman") is None:
        raise SystemExit("podman is missing: run `make molecule` (scripts/molecule.sh installs it) first")

    sys.path.insert(0, str(REPO))
    from ibprov.spec import load_spec
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
        netfile, _configs, sim_hosts = write_twin(load_spec(spec), work / "twin")
        prepare(rig, netfile, sim_hosts, env)
        print(f"rig up in {time.perf_counter() - t0:.0f} s: {', '.join(rig.containers)} on {rig.network}")

        # connecting, not tuning: the rig's key, throwaway host keys (both runs)
        key = work / "id_ed25519"
        conn = {
            "ANSIBLE_PRIVATE_KEY_FILE": str(key),
            "ANSIBLE_HOST_KEY_CHECKING": "False",
            "ANSIBLE_SSH_COMMON_ARGS": "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        }
        run_dir = work / "ibprov-run"

        def tuned() -> tuple[float, dict[str, dict[str, int]]]:
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
            return took, recap(log)

        def plain() -> tuple[float, dict[str, dict[str, int]]]:
            start = time.perf_counter()
            penv = {k: v for k, v in env.items() if not k.startswith("ANSIBLE_")}
            penv.update(conn, ANSIBLE_ROLES_PATH=str(REPO / "roles"), ANSIBLE_NOCOLOR="1")
            inventory = run_dir / "rendered" / "inventory"
            proc = subprocess.run(
                [VENV_BIN / "ansible-playbook", "-i", inventory, "--skip-tags", SKIP, REPO / "playbooks" / "site.yml"],
                capture_output=True, text=True, env=penv, cwd=work,
            )  # fmt: skip
            took = time.perf_counter() - start
            if proc.returncode != 0:
                raise SystemExit(f"ansible-playbook failed ({proc.returncode}):\n{failures(proc.stdout)}{proc.stderr}")
            return took, recap(proc.stdout)

        t1 = time.perf_counter()
        tuned()
        converge = time.perf_counter() - t1
        _took, stats = tuned()
        print(f"converge {converge:.0f} s; second apply: {sum(h['changed'] for h in stats.values())} changed")
        times: dict[str, list[float]] = {"tuned": [], "plain": []}
        cpu_use: dict[str, list[tuple[float, float]]] = {"tuned": [], "plain": []}
        for i in range(args.runs):
            for kind, func in (("plain", plain), ("tuned", tuned)):
                before = cpu_seconds()
                took, stats = func()
                after = cpu_seconds()
                cpu_use[kind].append((after[0] - before[0], after[1] - before[1]))
                changed = {h: s["changed"] for h, s in stats.items() if s.get("changed")}
                if changed or not set(NODES) <= set(stats):  # (+ localhost: the inventory check)
                    raise SystemExit(f"{kind} run {i + 1} was not a no-op on all {len(NODES)} nodes: {stats}")
                times[kind].append(took)
                print(f"run {i + 1} {kind}: {took:.1f} s")
    finally:
        if args.keep:
            print(f"kept: containers {' '.join(rig.containers)}, network {rig.network}, files {work}")
        else:
            rig.destroy()
            shutil.rmtree(work, ignore_errors=True)

    cpu = sh("sh", "-c", "lscpu | sed -n 's/^Model name: *//p'").strip()
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    lines = [
        f"machine: {platform.node()}, {cpu}, {os.cpu_count()} cores; Python {platform.python_version()}; "
        f"{time.strftime('%Y-%m-%d')}",
        f"rig: {len(NODES)} node containers + ibsim, SSH; converge {converge:.0f} s",
    ]
    for kind in ("plain", "tuned"):
        values = ", ".join(f"{t:.1f}" for t in times[kind])
        controller = sorted(c for c, _m in cpu_use[kind])[len(cpu_use[kind]) // 2]
        machine = sorted(m for _c, m in cpu_use[kind])[len(cpu_use[kind]) // 2]
        lines.append(
            f"{kind:5s} no-op re-apply: median {med[kind]:5.1f} s ({values}); CPU: controller {controller:.1f} s, "
            f"whole machine {machine:.1f} s of {med[kind] * (os.cpu_count() or 1):.0f}"
        )
    lines.append(f"ratio tuned / plain: {med['tuned'] / med['plain']:.2f} (target <= 0.5)")
    print("\n".join(lines))
    if args.update_docs:
        sys.path.insert(0, str(REPO / "scripts"))
        from docblock import replace_block

        DOCS.write_text(replace_block(DOCS.read_text(), BEGIN, END, "```\n" + "\n".join(lines) + "\n```\n", where=DOCS))
        print(f"updated {DOCS}")


if __name__ == "__main__":
    main()
