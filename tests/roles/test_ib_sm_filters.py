"""Unit tests for roles/ib_sm/filter_plugins/ib_sm.py (GUIDs, instance resolution, reload vs restart)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from role_code import load

f = load("ib_sm", "filter_plugins/ib_sm.py", "ib_sm_filters")

IBSTAT = """CA 'mlx5_0'
\tCA type: MT4123
\tPort 1:
\t\tState: Active
\t\tPort GUID: 0xb8599f0300123451
\t\tLink layer: InfiniBand
"""

CONF = """# managed
guid 0x0000000000100001
sm_priority 14
partition_config_file /etc/opensm/partitions.conf
routing_engine minhop
lmc 0
sweep_interval 10
qos FALSE
perfmgr FALSE
console off
"""


def _slurp(guid: str, text: str | None) -> dict[str, Any]:
    item = {"port_guid": guid}
    if text is None:
        return {"item": item, "failed": True, "msg": "file not found"}
    return {"item": item, "content": base64.b64encode(text.encode()).decode()}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0x100001", "0x0000000000100001"), ("0xB8599F0300123451", "0xb8599f0300123451"), (1048577, "0x0000000000100001")],
)
def test_guid(value: Any, expected: str) -> None:
    assert f.ib_sm_guid(value) == expected


def test_resolve_instances_from_plan_and_ibstat() -> None:
    instances = [
        {"port_guid": "0x100001", "priority": 14},
        {"device": "mlx5_0", "port": 1, "priority": 5},
        {"device": "mlx5_1", "port": 1},
    ]
    ibstat = [
        {"item": {"device": "mlx5_0", "port": 1}, "stdout": IBSTAT},
        {"item": {"device": "mlx5_1", "port": 1}, "stdout": "", "rc": 1},
    ]
    resolved = f.ib_sm_resolve_instances(instances, ibstat)
    assert [(i["port_guid"], i["priority"]) for i in resolved] == [
        ("0x0000000000100001", 14),
        ("0xb8599f0300123451", 5),
    ]
    assert f.ib_sm_unresolved(instances, ibstat) == ["mlx5_1 port 1"]


def test_resolve_instances_tolerates_skipped_lookup() -> None:
    assert f.ib_sm_resolve_instances([{"port_guid": "0x1"}], None)[0]["priority"] == 0


def test_restart_view_keeps_only_restart_options() -> None:
    assert f.ib_sm_restart_view(CONF) == {
        "guid": "0x0000000000100001",
        "partition_config_file": "/etc/opensm/partitions.conf",
        "routing_engine": "minhop",
        "lmc": "0",
        "perfmgr": "FALSE",
        "console": "off",
    }


@pytest.mark.parametrize(
    ("change", "restart"),
    [
        (("sm_priority 14", "sm_priority 15"), False),
        (("sweep_interval 10", "sweep_interval 5"), False),
        (("qos FALSE", "qos TRUE"), False),
        (("routing_engine minhop", "routing_engine ftree,minhop"), True),
        (("lmc 0", "lmc 2"), True),
        (("perfmgr FALSE", "perfmgr TRUE"), True),
        (("console off", "console local"), True),
    ],
)
def test_restart_guids_per_option(change: tuple[str, str], restart: bool) -> None:
    new = CONF.replace(*change)
    guids = f.ib_sm_restart_guids([_slurp("0xa", CONF)], [_slurp("0xa", new)])
    assert guids == (["0xa"] if restart else [])


def test_new_instance_is_started_not_restarted() -> None:
    assert f.ib_sm_restart_guids([_slurp("0xa", None)], [_slurp("0xa", CONF)]) == []


def test_check_mode_without_new_content() -> None:
    skipped = {"item": {"port_guid": "0xa"}, "skipped": True}
    assert f.ib_sm_restart_guids([_slurp("0xa", CONF)], [skipped]) == []


def test_adding_a_restart_file_restarts() -> None:
    new = CONF + "root_guid_file /etc/opensm/root-guids.conf\n"
    assert f.ib_sm_restart_guids([_slurp("0xa", CONF)], [_slurp("0xa", new)]) == ["0xa"]
