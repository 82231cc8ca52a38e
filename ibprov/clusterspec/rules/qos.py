"""QoS: VL tables within the VLs a port has, every SL in use reaching a VL with an arbitration weight on every
port class, the policy's levels and partitions known and agreeing with the partitions' SLs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar, cast

from ibprov.clusterspec.model import ClusterSpec, Qos, QosTables
from ibprov.clusterspec.positions import Path
from ibprov.clusterspec.rules.findings import Finding, hint
from ibprov.clusterspec.topology import Topology

T = TypeVar("T")

# Port classes OpenSM keeps QoS tables for (opensm.conf prefix), each falling back to the qos_* set.
PORT_CLASSES = (
    ("ca", "CA"),
    ("switch_external", "external switch"),
    ("switch_port0", "switch port 0"),
    ("router", "router"),
)
# Data VLs a port has (PortInfo VLCap): 8 on ConnectX HCAs, Quantum switches and ibsim. A VL at or above it in
# a table is silently rewritten by OpenSM (the twin showed VLArb entry 8:184 written as 0:184).
PORT_DATA_VLS = 8
_PORT_VLS = "ports have 8 data VLs (VL 0-7), whatever max_vls says"
# What OpenSM 3.3.23 uses when neither the class nor the qos_* set gives a table (qos_build_config).
DEFAULT_SL2VL = (*range(15), 7)
DEFAULT_VLARB_HIGH = ((0, 4), *((vl, 0) for vl in range(1, 15)))
DEFAULT_VLARB_LOW = ((0, 0), *((vl, 4) for vl in range(1, 15)))


def qos_is_well_formed(spec: ClusterSpec, topo: Topology) -> Iterator[Finding]:
    yield from _vl_table_problems(spec.qos)
    if spec.qos.enabled:
        yield from _sl_problems(spec)
        yield from _policy_problems(spec)


def _vl_table_problems(qos: Qos) -> Iterator[Finding]:
    base_vls = qos.max_vls or 15
    tables: list[tuple[Path, QosTables]] = [(("qos",), qos)]
    for name in ("ca", "switch_port0", "switch_external", "router"):
        sub = getattr(qos, name)
        if sub is not None:
            tables.append((("qos", name), sub))
    for path, t in tables:
        vls = t.max_vls or base_vls
        for field in ("vlarb_high", "vlarb_low"):
            for k, (vl, _w) in enumerate(getattr(t, field) or ()):
                if vl >= vls:
                    yield (*path, field, k), f"VL {vl} is not below max_vls {vls}"
                elif vl >= PORT_DATA_VLS:
                    yield (*path, field, k), f"VL {vl} does not exist: {_PORT_VLS}"
        for sl, vl in enumerate(t.sl2vl or ()):
            if vl != 15 and vl >= vls:
                yield (*path, "sl2vl", sl), f"SL {sl} maps to VL {vl}, not below max_vls {vls} (15 = drop)"
            elif vl != 15 and vl >= PORT_DATA_VLS:
                yield (*path, "sl2vl", sl), f"SL {sl} maps to VL {vl}, which does not exist: {_PORT_VLS} (15 = drop)"


def _effective(qos: Qos, cls: str, name: str, default: T) -> tuple[T, str | None]:
    """The table a port class uses: its own, else the qos_* one, else OpenSM's (source None)."""
    sub = getattr(qos, cls)
    if sub is not None and getattr(sub, name) is not None:
        return cast("T", getattr(sub, name)), f"qos.{cls}.{name}"
    if getattr(qos, name) is not None:
        return cast("T", getattr(qos, name)), f"qos.{name}"
    return default, None


