"""The cluster spec: pydantic models of cluster.yaml. Strict (unknown keys are errors) and frozen.

Field descriptions double as the spec reference (docs/spec.md is generated from them).
Rules that relate several objects (names, cabling, GUIDs...) live in :mod:`ibprov.spec.rules`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from ibprov.spec.types import (
    DeviceName,
    Guid,
    IpAddress,
    IpNetwork,
    Name,
    PortNum,
    PortRef,
    SecretRef,
    Sl,
    Sl2Vl,
    VlArbTable,
    parse_endpoint,
)
from ibprov.spec.units import IPOIB_MTU_MAX, MTU_CODE, RATE_CODE, Speed, Width

Membership = Literal["full", "limited", "both"]
RoutingEngine = Literal[
    "minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp"
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _mtu_bytes(value: int | None) -> int | None:
    if value is not None and value not in MTU_CODE:
        raise ValueError(f"IB MTU must be one of {', '.join(map(str, MTU_CODE))} bytes")
    return value


def _rate_gbps(value: float | None) -> float | None:
    if value is not None and value not in RATE_CODE:
        allowed = ", ".join(f"{r:g}" for r in sorted(RATE_CODE))
        raise ValueError(f"rate must be one of {allowed} Gb/s (what OpenSM 3.3.23 can encode)")
    return value


# --------------------------------------------------------------------------------------------- cluster
class Cluster(Strict):
    name: Name = Field(description="Cluster name; used for file names and report titles.")
    subnet_prefix: Guid = Field(0xFE80000000000000, description="IB subnet prefix (opensm subnet_prefix).")
    ssh_user: str = Field("root", description="Default user Ansible logs in as.")


class Hca(Strict):
    device: DeviceName = Field(description="Device name as the kernel names it, e.g. mlx5_0.")
    ports: tuple[PortNum, ...] = Field((1,), min_length=1, description="Port numbers in use (default [1]).")
    node_guid: Guid | None = Field(None, description="Node GUID (optional; else from the lock file).")
    port_guids: dict[PortNum, Guid] = Field(default_factory=dict, description="Port number -> port GUID.")
    speed: Speed | None = Field(None, description="Expected link speed of this HCA's ports (overrides fabric).")
    width: Width | None = Field(None, description="Expected link width of this HCA's ports.")
    firmware: str | None = Field(None, description="Expected firmware version (verify --nodes).")

    @model_validator(mode="after")
    def _ports_unique_and_known(self) -> Hca:
        if len(set(self.ports)) != len(self.ports):
            raise ValueError("ports lists a port twice")
        unknown = sorted(set(self.port_guids) - set(self.ports))
        if unknown:
            raise ValueError(f"port_guids names port {unknown[0]}, which is not in ports {list(self.ports)}")
        return self


class Node(Strict):
    name: Name = Field(description="Host name (inventory name).")
    address: str | None = Field(None, description="Address Ansible connects to (default: the name).")
    user: str | None = Field(None, description="SSH user (default: cluster.ssh_user).")
    groups: tuple[Name, ...] = Field((), description="Node groups (inventory groups; partition members).")
    hcas: tuple[Hca, ...] = Field((), description="Host channel adapters.")
    description: str | None = Field(
        None, description="NodeDescription on the fabric (default: '<name> <first HCA>', as rdma-core sets it)."
    )


class Switch(Strict):
    name: Name
    node_guid: Guid | None = None
    ports: int = Field(ge=1, le=254, description="Number of external ports.")
    role: Literal["leaf", "spine", "core"]
    model: str | None = None
    description: str | None = Field(None, description="NodeDescription on the fabric (default: the name).")


# ---------------------------------------------------------------------------------------------- fabric
def _link_shorthand(value: Any) -> Any:
    return {"link": value} if isinstance(value, str) else value


class Link(Strict):
    link: str = Field(description="'A <-> B' where each end is SWITCH:PORT or NODE/HCA:PORT.")
    speed: Speed | None = Field(None, description="Override of the expected speed for this link.")
    width: Width | None = Field(None, description="Override of the expected width for this link.")

    @field_validator("link")
    @classmethod
    def _two_endpoints(cls, value: str) -> str:
        parts = value.split("<->")
        if len(parts) != 2:
            raise ValueError("a link is written 'A <-> B', e.g. 'leaf01:7 <-> node07/mlx5_0:1'")
        a, b = (parse_endpoint(p) for p in parts)
        return f"{a} <-> {b}"

    @property
    def ends(self) -> tuple[Any, Any]:
        a, b = self.link.split(" <-> ")
        return parse_endpoint(a), parse_endpoint(b)


class FatTree(Strict):
    radix: int = Field(ge=4, le=254, description="Ports per switch.")
    leaves: int = Field(ge=1)
    spines: int = Field(ge=0, description="Spines in total (split evenly across pods).")
    hosts_per_leaf: int = Field(ge=1, description="Leaf ports 1..N face the hosts.")
    uplinks_per_leaf: int = Field(ge=0, description="Leaf ports N+1.. go to the spines of its pod.")
    pods: int = Field(1, ge=1, description="Pods (leaf+spine groups); more than one needs core switches.")
    cores: int = Field(0, ge=0)
    uplinks_per_spine: int = Field(0, ge=0, description="Spine ports that go to the core switches.")
    hosts_group: Name | None = Field(None, description="Only nodes of this group are cabled (default all).")
    leaf_prefix: Name = "leaf"
    spine_prefix: Name = "spine"
    core_prefix: Name = "core"


class Fabric(Strict):
    speed: Speed = Field(description="Expected link speed (SDR .. NDR, XDR).")
    width: Width = Field(Width.X4, description="Expected link width.")
    links: tuple[Annotated[Link, BeforeValidator(_link_shorthand)], ...] = Field(
        (), description="Explicit cables ('leaf01:7 <-> node07/mlx5_0:1' or a mapping with link/speed/width)."
    )
    fat_tree: FatTree | None = Field(None, description="Generate the cabling of a fat tree.")
    empty_ports: tuple[PortRef, ...] = Field((), description="Ports deliberately left without a cable.")


# --------------------------------------------------------------------------------------- stack and SM
class Stack(Strict):
    kind: Literal["inbox", "mlnx_ofed", "doca_ofed"] = "inbox"
    version: str | None = None
    repository: str | None = Field(None, description="Package repository URL (required for OFED kinds).")

    @model_validator(mode="after")
    def _ofed_needs_source(self) -> Stack:
        if self.kind != "inbox" and (self.version is None or self.repository is None):
            raise ValueError(f"kind {self.kind} needs both version and repository (ibprov never guesses a URL)")
        return self


def _engine_list(value: Any) -> Any:
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(","))
    return value


class SmInstance(Strict):
    node: Name
    hca: DeviceName | None = Field(None, description="HCA the SM binds to (default: the node's first).")
    port: PortNum = 1
    priority: int = Field(0, ge=0, le=15, description="sm_priority: 15 wins.")


class SubnetManager(Strict):
    routing_engine: Annotated[tuple[RoutingEngine, ...], BeforeValidator(_engine_list)] = Field(
        ("minhop",), min_length=1, description="Routing engines, tried in order."
    )
    lmc: int = Field(0, ge=0, le=7)
    sweep_interval: int = Field(10, ge=0, le=3600, description="Seconds between light sweeps.")
    sm_key: SecretRef | None = None
    m_key: SecretRef | None = None
    instances: tuple[SmInstance, ...] = Field(min_length=1)


# ---------------------------------------------------------------------------------------- partitions
class Member(Strict):
    node: Name | None = None
    group: Name | None = None
    all: Literal[True] | None = None
    membership: Membership | None = Field(None, description="Default: the partition's defmember.")

    @model_validator(mode="after")
    def _exactly_one_selector(self) -> Member:
        if sum(x is not None for x in (self.node, self.group, self.all)) != 1:
            raise ValueError("a member names exactly one of node, group or all: true")
        return self


class Partition(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$", max_length=63)]
    pkey: int = Field(description="0x0001-0x7ffe (0x7fff is the Default partition).")
    ipoib: bool = Field(False, description="Create the IPoIB broadcast group.")
    mtu: Annotated[int | None, BeforeValidator(_mtu_bytes)] = Field(None, description="Bytes (256..4096).")
    rate: Annotated[float | None, BeforeValidator(_rate_gbps)] = Field(None, description="Gb/s.")
    sl: Sl | None = None
    defmember: Membership = "limited"
    members: tuple[Member, ...] = Field(min_length=1)

    @field_validator("pkey")
    @classmethod
    def _pkey_range(cls, value: int) -> int:
        if value == 0x7FFF:
            raise ValueError("0x7fff is the Default partition: configure it under default_partition")
        if not 0x0001 <= value <= 0x7FFE:
            raise ValueError(f"pkey 0x{value:x} is outside 0x0001-0x7ffe (the full-member bit 0x8000 is implied)")
        return value

    @field_validator("name")
    @classmethod
    def _not_default(cls, value: str) -> str:
        if value.lower() == "default":
            raise ValueError("'Default' is reserved: configure it under default_partition")
        return value


class DefaultPartition(Strict):
    membership: Literal["full", "limited"] = Field("full", description="What ALL ports get in 0x7fff.")
    ipoib: bool = True
    mtu: Annotated[int | None, BeforeValidator(_mtu_bytes)] = None
    rate: Annotated[float | None, BeforeValidator(_rate_gbps)] = None
    sl: Sl | None = None


# ----------------------------------------------------------------------------------------------- QoS
class QosTables(Strict):
    max_vls: Literal[1, 2, 4, 8, 15] | None = None
    high_limit: int | None = Field(None, ge=0, le=255)
    vlarb_high: VlArbTable | None = None
    vlarb_low: VlArbTable | None = None
    sl2vl: Sl2Vl | None = Field(None, description="16 VLs, one per SL; VL 15 drops the SL.")


class QosLevel(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]
    sl: Sl
    mtu_limit: Annotated[int | None, BeforeValidator(_mtu_bytes)] = None
    rate_limit: Annotated[float | None, BeforeValidator(_rate_gbps)] = None
    packet_life: int | None = Field(None, ge=0, le=31)
    use: str | None = None


class QosMatchRule(Strict):
    qos_level: str
    partitions: tuple[str, ...] = Field((), description="Match traffic in these partitions (by name).")
    service_ids: tuple[Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]+(-0x[0-9a-fA-F]+)?$")], ...] = ()
    qos_class: tuple[Annotated[int, Field(ge=0, le=255)], ...] = ()
    use: str | None = None


class Qos(QosTables):
    enabled: bool = False
    default_sl: Sl = Field(0, description="SL of the mandatory DEFAULT qos-level.")
    ca: QosTables | None = None
    switch_port0: QosTables | None = None
    switch_external: QosTables | None = None
    router: QosTables | None = None
    levels: tuple[QosLevel, ...] = ()
    match_rules: tuple[QosMatchRule, ...] = ()


# --------------------------------------------------------------------------------------------- IPoIB
class IpoibInterface(Strict):
    partition: str = Field("default", description="Partition name, or 'default' for 0x7fff.")
    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_.]{0,14}$")] | None = Field(
        None, description="Interface name (default: parent, or parent.PKEY for a child, e.g. ib0.8010)."
    )
    parent: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,14}$")] = "ib0"
    mode: Literal["datagram", "connected"] = "datagram"
    mtu: int | None = Field(None, ge=68, description="Default 2044 (datagram) or 65520 (connected).")
    subnet: IpNetwork
    pool_start: IpAddress | None = Field(None, description="First address handed out.")
    addresses: dict[Name, IpAddress] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _mtu_fits_mode(self) -> IpoibInterface:
        limit = IPOIB_MTU_MAX[self.mode]
        if self.mtu is not None and self.mtu > limit:
            raise ValueError(f"mtu {self.mtu} is above {limit}, the most {self.mode} mode allows")
        return self

    @property
    def effective_mtu(self) -> int:
        return self.mtu if self.mtu is not None else (2044 if self.mode == "datagram" else 65520)


# ----------------------------------------------------------------------------------------- MPI / UCX
class Rail(Strict):
    name: Name
    devices: tuple[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*:\d+$")], ...] = Field(min_length=1)


class Mpi(Strict):
    ucx_tls: tuple[str, ...] = Field(("rc", "ud", "sm", "self"), description="UCX_TLS transports.")
    rails: tuple[Rail, ...] = Field((), description="UCX_NET_DEVICES per rail, e.g. mlx5_0:1.")
    forbid_tcp: bool = Field(True, description="Treat a fall-back to TCP as a failure.")


# ------------------------------------------------------------------------------------------ acceptance
ERROR_THRESHOLDS_DEFAULT = {
    "SymbolErrorCounter": 10,
    "LinkErrorRecoveryCounter": 10,
    "LinkDownedCounter": 10,
    "PortRcvErrors": 10,
    "LocalLinkIntegrityErrors": 10,
    "ExcessiveBufferOverrunErrors": 10,
    "PortXmitDiscards": 100,
    "PortRcvRemotePhysicalErrors": 100,
    "PortRcvSwitchRelayErrors": 100,
    "VL15Dropped": 100,
    "PortXmitWait": 1000,
}
ErrorCounter = Literal[
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "PortXmitDiscards",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "VL15Dropped",
    "PortXmitWait",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
]
LatencyTest = Literal["ib_write_lat", "ib_send_lat", "ib_read_lat", "ib_atomic_lat"]
BandwidthTest = Literal["ib_write_bw", "ib_send_bw", "ib_read_bw", "ib_atomic_bw"]


class Acceptance(Strict):
    latency_us: dict[LatencyTest, Annotated[float, Field(gt=0)]] = Field(
        default_factory=lambda: {"ib_write_lat": 2.5, "ib_send_lat": 2.5, "ib_read_lat": 4.5},
        description="Upper bound of the 2-byte average latency per test, in microseconds.",
    )
    bandwidth_fraction: float = Field(0.9, gt=0, le=1, description="Pass if BW >= fraction x line rate.")
    bandwidth_tests: tuple[BandwidthTest, ...] = ("ib_write_bw",)
    error_thresholds: dict[ErrorCounter, Annotated[int, Field(ge=0)]] = Field(
        default_factory=lambda: dict(ERROR_THRESHOLDS_DEFAULT),
        description="Per-counter limits (defaults: rdma-core's error_thresholds); keys you give override.",
    )
    soak_seconds: int = Field(0, ge=0, description="Clear counters, wait, read again (0 = no soak).")
    pairs: Literal["ring", "all", "leaf_spread"] = Field(
        "ring", description="Pair schedule: ring (each node to the next), all pairs, or across leaves."
    )

    @field_validator("error_thresholds", mode="after")
    @classmethod
    def _merge_defaults(cls, value: dict[str, int]) -> dict[str, int]:
        return {**ERROR_THRESHOLDS_DEFAULT, **value}


# ------------------------------------------------------------------------------------------ top level
class ClusterSpec(Strict):
    version: Literal[1] = Field(1, description="Spec format version.")
    cluster: Cluster
    nodes: tuple[Node, ...] = Field(min_length=1)
    switches: tuple[Switch, ...] = ()
    fabric: Fabric
    stack: Stack = Stack()
    subnet_manager: SubnetManager
    partitions: tuple[Partition, ...] = ()
    default_partition: DefaultPartition = DefaultPartition()
    qos: Qos = Qos()
    ipoib: tuple[IpoibInterface, ...] = ()
    mpi: Mpi = Mpi()
    acceptance: Acceptance = Acceptance()


__all__ = [
    "Acceptance",
    "Cluster",
    "ClusterSpec",
    "DefaultPartition",
    "Fabric",
    "FatTree",
    "Hca",
    "IpoibInterface",
    "Link",
    "Member",
    "Mpi",
    "Node",
    "Partition",
    "Qos",
    "QosLevel",
    "QosMatchRule",
    "QosTables",
    "Rail",
    "SmInstance",
    "Stack",
    "SubnetManager",
    "Switch",
]
