"""``ibprov render``: the spec as every file the roles and the subnet manager need.

Output (deterministic, byte-identical on a re-run)::

    inventory/hosts.yml (hosts, groups, host variables), inventory/group_vars/*.yml   Ansible
    opensm/<sm host>/opensm.<device>-<port>.conf, opensm/partitions.conf,
    opensm/qos-policy.conf, opensm/node-name-map, opensm/{root,cn}-guids.conf    OpenSM
    fabric/topology.ibnd (planned fabric, ibnetdiscover format), fabric/twin.net (ibsim),
    fabric/twin-limits.json (what the twin runs instead of the plan, and what it cannot show)
    slurm/topology.conf (or .yaml): what ib_slurm_topology writes on the Slurm controller, for review
    (with a scheduler section that manages the topology; its variables in group_vars/slurm_controller.yml)
    verify/cluster.yaml (+ cluster.lock.yaml): the spec the verify timer's host reads (with
    monitoring.verify_timer; its variables in group_vars/ib_verify_timer.yml)
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ibprov.clusterspec import LoadedSpec
from ibprov.errors import SpecError
from ibprov.identity.guids import GuidBook
from ibprov.render import yamltext
from ibprov.render.backend import backend_files
from ibprov.render.healthcheck import HealthcheckVars, healthcheck_vars
from ibprov.render.inventory import hosts, ib_node_names, ipoib_vars, mpi_vars, stack_vars
from ibprov.render.parallel import MIN_LINKS, Pending
from ibprov.render.slurm import slurm_vars, topology_text
from ibprov.render.sm import SmData, build_sm_data
from ibprov.render.templates import RENDER_HEADER, render_role_template
from ibprov.render.topology_file import build_topology_file
from ibprov.render.verify_timer import verify_timer_files, verify_timer_vars
from ibprov.twinnet.limits import LIMITS_FILE, TwinLimits
from ibprov.twinnet.netfile import build_twin

MANIFEST = ".ibprov-render"
SM_TEMPLATES = "etc/opensm"


@dataclass
class RenderOutput:
    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    synthetic: list[str] = field(default_factory=list)
    # defer_sm: why the subnet manager configuration waits (port GUIDs not known yet); empty: it does not
    sm_waits_for: list[str] = field(default_factory=list)


def _yaml(data: dict[str, Any], header: str) -> str:
    return f"# {header}\n---\n{yamltext.dump(data)}"


def sm_file_variables(sm: SmData, config_dir: str, header: str) -> dict[str, Any]:
    """Variables for the ib_sm templates outside Ansible (no secrets: those are set at apply time)."""
    return {
        **sm.common,
        "ib_sm_config_dir": config_dir,
        "ansible_managed": header,
        "ib_sm_sm_key": None,
        "ib_sm_m_key": None,
    }


def render_sm_files(sm: SmData, config_dir: str, header: str) -> dict[str, str]:
    """opensm.conf per instance plus the shared files, rendered by the ib_sm role's own templates."""
    variables = sm_file_variables(sm, config_dir, header)
    files: dict[str, str] = {}
    for host, instances in sorted(sm.instances.items()):
        for inst in instances:
            if "port_guid" in inst:
                files[f"{host}/opensm.{inst['device']}-{inst['port']}.conf"] = render_role_template(
                    "ib_sm", f"{SM_TEMPLATES}/opensm.conf.j2", {**variables, "ib_sm_instance": inst}
                )
    for name in ("partitions.conf", "qos-policy.conf", "node-name-map"):
        files[name] = render_role_template("ib_sm", f"{SM_TEMPLATES}/{name}.j2", variables)
    for name, key in (("root-guids.conf", "ib_sm_root_guids"), ("cn-guids.conf", "ib_sm_cn_guids")):
        if sm.common[key]:
            files[name] = render_role_template(
                "ib_sm", f"{SM_TEMPLATES}/guid-list.j2", {**variables, "ib_sm_guid_list": sm.common[key]}
            )
    return files


def render_files(loaded: LoadedSpec, *, synthetic_guids: bool = False, defer_sm: bool = False) -> RenderOutput:
    """Everything render writes, in memory. Raises SpecError when a partition member's GUID is unknown; with
    ``defer_sm`` (a new rack, before `ibprov discover` can read GUIDs) the subnet manager's files are left out
    instead and ``sm_waits_for`` says why."""
    header = RENDER_HEADER.format(spec=loaded.path.name if loaded.path else "cluster.yaml")
    book = GuidBook.for_spec(loaded, allow_synthetic=synthetic_guids)
    book.resolve_devices()  # once, for both: the SM data and the fabric files ask for every GUID
    # the two largest files, each in a child process on a large fabric, while this one renders the rest
    large = len(loaded.topology.links) >= MIN_LINKS
    topology = Pending(lambda: build_topology_file(loaded, book), fork=large)
    twin = Pending(lambda: _twin_files(loaded, book), fork=large)
    try:
        out = _render_rest(loaded, book, header, defer_sm)
        topology_text = topology.result()
        net, limits, twin_synthetic = twin.result()
    finally:
        topology.cancel()
        twin.cancel()
    f = out.files
    f["fabric/topology.ibnd"] = topology_text
    f["fabric/twin.net"] = net
    f[f"fabric/{LIMITS_FILE}"] = limits.to_json()
    out.notes += limits.notes()
    out.synthetic = sorted(twin_synthetic | book.synthetic)
    if twin_synthetic and not synthetic_guids:
        out.notes.append("the twin stands in synthetic GUIDs; render the twin's own OpenSM files with `ibprov twin`")
    if out.synthetic:
        out.notes.append(
            f"synthetic GUIDs for {len(out.synthetic)} devices (twin"
            f"{' and OpenSM files' if synthetic_guids else ' only'}): {', '.join(out.synthetic[:5])}"
            f"{' ...' if len(out.synthetic) > 5 else ''}"
        )
    return out


