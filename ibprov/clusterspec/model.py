"""The cluster spec: pydantic models of cluster.yaml. Strict (unknown keys are errors) and frozen.

Field descriptions double as the spec reference (docs/spec.md is generated from them).
Rules that relate several objects (names, cabling, GUIDs...) live in :mod:`ibprov.clusterspec.rules`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from ibprov.clusterspec.physical import EFFECTIVE_BER_MAX, RAW_BER_MAX, RAW_BER_WARN
from ibprov.clusterspec.types import (
    PATTERN_WORDS,
    AbsolutePath,
    Description,
    DeviceName,
    Guid,
    HostAddress,
    IpAddress,
    IpNetwork,
    Label,
    LocalPath,
    LoginName,
    Name,
    PolicyText,
    PortNum,
    PortRef,
    SecretRef,
    Sl,
    Sl2Vl,
    Transport,
    UrlText,
    VersionText,
    VlArbTable,
    parse_endpoint,
)
from ibprov.clusterspec.units import IPOIB_MTU_MAX, MTU_CODE, RATE_CODE, Speed, Width
from ibprov.pkey import (
    DEFAULT_BASE,
    FULL_MEMBER_BIT,
    MAX_PARTITION_BASE,
    MIN_PARTITION_BASE,
    is_valid_partition_base,
)

Membership = Literal["full", "limited", "both"]
RailLayout = Literal["node-grouped", "rail-optimized"]
RoutingEngine = Literal["minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp"]


@dataclass(frozen=True)
class Renamed:
    """Spellings of a field's value that format version 1 once had, each with the one to write now.

    The compatibility promise (docs/spec.md): a spec that validated under an earlier release of the same
    ``version`` still validates. Put in a field's ``Annotated`` metadata, this reads an old spelling as its new
    one before the field's own validation, so every model, rule and renderer downstream sees only the new
    spelling; the loader finds the same metadata and warns where the old spelling was written (FILE:LINE:COL,
    which only the loader knows), the JSON Schema accepts the old spellings as deprecated, and the reference
    in docs/spec.md lists them."""

    spellings: tuple[tuple[str, str], ...]  # (old, new), in the order the reference lists them

    def new_spelling(self, value: Any) -> Any:
        """``value`` as written now (anything but an old spelling unchanged)."""
        if isinstance(value, str):
            for old, new in self.spellings:
                if value == old:
                    return new
        return value

    def warning(self, value: Any) -> str | None:
        """The deprecation message for ``value`` as written, or None when it is no old spelling."""
        if isinstance(value, str):
            for old, new in self.spellings:
                if value == old:
                    return f"{old!r} is deprecated, write {new!r}"
        return None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self.new_spelling, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        current = handler(schema)
        words = ", ".join(f"{old} (write {new})" for old, new in self.spellings)
        old = {"enum": [old for old, _ in self.spellings], "deprecated": True, "description": f"renamed: {words}"}
        return {"anyOf": [current, old]}


GroupName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=63)]
PATTERN_WORDS.update(
    {
        r"^[A-Za-z_][A-Za-z0-9_]*$": "letters, digits and '_', not starting with a digit",
        r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$": "letters, digits, '_', '.' and '-', not starting with '.' or '-'",
        r"^[A-Za-z0-9_.-]+$": "letters, digits, '_', '.' and '-'",
        r"^0x[0-9a-fA-F]+(-0x[0-9a-fA-F]+)?$": "a hex number 0x... or a range 0x...-0x...",
        r"^[a-z][a-z0-9_.]{0,14}$": "an interface name: up to 15 lower-case letters, digits, '_' and '.', "
        "starting with a letter",
        r"^[a-z][a-z0-9_]{0,14}$": "an interface name: up to 15 lower-case letters, digits and '_', "
        "starting with a letter",
        r"^[a-z][a-z0-9_]*:\d+$": "DEVICE:PORT, e.g. mlx5_0:1",
        r"^/[A-Za-z0-9_./+-]+$": "an absolute path of letters, digits, '_', '.', '/', '+' and '-'",
        r"^[A-Za-z0-9*][A-Za-z0-9 ,.:*/~-]*$": "a systemd calendar (OnCalendar), e.g. daily or *-*-* 00/6:00:00: "
        "letters, digits, spaces and , . : * / ~ -",
        r"^[A-Za-z0-9_./+~-]+$": "a path of letters, digits, '_', '.', '/', '+', '~' and '-'",
        r"^https?://[A-Za-z0-9][A-Za-z0-9.:_\[\]-]*(:[0-9]{1,5})?/?$": "a management address https://host or "
        "https://host:port (no path)",
        r"^[=^]?[A-Za-z0-9_.:-]+(,[A-Za-z0-9_.:-]+)*$": "interface names separated by ',', optionally after "
        "'=' (exact) or '^' (not), e.g. =eth0",
    }
)
RESERVED_GROUPS = {"all", "ungrouped", "ib_nodes", "ib_sm", "slurm_controller", "ib_verify_timer"}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _mtu_bytes(value: int | None) -> int | None:
    if value is not None and not (_is_number(value) and value in MTU_CODE):
        raise ValueError(f"IB MTU must be one of {', '.join(map(str, MTU_CODE))} bytes")
    return value


def _rate_gbps(value: float | None) -> float | None:
    if value is not None and not (_is_number(value) and value in RATE_CODE):
        allowed = ", ".join(f"{r:g}" for r in sorted(RATE_CODE))
        raise ValueError(f"rate must be one of {allowed} Gb/s (what OpenSM 3.3.23 can encode)")
    return value


# --------------------------------------------------------------------------------------------- cluster
class Cluster(Strict):
    name: Name = Field(description="Cluster name; used for file names and report titles.")
    subnet_prefix: Guid = Field(0xFE80000000000000, description="IB subnet prefix (opensm subnet_prefix).")
    ssh_user: LoginName = Field("root", description="Default user Ansible logs in as.")


class Hca(Strict):
    device: DeviceName = Field(description="Device name as the kernel names it, e.g. mlx5_0.")
    ports: tuple[PortNum, ...] = Field((1,), min_length=1, description="Port numbers in use (default [1]).")
    node_guid: Guid | None = Field(None, description="Node GUID (optional; else from the lock file).")
    port_guids: dict[PortNum, Guid] = Field(default_factory=dict, description="Port number -> port GUID.")
    speed: Speed | None = Field(None, description="Expected link speed of this HCA's ports (overrides fabric).")
    width: Width | None = Field(None, description="Expected link width of this HCA's ports.")
    firmware: VersionText | None = Field(None, description="Expected firmware version (verify --nodes).")
    gid_index: int | None = Field(
        None, ge=0, le=255, description="GID index perftest uses on this HCA (-x; RoCE needs it, IB does not)."
    )
    numa_node: int | None = Field(
        None, ge=0, le=1023, description="The HCA's NUMA node: perftest runs bound to it (numactl -N/-m)."
    )
    pcie_generation: int | None = Field(
        None,
        ge=1,
        le=6,
        description="The PCIe generation the HCA must train at (verify --physical; default: the slowest that "
        "carries the fastest planned port's rate at x16, e.g. 5 for NDR 400).",
    )
    pcie_width: Literal[1, 2, 4, 8, 16, 32] | None = Field(
        None, description="The PCIe width the HCA must train at (default: the fewest lanes that carry its rate)."
    )
    gpu: int | None = Field(
        None,
        ge=0,
        le=63,
        description="The GPU (nvidia-smi index) this HCA serves with GPUDirect RDMA: verify --physical checks "
        "the HCA is local to it (acceptance.physical.gpu_locality). Default: its rail's gpu (mpi.rails), or on a "
        "rail-optimized fabric with nodes[].gpus, GPU i for rail i.",
    )

    @field_validator("ports")
    @classmethod
    def _ports_unique(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if len(set(value)) != len(value):
            raise ValueError("ports lists a port twice")
        return value

    @field_validator("port_guids")
    @classmethod
    def _ports_known(cls, value: dict[int, int], info: ValidationInfo) -> dict[int, int]:
        ports = info.data.get("ports")
        unknown = sorted(set(value) - set(ports)) if ports is not None else []
        if unknown:
            raise ValueError(f"port_guids names port {unknown[0]}, which is not in ports {list(ports or ())}")
        return value


class Node(Strict):
    name: Name = Field(description="Host name (inventory name).")
    address: HostAddress | None = Field(None, description="Address Ansible connects to (default: the name).")
    user: LoginName | None = Field(None, description="SSH user (default: cluster.ssh_user).")
    groups: tuple[GroupName, ...] = Field(
        (),
        description="Node groups: Ansible inventory groups and partition members ([A-Za-z_][A-Za-z0-9_]*).",
    )

    @field_validator("groups")
    @classmethod
    def _groups_not_reserved(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        reserved = sorted(set(value) & RESERVED_GROUPS)
        if reserved:
            raise ValueError(f"group name {reserved[0]!r} is reserved by ibprov/Ansible")
        return value

    hcas: tuple[Hca, ...] = Field((), description="Host channel adapters.")
    gpus: int = Field(
        0,
        ge=0,
        le=64,
        description="GPUs of the node (0: none). On a rail-optimized fat tree, rail i's HCA serves GPU i "
        "(verify --physical checks it is local to it) unless the HCA or its rail names another.",
    )
    description: Description | None = Field(
        None,
        description=(
            "NodeDescription on the fabric (default: '<name> <first HCA>', as rdma-core sets it); "
            'printable ASCII without " # { } \\, at most 64 characters.'
        ),
    )


class Switch(Strict):
    name: Name = Field(description="Switch name, as links refer to it (leaf01:7).")
    node_guid: Guid | None = Field(None, description="Node GUID (optional; else from the lock file).")
    ports: int = Field(ge=1, le=254, description="Number of external ports.")
    role: Literal["leaf", "spine", "core"] = Field(description="Tier: leaf (faces the hosts), spine or core.")
    model: Label | None = Field(None, description="Hardware model, for reports (e.g. QM8700).")
    description: Description | None = Field(
        None, description="NodeDescription on the fabric (default: the name); the same characters as a node's."
    )


# ---------------------------------------------------------------------------------------------- fabric
def _link_shorthand(value: Any) -> Any:
    return {"link": value} if isinstance(value, str) else value


CableMedium = Literal["dac", "acc", "aoc", "transceiver", "copper", "optical"]
CableTier = Literal[
    "host-leaf", "host-spine", "host-core", "leaf-leaf", "leaf-spine", "leaf-core", "spine-spine", "spine-core",
    "core-core",
]  # fmt: skip


class CablePlan(Strict):
    medium: CableMedium | None = Field(
        None,
        description="dac (passive copper), acc (active copper), aoc (active optical cable), transceiver (optical "
        "modules and fibre), or a family: copper (dac or acc), optical (aoc or transceiver).",
    )
    max_length_m: float | None = Field(
        None, gt=0, le=10000, description="The longest cable (or, for transceivers, the least reach) accepted, in m."
    )
    part_numbers: tuple[Label, ...] = Field((), description="Accepted vendor part numbers (empty: any).")
    vendors: tuple[Label, ...] = Field(
        (), description="Accepted vendor names as the module reports them (empty: fabric.cables.vendors, or any)."
    )


class Cables(Strict):
    copper_max_tier: Literal["none", "host-leaf", "leaf-spine", "spine-core"] = Field(
        "host-leaf",
        description="Cables up to this tier are copper, the ones above optical, where neither the link nor "
        "tiers says (the rule of ibprov design --dac-max-tier).",
    )
    tiers: dict[CableTier, CablePlan] = Field(
        default_factory=dict, description="The cable planned per tier (host-leaf, leaf-spine, leaf-leaf, ...)."
    )
    vendors: tuple[Label, ...] = Field(
        (), description="Accepted cable and module vendors, as modules report them (empty: any)."
    )


class Link(Strict):
    link: str = Field(description="'A <-> B' where each end is SWITCH:PORT or NODE/HCA:PORT.")
    speed: Speed | None = Field(None, description="Override of the expected speed for this link.")
    width: Width | None = Field(None, description="Override of the expected width for this link.")
    cable: CablePlan | None = Field(None, description="The cable planned for this link (overrides fabric.cables).")

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
    leaves: int = Field(ge=1, description="Leaf switches in total (split evenly across pods).")
    spines: int = Field(ge=0, description="Spines in total (split evenly across pods).")
    hosts_per_leaf: int = Field(ge=1, description="Leaf ports 1..N face the hosts.")
    uplinks_per_leaf: int = Field(ge=0, description="Leaf ports N+1.. go to the spines of its pod.")
    pods: int = Field(1, ge=1, description="Pods (leaf+spine groups); more than one needs core switches.")
    cores: int = Field(0, ge=0, description="Core switches (above the spines; needed for more than one pod).")
    uplinks_per_spine: int = Field(0, ge=0, description="Spine ports that go to the core switches.")
    hosts_group: GroupName | None = Field(None, description="Only nodes of this group are cabled (default all).")
    rails: RailLayout = Field(
        "node-grouped",
        description=(
            "How a node's HCA ports (every port its hcas list, in order; with mpi.rails, the ports the rails "
            "name, in rail order) meet the leaves: node-grouped puts them on one leaf, one after the other; "
            "rail-optimized makes port i of a node rail i (with mpi.rails, rail i is mpi.rails[i]): in each "
            "scalable unit, rail i goes to that unit's leaf (group) for rail i, and the spines join the rails."
        ),
    )
    unit_nodes: int | None = Field(
        None,
        ge=1,
        description=(
            "rail-optimized: nodes per scalable unit, in the order they are listed (default: as many as the "
            "unit's leaves of one rail have host ports)."
        ),
    )
    unit_leaves: int | None = Field(
        None,
        ge=1,
        description=(
            "rail-optimized: leaves per scalable unit, a multiple of the rails; each rail gets "
            "unit_leaves / rails of them, in rail order (default: one leaf per rail)."
        ),
    )
    leaf_prefix: Name = Field("leaf", description="Name prefix of generated leaves: leaf01, leaf02, ...")
    spine_prefix: Name = Field("spine", description="Name prefix of generated spines.")
    core_prefix: Name = Field("core", description="Name prefix of generated cores.")


class Fabric(Strict):
    speed: Speed = Field(description="Expected link speed (SDR .. NDR, XDR).")
    width: Width = Field(Width.X4, description="Expected link width.")
    links: tuple[Annotated[Link, BeforeValidator(_link_shorthand)], ...] = Field(
        (), description="Explicit cables ('leaf01:7 <-> node07/mlx5_0:1' or a mapping with link/speed/width)."
    )
    fat_tree: FatTree | None = Field(None, description="Generate the cabling of a fat tree.")
    empty_ports: tuple[PortRef, ...] = Field((), description="Ports deliberately left without a cable.")
    cables: Cables = Field(
        Cables(), description="What cable each link should be (verify --physical, the cable report)."
    )


# --------------------------------------------------------------------------------------- stack and SM
class Stack(Strict):
    kind: Literal["inbox", "mlnx_ofed", "doca_ofed"] = Field(
        "inbox", description="inbox (the distribution's rdma-core), mlnx_ofed or doca_ofed (from repository)."
    )
    version: VersionText | None = Field(None, description="Stack version (required for OFED kinds).")
    repository: UrlText | None = Field(None, description="Package repository URL (required for OFED kinds).")

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
    node: Name = Field(description="Node that runs this OpenSM.")
    hca: DeviceName | None = Field(None, description="HCA the SM binds to (default: the node's first).")
    port: PortNum = Field(1, description="HCA port the SM binds to.")
    priority: int = Field(
        0,
        ge=0,
        le=15,
        description=(
            "sm_priority: 15 wins (a tie goes to the lower port GUID). OpenSM 3.3.23 always hands mastership "
            "to the greater SM: a returning SM with a higher priority takes over again; to keep the current "
            "master, give it the highest priority (see docs/verify.md)."
        ),
    )


CONTRACT_TESTED = "contract-tested, not run against the product"
SmBackendKind = Literal["opensm", "switch", "ufm"]
ManagementUrl = Annotated[
    str, Field(pattern=r"^https?://[A-Za-z0-9][A-Za-z0-9.:_\[\]-]*(:[0-9]{1,5})?/?$", max_length=300)
]


class SwitchSm(Strict):
    """The SM embedded in a managed switch (MLNX-OS), configured through the switch's JSON API."""

    name: Name = Field(description="The switch (of the fabric's switches) whose embedded SM runs the subnet.")
    url: ManagementUrl = Field(
        description="The switch's management address, https://host[:port] (the JSON API needs `web https enable`)."
    )
    username: SecretRef = Field(description="Login name as a reference (env:VARIABLE or vault:name).")
    password: SecretRef = Field(description="Password as a reference (env:VARIABLE or vault:name).")
    verify_tls: bool = Field(
        True, description="Verify the switch's TLS certificate (against ca_file, else the system's CAs)."
    )
    ca_file: LocalPath | None = Field(None, description="CA bundle that signed the switch's certificate.")
    priority: int = Field(15, ge=0, le=15, description="The switch SM's sm priority (15 wins).")
    save: bool = Field(True, description="Save the running configuration (`configuration write`) after a change.")
    prune: bool = Field(
        False,
        description="Remove partitions the switch holds that the spec does not name (default: leave them, and "
        "plan and verify name them).",
    )


