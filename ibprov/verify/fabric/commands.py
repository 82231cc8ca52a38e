"""The fabric discovery verify runs first, ``ibnetdiscover --cache``, and the section's prestart: import-light,
so that the CLI can start the discovery (:meth:`LocalRunner.prefetch`) before it loads the spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ibprov.probes.runner import SCRATCH, AnsibleRunner, LocalRunner

if TYPE_CHECKING:
    from ibprov.clusterspec import LoadedSpec
    from ibprov.probes.runner import Runner
    from ibprov.twinnet.limits import TwinLimits
    from ibprov.verify.registry import VerifyOptions

__all__ = ["CACHE", "DISCOVER", "diag_env", "diag_runner", "prestart"]

CACHE = f"{SCRATCH}/fabric.cache"
DISCOVER = ("ibnetdiscover", "--cache", CACHE)


def diag_env(options: VerifyOptions) -> Mapping[str, str] | None:
    """What the diags get on top of the environment: ``SIM_HOST`` for ``--from-host`` (the twin)."""
    return {"SIM_HOST": options.from_host} if options.from_host else None


def prestart(options: VerifyOptions) -> LocalRunner | None:
    """Local verify: a runner that has started the discovery (it needs no spec). ``--via``, a target:
    nothing (the diags run elsewhere, or with the target's environment)."""
    if options.via is not None or options.target is not None:
        return None
    runner = LocalRunner(env=diag_env(options))
    runner.prefetch(DISCOVER)
    return runner


def diag_runner(loaded: LoadedSpec, options: VerifyOptions, started: object = None) -> tuple[Runner, TwinLimits | None]:
    """Where the diags run, for every section that reads the fabric (fabric, perf's LFTs): on this host with
    the target's environment (``--target twin``: as the rack's probe HCA; with its limits), ``--via HOST``
    through Ansible, the runner prestart made, or this host. The caller closes the runner."""
    if options.target is not None:
        return LocalRunner(env=options.target.diag_env), options.target.limits
    # lazy: they load the spec's models (pydantic), and this module is import-light (prestart)
    from ibprov.run.inventory import host_inventory
    from ibprov.twinnet.limits import read_limits

    twin = read_limits(options.twin_limits) if options.twin_limits is not None else None
    if options.via is not None:
        return AnsibleRunner(options.via, host_inventory(loaded, options.via), env=diag_env(options)), twin
    if isinstance(started, LocalRunner):
        return started, twin
    return LocalRunner(env=diag_env(options)), twin
