"""Where verify runs when it is not the spec's own hosts: ``--target twin``, the twin rack.

The CLI resolves ``--target`` once, before any section runs, into a :class:`VerifyTarget` (the twin rack
makes its own: ``verify_target`` in the twin's rack module, a floor above verify) that every section receives
in :attr:`VerifyOptions.target <ibprov.verify.registry.VerifyOptions.target>`; None there means the spec's
own hosts (addresses and users from the spec, ``--inventory``, ``--via``). No section finds the target
itself: verify knows nothing of the twin's running state, only what this record holds. (Apply's
counterpart is :class:`ibprov.run.Target`.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ibprov.twinnet.limits import TwinLimits

__all__ = ["VerifyTarget"]


@dataclass(frozen=True)
class VerifyTarget:
    """How each section reaches the target, and what the target can show.

    The fabric: the diags run on this host with :attr:`diag_env` (the twin: as one of its simulated HCAs,
    with nothing else running there). The hosts: :attr:`hosts`, through :attr:`inventory` (nodes, mpi) or
    over SSH as :attr:`user` with :attr:`ssh_config` (perf); a spec node missing from :attr:`hosts` is on the
    fabric only, with no host to log in to. Everything is judged by :attr:`limits`."""

    hosts: Mapping[str, str]  # spec node -> the address its host answers on (the twin: its container's)
    user: str  # the login on every host
    inventory: Path  # the Ansible inventory that reaches the hosts
    ssh_config: Path  # the OpenSSH config that reaches the hosts (addresses, key)
    diag_env: Mapping[str, str]  # the environment the diags run with on this host, to reach the target's fabric
    limits: TwinLimits  # what the target cannot show, and the rates it runs instead of the plan's
    exited: Callable[[], str]  # "" while the target's fabric runs; else why it is gone (the twin's ibsim exited)
