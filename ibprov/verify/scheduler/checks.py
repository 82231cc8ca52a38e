"""The checks of ``verify --scheduler``: pure functions of (plan, Slurm's view) -> findings.

Objects are the controller, Slurm nodes (the spec's node names: Slurm's NodeName is the spec's name), Slurm
switches (topology/tree) and blocks (topology/block): the names of the rendered topology file. A controller
that could not be asked is one ``scheduler.controller`` finding; every other check skips (it cannot judge what
it did not see).
"""

from __future__ import annotations

from collections.abc import Sequence

from ibprov.hostlist import compress
from ibprov.probes.slurm import REASON_PREFIX, SlurmView
from ibprov.report.model import Finding, Severity
from ibprov.verify.judge import Check, CheckFamily
from ibprov.verify.scheduler.plan import SchedulerPlan

__all__ = ["FAMILIES", "PREFIX", "under"]

PREFIX = REASON_PREFIX


def under(view: SlurmView) -> dict[str, list[str]]:
    """Node -> the leaf switches (level 0) Slurm lists it under, or under topology/block the base blocks it is
    in. Slurm prints every switch above a leaf with the nodes of all the leaves below it (and each aggregated
    block with the nodes of its base blocks), so only level 0 (a base block) says where a node is."""
    out: dict[str, list[str]] = {}
    for switch in view.switches.values():
        if switch.level != 0:
            continue
        for node in switch.nodes:
            out.setdefault(node, []).append(switch.name)
    for block in view.blocks.values():
        if block.aggregated:
            continue
        for node in block.nodes:
            out.setdefault(node, []).append(block.name)
    return out


def _asked(view: SlurmView) -> bool:
    return view.error is None


def _controller(plan: SchedulerPlan, _view: SlurmView) -> Sequence[str]:
    return [plan.controller]


def _asked_controller(plan: SchedulerPlan, view: SlurmView) -> Sequence[str]:
    return [plan.controller] if _asked(view) else []


def _nodes(plan: SchedulerPlan, view: SlurmView) -> Sequence[str]:
    return list(plan.nodes) if _asked(view) else []


def _switches(plan: SchedulerPlan, view: SlurmView) -> Sequence[str]:
    if not _asked(view) or plan.plugin != "topology/tree":
        return []
    return sorted({*plan.switches, *view.switches})


def _blocks(plan: SchedulerPlan, view: SlurmView) -> Sequence[str]:
    if not _asked(view) or plan.plugin != "topology/block":
        return []
    return sorted({*plan.blocks, *(b.name for b in view.blocks.values() if not b.aggregated)})


def _unplanned(_plan: SchedulerPlan, view: SlurmView) -> Sequence[str]:
    return sorted(view.nodes) if _asked(view) else []


CONTROLLER = Check(
    "scheduler.controller",
    "Slurm's controller answers (sinfo, scontrol) on the planned host",
    Severity.ERROR,
    "check slurmctld on the controller (systemctl status slurmctld; scontrol ping) and that the spec's "
    "scheduler.controller is the host it runs on",
    _controller,
    object_kind="the controller host",
)
PLUGIN = Check(
    "scheduler.plugin",
    "Slurm runs the planned topology plugin",
    Severity.ERROR,
    "set TopologyPlugin in slurm.conf (the site's Slurm role owns it) and restart slurmctld",
    _asked_controller,
    object_kind="the controller host",
)
KNOWN = Check(
    "scheduler.node_known",
    "Every planned Slurm node is known to Slurm",
    Severity.ERROR,
    "add the node to slurm.conf (NodeName=...) and `scontrol reconfigure`; or leave it out of scheduler.group",
    _nodes,
    object_kind="the Slurm node (the spec's node name)",
)
LEAF = Check(
    "scheduler.node_leaf",
    "Every planned node sits under its planned leaf switch (topology/tree) or in its planned block "
    "(topology/block) in Slurm's topology",
    Severity.ERROR,
    "`ibprov apply` installs the planned topology file (role ib_slurm_topology) and runs scontrol reconfigure; "
    "a topology file written by hand: fix its Nodes= lines",
    _nodes,
    object_kind="the Slurm node",
)
SWITCHES = Check(
    "scheduler.switches",
    "Slurm's switches are the planned ones, each with its planned nodes and switches",
    Severity.ERROR,
    "`ibprov apply` installs the planned topology file and runs scontrol reconfigure",
    _switches,
    object_kind="the Slurm switch (a name of the topology file)",
)
BLOCKS = Check(
    "scheduler.blocks",
    "Slurm's blocks are the planned ones, each with its planned nodes and the planned base block size "
    "(topology/block, Slurm >= 23.11)",
    Severity.ERROR,
    "`ibprov apply` installs the planned topology file (BlockName= lines, BlockSizes=) and runs scontrol reconfigure",
    _blocks,
    object_kind="the Slurm block (a name of the topology file)",
)
UNPLANNED = Check(
    "scheduler.unplanned",
    "Slurm knows no node the spec does not plan",
    Severity.WARNING,
    "add the node to the spec (and scheduler.group), or remove it from slurm.conf",
    _unplanned,
    object_kind="the Slurm node",
)
STATE = Check(
    "scheduler.node_state",
    "Every planned Slurm node is in service (not down, not drained by someone else)",
    Severity.WARNING,
    "read the reason (sinfo -R); `scontrol update NodeName=N State=RESUME` once it is fixed (ibprov resumes "
    "only the nodes it drained: verify --resume)",
    _nodes,
    object_kind="the Slurm node",
    severity_note="a node drained by ibprov (reason starting 'ibprov:') is reported too, as a warning: "
    "verify --resume resumes it once it passes",
)


