"""The IPoIB address pool counts the fixed addresses it must skip: a pool too small once they are counted is
a located spec problem, never an internal error in render."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibprov.clusterspec import load_spec_text
from ibprov.errors import SpecError
from ibprov.render import render_files

RACK = Path(__file__).resolve().parents[3] / "examples" / "rack.yaml"


def spec_with_pool(subnet: str, pool_start: str, sm01: str, sm02: str) -> str:
    text = RACK.read_text()
    head = text[: text.index("ipoib:\n  - partition: default")]
    return head + (
        f"ipoib:\n  - partition: default\n    subnet: {subnet}\n    pool_start: {pool_start}\n"
        f"    addresses:\n      sm01: {sm01}\n      sm02: {sm02}\n"
    )


def test_a_pool_that_the_fixed_addresses_make_too_small_is_a_located_problem() -> None:
    with pytest.raises(SpecError) as info:
        load_spec_text(spec_with_pool("10.20.0.0/29", "10.20.0.3", "10.20.0.5", "10.20.0.6"), "pool.yaml")
    (problem,) = info.value.problems
    assert problem.path == "ipoib[0].subnet"
    assert problem.message == (
        "4 nodes need an address but 10.20.0.0/29 has only 2 from 10.20.0.3 once the 2 fixed addresses there "
        "are counted"
    )


def test_a_pool_that_just_fits_around_the_fixed_addresses_renders_them_all() -> None:
    loaded = load_spec_text(spec_with_pool("10.20.0.0/28", "10.20.0.3", "10.20.0.5", "10.20.0.6"), "pool.yaml")
    hosts = render_files(loaded, synthetic_guids=True).files["inventory/hosts.yml"]
    for address in ("10.20.0.3/28", "10.20.0.4/28", "10.20.0.7/28", "10.20.0.8/28", "10.20.0.5/28"):
        assert address in hosts
