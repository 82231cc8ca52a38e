# Copyright: ibprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Filters for the ib_sm role.

ib_sm_guid(value)                          -> "0x" + 16 lowercase hex digits
ib_sm_resolve_instances(instances, ibstat) -> instances with port_guid (from `ibstat <device> <port>` when absent)
ib_sm_unresolved(instances, ibstat)        -> human-readable list of instances whose GUID is still unknown
ib_sm_restart_view(text)                   -> the restart-only options of an opensm.conf text
ib_sm_restart_guids(before, after)         -> instances whose opensm.conf changed in a restart-only option
ib_sm_top_priority(hosts, hostvars)        -> the planned master's priority: the highest among the inventory's SMs
ib_sm_start_order(instances, top)          -> {"first": planned master's instances, "standbys": the others}
ib_sm_service_actions(instances, ...)      -> {"restart": [...], "reload": [...]} port GUIDs after a run
"""

from __future__ import annotations

import base64
import re

from ansible.module_utils.parsing.convert_bool import boolean

# opensm 3.3.23 options that a SIGHUP (heavy sweep re-reading opensm.conf) does not apply.
RESTART_KEYS = frozenset(
    {
        "guid",
        "subnet_prefix",
        "lmc",
        "lmc_esp0",
        "routing_engine",
        "root_guid_file",
        "cn_guid_file",
        "io_guid_file",
        "ids_guid_file",
        "guid_routing_order_file",
        "hop_weights_file",
        "port_search_ordering_file",
        "lfts_file",
        "partition_config_file",
        "allow_both_pkeys",
        "qos_policy_file",
        "log_file",
        "transaction_timeout",
        "transaction_retries",
        "node_name_map_name",
        "daemon",
        "single_thread",
        "use_ucast_cache",
        "avoid_throttled_links",
        "dump_files_dir",
        "nue_include_switches",
        "cc_key",
    }
)
RESTART_PREFIXES = ("console", "perfmgr", "event_plugin_")

_PORT_GUID_RE = re.compile(r"Port GUID:\s*(0x[0-9a-fA-F]+)")


def ib_sm_guid(value):
    """0x100001, '0x0000000000100001', 1048577 -> '0x0000000000100001'."""
    number = value if isinstance(value, int) else int(str(value).strip(), 16)
    return f"0x{number:016x}"


def _ibstat_guid(instance, ibstat_results):
    for result in ibstat_results or []:
        item = result.get("item") or {}
        if item.get("device") == instance.get("device") and int(item.get("port", 1)) == int(
            instance.get("port", 1)
        ):
            m = _PORT_GUID_RE.search(result.get("stdout") or "")
            return ib_sm_guid(m.group(1)) if m else None
    return None


def _resolve(instance, ibstat_results):
    if instance.get("port_guid"):
        return ib_sm_guid(instance["port_guid"])
    return _ibstat_guid(instance, ibstat_results)


def ib_sm_resolve_instances(instances, ibstat_results=None):
    out = []
    for instance in instances or []:
        guid = _resolve(instance, ibstat_results)
        if guid is None:
            continue
        resolved = dict(instance)
        resolved["port_guid"] = guid
        resolved.setdefault("priority", 0)
        out.append(resolved)
    return out


def ib_sm_unresolved(instances, ibstat_results=None):
    return [
        f"{i.get('device')} port {i.get('port', 1)}"
        for i in instances or []
        if _resolve(i, ibstat_results) is None
    ]


def ib_sm_restart_view(text):
    view = {}
    for raw in (text or "").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, value = line.partition(" ")
        if key in RESTART_KEYS or key.startswith(RESTART_PREFIXES):
            view[key] = value.strip()
    return view


def _content(result):
    if not result or result.get("failed") or result.get("skipped") or "content" not in result:
        return None
    return base64.b64decode(result["content"]).decode("utf-8", "replace")


def ib_sm_restart_guids(before_results, after_results):
    """Port GUIDs whose config existed before and differs from the new one in a restart-only option."""
    before = {r["item"]["port_guid"]: _content(r) for r in before_results or [] if "item" in r}
    guids = []
    for result in after_results or []:
        if "item" not in result:
            continue
        guid = result["item"]["port_guid"]
        old, new = before.get(guid), _content(result)
        if old is None or new is None:
            continue  # new instance (it is started, not restarted) or nothing written (check mode)
        if ib_sm_restart_view(old) != ib_sm_restart_view(new):
            guids.append(guid)
    return guids


def ib_sm_top_priority(hosts, hostvars):
    """The planned master's priority: the highest ``priority`` in the ``ib_sm_instances`` of ``hosts``.

    ``hosts`` is the whole inventory (``groups['all']``), read through ``hostvars``: hosts outside the
    play (``--limit``) count too, so a standby run alone still waits for the master. A host whose
    inventory sets ``ib_sm_enabled`` false runs no SM and does not count; one without the variable
    does (playbooks/fabric.yml enables the role by a role parameter, which hostvars does not show).
    An instance without ``priority`` has 0 (OpenSM's default), and so has an inventory without SMs.
    """
    top = 0
    for host in hosts or []:
        variables = hostvars.get(host) or {}
        if not boolean(variables.get("ib_sm_enabled", True), strict=False):
            continue
        for instance in variables.get("ib_sm_instances") or []:
            top = max(top, int(instance.get("priority") or 0))
    return top


def ib_sm_start_order(instances, top_priority):
    """Split this host's instances: ``first`` has the planned master's priority, ``standbys`` the rest (plan order)."""
    out = {"first": [], "standbys": []}
    for instance in instances or []:
        first = int(instance.get("priority") or 0) == int(top_priority)
        out["first" if first else "standbys"].append(instance)
    return out


def _changed(result):
    """Ansible's ``is changed`` test on a registered result (a loop result is changed if one item is)."""
    if "changed" in result:
        return bool(result["changed"])
    items = result.get("results")
    return bool(items) and isinstance(items[0], dict) and any(r.get("changed") for r in items)


def ib_sm_service_actions(
    instances, started=(), conf_before=None, conf_after=None, restart_if_changed=(), reload_if_changed=()
):
    """Which of this host's OpenSM instances to restart and which to signal (SIGHUP), by port GUID.

    instances          the host's resolved instances (``port_guid`` each)
    started            the registered results of the start tasks: an instance whose item changed (started
                       now) or was skipped (check mode, unit not installed yet) read everything at start
    conf_before/after  the registered slurps of each instance's opensm.conf before and after the template
    restart_if_changed registered results that restart every instance when changed (unit, node-name-map,
                       GUID files: OpenSM reads them only at start)
    reload_if_changed  registered results that signal every instance when changed (opensm.conf,
                       partitions.conf, qos-policy.conf: re-read on SIGHUP)

    restart = (every instance if a restart_if_changed result changed) + the instances whose opensm.conf
              changed in a restart-only option (ib_sm_restart_guids), minus the started ones;
    reload  = (every instance if a reload_if_changed result changed) minus the started and restarted ones.
    Both lists keep the order of ``instances`` and hold each GUID once.
    """
    every = [i["port_guid"] for i in instances or []]
    start_items = [r for result in started or () for r in (result or {}).get("results") or []]
    done = {r["item"]["port_guid"] for r in start_items if r.get("changed") or r.get("skipped")}
    by_conf = ib_sm_restart_guids((conf_before or {}).get("results"), (conf_after or {}).get("results"))
    restart_all = any(_changed(r) for r in restart_if_changed or ())
    reload_all = any(_changed(r) for r in reload_if_changed or ())
    restart = [g for g in _unique((every if restart_all else []) + by_conf) if g not in done]
    reload = [g for g in _unique(every if reload_all else []) if g not in done and g not in restart]
    return {"restart": restart, "reload": reload}


def _unique(guids):
    return list(dict.fromkeys(guids))


class FilterModule:
    def filters(self):
        return {
            "ib_sm_guid": ib_sm_guid,
            "ib_sm_resolve_instances": ib_sm_resolve_instances,
            "ib_sm_unresolved": ib_sm_unresolved,
            "ib_sm_restart_view": ib_sm_restart_view,
            "ib_sm_restart_guids": ib_sm_restart_guids,
            "ib_sm_top_priority": ib_sm_top_priority,
            "ib_sm_start_order": ib_sm_start_order,
            "ib_sm_service_actions": ib_sm_service_actions,
        }
