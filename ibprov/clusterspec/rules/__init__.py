"""The rules across the whole spec, one module per thing they are about. Each rule yields findings
(path, message); :func:`check` runs them all, in the order of :data:`RULES`, and returns every finding.

* :mod:`.names`: names and GUIDs name one thing each
* :mod:`.partitions`: P_Keys, members, memberships, a member's rail
* :mod:`.sm` and :mod:`.routing`: the subnet managers, the routing engines and what they need of the fabric
* :mod:`.cabling` and :mod:`.connected`: cable ends, uncabled ports and switches; the fabric in one piece
* :mod:`.ipoib`: IPoIB interfaces (partition, MTU, name, addresses, pool, rail)
* :mod:`.qos`: VL tables, SLs, the QoS policy
* :mod:`.rails`: mpi.rails' ports and names
* :mod:`.scheduler`: the scheduler section (Slurm's controller, nodes, release, block sizes, top switch)
* :mod:`.monitoring`: the verify timer's host and sections
* :mod:`.findings`: what they share (a finding, duplicates, "did you mean")
"""

from __future__ import annotations

from ibprov.clusterspec.model import ClusterSpec
from ibprov.clusterspec.rules.cabling import cabling_is_consistent, fat_tree_group_exists, switches_are_cabled
from ibprov.clusterspec.rules.connected import fabric_is_connected
from ibprov.clusterspec.rules.findings import Finding, Rule
from ibprov.clusterspec.rules.ipoib import ipoib_is_consistent, ipoib_rails_are_sound
from ibprov.clusterspec.rules.monitoring import monitoring_is_sound
from ibprov.clusterspec.rules.names import guids_are_unique, names_are_unique
from ibprov.clusterspec.rules.partitions import partition_rails_are_sound, partitions_are_consistent
from ibprov.clusterspec.rules.qos import qos_is_well_formed
from ibprov.clusterspec.rules.rails import mpi_rails_exist
from ibprov.clusterspec.rules.scheduler import scheduler_is_sound
from ibprov.clusterspec.rules.sm import subnet_managers_are_sound
from ibprov.clusterspec.rules.smbackend import sm_backend_is_complete
from ibprov.clusterspec.topology import Topology

__all__ = ["RULES", "Finding", "Rule", "check"]

RULES: tuple[Rule, ...] = (
    names_are_unique,
    guids_are_unique,
    partitions_are_consistent,
    sm_backend_is_complete,
    subnet_managers_are_sound,
    cabling_is_consistent,
    fabric_is_connected,
    switches_are_cabled,
    ipoib_is_consistent,
    qos_is_well_formed,
    mpi_rails_exist,
    fat_tree_group_exists,
    partition_rails_are_sound,
    ipoib_rails_are_sound,
    scheduler_is_sound,
    monitoring_is_sound,
)


def check(spec: ClusterSpec, topo: Topology) -> list[Finding]:
    return [finding for rule in RULES for finding in rule(spec, topo)]