def _sl_problems(spec: ClusterSpec) -> Iterator[Finding]:
    """Every SL in use reaches, on every port class, a VL that exists there and has an arbitration weight."""
    qos = spec.qos
    used_sls: list[tuple[int, Path]] = [
        (p.sl, ("partitions", i, "sl")) for i, p in enumerate(spec.partitions) if p.sl is not None
    ]
    if spec.default_partition.sl is not None:
        used_sls.append((spec.default_partition.sl, ("default_partition", "sl")))
    used_sls += [(lv.sl, ("qos", "levels", i, "sl")) for i, lv in enumerate(qos.levels)]
    used_sls.append((qos.default_sl, ("qos", "default_sl")))
    found: dict[tuple[Path, str], list[str]] = {}
    for sl, path in used_sls:
        for cls, label in PORT_CLASSES:
            message = _sl_class_problem(qos, cls, sl)
            if message:
                found.setdefault((path, message), []).append(label)
    for (path, message), labels in found.items():
        if len(labels) == len(PORT_CLASSES):
            yield path, message
        else:
            yield path, f"{message} (on {', '.join(labels)} ports)"


def _sl_class_problem(qos: Qos, cls: str, sl: int) -> str | None:
    table, table_src = _effective(qos, cls, "sl2vl", DEFAULT_SL2VL)
    vls, vls_src = _effective(qos, cls, "max_vls", 15)
    vl = table[sl]
    if vl == 15:
        return f"SL {sl} is mapped to VL 15 (dropped) by {table_src}"
    if vl >= vls:
        if table_src is None:
            return f"SL {sl} has no data VL with max_vls {vls}: set qos.sl2vl"
        return f"SL {sl} maps to VL {vl} by {table_src}, not below {vls_src or 'max_vls'} {vls}"
    if vl >= PORT_DATA_VLS:
        if table_src is None:
            return f"SL {sl} maps to VL {vl} by OpenSM's default sl2vl, and {_PORT_VLS}: set qos.sl2vl"
        return f"SL {sl} maps to VL {vl} by {table_src}, and {_PORT_VLS}"
    high, high_src = _effective(qos, cls, "vlarb_high", DEFAULT_VLARB_HIGH)
    low, low_src = _effective(qos, cls, "vlarb_low", DEFAULT_VLARB_LOW)
    if not any(v == vl and w > 0 for v, w in (*high, *low)):
        sources = f"{high_src or 'the default vlarb_high'} and {low_src or 'the default vlarb_low'}"
        return (
            f"SL {sl} maps to VL {vl}, which has no weight in {sources}: "
            "its packets are never sent (give VL {vl} a weight)".replace("{vl}", str(vl))
        )
    return None


def _policy_problems(spec: ClusterSpec) -> Iterator[Finding]:
    levels = {lv.name for lv in spec.qos.levels}
    parts = {p.name for p in spec.partitions}
    for i, lv in enumerate(spec.qos.levels):
        if lv.name.upper() == "DEFAULT":
            yield (
                ("qos", "levels", i, "name"),
                "the DEFAULT qos-level is written from qos.default_sl: set default_sl instead of a level named "
                f"{lv.name}",
            )
    yield from _partition_sl_conflicts(spec)
    for i, rule in enumerate(spec.qos.match_rules):
        if rule.qos_level not in levels:
            yield (
                ("qos", "match_rules", i, "qos_level"),
                f"unknown qos level {rule.qos_level!r}{hint(rule.qos_level, levels)}",
            )
        for j, part in enumerate(rule.partitions):
            if part not in parts:
                yield ("qos", "match_rules", i, "partitions", j), f"unknown partition {part!r}{hint(part, parts)}"


def _partition_sl_conflicts(spec: ClusterSpec) -> Iterator[Finding]:
    """A partition's sl and the level its first matching rule gives it must agree."""
    levels = {lv.name: lv for lv in spec.qos.levels}
    decided: set[str] = set()
    for i, rule in enumerate(spec.qos.match_rules):
        level = levels.get(rule.qos_level)
        if rule.service_ids or rule.qos_class:
            continue  # matches only part of the partition's traffic
        for j, name in enumerate(rule.partitions):
            part = next((p for p in spec.partitions if p.name == name), None)
            if part is None or name in decided:
                continue
            decided.add(name)
            if level is not None and part.sl is not None and part.sl != level.sl:
                yield (
                    ("qos", "match_rules", i, "partitions", j),
                    f"partition {name} has sl {part.sl}, but this rule gives its traffic level {level.name} "
                    f"with sl {level.sl}: make them agree",
                )
