"""What a subnet-manager back end leaves to the product's own settings: located warnings, so that no part of the
spec is dropped without a word. ibprov sends a switch SM its state, priority and partitions (pkey, IPoIB flag,
members and membership) and UFM its partitions (members, membership, IPoIB, MTU, rate and SL limits); the rest
of ``subnet_manager``, the QoS policy and the Default partition stay as the switch or UFM has them, and verify
still judges the fabric's result."""

from __future__ import annotations

from collections.abc import Iterator

from ibprov.clusterspec.model import ClusterSpec, SubnetManager
from ibprov.clusterspec.rules.findings import Finding
from ibprov.clusterspec.topology import Topology

__all__ = ["backend_settings_are_sent"]

# subnet_manager fields with their OpenSM default: a value other than the default is a setting the back end
# does not receive from ibprov.
_SM_DEFAULTS: tuple[tuple[str, object], ...] = (
    ("routing_engine", ("minhop",)),
    ("roots", ()),
    ("lmc", 0),
    ("sweep_interval", 10),
    ("sm_key", None),
    ("m_key", None),
)
_WHERE = {
    "switch": "set it on the switch (MLNX-OS `ib sm ...`): ibprov sends the switch SM only its state, priority "
    "and partitions",
    "ufm": "set it in UFM's SM configuration (UFM GUI or gv.cfg/opensm.conf on the UFM server): ibprov pushes "
    "partitions only, and UFM's documented SM configuration update was not confirmed",
}


def backend_settings_are_sent(spec: ClusterSpec, _topo: Topology) -> Iterator[Finding]:
    sm = spec.subnet_manager
    if sm.backend == "opensm":
        return
    where = _WHERE[sm.backend]
    for name, default in _SM_DEFAULTS:
        if getattr(sm, name) != default:
            yield ("subnet_manager", name), f"not sent to the {sm.backend} SM by ibprov: {where}"
    yield from _qos(spec, sm)
    yield from _default_partition(spec, sm)
    if sm.backend == "switch":
        for i, part in enumerate(spec.partitions):
            for field in ("mtu", "rate", "sl"):
                if getattr(part, field) is not None:
                    yield (
                        ("partitions", i, field),
                        f"not sent to the switch SM: MLNX-OS's partition commands carry pkey, ipoib and members; "
                        f"{field} stays the switch's default (verify still checks the PKey tables)",
                    )


def _qos(spec: ClusterSpec, sm: SubnetManager) -> Iterator[Finding]:
    if not spec.qos.enabled:
        return
    if sm.backend == "ufm":
        yield (
            ("qos",),
            "UFM applies QoS per partition (mtu_limit, service_level, rate_limit from each partition's mtu, sl and "
            "rate); the VL tables, QoS levels and match rules are not sent: set them in UFM's QoS configuration",
        )
    else:
        yield ("qos",), f"QoS is not sent to the switch SM: {_WHERE['switch']}"


def _default_partition(spec: ClusterSpec, sm: SubnetManager) -> Iterator[Finding]:
    default = spec.default_partition
    if default.membership != "full" or not default.ipoib or default.mtu or default.rate or default.sl is not None:
        yield (
            ("default_partition",),
            f"the Default partition (0x7fff) stays as the {sm.backend} SM has it: ibprov manages the spec's other "
            "partitions there; verify still checks every port's 0x7fff entry against this plan",
        )
