"""Render writes the ib_healthcheck role's variables for the scheduler's nodes: every planned port, the planned data
rate and the planned P_Key table; the role's argument spec takes them, and the script, fed what render wrote,
finds a node that is as planned healthy."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.units import data_rate_gbps
from ibprov.identity.guids import GuidBook
from ibprov.identity.partitions import planned_pkeys
from ibprov.render import render_files
from ibprov.resources import roles_dir

ROOT = Path(__file__).resolve().parents[3]
BASE = (ROOT / "examples" / "qos-partitions.yaml").read_text().split("\nscheduler:")[0]
SCHEDULER = "\nscheduler:\n  controller: sm01\n  group: compute\n  drain: false\n"


def _spec(scheduler: str = SCHEDULER) -> LoadedSpec:
    return load_spec_text(BASE + scheduler, "q.yaml")


def _rendered(loaded: LoadedSpec) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per ib_node its effective variables (group_vars/ib_nodes.yml, then its own in hosts.yml), and the group's."""
    files = render_files(loaded, synthetic_guids=True).files
    hosts = yaml.safe_load(files["inventory/hosts.yml"])["all"]["children"]["ib_nodes"]["hosts"]
    group = yaml.safe_load(files["inventory/group_vars/ib_nodes.yml"])
    return {h: {**group, **(v or {})} for h, v in hosts.items()}, group


def test_the_scheduler_nodes_get_their_planned_ports_rates_and_pkeys() -> None:
    loaded = _spec()
    hosts, group = _rendered(loaded)
    spec = loaded.spec
    compute = [n for n in spec.nodes if "compute" in n.groups]
    assert compute
    book = GuidBook.for_spec(loaded, allow_synthetic=True)
    tables = planned_pkeys(loaded, book)
    for node in spec.nodes:
        variables = hosts[node.name]
        if node not in compute:
            assert variables.get("ib_healthcheck_enabled", False) is False, node.name
            continue
        assert variables["ib_healthcheck_enabled"] is True
        expected = []
        for hca in node.hcas:
            rate = data_rate_gbps(hca.speed or spec.fabric.speed, hca.width or spec.fabric.width)
            for port in hca.ports:
                guid = book.port_guid(node.name, hca.device, port)
                assert guid is not None
                keys = sorted(tables[guid], key=lambda k: (k.base, k.full))
                expected.append({"device": hca.device, "port": port, "rate_gbps": rate, "pkeys": [k.hex for k in keys]})
        assert variables["ib_healthcheck_ports"] == expected
    assert (group["ib_healthcheck_memlock"], group["ib_healthcheck_drain"]) == ("unlimited", False)


def test_without_a_scheduler_nothing_of_the_health_check_is_written() -> None:
    hosts, _group = _rendered(_spec(""))
    assert not [k for v in hosts.values() for k in v if k.startswith("ib_healthcheck_")]


def test_what_most_nodes_expect_is_written_once() -> None:
    """Ten nodes alike and one with a second HCA: the ten expect what group_vars says, only the odd one (and the
    nodes that are no Slurm nodes) carry their own."""
    nodes = "".join(f"  - {{name: cn{i:02d}, groups: [compute], hcas: [{{device: mlx5_0}}]}}\n" for i in range(10))
    text = (
        "cluster: {name: c}\nnodes:\n" + nodes + "  - {name: gpu1, groups: [compute], hcas: [{device: mlx5_0}, "
        "{device: mlx5_1, speed: NDR}]}\n  - {name: login1, groups: [login], hcas: [{device: mlx5_0}]}\n"
        "switches:\n  - {name: leaf01, ports: 40, role: leaf}\nfabric:\n  speed: HDR\n  links:\n"
        + "".join(f"    - cn{i:02d}/mlx5_0:1 <-> leaf01:{i + 1}\n" for i in range(10))
        + "    - gpu1/mlx5_0:1 <-> leaf01:11\n    - gpu1/mlx5_1:1 <-> leaf01:12\n    - login1/mlx5_0:1 <-> leaf01:13\n"
        "subnet_manager: {instances: [{node: login1}]}\nscheduler: {controller: login1, group: compute}\n"
    )
    files = render_files(load_spec_text(text, "c.yaml"), synthetic_guids=True).files
    own = yaml.safe_load(files["inventory/hosts.yml"])["all"]["children"]["ib_nodes"]["hosts"]
    group = yaml.safe_load(files["inventory/group_vars/ib_nodes.yml"])
    assert group["ib_healthcheck_enabled"] is True
    assert [p["device"] for p in group["ib_healthcheck_ports"]] == ["mlx5_0"]
    assert {h: sorted(k for k in (v or {}) if k.startswith("ib_healthcheck_")) for h, v in own.items() if v} == {
        "gpu1": ["ib_healthcheck_enabled", "ib_healthcheck_ports"],
        "login1": ["ib_healthcheck_enabled"],
    }
    assert own["login1"]["ib_healthcheck_enabled"] is False
    assert [(p["device"], p["rate_gbps"]) for p in own["gpu1"]["ib_healthcheck_ports"]] == [
        ("mlx5_0", 200.0),
        ("mlx5_1", 400.0),
    ]


def test_the_role_takes_what_render_writes() -> None:
    spec = yaml.safe_load((roles_dir() / "ib_healthcheck" / "meta" / "argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    hosts, group = _rendered(_spec())
    for host, variables in hosts.items():
        mine = {k: v for k, v in {**group, **variables}.items() if k.startswith("ib_healthcheck_")}
        result = ArgumentSpecValidator(options).validate(mine)
        assert not result.error_messages, (host, result.error_messages)


def test_the_script_finds_a_node_as_planned_healthy(tmp_path: Path) -> None:
    """What render wrote for node01, as the role's template writes it, against a sysfs tree (built by this test)
    holding exactly the planned table with the planned rate: no problem; one planned P_Key gone: one problem."""
    path = roles_dir() / "ib_healthcheck" / "files" / "ib_healthcheck.py"
    module_spec = importlib.util.spec_from_file_location("ib_healthcheck_render_test", path)
    assert module_spec is not None
    assert module_spec.loader is not None
    script = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(script)
    hosts, _group = _rendered(_spec())
    ports = hosts["node01"]["ib_healthcheck_ports"]
    for port in ports:
        base = tmp_path / port["device"] / "ports" / str(port["port"])
        (base / "pkeys").mkdir(parents=True)
        (base / "state").write_text("4: ACTIVE\n")
        (base / "phys_state").write_text("5: LinkUp\n")
        (base / "rate").write_text("200 Gb/sec (4X HDR)\n")
        for i, key in enumerate(port["pkeys"]):
            (base / "pkeys" / str(i)).write_text(key + "\n")
    config = json.loads(json.dumps({"sysfs_root": str(tmp_path), "ports": ports, "memlock": None}))
    assert script.check(config) == []
    first = ports[0]
    last = len(first["pkeys"]) - 1
    (tmp_path / first["device"] / "ports" / str(first["port"]) / "pkeys" / str(last)).write_text("0x0000\n")
    assert [p.text for p in script.check(config)] == [
        f"{first['device']} port {first['port']}: P_Key {first['pkeys'][-1]} (full) missing"
    ]
