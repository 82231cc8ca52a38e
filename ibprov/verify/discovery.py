"""The fabric discovery verify runs first, ``ibnetdiscover --cache``: import-light, so that the CLI can
start it (:meth:`LocalRunner.prefetch`) before it loads the spec."""

from __future__ import annotations

from ibprov.verify.runner import SCRATCH

__all__ = ["CACHE", "DISCOVER"]

CACHE = f"{SCRATCH}/fabric.cache"
DISCOVER = ("ibnetdiscover", "--cache", CACHE)