def _controller_findings(plan: SchedulerPlan, view: SlurmView) -> list[Finding]:
    if view.error is not None:
        return [CONTROLLER.finding(plan.controller, "sinfo and scontrol answer", view.error)]
    return []


def _plugin_findings(plan: SchedulerPlan, view: SlurmView) -> list[Finding]:
    if view.error is not None or view.plugin == plan.plugin or not view.plugin:
        return []
    return [PLUGIN.finding(plan.controller, f"TopologyPlugin={plan.plugin}", f"TopologyPlugin={view.plugin}")]


def _node_findings(plan: SchedulerPlan, view: SlurmView) -> list[Finding]:
    if view.error is not None:
        return []
    out: list[Finding] = []
    placed = under(view)
    for node in plan.nodes:
        slurm = view.nodes.get(node)
        if slurm is None:
            out.append(KNOWN.finding(node, "known to Slurm", "not in sinfo: Slurm does not know this node"))
            continue
        if slurm.down or slurm.drained:
            reason = f" ({slurm.reason})" if slurm.reason else ""
            who = f" by {slurm.user}" if slurm.user else ""
            out.append(STATE.finding(node, "in service", f"{slurm.state}{who}{reason}"))
        want = plan.node_leaf.get(node)
        got = placed.get(node, [])
        if want is not None and got != [want]:
            where = "in" if plan.plugin == "topology/block" else "under"
            nothing = "in no block" if plan.plugin == "topology/block" else "under no switch"
            observed = f"{where} {', '.join(sorted(got))}" if got else f"{nothing} of Slurm's topology"
            out.append(LEAF.finding(node, f"{where} {want}", observed))
    return out


def _switch_findings(plan: SchedulerPlan, view: SlurmView) -> list[Finding]:
    if view.error is not None or plan.plugin != "topology/tree":
        return []
    out: list[Finding] = []
    for name in sorted({*plan.switches, *view.switches}):
        planned = plan.switches.get(name)
        seen = view.switches.get(name)
        if planned is None:
            out.append(SWITCHES.finding(name, "no such switch", "in Slurm's topology, not in the plan"))
            continue
        want = _describe(*planned)
        if seen is None:
            out.append(SWITCHES.finding(name, want, "not in Slurm's topology"))
            continue
        # above the leaves Slurm prints the nodes of every leaf below: the switches say what is cabled
        got = _describe(seen.nodes if seen.level == 0 else (), seen.switches)
        if got != want:
            out.append(SWITCHES.finding(name, want, got))
    return out


def _block_findings(plan: SchedulerPlan, view: SlurmView) -> list[Finding]:
    if view.error is not None or plan.plugin != "topology/block":
        return []
    seen = {b.name: b for b in view.blocks.values() if not b.aggregated}
    out: list[Finding] = []
    for name in sorted({*plan.blocks, *seen}):
        planned, block = plan.blocks.get(name), seen.get(name)
        if planned is None:
            out.append(BLOCKS.finding(name, "no such block", "in Slurm's topology, not in the plan"))
            continue
        want = _describe(planned, ())
        if block is None:
            out.append(BLOCKS.finding(name, want, "not in Slurm's topology"))
            continue
        got = _describe(block.nodes, ())
        if got != want:
            out.append(BLOCKS.finding(name, want, got))
        elif plan.block_size is not None and block.size is not None and block.size != plan.block_size:
            out.append(BLOCKS.finding(name, f"BlockSize={plan.block_size}", f"BlockSize={block.size}"))
    return out


def _describe(nodes: Sequence[str], switches: Sequence[str]) -> str:
    parts = []
    if nodes:
        parts.append(f"Nodes={compress(nodes)}")
    if switches:
        parts.append(f"Switches={compress(switches)}")
    return " ".join(parts) or "nothing under it"


def _unplanned_findings(plan: SchedulerPlan, view: SlurmView) -> list[Finding]:
    if view.error is not None:
        return []
    planned = set(plan.nodes)
    return [
        UNPLANNED.finding(node, "not a Slurm node (not in the spec's scheduler nodes)", f"known to Slurm, {n.state}")
        for node, n in sorted(view.nodes.items())
        if node not in planned
    ]


FAMILIES: tuple[CheckFamily[SchedulerPlan, SlurmView], ...] = (
    CheckFamily(_controller_findings, (CONTROLLER,)),
    CheckFamily(_plugin_findings, (PLUGIN,)),
    CheckFamily(_node_findings, (KNOWN, LEAF, STATE)),
    CheckFamily(_switch_findings, (SWITCHES,)),
    CheckFamily(_block_findings, (BLOCKS,)),
    CheckFamily(_unplanned_findings, (UNPLANNED,)),
)
