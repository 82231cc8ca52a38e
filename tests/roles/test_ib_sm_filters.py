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


# --- start order: the planned master is the top priority of the whole inventory ---------------

MASTER = {"device": "mlx5_0", "port": 1, "priority": 14}
STANDBY = {"device": "mlx5_0", "port": 1, "priority": 5}


def _inventory() -> tuple[list[str], dict[str, dict[str, Any]]]:
    """groups['all'] and hostvars shaped like ibprov's hosts.yml: two SM hosts and a node without SM."""
    hostvars: dict[str, dict[str, Any]] = {
        "sm1": {"ib_sm_instances": [MASTER]},
        "sm2": {"ib_sm_instances": [STANDBY]},
        "node3": {"ansible_host": "10.0.0.3"},
    }
    return list(hostvars), hostvars


def test_top_priority_is_the_highest_in_the_inventory() -> None:
    hosts, hostvars = _inventory()
    assert f.ib_sm_top_priority(hosts, hostvars) == 14


def test_limit_to_the_standby_host_keeps_it_a_standby() -> None:
    """`--limit sm2`: sm1 is not in the play, but its inventory variables still make it the master."""
    hosts, hostvars = _inventory()
    order = f.ib_sm_start_order([STANDBY], f.ib_sm_top_priority(hosts, hostvars))
    assert order == {"first": [], "standbys": [STANDBY]}
    # what the play-hosts-only computation did: the standby started as the planned master
    assert f.ib_sm_start_order([STANDBY], f.ib_sm_top_priority(["sm2"], hostvars)) == {
        "first": [STANDBY],
        "standbys": [],
    }


def test_limit_to_the_master_host_starts_it_first() -> None:
    hosts, hostvars = _inventory()
    assert f.ib_sm_start_order([MASTER], f.ib_sm_top_priority(hosts, hostvars)) == {"first": [MASTER], "standbys": []}


@pytest.mark.parametrize("enabled", [False, "false", "no", 0])
def test_host_disabled_in_the_inventory_does_not_count(enabled: Any) -> None:
    hosts, hostvars = _inventory()
    hostvars["sm1"]["ib_sm_enabled"] = enabled
    assert f.ib_sm_top_priority(hosts, hostvars) == 5


@pytest.mark.parametrize("enabled", [True, "true", "yes"])
def test_host_enabled_in_the_inventory_counts(enabled: Any) -> None:
    hosts, hostvars = _inventory()
    hostvars["sm1"]["ib_sm_enabled"] = enabled
    assert f.ib_sm_top_priority(hosts, hostvars) == 14


def test_top_priority_defaults() -> None:
    hosts, hostvars = _inventory()
    hostvars["sm1"]["ib_sm_instances"] = [{"port_guid": "0x1"}]  # no priority: OpenSM's 0
    assert f.ib_sm_top_priority(hosts, hostvars) == 5
    assert f.ib_sm_top_priority(["node3"], hostvars) == 0
    assert f.ib_sm_top_priority([], hostvars) == 0


def test_top_priority_reads_string_priorities() -> None:
    hosts, hostvars = _inventory()
    hostvars["sm2"]["ib_sm_instances"] = [{"port_guid": "0x3", "priority": "15"}]
    assert f.ib_sm_top_priority(hosts, hostvars) == 15


def test_start_order_keeps_every_top_instance_first_in_plan_order() -> None:
    a = {"port_guid": "0xa", "priority": 14}
    b = {"port_guid": "0xb", "priority": 3}
    c = {"port_guid": "0xc", "priority": 14}
    assert f.ib_sm_start_order([a, b, c], "14") == {"first": [a, c], "standbys": [b]}
    assert f.ib_sm_start_order([], 14) == {"first": [], "standbys": []}


# --- restart or SIGHUP after a run ------------------------------------------------------------

GUIDS = ["0x000000000000000a", "0x000000000000000b"]
INSTANCES = [{"port_guid": g, "priority": 14 - i} for i, g in enumerate(GUIDS)]


def _registered(changed: bool = False) -> dict[str, Any]:
    return {"changed": changed}


def _started(*, changed: tuple[str, ...] = (), skipped: tuple[str, ...] = ()) -> dict[str, Any]:
    """The registered result of a start task looping over INSTANCES."""
    results: list[dict[str, Any]] = []
    for i in INSTANCES:
        result = {"item": i, "changed": i["port_guid"] in changed}
        if i["port_guid"] in skipped:  # the start task's `when` was false for this item
            result["skipped"] = True
        results.append(result)
    return {"changed": bool(changed), "results": results}


