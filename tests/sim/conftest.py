"""Fixtures for tests that run the real OpenSM 3.3.23 and infiniband-diags 44 against ibsim."""

from __future__ import annotations

import pytest

from ibprov.twin.sim import sim_available


@pytest.fixture(autouse=True)
def _needs_sim() -> None:
    reason = sim_available()
    if reason:
        pytest.skip(f"simulated fabric unavailable: {reason}")