def _twin_files(loaded: LoadedSpec, book: GuidBook) -> tuple[str, TwinLimits, set[str]]:
    """The twin's net file and limits, and the devices it stands synthetic GUIDs in for. ``book`` has
    resolved every device (:meth:`GuidBook.resolve_devices`)."""
    twin_book = book.for_twin()
    twin = build_twin(loaded, twin_book)
    return twin.text, twin.limits, twin_book.synthetic


def _render_rest(loaded: LoadedSpec, book: GuidBook, header: str, defer_sm: bool) -> RenderOutput:
    """The inventory, the role variables and the OpenSM files."""
    spec = loaded.spec
    sm = build_sm_data(loaded, book)
    waits = defer_sm and bool(sm.problems) and all("no port GUID for" in p.message for p in sm.problems)
    if sm.problems and not waits:
        raise SpecError(sm.problems)
    out = RenderOutput(notes=list(sm.notes), sm_waits_for=[str(p) for p in sm.problems] if waits else [])
    f = out.files
    host_vars: dict[str, dict[str, Any]] = {}
    for host, instances in sm.instances.items():
        host_vars.setdefault(host, {}).update({"ib_sm_enabled": True, "ib_sm_instances": instances})
    for host, ifaces in ipoib_vars(loaded).items():
        host_vars.setdefault(host, {})["ib_ipoib_interfaces"] = ifaces
    checks = HealthcheckVars()
    if sm.partitions is not None:
        checks = healthcheck_vars(loaded, book, sm.partitions, ib_node_names(loaded))
        out.notes += checks.notes
        for host, variables in checks.hosts.items():
            host_vars.setdefault(host, {}).update(variables)
    f["inventory/hosts.yml"] = _yaml(hosts(loaded, set(sm.instances), host_vars), header)
    f["inventory/group_vars/all.yml"] = _yaml(
        {"ibprov_cluster": spec.cluster.name, "ansible_user": spec.cluster.ssh_user}, header
    )
    f["inventory/group_vars/ib_nodes.yml"] = _yaml({**stack_vars(loaded), **mpi_vars(loaded), **checks.group}, header)
    backend = spec.subnet_manager.backend
    if backend == "opensm":
        f["inventory/group_vars/ib_sm.yml"] = _yaml(sm.common, header)
    if spec.scheduler is not None and spec.scheduler.manage_topology:
        slurm = slurm_vars(loaded)
        f["inventory/group_vars/slurm_controller.yml"] = _yaml(slurm, header)
        name, text = topology_text(loaded, slurm)
        f[f"slurm/{name}"] = text
    timer = verify_timer_vars(loaded)
    if timer is not None:
        f["inventory/group_vars/ib_verify_timer.yml"] = _yaml(timer, header)
        f.update(verify_timer_files(loaded))
    if out.sm_waits_for:  # never a partitions.conf (or a switch's or UFM's partitions) without some members
        return out
    if backend == "opensm":
        for name, text in render_sm_files(sm, "/etc/opensm", header).items():
            f[f"opensm/{name}"] = text
    else:
        f.update(backend_files(loaded, book, header))
    return out


def diff_tree(out_dir: Path, files: dict[str, str]) -> list[str]:
    """Unified diffs between ``files`` and what is in ``out_dir`` (missing and stale files included)."""
    diffs: list[str] = []
    previous = _manifest(out_dir)
    for rel in sorted(set(files) | previous):
        path = out_dir / rel
        old = path.read_text() if path.is_file() else ""
        new = files.get(rel, "")
        if old != new or (rel in files) != path.is_file():
            diffs.append(
                "".join(
                    difflib.unified_diff(
                        old.splitlines(keepends=True),
                        new.splitlines(keepends=True),
                        fromfile=f"a/{rel}",
                        tofile=f"b/{rel}",
                    )
                )
                or f"--- a/{rel}\n+++ b/{rel}\n"
            )
    return diffs


def write_tree(out_dir: Path, files: dict[str, str]) -> list[str]:
    """Write ``files`` under ``out_dir`` (atomically, only what changed); remove files a previous render
    wrote that are no longer produced. Returns the relative paths that changed."""
    previous = _manifest(out_dir)
    for parent in sorted({(out_dir / rel).parent for rel in files}):
        parent.mkdir(parents=True, exist_ok=True)
    changed = [rel for rel, text in sorted(files.items()) if _sync(out_dir / rel, text, rel in previous)]
    for rel in sorted(previous - set(files)):
        (out_dir / rel).unlink(missing_ok=True)
        changed.append(rel)
    manifest = "".join(f"{rel}\n" for rel in sorted(files))
    (out_dir / MANIFEST).write_text(manifest)
    return changed


def _sync(path: Path, text: str, rendered_before: bool) -> bool:
    """Make ``path`` hold ``text``; True if it had to be written. Only files a previous render wrote
    can be unchanged, so nothing else is read; those are replaced atomically (never half a file)."""
    if not rendered_before:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return True
    if path.is_file() and path.read_text() == text:
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return True


def _manifest(out_dir: Path) -> set[str]:
    path = out_dir / MANIFEST
    if not path.is_file():
        return set()
    return {line for line in path.read_text().splitlines() if line and ".." not in line}