class UfmSm(Strict):
    """NVIDIA UFM Enterprise: its SM runs on the UFM server(s); partitions are pushed through its REST API."""

    url: ManagementUrl = Field(description="UFM's address, https://host[:port].")
    auth: Literal["basic", "session", "token"] = Field(
        "basic",
        description="basic (user and password on each call, /ufmRest), session (POST /dologin, cookie, /ufmRestV2) "
        "or token (an access token, /ufmRestV3).",
    )
    username: SecretRef | None = Field(None, description="Login name reference (basic and session).")
    password: SecretRef | None = Field(None, description="Password reference (basic and session).")
    token: SecretRef | None = Field(None, description="Access token reference (token).")
    verify_tls: bool = Field(True, description="Verify UFM's TLS certificate (against ca_file, else the system's CAs).")
    ca_file: LocalPath | None = Field(None, description="CA bundle that signed UFM's certificate.")
    prune: bool = Field(
        False,
        description="Delete partitions UFM holds that the spec does not name (default: leave them -- other tools, "
        "such as ib-kubernetes, create partitions in UFM too -- and plan and verify name them).",
    )

    @model_validator(mode="after")
    def _credentials(self) -> UfmSm:
        if self.auth == "token" and self.token is None:
            raise ValueError("auth: token needs token (a reference, e.g. env:UFM_TOKEN)")
        if self.auth != "token" and (self.username is None or self.password is None):
            raise ValueError(f"auth: {self.auth} needs username and password (references, e.g. env:UFM_PASSWORD)")
        return self


