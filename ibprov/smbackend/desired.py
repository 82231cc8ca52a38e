"""The desired back-end state from the spec: the plan's partitions (members by port GUID, from
:func:`ibprov.identity.partitions.plan_partitions`, the same computation render and verify use) with each
partition's IPoIB flag and limits, and the switch SM's state and priority."""

from __future__ import annotations

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.units import MTU_CODE
from ibprov.identity.guids import GuidBook
from ibprov.identity.partitions import PartitionPlan, plan_partitions
from ibprov.smbackend.state import BackendState, PartitionState, SmState

__all__ = ["desired_state", "state_from_plan"]


def state_from_plan(loaded: LoadedSpec, plan: PartitionPlan) -> BackendState:
    spec = loaded.spec
    parts = {}
    for part, planned in zip(spec.partitions, plan.partitions, strict=True):
        parts[planned.pkey.base] = PartitionState(
            pkey=planned.pkey.base,
            name=part.name,
            ipoib=part.ipoib,
            members=frozenset(planned.members),
            mtu=None if part.mtu is None else MTU_CODE[part.mtu],
            rate=part.rate,
            sl=part.sl,
        )
    switch = spec.subnet_manager.switch
    sm = SmState(True, switch.priority) if spec.subnet_manager.backend == "switch" and switch else None
    return BackendState(sm, parts)


def desired_state(loaded: LoadedSpec, book: GuidBook) -> tuple[BackendState, PartitionPlan]:
    """The state the back end should hold, and the partition plan it came from (its ``unresolved`` nodes:
    ports left out because no GUID is known yet)."""
    plan = plan_partitions(loaded, book)
    return state_from_plan(loaded, plan), plan
