"""`verify --target twin`: the CLI finds the twin rack once and hands every section the same VerifyTarget;
the sections reach the target only through it (its diag environment, inventory, hosts, SSH config, limits)
and never look the rack up themselves."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from checkkit import example, perfect, plan_of
from click.testing import CliRunner
from nodekit import RACK, healthy_rack

from ibprov.cli import cli
from ibprov.clusterspec import load_spec
from ibprov.errors import CollectError
from ibprov.report.model import SectionReport
from ibprov.twin import rack
from ibprov.twin.rack import RackNode, RackState, verify_target
from ibprov.twinnet.limits import LIMITS_FILE, twin_limits
from ibprov.verify.fabric.section import check_observation
from ibprov.verify.nodes.observation import HostObservation
from ibprov.verify.registry import VerifyOptions, load_section, section_info
from ibprov.verify.target import VerifyTarget

BOXED = ("sm01", "sm02", "node01", "node02")  # node03, node04: simulated HCAs only


def write_rack(base: Path) -> RackState:
    """The state a running twin rack of examples/rack.yaml leaves behind (no container is needed to read it)."""
    directory = base / "rack1"
    directory.mkdir(parents=True)
    state = RackState(
        cluster="rack1",
        run_id="abc123",
        directory=str(directory),
        network="ibprov-twin-rack1-abc123",
        ibsim="ibprov-twin-rack1-abc123-ibsim",
        ibsim_address="10.89.0.2",
        image="localhost/ibprov-node:bookworm",
        sim_hosts={f"{n}/mlx5_0": f"H-{n}-mlx5_0" for n in (*BOXED, "node03", "node04")},
        simulated_only=["node03", "node04"],
    )
    for i, name in enumerate(BOXED):
        state.nodes[name] = RackNode(name, f"{state.network}-{name}", f"10.89.0.{i + 3}", f"H-{name}-mlx5_0")
    state.save()
    (directory / LIMITS_FILE).write_text(twin_limits(load_spec(RACK), containers=BOXED).to_json())
    return state


def a_target(**fields: Any) -> VerifyTarget:
    limits = twin_limits(load_spec(RACK), containers=BOXED)
    hosts = {n: f"10.89.0.{i + 3}" for i, n in enumerate(BOXED)}
    made = dict(
        hosts=hosts,
        user="root",
        inventory=Path("/twins/rack1/inventory.yml"),
        ssh_config=Path("/twins/rack1/ssh_config"),
        diag_env={"SIM_HOST": "H-node03-mlx5_0", "IBSIM_SERVER_NAME": "10.89.0.2"},
        limits=limits,
        exited=lambda: "",
    )
    return VerifyTarget(**{**made, **fields})


def test_the_twin_rack_gives_verify_its_hosts_inventory_diag_environment_and_limits(tmp_path: Path) -> None:
    state = write_rack(tmp_path)
    target = verify_target(state)
    assert target.user == "root"
    assert dict(target.hosts) == {
        "sm01": "10.89.0.3",
        "sm02": "10.89.0.4",
        "node01": "10.89.0.5",
        "node02": "10.89.0.6",
    }
    assert (target.inventory, target.ssh_config) == (state.inventory, state.ssh_config)
    assert target.diag_env["SIM_HOST"] == "H-node03-mlx5_0", "the diags run as an HCA with no container"
    assert target.diag_env["IBSIM_SERVER_NAME"] == "10.89.0.2"
    assert target.limits.containers == BOXED


def test_verify_target_twin_finds_the_rack_once_and_every_section_runs_on_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("IBPROV_TWIN_DIR", str(tmp_path))
    state = write_rack(tmp_path)
    found: list[str] = []
    load_state = rack.load_state

    def counted(loaded: Any, base: Any = None) -> RackState:
        found.append(loaded.spec.cluster.name)
        return load_state(loaded, base)

    fabric: list[dict[str, Any]] = []

    def verify_fabric(loaded: Any, runner: Any, **kwargs: Any) -> SectionReport:
        fabric.append({"env": runner.env, "prefetched": list(runner._early), **kwargs})
        plan = plan_of(example("rack"))
        return check_observation(plan, perfect(plan))

    inventories: list[Any] = []

    class Collector:
        where = "fake"

        def __init__(self, inventory: Any) -> None:
            inventories.append(inventory)

        def collect(self, names: Sequence[str]) -> dict[str, HostObservation]:
            return {n: h for n, h in healthy_rack().items() if n in names}

    monkeypatch.setattr("ibprov.twin.rack.load_state", counted)
    monkeypatch.setattr("ibprov.verify.fabric.section.verify_fabric", verify_fabric)
    monkeypatch.setattr("ibprov.verify.nodes.section.AnsibleNodeCollector", Collector)
    result = CliRunner().invoke(cli, ["verify", str(RACK), "--fabric", "--nodes", "--target", "twin"])
    assert found == ["rack1"], "the CLI finds the rack once, for every section"
    assert fabric[0]["env"]["SIM_HOST"] == "H-node03-mlx5_0"
    assert fabric[0]["prefetched"] == [], "no discovery starts on this host's own fabric"
    assert (fabric[0]["synthetic_guids"], fabric[0]["twin"].containers) == (True, BOXED)
    assert inventories == [str(state.inventory)]
    assert "simulated HCAs only on the twin (no container), not checked: node03, node04" in result.stderr


def test_without_a_rack_verify_target_twin_exits_3_and_writes_the_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("IBPROV_TWIN_DIR", str(tmp_path))
    out = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["verify", str(RACK), "--target", "twin", "--json", str(out)])
    assert result.exit_code == 3
    assert result.stderr == (
        f"error: no twin rack of cluster rack1 ({tmp_path / 'rack1'}): run `ibprov twin up SPEC`\n"
    )
    assert json.loads(out.read_text())["exit_code"] == 3


def test_a_dry_run_that_needs_no_fabric_needs_no_rack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("IBPROV_TWIN_DIR", str(tmp_path))
    argv = ["verify", str(RACK), "--perf", "--dry-run", "--pairs", "quick", "--target", "twin"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "dry run: nothing was started"


def test_when_the_diags_fail_on_the_target_its_exited_simulator_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def verify_fabric(*_args: Any, **_kw: Any) -> SectionReport:
        raise CollectError("could not collect from the fabric: ibnetdiscover exited 1")

    monkeypatch.setattr("ibprov.verify.fabric.section.verify_fabric", verify_fabric)
    fabric = load_section(section_info("fabric"))
    gone = VerifyOptions(target=a_target(exited=lambda: "the twin's ibsim has exited (panic)"))
    with pytest.raises(CollectError, match=r"exited 1; the twin's ibsim has exited \(panic\)$"):
        fabric.run(load_spec(RACK), gone, None)
    with pytest.raises(CollectError, match=r"exited 1$"):
        fabric.run(load_spec(RACK), VerifyOptions(target=a_target()), None)


def test_mpi_runs_between_the_targets_hosts_at_their_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(
        "ibprov.verify.mpi.section.verify_mpi", lambda plan, collector, **_kw: seen.append((plan, collector))
    )
    load_section(section_info("mpi")).run(load_spec(RACK), VerifyOptions(target=a_target()), None)
    plan, collector = seen[0]
    assert set(plan.hosts) <= set(BOXED), "only the nodes the target has a host for"
    assert plan.no_rdma, "judged as the twin (no RDMA device)"
    assert collector.ansible.inventory == "/twins/rack1/inventory.yml"


def test_perf_reaches_the_targets_hosts_over_ssh_and_notes_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    reached: list[Any] = []
    ran: list[Any] = []

    def ssh_targets(nodes: Any, config: Path | None = None) -> dict[str, Any]:
        reached.append((list(nodes), config))
        return {}

    def verify_perf(_loaded: Any, _remote: Any, plan: Any, **kw: Any) -> None:
        ran.append((plan, kw["notes"]))

    monkeypatch.setattr("ibprov.verify.perf.section.ssh_targets", ssh_targets)
    monkeypatch.setattr("ibprov.verify.perf.section.verify_perf", verify_perf)
    options = VerifyOptions(target=a_target(), pairs="quick")
    load_section(section_info("perf")).run(load_spec(RACK), options, None)
    nodes, config = reached[0]
    assert nodes == [(n, f"10.89.0.{i + 3}", "root") for i, n in enumerate(BOXED)]
    assert config == Path("/twins/rack1/ssh_config")
    plan, notes = ran[0]
    assert plan.twin
    assert notes == ["2 node(s) are simulated HCAs only on the twin (no container): node03, node04"]