class SubnetManager(Strict):
    backend: SmBackendKind = Field(
        "opensm",
        description="Who runs the SM: opensm (host OpenSM, the ib_sm role), switch (a managed switch's embedded "
        f"SM, its JSON API; {CONTRACT_TESTED}) or ufm (NVIDIA UFM, partitions via its REST API; {CONTRACT_TESTED}).",
    )
    switch: SwitchSm | None = Field(None, description="backend: switch: the switch whose SM runs the subnet.")
    ufm: UfmSm | None = Field(None, description="backend: ufm: the UFM server's REST API.")
    routing_engine: Annotated[tuple[RoutingEngine, ...], BeforeValidator(_engine_list)] = Field(
        ("minhop",), min_length=1, description="Routing engines, tried in order."
    )
    roots: tuple[Name, ...] = Field(
        (),
        description=(
            "Switches updn, dnup and ftree use as roots (root_guid_file); default: the top-tier switches (core, "
            "else spine)."
        ),
    )
    lmc: int = Field(0, ge=0, le=7, description="LID mask control: 2^lmc LIDs per port (ftree and lash need 0).")
    sweep_interval: int = Field(10, ge=0, le=3600, description="Seconds between light sweeps.")
    sm_key: SecretRef | None = Field(
        None,
        description="SM_Key as a reference (env:VARIABLE or vault:name), never the key itself. It keeps the planned "
        "SMs' election among themselves, not secret from the fabric: OpenSM 3.3.23 answers SMInfo with its SM_Key "
        "to any SM unless M_Key protection is on (m_key, protection level 1 or more), and an SM with another key "
        "logs the key it was sent (ERR 2F18).",
    )
    m_key: SecretRef | None = Field(
        None, description="M_Key as a reference (env:VARIABLE or vault:name), never the key itself."
    )
    instances: tuple[SmInstance, ...] = Field(
        (),
        description="Nodes that run OpenSM; exactly one has the highest priority (the master). backend: ufm: the "
        "UFM server ports where UFM's own SM runs (ibprov installs no OpenSM there); backend: switch: none.",
    )


