"""Subnet-manager back ends: who runs the SM and holds the partitions (``subnet_manager.backend``).

* ``opensm``: host OpenSM, configured by the ib_sm role from the files render writes (unchanged);
* ``switch``: a managed switch's embedded SM (MLNX-OS), driven through its JSON API by ibprov's own HTTP client
  (:mod:`.switch`): the spec rendered to CLI commands, the running configuration read back first, only the
  difference sent, stopped at the first command the switch refuses;
* ``ufm``: NVIDIA UFM Enterprise, partitions reconciled through its REST API (:mod:`.ufm`).

The switch and UFM back ends are contract-tested (servers under ``tests/contracts`` that follow the vendors'
documents and the pinned quirks), not run against the products: see docs/sm-backends.md.

Every back end speaks one model (:mod:`.state`): partitions by P_Key with their members by port GUID. The spec
gives the desired state (:mod:`.desired`); each back end reads its current state into the same model, and
rendering and reading back meet there (the equivalence tests).
"""

from ibprov.clusterspec.model import CONTRACT_TESTED
from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.state import BackendState, PartitionState, SmState

__all__ = ["CONTRACT_TESTED", "BackendError", "BackendState", "PartitionState", "SmState"]
