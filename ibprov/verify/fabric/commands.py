"""The fabric discovery verify runs first, ``ibnetdiscover --cache``, and the section's prestart: import-light,
so that the CLI can start the discovery (:meth:`LocalRunner.prefetch`) before it loads the spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ibprov.verify.runner import SCRATCH, LocalRunner

if TYPE_CHECKING:
    from ibprov.verify.sections import VerifyOptions

__all__ = ["CACHE", "DISCOVER", "diag_env", "prestart"]

CACHE = f"{SCRATCH}/fabric.cache"
DISCOVER = ("ibnetdiscover", "--cache", CACHE)


def diag_env(options: VerifyOptions) -> Mapping[str, str] | None:
    """What the diags get on top of the environment: ``SIM_HOST`` for ``--from-host`` (the twin)."""
    return {"SIM_HOST": options.from_host} if options.from_host else None


def prestart(options: VerifyOptions) -> LocalRunner | None:
    """Local verify: a runner that has started the discovery (it needs no spec). ``--via``, ``--target``:
    nothing (where the diags run depends on the spec)."""
    if options.via is not None or options.target is not None:
        return None
    runner = LocalRunner(env=diag_env(options))
    runner.prefetch(DISCOVER)
    return runner