# ---------------------------------------------------------------------------------------- partitions
class Member(Strict):
    node: Name | None = Field(None, description="One node, by name.")
    group: GroupName | None = Field(None, description="Every node of this group.")
    all: Literal[True] | None = Field(
        None, description="true: every HCA port of every node (each listed by port GUID in partitions.conf)."
    )
    rail: Name | None = Field(
        None,
        description=(
            "Only the HCA ports of this mpi rail (its DEVICE:PORT entries) on the nodes node, group or all: true "
            "selects. Where entries overlap, the most specific one sets a port's membership: node and rail, "
            "node, group and rail, group, all and rail, all (between equals, the strongest membership)."
        ),
    )
    membership: Membership | None = Field(None, description="Default: the partition's defmember.")

    @model_validator(mode="after")
    def _exactly_one_selector(self) -> Member:
        if sum(x is not None for x in (self.node, self.group, self.all)) != 1:
            raise ValueError("a member names exactly one of node, group or all: true")
        return self


class Partition(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$", max_length=63)] = Field(
        description="Partition name (partitions.conf)."
    )
    pkey: int = Field(description="0x0001-0x7ffe (0x7fff is the Default partition).")
    ipoib: bool = Field(False, description="Create the IPoIB broadcast group.")
    mtu: Annotated[int | None, BeforeValidator(_mtu_bytes)] = Field(None, description="Bytes (256..4096).")
    rate: Annotated[float | None, BeforeValidator(_rate_gbps)] = Field(None, description="Gb/s.")
    sl: Sl | None = Field(None, description="Service level of the partition's traffic (needs qos.enabled).")
    defmember: Membership = Field("limited", description="Membership of members that do not give one.")
    members: tuple[Member, ...] = Field(
        min_length=1, description="Nodes, groups or all ports in the partition, each optionally only one rail."
    )

    @field_validator("pkey")
    @classmethod
    def _pkey_range(cls, value: int) -> int:
        if value == DEFAULT_BASE:
            raise ValueError(f"0x{DEFAULT_BASE:04x} is the Default partition: configure it under default_partition")
        if not is_valid_partition_base(value):
            raise ValueError(
                f"pkey 0x{value:x} is outside 0x{MIN_PARTITION_BASE:04x}-0x{MAX_PARTITION_BASE:04x} "
                f"(the full-member bit 0x{FULL_MEMBER_BIT:04x} is implied)"
            )
        return value

    @field_validator("name")
    @classmethod
    def _not_default(cls, value: str) -> str:
        if value.lower() == "default":
            raise ValueError("'Default' is reserved: configure it under default_partition")
        return value


class DefaultPartition(Strict):
    membership: Literal["full", "limited"] = Field("full", description="What ALL ports get in 0x7fff.")
    ipoib: bool = Field(True, description="Create the IPoIB broadcast group of 0x7fff (ib0 needs it).")
    mtu: Annotated[int | None, BeforeValidator(_mtu_bytes)] = Field(
        None, description="IB MTU in bytes (256..4096; OpenSM's default is 2048)."
    )
    rate: Annotated[float | None, BeforeValidator(_rate_gbps)] = Field(
        None, description="Rate in Gb/s (OpenSM's default is 10)."
    )
    sl: Sl | None = Field(None, description="Service level (needs qos.enabled).")


# ----------------------------------------------------------------------------------------------- QoS
class QosTables(Strict):
    max_vls: Literal[1, 2, 4, 8, 15] | None = Field(
        None, description="Data VLs to use (qos_max_vls; OpenSM's default is 15)."
    )
    high_limit: int | None = Field(
        None,
        ge=0,
        le=255,
        description="High-priority data sent before a low-priority packet, in 4 KB units (255 = no limit).",
    )
    vlarb_high: VlArbTable | None = Field(
        None, description='High-priority VL arbitration: VL:WEIGHT pairs, e.g. "0:4,1:0" (weight in 64-byte units).'
    )
    vlarb_low: VlArbTable | None = Field(
        None, description='Low-priority VL arbitration: VL:WEIGHT pairs, e.g. "0:0,1:4".'
    )
    sl2vl: Sl2Vl | None = Field(None, description="16 VLs, one per SL; VL 15 drops the SL.")


