"""The subnet manager's data: the ib_sm role variables (opensm options, partitions, QoS policy, GUID files)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ibprov.clusterspec import LoadedSpec, collector_paused
from ibprov.clusterspec.model import ClusterSpec, QosTables, SmInstance
from ibprov.clusterspec.topology import routing_roots
from ibprov.clusterspec.units import MTU_CODE, RATE_CODE
from ibprov.errors import Problem
from ibprov.identity.guids import GuidBook, fmt_guid
from ibprov.identity.partitions import PartitionPlan, UnresolvedNode, both_pkeys, plan_partitions

_QOS_PREFIX = {
    "ca": "qos_ca_",
    "switch_port0": "qos_sw0_",
    "switch_external": "qos_swe_",
    "router": "qos_rtr_",
}


@dataclass
class SmData:
    """What render derives for the SM nodes; ``problems`` lists GUIDs that could not be resolved."""

    common: dict[str, Any] = field(default_factory=dict)
    instances: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # host -> ib_sm_instances
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    partitions: PartitionPlan | None = None  # the plan's partitions (the health check's P_Keys come from it)


def _mtu_code(mtu: int | None) -> int | None:
    """Bytes (spec) -> IBTA MTU enum (partitions.conf mtu=, qos-policy mtu-limit:)."""
    return None if mtu is None else MTU_CODE[mtu]


def _rate_code(rate: float | None) -> int | None:
    """Gb/s (spec) -> SA rate enum (partitions.conf rate=, qos-policy rate-limit:)."""
    return None if rate is None else RATE_CODE[rate]


# where ibprov's apply hands Ansible the secrets it needs: a private directory in memory, one file per variable
# (ibprov/run/secrets.py); Ansible run without ibprov reads the environment
_SECRETS_DIR = "lookup('ansible.builtin.env', 'IBPROV_SECRETS_DIR')"


def _secret_expr(ref: str) -> str:
    """``env:X`` -> the file X in IBPROV_SECRETS_DIR when ibprov runs Ansible, else the environment variable X;
    ``vault:x`` -> the vaulted variable; resolved by Ansible at apply time."""
    kind, _, name = ref.partition(":")
    if kind == "env":
        from_file = f"lookup('ansible.builtin.file', {_SECRETS_DIR} ~ '/{name}')"
        return "{{ " + f"{from_file} if {_SECRETS_DIR} else lookup('ansible.builtin.env', '{name}')" + " }}"
    return "{{ " + name + " }}"


def sm_options(spec: ClusterSpec) -> dict[str, Any]:
    sm = spec.subnet_manager
    opts: dict[str, Any] = {
        "subnet_prefix": fmt_guid(spec.cluster.subnet_prefix),
        "routing_engine": ",".join(sm.routing_engine),
        "lmc": sm.lmc,
        "sweep_interval": sm.sweep_interval,
        "qos": spec.qos.enabled,
    }
    if both_pkeys(spec):
        opts["allow_both_pkeys"] = True
    if spec.qos.enabled:
        opts.update(_qos_tables("qos_", spec.qos))
        for name, prefix in _QOS_PREFIX.items():
            tables = getattr(spec.qos, name)
            if tables is not None:
                opts.update(_qos_tables(prefix, tables))
    return opts


def _qos_tables(prefix: str, t: QosTables) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if t.max_vls is not None:
        out[prefix + "max_vls"] = t.max_vls
    if t.high_limit is not None:
        out[prefix + "high_limit"] = t.high_limit
    if t.vlarb_high is not None:
        out[prefix + "vlarb_high"] = ",".join(f"{vl}:{w}" for vl, w in t.vlarb_high)
    if t.vlarb_low is not None:
        out[prefix + "vlarb_low"] = ",".join(f"{vl}:{w}" for vl, w in t.vlarb_low)
    if t.sl2vl is not None:
        out[prefix + "sl2vl"] = ",".join(str(v) for v in t.sl2vl)
    return out


def _missing_guid_problems(loaded: LoadedSpec, unresolved: Mapping[str, UnresolvedNode]) -> list[Problem]:
    """One located problem per node whose ports partitions need but whose GUIDs nothing gives yet."""
    out = []
    for node, unknown in unresolved.items():
        ports, parts = unknown.ports, unknown.partitions
        names = ", ".join(dict.fromkeys(ports))
        count = len(dict.fromkeys(ports))
        out.append(
            loaded.source.problem(
                unknown.first,
                f"no port GUID for {node} ({count} port{'s' if count != 1 else ''}: {names}), which partition"
                f"{'s' if len(set(parts)) != 1 else ''} {', '.join(dict.fromkeys(parts))} need"
                f"{'' if len(set(parts)) != 1 else 's'}: add them under {node}'s hcas[].port_guids or run "
                "`ibprov discover` to write the lock file (for the twin: --synthetic-guids)",
            )
        )
    return out


def _partition_vars(loaded: LoadedSpec, plan: PartitionPlan) -> list[dict[str, Any]]:
    """ib_sm_partitions: the planned partitions (members by port GUID) with the spec's partition settings."""
    return [
        {
            "name": planned.name,
            "pkey": planned.pkey.base,
            "ipoib": p.ipoib,
            "mtu": _mtu_code(p.mtu),
            "rate": _rate_code(p.rate),
            "sl": p.sl,
            "defmember": p.defmember,
            "members": [{"guid": f"0x{g:016x}", "membership": ms} for g, ms in planned.members],
        }
        for p, planned in zip(loaded.spec.partitions, plan.partitions, strict=True)
    ]


