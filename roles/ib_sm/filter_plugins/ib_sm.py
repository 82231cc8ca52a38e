# Copyright: ibprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Filters for the ib_sm role.

ib_sm_guid(value)                          -> "0x" + 16 lowercase hex digits
ib_sm_resolve_instances(instances, ibstat) -> instances with port_guid (from `ibstat <device> <port>` when absent)
ib_sm_unresolved(instances, ibstat)        -> human-readable list of instances whose GUID is still unknown
ib_sm_restart_view(text)                   -> the restart-only options of an opensm.conf text
ib_sm_restart_guids(before, after)         -> instances whose opensm.conf changed in a restart-only option
"""

from __future__ import annotations

import base64
import re

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


class FilterModule:
    def filters(self):
        return {
            "ib_sm_guid": ib_sm_guid,
            "ib_sm_resolve_instances": ib_sm_resolve_instances,
            "ib_sm_unresolved": ib_sm_unresolved,
            "ib_sm_restart_view": ib_sm_restart_view,
            "ib_sm_restart_guids": ib_sm_restart_guids,
        }