class QosLevel(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] = Field(
        description="Level name, referred to by match_rules."
    )
    sl: Sl = Field(description="Service level of traffic at this level.")
    mtu_limit: Annotated[int | None, BeforeValidator(_mtu_bytes)] = Field(
        None, description="Largest IB MTU in bytes for this level."
    )
    rate_limit: Annotated[float | None, BeforeValidator(_rate_gbps)] = Field(
        None, description="Highest rate in Gb/s for this level."
    )
    packet_life: int | None = Field(None, ge=0, le=31, description="Packet lifetime (IBTA encoding).")
    use: PolicyText | None = Field(None, description="Free text (use: in qos-policy.conf); one line, no # or quotes.")


class QosMatchRule(Strict):
    qos_level: str = Field(description="Name of the level matching traffic gets.")
    partitions: tuple[str, ...] = Field((), description="Match traffic in these partitions (by name).")
    service_ids: tuple[Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]+(-0x[0-9a-fA-F]+)?$")], ...] = Field(
        (), description="Service IDs or ranges (0x...-0x...)."
    )
    qos_class: tuple[Annotated[int, Field(ge=0, le=255)], ...] = Field((), description="QoS class values.")
    use: PolicyText | None = Field(None, description="Free text (use: in qos-policy.conf); one line, no # or quotes.")


class Qos(QosTables):
    enabled: bool = Field(False, description="Turn QoS on in OpenSM (qos TRUE); partition and level SLs need it.")
    default_sl: Sl = Field(0, description="SL of the mandatory DEFAULT qos-level.")
    ca: QosTables | None = Field(
        None, description="Tables for CA ports (qos_ca_*); unset values fall back to the ones above."
    )
    switch_port0: QosTables | None = Field(None, description="Tables for switch port 0 (qos_sw0_*).")
    switch_external: QosTables | None = Field(
        None,
        description="Tables for every external switch port, host-facing and switch-to-switch alike (qos_swe_*).",
    )
    router: QosTables | None = Field(None, description="Tables for router ports (qos_rtr_*).")
    levels: tuple[QosLevel, ...] = Field(
        (), description="qos-levels of qos-policy.conf (the DEFAULT level comes from default_sl)."
    )
    match_rules: tuple[QosMatchRule, ...] = Field(
        (), description="qos-match-rules of qos-policy.conf; the first match wins."
    )


# --------------------------------------------------------------------------------------------- IPoIB
class IpoibInterface(Strict):
    partition: str = Field("default", description="Partition name, or 'default' for 0x7fff.")
    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_.]{0,14}$")] | None = Field(
        None, description="Interface name (default: parent, or parent.PKEY for a child, e.g. ib0.8010)."
    )
    parent: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,14}$")] = Field(
        "ib0",
        description="Parent interface: the IPoIB device of the HCA port (with rail: the rail's ipoib_parent).",
    )
    rail: Name | None = Field(
        None,
        description=(
            "The interface lives on this mpi rail's HCA port on every member node that has it (those alone get "
            "it and a pool address); its parent is the rail's ipoib_parent (give no parent here)."
        ),
    )
    mode: Literal["datagram", "connected"] = Field(
        "datagram", description="datagram (MTU up to 4092) or connected (MTU up to 65520)."
    )
    mtu: int | None = Field(None, ge=68, description="Default 2044 (datagram) or 65520 (connected).")
    subnet: IpNetwork = Field(description="IP subnet, ADDRESS/PREFIX.")
    pool_start: IpAddress | None = Field(None, description="First address handed out.")
    addresses: dict[Name, IpAddress] = Field(
        default_factory=dict, description="Fixed addresses by node; other members get pool addresses in node order."
    )

    @field_validator("mtu")
    @classmethod
    def _mtu_fits_mode(cls, value: int | None, info: ValidationInfo) -> int | None:
        mode = info.data.get("mode")
        limit = IPOIB_MTU_MAX.get(mode) if isinstance(mode, str) else None
        if value is not None and limit is not None and value > limit:
            raise ValueError(f"mtu {value} is above {limit}, the most {mode} mode allows")
        return value

    @property
    def effective_mtu(self) -> int:
        return self.mtu if self.mtu is not None else (2044 if self.mode == "datagram" else 65520)


# ----------------------------------------------------------------------------------------- MPI / UCX
class Rail(Strict):
    name: Name = Field(description="Rail name.")
    devices: tuple[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*:\d+$")], ...] = Field(
        min_length=1, description="HCA ports of the rail as DEVICE:PORT (UCX_NET_DEVICES)."
    )
    ipoib_parent: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,14}$")] | None = Field(
        None,
        description=(
            "The IPoIB link of the rail's port on the nodes, e.g. ib3 or ibp26s0: the parent of ipoib entries "
            "with rail: this rail."
        ),
    )
    gpu: int | None = Field(
        None, ge=0, le=63, description="The GPU (nvidia-smi index) the rail's HCA serves on each node."
    )


class MpiFlavour(Strict):
    name: Name = Field(description="Flavour name; openmpi is the distribution's Open MPI (its file's path is known).")
    mca_params_file: AbsolutePath | None = Field(
        None, description="Path of the flavour's openmpi-mca-params.conf (needed for every flavour but openmpi)."
    )

    @model_validator(mode="after")
    def _path_known(self) -> MpiFlavour:
        if self.name != "openmpi" and self.mca_params_file is None:
            raise ValueError(f"flavour {self.name} needs mca_params_file (only openmpi has a known path)")
        return self