def _qos_policy(spec: ClusterSpec) -> dict[str, Any] | None:
    if not spec.qos.enabled:
        return None
    pkeys = {p.name: p.pkey for p in spec.partitions}
    return {
        "default_sl": spec.qos.default_sl,
        "levels": [
            {
                "name": lv.name,
                "use": lv.use,
                "sl": lv.sl,
                "mtu_limit": _mtu_code(lv.mtu_limit),
                "rate_limit": _rate_code(lv.rate_limit),
                "packet_life": lv.packet_life,
            }
            for lv in spec.qos.levels
        ],
        "match_rules": [
            {
                "use": r.use,
                "qos_level": r.qos_level,
                "pkeys": [f"0x{pkeys[name]:04x}" for name in r.partitions],
                "service_ids": list(r.service_ids),
                "qos_class": list(r.qos_class),
            }
            for r in spec.qos.match_rules
        ],
    }


def _sm_port(spec: ClusterSpec, inst: SmInstance) -> tuple[str, int]:
    node = next(n for n in spec.nodes if n.name == inst.node)
    hca = next(h for h in node.hcas if h.device == inst.hca) if inst.hca else node.hcas[0]
    return hca.device, inst.port


@collector_paused()
def build_sm_data(loaded: LoadedSpec, book: GuidBook) -> SmData:
    spec = loaded.spec
    data = SmData()
    # a switch or UFM SM: no host runs OpenSM from these files (UFM's instances name where its own SM runs)
    host_opensm = spec.subnet_manager.instances if spec.subnet_manager.backend == "opensm" else ()
    for inst in host_opensm:
        device, port = _sm_port(spec, inst)
        entry: dict[str, Any] = {"device": device, "port": port, "priority": inst.priority}
        guid = book.port_guid(inst.node, device, port)
        if guid is None:
            data.notes.append(
                f"SM port GUID of {inst.node}/{device}:{port} is not known yet: "
                "the ib_sm role reads it on the host at apply time"
            )
        else:
            entry["port_guid"] = fmt_guid(guid)
        data.instances.setdefault(inst.node, []).append(entry)
    partitions = data.partitions = plan_partitions(loaded, book)
    data.problems += _missing_guid_problems(loaded, partitions.unresolved)
    name_map = []
    hca_guid = book.hca_guid
    for node in spec.nodes:
        name, description = node.name, node.description
        for hca in node.hcas:
            g = hca_guid(name, hca.device)
            if g is not None:
                name_map.append({"guid": f"0x{g:016x}", "name": description or f"{name} {hca.device}"})
    for name, sw in loaded.topology.switches.items():
        g = book.switch_guid(name)
        if g is not None:
            name_map.append({"guid": fmt_guid(g), "name": sw.node_desc})
    data.common = {
        "ib_sm_options": sm_options(spec),
        "ib_sm_default_partition": {
            "membership": spec.default_partition.membership,
            "ipoib": spec.default_partition.ipoib,
            "mtu": _mtu_code(spec.default_partition.mtu),
            "rate": _rate_code(spec.default_partition.rate),
            "sl": spec.default_partition.sl,
            "full_members": _full_members(partitions),
        },
        "ib_sm_partitions": _partition_vars(loaded, partitions),
        "ib_sm_qos_policy": _qos_policy(spec),
        "ib_sm_node_name_map": sorted(name_map, key=lambda e: e["guid"]),
        "ib_sm_root_guids": _root_guids(loaded, book, data.notes),
        "ib_sm_cn_guids": _cn_guids(loaded, book, data.notes),
    }
    if spec.subnet_manager.sm_key:
        data.common["ib_sm_sm_key"] = _secret_expr(spec.subnet_manager.sm_key)
    if spec.subnet_manager.m_key:
        data.common["ib_sm_m_key"] = _secret_expr(spec.subnet_manager.m_key)
    return data


def _root_guids(loaded: LoadedSpec, book: GuidBook, notes: list[str]) -> list[str]:
    """root_guid_file: the GUIDs of subnet_manager.roots, else of the top-tier switches (core, else spine)."""
    engines = set(loaded.spec.subnet_manager.routing_engine)
    if not engines & {"ftree", "updn", "dnup"}:
        return []
    roots = routing_roots(loaded.spec, loaded.topology)
    guids = [book.switch_guid(name) for name in roots]
    if not roots or any(g is None for g in guids):
        top = "core" if any(s.role == "core" for s in loaded.topology.switches.values()) else "spine"
        notes.append(
            f"no root_guid_file: {'no ' + top + ' switches' if not roots else 'switch GUIDs unknown'}"
            "; OpenSM detects the roots itself"
        )
        return []
    return [fmt_guid(g) for g in sorted(g for g in guids if g is not None)]


def _cn_guids(loaded: LoadedSpec, book: GuidBook, notes: list[str]) -> list[str]:
    if "ftree" not in loaded.spec.subnet_manager.routing_engine:
        return []
    port_guid = book.port_guid
    guids = [port_guid(n.name, h.device, p) for n in loaded.spec.nodes for h in n.hcas for p in h.ports]
    if None in guids:
        notes.append("no cn_guid_file: some port GUIDs are unknown; ftree treats every CA as a compute node")
        return []
    return [f"0x{g:016x}" for g in sorted(g for g in guids if g is not None)]


def _full_members(partitions: PartitionPlan) -> list[str]:
    """Every planned SM port (known GUIDs) when Default is limited: full members whichever SM is master."""
    default = partitions.default
    return [] if default.membership == "full" else [fmt_guid(g) for g in sorted(default.sm_ports)]
