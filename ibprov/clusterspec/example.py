"""The commented example spec printed by ``ibprov example``: a small rack to start from."""

from __future__ import annotations

__all__ = ["example_text"]

_EXAMPLE = """\
# cluster.yaml — the one file ibprov provisions and accepts an InfiniBand fabric from.
#
# This example is a small rack: one 40-port HDR leaf switch, four compute nodes and two nodes
# that run the subnet manager (OpenSM). Check it with `ibprov validate cluster.yaml`; every problem
# is printed as FILE:LINE:COL: field: message. The full reference is docs/spec.md, and
# `ibprov schema` prints a JSON Schema for editors.
#
# Units: MTUs are in bytes (256 .. 4096 on the fabric), rates in Gb/s, times in seconds unless
# the key says otherwise (latency_us).

version: 1                      # spec format version (always 1)

cluster:
  name: rack1                   # used in file names and report titles
  ssh_user: root                # the user Ansible logs in as (per node: nodes[].user)
  # subnet_prefix: 0xfe80000000000000

# ------------------------------------------------------------------------------------- nodes
# Every host with an HCA. `groups` become Ansible inventory groups and can be used as
# partition members. Each HCA port listed in `ports` (default [1]) must be cabled (see
# fabric.links) or declared in fabric.empty_ports.
nodes:
  - name: sm01
    groups: [sm]
    hcas:
      - device: mlx5_0          # the kernel's name (ibstat / ls /sys/class/infiniband)
        ports: [1]
        # GUIDs are optional: without them ibprov records what it discovers in a lock file.
        # node_guid: 0x0c42a10300d8e2a0
        # port_guids: {1: 0x0c42a10300d8e2a0}
  - name: sm02
    groups: [sm]
    hcas:
      - device: mlx5_0
  - name: node01
    address: 192.168.1.11       # where Ansible connects (default: the name)
    groups: [compute]
    hcas:
      - device: mlx5_0
        firmware: 20.39.1002    # optional: `ibprov verify --nodes` checks it
  - name: node02
    address: 192.168.1.12
    groups: [compute]
    hcas:
      - device: mlx5_0
  - name: node03
    address: 192.168.1.13
    groups: [compute]
    hcas:
      - device: mlx5_0
  - name: node04
    address: 192.168.1.14
    groups: [compute]
    hcas:
      - device: mlx5_0

# ---------------------------------------------------------------------------------- switches
# Switches you cable by hand. (The fat-tree generator, fabric.fat_tree, declares its own.)
switches:
  - name: leaf01
    role: leaf                  # leaf, spine or core
    ports: 40                   # external ports
    model: QM8700
    # node_guid: 0xb8599f0300f1c2a0

# ------------------------------------------------------------------------------------ fabric
fabric:
  speed: HDR                    # expected speed of every link: SDR DDR QDR FDR10 FDR EDR HDR NDR XDR
  width: 4x                     # expected width: 1x 2x 4x 8x 12x
  # One cable per entry: 'A <-> B', each end SWITCH:PORT or NODE/HCA:PORT. A mapping form
  # overrides the expected speed or width of one cable.
  links:
    - leaf01:1 <-> node01/mlx5_0:1
    - leaf01:2 <-> node02/mlx5_0:1
    - leaf01:3 <-> node03/mlx5_0:1
    - leaf01:4 <-> node04/mlx5_0:1
    - leaf01:39 <-> sm01/mlx5_0:1
    - {link: "leaf01:40 <-> sm02/mlx5_0:1", speed: HDR, width: 4x}
  # Ports deliberately left without a cable (so that they are not reported as missing):
  # empty_ports: ["node04/mlx5_0:2"]

# ------------------------------------------------------------------------------------- stack
stack:
  kind: inbox                   # inbox (distribution rdma-core), mlnx_ofed or doca_ofed
  # kind: doca_ofed             # OFED kinds need both of these (ibprov never guesses a URL):
  # version: "2.9.1"
  # repository: https://repo.example.com/doca/2.9.1/

# ---------------------------------------------------------------------------- subnet manager
subnet_manager:
  routing_engine: minhop        # or a list tried in order, e.g. [ftree, minhop]
  lmc: 0                        # LIDs per port = 2^lmc (ftree and lash need 0)
  sweep_interval: 10            # seconds between light sweeps
  # Keys are never written here, only a reference: env:VARIABLE or vault:variable_name.
  sm_key: env:IBPROV_SM_KEY
  instances:                    # exactly one instance must have the highest priority
    - node: sm01
      priority: 15              # the master
    - node: sm02
      hca: mlx5_0               # default: the node's first HCA
      port: 1
      priority: 14              # the standby

# -------------------------------------------------------------------------------- partitions
# The Default partition (P_Key 0x7fff) holds every port.
default_partition:
  membership: full              # full or limited (limited members cannot talk to each other)
  ipoib: true                   # create the IPoIB broadcast group (ib0 needs it)
  # mtu: 2048                   # bytes; IPoIB datagram MTU is 4 bytes less

# Further partitions: P_Key 0x0001-0x7ffe (the full-member bit 0x8000 is implied).
partitions:
  - name: compute
    pkey: 0x0010
    ipoib: false                # set true to give it an IPoIB child interface (ib0.8010)
    mtu: 4096
    defmember: full             # membership of members that do not say (full, limited, both)
    members:
      - group: compute          # or node: NAME, or all: true
      - {node: sm01, membership: limited}
      - {node: sm02, membership: limited}

# --------------------------------------------------------------------------------------- QoS
# qos:
#   enabled: true               # partitions[].sl only takes effect with QoS on
#   max_vls: 8
#   sl2vl: "0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7"
#   vlarb_low: "0:64,1:32"
#   levels: [{name: mpi, sl: 1}]
#   match_rules: [{qos_level: mpi, partitions: [compute]}]

# ------------------------------------------------------------------------------------- IPoIB
ipoib:
  - partition: default          # ib0 on the Default partition
    mode: datagram              # datagram (MTU <= 4092) or connected (MTU <= 65520)
    subnet: 10.20.0.0/24
    addresses:                  # fixed addresses ...
      sm01: 10.20.0.1
      sm02: 10.20.0.2
    pool_start: 10.20.0.11      # ... and the rest, in node order, from here: node01 = .11

# --------------------------------------------------------------------------------------- MPI
mpi:
  ucx_tls: [rc, ud, sm, self]
  forbid_tcp: true              # a fall-back to TCP fails acceptance
  rails:
    - {name: rail0, devices: ["mlx5_0:1"]}

# -------------------------------------------------------------------------------- acceptance
acceptance:
  latency_us: {ib_write_lat: 2.5, ib_send_lat: 2.5, ib_read_lat: 4.5}
  bandwidth_fraction: 0.9       # pass if measured bandwidth >= 90 % of the line rate
  bandwidth_tests: [ib_write_bw]
  pairs: route-aware            # quick, all-pairs, rail-aware or route-aware (verify --perf)
  bandwidth_sizes: [65536, 8388608]
  soak_seconds: 0               # > 0: clear counters, wait, then check error_thresholds
  error_thresholds:             # defaults are rdma-core's; keys given here override them
    SymbolErrorCounter: 10

# --------------------------------------------------------------------------------- scheduler
# Slurm (optional). `ibprov render` writes topology.conf from the cabling, `ibprov apply` installs it on
# the controller (role ib_slurm_topology; slurm.conf stays your Slurm role's), `verify --scheduler`
# compares Slurm's view with the plan, and `verify --drain` drains the nodes that fail acceptance
# (reason "ibprov: CHECK OBJECT"); `--resume` resumes only what ibprov drained. See docs/scheduler.md.
scheduler:
  controller: sm01              # the host that runs slurmctld (scontrol runs there, over SSH)
  group: compute                # the Slurm nodes (default: every node); NodeName = the node's name
  version: "22.05"              # the site's Slurm: topology/block needs 23.11, topology.yaml 25.05
  topology:
    plugin: tree                # leaf01 with node[01-04]; with more leaves, one top switch above them
"""


def example_text() -> str:
    """A valid, commented example spec (a small rack)."""
    return _EXAMPLE
