"""The twin's Slurm without podman: which nodes are Slurm nodes, the slurm.conf it writes, the munge key, the
drop-ins that keep the daemons off ibsim, and the shell each container runs."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.twin.rack import RackNode, RackState, choose_containers
from ibprov.twin.slurm import (
    SIM_ENV,
    SlurmError,
    _dropin,
    _node_script,
    check_version,
    munge_key,
    placeholder_topology,
    plan_slurm,
    slurm_conf,
)


def spec(n: int, scheduler: str) -> LoadedSpec:
    names = [f"cn{i:02d}" for i in range(1, n + 1)]
    text = "\n".join(
        [
            "version: 1",
            "cluster: {name: Big}",
            "nodes:",
            "  - {name: sm01, groups: [infra], hcas: [{device: mlx5_0}]}",
            *(f"  - {{name: {x}, groups: [compute], hcas: [{{device: mlx5_0}}]}}" for x in names),
            "switches: [{name: leaf01, role: leaf, ports: 40}]",
            "fabric:",
            "  speed: HDR",
            "  links:",
            "    - leaf01:40 <-> sm01/mlx5_0:1",
            *(f"    - leaf01:{i} <-> {x}/mlx5_0:1" for i, x in enumerate(names, 1)),
            "subnet_manager: {instances: [{node: sm01, priority: 15}]}",
            f"scheduler: {scheduler}",
        ]
    )
    return load_spec_text(text + "\n", "big.yaml")


def rack(tmp_path: Path, loaded: LoadedSpec) -> RackState:
    with_box, without = choose_containers(loaded)
    state = RackState("big", "r1", str(tmp_path), "net", "net-ibsim", "10.0.0.2", "img", simulated_only=without)
    for i, name in enumerate(with_box, 3):
        state.nodes[name] = RackNode(name, f"net-{name}", f"10.0.0.{i}", f"H-{name}-mlx5_0")
    return state


def test_slurm_nodes_are_the_groups_nodes_with_a_container(tmp_path: Path) -> None:
    loaded = spec(10, "{controller: sm01, group: compute}")
    plan = plan_slurm(loaded, rack(tmp_path, loaded))
    assert plan.controller == "sm01"
    assert plan.nodes == ("cn01", "cn02", "cn03", "cn04", "cn05", "cn06", "cn07")
    assert plan.left_out == ("cn08", "cn09", "cn10")
    assert plan.cluster == "big"
    conf = slurm_conf(plan).splitlines()
    assert "SlurmctldHost=sm01" in conf
    assert [line for line in conf if line.startswith("NodeName=")] == [
        f"NodeName={n} CPUs=1 RealMemory=512 State=UNKNOWN" for n in plan.nodes
    ]
    for line in (
        "ClusterName=big",
        "TopologyPlugin=topology/tree",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SlurmdParameters=config_overrides",
        "AccountingStorageType=accounting_storage/none",
        "ReturnToService=2",
        "SlurmctldParameters=enable_configless",
        "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
    ):
        assert line in conf


def test_without_a_group_every_node_is_a_slurm_node_and_the_controller_gets_a_container(tmp_path: Path) -> None:
    loaded = spec(10, "{controller: cn09}")
    assert choose_containers(loaded)[0][:2] == ["sm01", "cn09"], "SM nodes, then the controller"
    plan = plan_slurm(loaded, rack(tmp_path, loaded))
    assert plan.controller == "cn09"
    assert plan.nodes == ("sm01", "cn01", "cn02", "cn03", "cn04", "cn05", "cn06", "cn09")


def test_a_controller_without_a_container_is_an_error_that_says_so(tmp_path: Path) -> None:
    loaded = spec(3, "{controller: head01, controller_address: 10.1.1.1}")
    with pytest.raises(SlurmError, match=r"scheduler.controller head01 is not a node: the twin runs slurmctld"):
        plan_slurm(loaded, rack(tmp_path, loaded))


def test_one_munge_key_per_twin_kept_private(tmp_path: Path) -> None:
    loaded = spec(3, "{controller: sm01, group: compute}")
    state = rack(tmp_path, loaded)
    key = munge_key(state)
    assert len(key) == 1024
    assert munge_key(state) == key, "made once"
    assert stat.S_IMODE((tmp_path / "munge.key").stat().st_mode) == 0o600


def test_the_daemons_are_detached_from_the_simulated_hca_and_slurmd_is_configless(tmp_path: Path) -> None:
    loaded = spec(3, "{controller: sm01, group: compute}")
    state = rack(tmp_path, loaded)
    plan = plan_slurm(loaded, state)
    unset = f"UnsetEnvironment={' '.join(SIM_ENV)}"
    assert SIM_ENV == ("LD_PRELOAD", "SIM_HOST", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT")
    for unit in ("munge.service", "slurmctld.service", "slurmd.service"):
        assert unset in _dropin(plan, unit).splitlines()
    assert _dropin(plan, "slurmd.service").endswith("[Unit]\nConditionPathExists=\n")
    key = munge_key(state)
    controller = _node_script(plan, state, "sm01", key)
    node = _node_script(plan, state, "cn02", key)
    assert controller.endswith("systemctl enable --now munge slurmctld 2>&1\n")
    assert node.endswith("systemctl enable --now munge slurmd 2>&1\n")
    assert "/etc/slurm/slurm.conf" in controller
    assert "/etc/slurm/slurm.conf" not in node, "slurmd fetches it from slurmctld"
    assert "/etc/slurm/topology.conf" in controller
    assert "chown munge:munge /etc/munge/munge.key.ibprov-tmp && chmod 0400" in node
    assert "10.0.0.5 cn02\n" in node


def test_another_config_dir_reaches_slurmctld_and_logins(tmp_path: Path) -> None:
    loaded = spec(3, "{controller: sm01, group: compute, config_dir: /etc/slurm-site}")
    state = rack(tmp_path, loaded)
    plan = plan_slurm(loaded, state)
    dropin = _dropin(plan, "slurmctld.service")
    assert "Environment=SLURM_CONF=/etc/slurm-site/slurm.conf" in dropin
    assert "ConditionPathExists=/etc/slurm-site/slurm.conf" in dropin
    assert "SLURM_CONF=/etc/slurm-site/slurm.conf' >> /etc/environment" in _node_script(plan, state, "sm01", b"k")


def test_a_block_spec_gets_topology_block_in_slurm_conf_and_a_placeholder_block(tmp_path: Path) -> None:
    loaded = spec(4, "{controller: sm01, group: compute, version: '24.11', topology: {plugin: block}}")
    state = rack(tmp_path, loaded)
    plan = plan_slurm(loaded, state)
    assert plan.plugin == "block"
    assert "TopologyPlugin=topology/block" in slurm_conf(plan).splitlines()
    assert placeholder_topology(plan).splitlines()[1] == "BlockName=twin-placeholder Nodes=cn01,cn02,cn03,cn04"
    script = _node_script(plan, state, "sm01", b"k" * 1024)
    assert "TopologyPlugin=topology/tree" not in script


@pytest.mark.parametrize(
    ("plugin", "version", "refused"),
    [
        ("block", "slurm-wlm 22.05.8", True),
        ("block", "slurm 23.02.7", True),
        ("block", "slurm 22.05.8-4+deb12u3", True),  # the package version, as twin up reads it
        ("block", "slurm 23.11.0", False),
        ("block", "slurm-wlm 24.11.5", False),
        ("tree", "slurm-wlm 22.05.8", False),
        ("block", "sinfo: command not found", False),  # no version: the daemons' own error says more
    ],
)
def test_a_block_topology_on_a_slurm_older_than_23_11_is_refused_naming_the_way_out(
    tmp_path: Path, plugin: str, version: str, refused: bool
) -> None:
    loaded = spec(2, f"{{controller: sm01, group: compute, version: '24.11', topology: {{plugin: {plugin}}}}}")
    plan = plan_slurm(loaded, rack(tmp_path, loaded))
    if refused:
        with pytest.raises(SlurmError, match=r"block needs Slurm >= 23.11; .* IBPROV_SUITE=trixie"):
            check_version(plan, version)
    else:
        check_version(plan, version)


def test_a_tree_spec_gets_a_placeholder_switch_and_the_refusal_of_block_says_it_all(tmp_path: Path) -> None:
    loaded = spec(2, "{controller: sm01, group: compute}")
    plan = plan_slurm(loaded, rack(tmp_path, loaded))
    assert placeholder_topology(plan).splitlines() == [
        "# placeholder of the ibprov twin rack: `ibprov apply` (role ib_slurm_topology) writes the real file",
        "SwitchName=twin-placeholder Nodes=cn01,cn02",
    ]
    planned = spec(2, "{controller: sm01, version: '24.11', topology: {plugin: block}}")
    block = plan_slurm(planned, rack(tmp_path, planned))
    with pytest.raises(SlurmError) as refused:
        check_version(block, "slurm 22.05.8-4+deb12u3\n")
    assert str(refused.value) == (
        "scheduler.topology.plugin block needs Slurm >= 23.11; the twin's nodes run slurm 22.05.8-4+deb12u3 "
        "(Debian 12). Debian 13's nodes run Slurm 24.11: IBPROV_SUITE=trixie ibprov twin up ..."
    )