class Nccl(Strict):
    ib_hca: tuple[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*:\d+$")], ...] = Field(
        (), description="NCCL_IB_HCA ports as DEVICE:PORT (default: the rails' ports)."
    )
    ib_gid_index: int | None = Field(None, ge=0, le=255, description="NCCL_IB_GID_INDEX (RoCE v2 only).")
    socket_ifname: Annotated[str, Field(pattern=r"^[=^]?[A-Za-z0-9_.:-]+(,[A-Za-z0-9_.:-]+)*$")] | None = Field(
        None, description="NCCL_SOCKET_IFNAME: the interface(s) of NCCL's bootstrap, e.g. =eth0 or ^docker."
    )


class Mpi(Strict):
    ucx_tls: tuple[Transport, ...] = Field(("rc", "ud", "sm", "self"), description="UCX_TLS transports.")
    rails: tuple[Rail, ...] = Field((), description="UCX_NET_DEVICES per rail, e.g. mlx5_0:1.")
    forbid_tcp: bool = Field(True, description="Treat a fall-back to TCP as a failure.")
    flavours: tuple[MpiFlavour, ...] = Field(
        (MpiFlavour(name="openmpi"),), description="Open MPI installations whose MCA parameters are written."
    )
    install_openmpi: bool = Field(True, description="Install the distribution's Open MPI (openmpi-bin / openmpi).")
    benchmark_tools: bool = Field(
        True, description="Install what verify --mpi runs between two nodes (mpi4py's benchmarks)."
    )
    nccl: Nccl | None = Field(None, description="NCCL environment for GPU nodes (none: no NCCL files).")
    latency_us: float = Field(
        3.0, gt=0, description="verify --mpi: upper bound of the small-message MPI latency between two nodes."
    )
    bandwidth_fraction: float = Field(
        0.7, gt=0, le=1, description="verify --mpi: pass if the large-message MPI bandwidth >= fraction x line rate."
    )

    @model_validator(mode="after")
    def _no_tcp_when_forbidden(self) -> Mpi:
        if self.forbid_tcp and {"tcp", "all"} & set(self.ucx_tls):
            raise ValueError("forbid_tcp is true, but ucx_tls includes tcp (or all, which includes tcp)")
        if self.nccl is not None and not self.nccl.ib_hca and not self.rails:
            raise ValueError("nccl needs HCA ports: list rails or nccl.ib_hca")
        return self


def with_rail_parents(spec: ClusterSpec) -> ClusterSpec:
    """``spec`` with every ``ipoib`` entry that names a rail (and no parent of its own) on that rail's
    ipoib_parent, so that everything downstream reads the interface's real parent. Where the rail is unknown
    or has no ipoib_parent, the parent reads ``<rail NAME>`` (no interface name: the rules of
    :mod:`ibprov.clusterspec.rules.ipoib` reject the spec, and the entry is no duplicate of one on ib0)."""
    parents = {r.name: r.ipoib_parent for r in spec.mpi.rails}
    ipoib, changed = list(spec.ipoib), False
    for i, iface in enumerate(ipoib):
        if iface.rail is not None and "parent" not in iface.model_fields_set:
            parent = parents.get(iface.rail) or f"<rail {iface.rail}>"
            ipoib[i] = iface.model_copy(update={"parent": parent})
            ipoib[i].model_fields_set.discard("parent")  # derived from the rail: the user gave none
            changed = True
    return spec.model_copy(update={"ipoib": tuple(ipoib)}) if changed else spec


# ------------------------------------------------------------------------------------------- scheduler
SlurmTopologyPlugin = Literal["tree", "block"]


class SlurmTopology(Strict):
    plugin: SlurmTopologyPlugin = Field(
        "tree",
        description=(
            "Slurm's topology plugin: tree (topology/tree: leaf switches with their nodes, the switches above) or "
            "block (topology/block, Slurm >= 23.11: one block per leaf group)."
        ),
    )
    file: Literal["conf", "yaml"] = Field(
        "conf",
        description="topology.conf, or topology.yaml (Slurm >= 25.05; when it exists Slurm ignores topology.conf).",
    )
    top: Literal["single", "cabled", "none"] = Field(
        "single",
        description=(
            "tree: above the leaves, one top switch over every leaf (Slurm's advice for large trees), the spine "
            "and core switches as they are cabled, or none (jobs never span leaves: separate islands)."
        ),
    )
    top_name: Name = Field("top", description="Name of the single top switch (top: single).")
    block_sizes: tuple[Annotated[int, Field(ge=1)], ...] = Field(
        (), description="block: BlockSizes (default: the smallest block's node count)."
    )