def _confs(after: dict[str, str | None] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Registered slurps of every instance's opensm.conf before and after; ``after`` overrides per GUID."""
    before = {"results": [_slurp(g, CONF) for g in GUIDS]}
    new = {g: CONF for g in GUIDS} | (after or {})
    return before, {"results": [_slurp(g, text) for g, text in new.items()]}


def _actions(**changes: Any) -> dict[str, list[str]]:
    """ib_sm_service_actions on a run that changed nothing, except ``changes``."""
    before, after = _confs()
    args: dict[str, Any] = {
        "started": [_started(), _started()],
        "conf_before": before,
        "conf_after": after,
        "restart_if_changed": [_registered() for _ in range(4)],  # unit, node-name-map, GUID files written/removed
        "reload_if_changed": [_registered() for _ in range(3)],  # opensm.conf, partitions.conf, qos-policy.conf
    }
    args.update(changes)
    return f.ib_sm_service_actions(INSTANCES, **args)


def test_nothing_changed_nothing_to_do() -> None:
    assert _actions() == {"restart": [], "reload": []}


@pytest.mark.parametrize("index", range(3))
def test_reload_all_when_a_reloadable_file_changed(index: int) -> None:
    reload_if = [_registered(i == index) for i in range(3)]
    assert _actions(reload_if_changed=reload_if) == {"restart": [], "reload": GUIDS}


@pytest.mark.parametrize("index", range(4))
def test_restart_all_when_a_start_only_file_changed(index: int) -> None:
    restart_if = [_registered(i == index) for i in range(4)]
    assert _actions(restart_if_changed=restart_if) == {"restart": GUIDS, "reload": []}


def test_restart_wins_over_reload() -> None:
    assert _actions(restart_if_changed=[_registered(True)], reload_if_changed=[_registered(True)]) == {
        "restart": GUIDS,
        "reload": [],
    }


def test_restart_only_option_restarts_that_instance_and_signals_the_other() -> None:
    before, after = _confs({GUIDS[0]: CONF.replace("lmc 0", "lmc 2")})
    actions = _actions(conf_before=before, conf_after=after, reload_if_changed=[_registered(True)])
    assert actions == {"restart": [GUIDS[0]], "reload": [GUIDS[1]]}


def test_restart_only_option_without_reload_all_restarts_only_that_instance() -> None:
    before, after = _confs({GUIDS[1]: CONF.replace("routing_engine minhop", "routing_engine updn")})
    assert _actions(conf_before=before, conf_after=after) == {"restart": [GUIDS[1]], "reload": []}


def test_restart_all_and_a_restart_option_name_each_instance_once_in_plan_order() -> None:
    before, after = _confs({GUIDS[1]: CONF.replace("lmc 0", "lmc 2")})
    actions = _actions(conf_before=before, conf_after=after, restart_if_changed=[_registered(True)])
    assert actions == {"restart": GUIDS, "reload": []}


@pytest.mark.parametrize("which", [0, 1])
def test_started_now_is_neither_restarted_nor_signalled(which: int) -> None:
    """An instance started by either start task (master's or standbys') already read everything."""
    started = [_started(), _started()]
    started[which] = _started(changed=(GUIDS[0],))
    assert _actions(started=started, reload_if_changed=[_registered(True)]) == {"restart": [], "reload": [GUIDS[1]]}
    assert _actions(started=started, restart_if_changed=[_registered(True)]) == {"restart": [GUIDS[1]], "reload": []}


def test_start_skipped_in_check_mode_counts_as_started() -> None:
    started = [_started(skipped=(GUIDS[1],)), _started()]
    assert _actions(started=started, restart_if_changed=[_registered(True)]) == {"restart": [GUIDS[0]], "reload": []}


def test_started_instance_with_a_restart_option_change_is_not_restarted() -> None:
    before, after = _confs({GUIDS[0]: CONF.replace("lmc 0", "lmc 2")})
    started = [_started(changed=(GUIDS[0],)), _started()]
    assert _actions(started=started, conf_before=before, conf_after=after) == {"restart": [], "reload": []}


def test_check_mode_without_new_configuration_signals_but_does_not_restart() -> None:
    """In check mode the new opensm.conf is not read back (skipped): the template's change only signals."""
    before, _ = _confs()
    after = {"results": [{"item": {"port_guid": g}, "skipped": True, "changed": False} for g in GUIDS]}
    assert _actions(conf_before=before, conf_after=after, reload_if_changed=[_registered(True)]) == {
        "restart": [],
        "reload": GUIDS,
    }


def test_loop_results_follow_ansibles_changed_test() -> None:
    """A registered loop result without a top-level ``changed`` is changed when one item is; an empty one is not."""
    no_files = {"results": [], "skipped": True, "skipped_reason": "No items in the list"}
    one_item = {"results": [{"item": {"file": "root-guids.conf"}, "changed": False}, {"item": {}, "changed": True}]}
    assert _actions(restart_if_changed=[no_files]) == {"restart": [], "reload": []}
    assert _actions(restart_if_changed=[no_files, one_item]) == {"restart": GUIDS, "reload": []}


def test_filters_are_registered() -> None:
    assert {"ib_sm_top_priority", "ib_sm_start_order", "ib_sm_service_actions"} <= set(f.FilterModule().filters())
