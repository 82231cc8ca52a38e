"""Shared pytest options: ``--update-golden`` rewrites the golden files of rendered output."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/data/expected/* from the current render output (review the diff before committing)",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


UNIT_TIMEOUT_S = 180  # the slowest unit test takes about a tenth of it on this machine


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A unit test that hangs fails after UNIT_TIMEOUT_S (the others after the ini's ``timeout``)."""
    for item in items:
        if item.nodeid.startswith("tests/unit/") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(UNIT_TIMEOUT_S))