class Scheduler(Strict):
    kind: Literal["slurm"] = Field("slurm", description="The workload manager (Slurm only, for now).")
    controller: Name = Field(
        description="Host that runs slurmctld: scontrol runs there (a node, or a host of its own)."
    )
    controller_address: HostAddress | None = Field(
        None, description="Address Ansible connects to, for a controller that is not in nodes (default: its name)."
    )
    controller_user: LoginName | None = Field(
        None, description="SSH user on the controller (default: cluster.ssh_user)."
    )
    version: VersionText = Field(
        "22.05", description="Slurm release at the site (decides which topology formats it can read)."
    )
    group: GroupName | None = Field(
        None, description="Only nodes of this group are Slurm nodes (default: every node that is a host)."
    )
    config_dir: AbsolutePath = Field(
        "/etc/slurm", description="Directory of slurm.conf on the controller; the topology file is written there."
    )
    manage_topology: bool = Field(True, description="apply installs the topology file and runs scontrol reconfigure.")
    drain: bool = Field(True, description="verify --drain / --resume may drain and resume nodes.")
    drain_severity: Literal["error", "critical"] = Field(
        "error", description="verify --drain drains nodes with a finding of this severity or worse."
    )
    topology: SlurmTopology = Field(SlurmTopology(), description="What the topology file describes.")


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
# Rate limits between two runs of a history (increase per hour): a counter that counts link events (a link
# that went down, or retrained) on any increase; the other link-health counters at rdma-core's threshold
# reached in a day; traffic-dependent ones (discards, relay errors, VL15 drops, XmitWait) not by default.
ERROR_RATES_PER_HOUR_DEFAULT = {
    "LinkDownedCounter": 0.0,
    "LinkErrorRecoveryCounter": 0.0,
    "SymbolErrorCounter": round(10 / 24, 3),
    "PortRcvErrors": round(10 / 24, 3),
    "LocalLinkIntegrityErrors": round(10 / 24, 3),
    "ExcessiveBufferOverrunErrors": round(10 / 24, 3),
    "PortRcvRemotePhysicalErrors": round(100 / 24, 3),
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
PairSchedule = Literal["quick", "all-pairs", "rail-aware", "route-aware"]
# format version 1 before verify --perf (c0efb4a..d508650) had three schedules, named for how they pair nodes:
# ring (each node with the next: every node tested once, cheaply) is quick, which tests every HCA port at least
# once; all (all pairs) is all-pairs; leaf_spread (pairs across leaves, so that traffic crosses the spines) is
# route-aware, which loads every inter-switch link direction (what examples/fat-tree.yaml moved to).
PAIRS_RENAMED = Renamed((("ring", "quick"), ("all", "all-pairs"), ("leaf_spread", "route-aware")))


def _latency_defaults() -> dict[LatencyTest, float]:
    return {"ib_write_lat": 2.5, "ib_send_lat": 2.5, "ib_read_lat": 4.5}


def _threshold_defaults() -> dict[ErrorCounter, int]:
    return cast("dict[ErrorCounter, int]", dict(ERROR_THRESHOLDS_DEFAULT))  # its keys are ErrorCounter names


def _rate_defaults() -> dict[ErrorCounter, float]:
    return cast("dict[ErrorCounter, float]", dict(ERROR_RATES_PER_HOUR_DEFAULT))  # its keys are ErrorCounter names


def _raw_ber_defaults() -> dict[Speed, float]:
    return dict(RAW_BER_MAX)


def _raw_ber_warn_defaults() -> dict[Speed, float]:
    return dict(RAW_BER_WARN)


class PhysicalLimits(Strict):
    effective_ber_max: float = Field(
        EFFECTIVE_BER_MAX, gt=0, lt=1, description="Effective (post-FEC) and symbol BER above this fail (1e-12)."
    )
    raw_ber_max: dict[Speed, Annotated[float, Field(gt=0, lt=1)]] = Field(
        default_factory=_raw_ber_defaults,
        description="Raw (pre-FEC) BER above this fails, per speed (default 1e-5); keys you give override.",
    )
    raw_ber_warn: dict[Speed, Annotated[float, Field(gt=0, lt=1)]] = Field(
        default_factory=_raw_ber_warn_defaults,
        description="Raw BER above this is a warning, per speed (default 1e-6); keys you give override.",
    )
    module_temperature_margin_c: float = Field(
        5.0,
        ge=0,
        le=50,
        description="A module within this many degrees C of its own high-temperature alarm is a warning; at or "
        "over it an error.",
    )
    gpu_locality: Literal["PIX", "PXB"] = Field(
        "PXB",
        description="The farthest PCIe path accepted between an HCA and its GPU (nvidia-smi topo -m): PIX (at most "
        "one bridge) or PXB (bridges, no host bridge: NCCL's GPUDirect RDMA default).",
    )

    @field_validator("raw_ber_max", mode="after")
    @classmethod
    def _merge_raw(cls, value: dict[Speed, float]) -> dict[Speed, float]:
        return {**RAW_BER_MAX, **value}

    @field_validator("raw_ber_warn", mode="after")
    @classmethod
    def _merge_warn(cls, value: dict[Speed, float]) -> dict[Speed, float]:
        return {**RAW_BER_WARN, **value}


class Acceptance(Strict):
    physical: PhysicalLimits = Field(
        PhysicalLimits(), description="The physical layer's limits (verify --physical; docs/physical.md)."
    )
    latency_us: dict[LatencyTest, Annotated[float, Field(gt=0)]] = Field(
        default_factory=_latency_defaults,
        description="Upper bound of the 2-byte average latency per test, in microseconds.",
    )
    bandwidth_fraction: float = Field(0.9, gt=0, le=1, description="Pass if BW >= fraction x line rate.")
    bandwidth_tests: tuple[BandwidthTest, ...] = Field(("ib_write_bw",), description="perftest bandwidth tests to run.")
    error_thresholds: dict[ErrorCounter, Annotated[int, Field(ge=0)]] = Field(
        default_factory=_threshold_defaults,
        description="Per-counter limits (defaults: rdma-core's error_thresholds); keys you give override.",
    )
    error_rates_per_hour: dict[ErrorCounter, Annotated[float, Field(ge=0)]] = Field(
        default_factory=_rate_defaults,
        description="Per-counter limits on the increase per hour between two runs of a history (verify "
        "--history, report diff); defaults: link-down and link-retrain on any increase, the other link-health "
        "counters at rdma-core's threshold per day; keys you give override, counters without a key are not judged.",
    )
    soak_seconds: int = Field(0, ge=0, description="Clear counters, wait, read again (0 = no soak).")
    pairs: Annotated[PairSchedule, PAIRS_RENAMED] = Field(
        "route-aware",
        description=(
            "perftest pair schedule (verify --perf): quick (every HCA port at least once), all-pairs (round "
            "robin), rail-aware (rail i only with rail i: mpi.rails, else port i of each node), route-aware "
            "(every inter-switch link direction loaded, no two concurrent pairs on one link direction)."
        ),
    )
    latency_tests: tuple[LatencyTest, ...] = Field(
        ("ib_write_lat", "ib_send_lat", "ib_read_lat"),
        description="perftest latency tests to run (each needs a limit in latency_us).",
    )
    latency_size: int = Field(2, ge=1, le=8388608, description="Message size of the latency tests, in bytes.")
    bandwidth_sizes: tuple[Annotated[int, Field(ge=1, le=1 << 30)], ...] = Field(
        (65536, 8388608), min_length=1, description="Message sizes of the bandwidth tests, in bytes."
    )
    bidirectional: bool = Field(
        False, description="Bandwidth tests both ways at once (-b); judged against 2 x line rate."
    )
    perftest_timeout_seconds: int = Field(
        60, ge=5, le=3600, description="Per-pair, per-test limit; a run past it is stopped and retried once."
    )
    perftest_port: int = Field(
        18515, ge=1024, le=65000, description="First TCP port of perftest's connection setup (one per concurrent pair)."
    )
    max_parallel_pairs: int | None = Field(
        None, ge=1, description="At most this many pairs at once (default: a whole round of the schedule)."
    )
    baseline_tolerance: float = Field(
        0.05, gt=0, lt=1, description="With --baseline FILE: flag a result more than this fraction worse."
    )
    tcp_probe: bool = Field(True, description="Also measure TCP throughput with iperf3 over IPoIB between the pairs.")
    tcp_probe_seconds: int = Field(5, ge=1, le=600, description="Seconds of each iperf3 run.")
    tcp_min_gbps: float | None = Field(
        None, gt=0, description="Fail a TCP probe below this many Gb/s (default: report only)."
    )
    route_balance: float = Field(
        1.5,
        gt=1,
        le=100,
        description=(
            "verify --routing: a switch-facing port may carry at most this many times the mean number of "
            "destination LIDs of its group (a tier's uplinks, parallel cables to one switch, a switch's same-tier "
            "ports; on a direct network: routes over parallel cables), and more than one above it."
        ),
    )
    credit_loops_with_switch_routes: bool = Field(
        True,
        description=(
            "verify --routing: the credit-loop graph includes the routes from CA ports to switch LIDs "
            "(management traffic: OpenSM's PerfMgr, ibqueryerrors, perfquery), as well as CA-to-CA routes, where "
            "the fabric's routes use SL 0 only (no SL engine, no QoS: all of it shares VL 0). ibdmchk leaves them "
            "out. With SLs in use they are left out (their SLs are not read). false: CA-to-CA routes only."
        ),
    )

    @model_validator(mode="after")
    def _latency_limits_known(self) -> Acceptance:
        missing = [t for t in self.latency_tests if t not in self.latency_us]
        if missing:
            raise ValueError(f"latency_tests names {missing[0]}, which has no limit in latency_us")
        return self

    @field_validator("error_thresholds", mode="after")
    @classmethod
    def _merge_defaults(cls, value: dict[str, int]) -> dict[str, int]:
        return {**ERROR_THRESHOLDS_DEFAULT, **value}

    @field_validator("error_rates_per_hour", mode="after")
    @classmethod
    def _merge_rate_defaults(cls, value: dict[str, float]) -> dict[str, float]:
        return {**ERROR_RATES_PER_HOUR_DEFAULT, **value}


# ------------------------------------------------------------------------------------------ monitoring
VerifySection = Literal["fabric", "nodes", "routing", "scheduler", "mpi", "perf", "backend", "physical"]


class VerifyTimer(Strict):
    host: Name = Field(
        description="The node that runs verify on its systemd timer (role ib_verify_timer): a node with an HCA, "
        "whose diags read the fabric."
    )
    sections: tuple[VerifySection, ...] = Field(
        ("fabric",), min_length=1, description="The verify sections each run reads."
    )
    on_calendar: Annotated[str, Field(max_length=128, pattern=r"^[A-Za-z0-9*][A-Za-z0-9 ,.:*/~-]*$")] = Field(
        "*-*-* 00/6:00:00", description="When the timer runs verify (systemd OnCalendar; default every 6 hours)."
    )
    keep: int = Field(90, ge=1, description="Runs kept in the history (verify --keep).")
    history_dir: AbsolutePath = Field("/var/lib/ibprov/history", description="The run history (verify --history).")
    textfile_dir: AbsolutePath = Field(
        "/var/lib/prometheus/node-exporter",
        description="node_exporter's textfile collector directory; the metrics go to ibprov.prom in it.",
    )
    install: bool = Field(True, description="Install ibprov into a virtualenv on the host (/opt/ibprov).")
    wheelhouse: LocalPath | None = Field(
        None,
        description="A directory of wheels on the machine that runs apply (ibprov and its dependencies), for "
        "hosts without a package index; default: pip installs ibprov from the index.",
    )


class Monitoring(Strict):
    verify_timer: VerifyTimer | None = Field(
        None, description="verify on a systemd timer with history and metrics for Prometheus (docs/monitoring.md)."
    )


# ------------------------------------------------------------------------------------------ top level
class ClusterSpec(Strict):
    version: Literal[1] = Field(1, description="Spec format version.")
    cluster: Cluster = Field(description="Cluster-wide names and defaults.")
    nodes: tuple[Node, ...] = Field(min_length=1, description="Every host with an HCA.")
    switches: tuple[Switch, ...] = Field(
        (), description="Switches cabled by hand (the fat-tree generator adds its own)."
    )
    fabric: Fabric = Field(description="Expected link speed and width, and the cabling.")
    stack: Stack = Field(Stack(), description="The RDMA software stack to install.")
    subnet_manager: SubnetManager = Field(description="OpenSM: routing, keys and the nodes that run it.")
    partitions: tuple[Partition, ...] = Field((), description="Partitions besides the Default one (partitions.conf).")
    default_partition: DefaultPartition = Field(DefaultPartition(), description="The Default partition, P_Key 0x7fff.")
    qos: Qos = Field(Qos(), description="Quality of service: VL tables and the QoS policy.")
    ipoib: tuple[IpoibInterface, ...] = Field((), description="IPoIB interfaces, one per partition and parent.")
    mpi: Mpi = Field(Mpi(), description="MPI / UCX settings.")
    acceptance: Acceptance = Field(Acceptance(), description="Thresholds the acceptance tests are judged by.")
    scheduler: Scheduler | None = Field(
        None, description="The workload manager: Slurm's topology from the plan, drains from the findings."
    )
    monitoring: Monitoring = Field(Monitoring(), description="Day 2: verify on a schedule, history and metrics.")

    @model_validator(mode="after")
    def _rail_parents(self) -> ClusterSpec:
        return with_rail_parents(self)


__all__ = [
    "Acceptance",
    "CablePlan",
    "Cables",
    "Cluster",
    "ClusterSpec",
    "DefaultPartition",
    "Fabric",
    "FatTree",
    "Hca",
    "IpoibInterface",
    "Link",
    "Member",
    "Monitoring",
    "Mpi",
    "MpiFlavour",
    "Nccl",
    "Node",
    "Partition",
    "PhysicalLimits",
    "Qos",
    "QosLevel",
    "QosMatchRule",
    "QosTables",
    "Rail",
    "Renamed",
    "Scheduler",
    "SlurmTopology",
    "SmInstance",
    "Stack",
    "SubnetManager",
    "Switch",
    "SwitchSm",
    "UfmSm",
    "VerifyTimer",
]
