"""node.unreachable names the inventory verify used, as an `ansible ... -m ping` an admin can paste."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from ibprov.clusterspec import load_spec
from ibprov.run.inventory import nodes_inventory
from ibprov.verify.nodes.observation import HostObservation
from ibprov.verify.nodes.plan import build_node_plan, ping_commands
from ibprov.verify.nodes.section import verify_nodes

RACK = Path(__file__).resolve().parents[4] / "examples" / "rack.yaml"


class UnreachableCollectorDouble:
    """Test double of AnsibleNodeCollector: reaches no host."""

    @property
    def where(self) -> str:
        return "nowhere (test double)"

    def collect(self, hosts: Sequence[str]) -> dict[str, HostObservation]:
        error = "unreachable: ssh: connect to host port 22: No route to host"
        return {h: HostObservation(h, error=error) for h in hosts}


def test_the_hint_names_the_inventory_directory_verify_was_given() -> None:
    loaded = load_spec(RACK)
    report = verify_nodes(loaded, UnreachableCollectorDouble(), inventory="/srv/ib inventories/rack/inventory")
    unreachable = [f for f in report.findings if f.check == "node.unreachable"]
    assert [f.object for f in unreachable] == sorted(n.name for n in loaded.spec.nodes)
    node02 = next(f for f in unreachable if f.object == "node02")
    assert "`ansible node02 -i '/srv/ib inventories/rack/inventory' -m ping`" in node02.fix
    assert "HOST" not in node02.fix
    assert "INVENTORY" not in node02.fix


def test_without_an_inventory_the_hint_is_an_inline_inventory_of_the_spec_address_and_user() -> None:
    loaded = load_spec(RACK)
    inventory = nodes_inventory(loaded)
    report = verify_nodes(loaded, UnreachableCollectorDouble(), inventory=inventory)
    node = next(n for n in loaded.spec.nodes if n.name == "node02")
    entry = inventory["all"]["hosts"]["node02"]
    fix = next(f.fix for f in report.findings if f.object == "node02")
    command = fix.split("`")[1]
    argv = shlex.split(command)
    assert argv[:2] == ["ansible", "all"]
    assert argv[argv.index("-i") + 1] == f"{node.address or node.name},"
    assert argv[argv.index("-u") + 1] == entry["ansible_user"]
    assert argv[-2:] == ["-m", "ping"]


def test_a_local_host_is_pinged_over_the_local_connection() -> None:
    inventory = {"all": {"hosts": {"localhost": {"ansible_connection": "local"}}}}
    assert ping_commands(("localhost",), inventory) == {"localhost": "ansible localhost -i localhost, -c local -m ping"}


def test_a_plan_built_without_an_inventory_keeps_the_generic_hint() -> None:
    loaded = load_spec(RACK)
    plan = build_node_plan(loaded)
    assert plan.ping == {}
    from ibprov.verify.nodes.section import check_nodes

    hosts = {h: HostObservation(h, error="unreachable: timeout") for h in plan.hosts}
    fixes = {f.fix for f in check_nodes(plan, hosts).findings if f.check == "node.unreachable"}
    assert fixes == {
        "check that the host is up, its address and SSH user in the spec/inventory, and "
        "`ansible HOST -i INVENTORY -m ping` (the finding names the inventory verify used)"
    }
