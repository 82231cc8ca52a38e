"""One spec, three renderings of its partitions: OpenSM's partitions.conf (the ib_sm role's own template), the
switch's CLI commands and UFM's payload. Each parses back into the one model, and they agree with each other
and with the plan on every field each carries -- for every example and for the random specs of the property
test (tests/sim/test_validate_implies_opensm.py), whose OpenSM side runs on the twin there."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from sim.test_validate_implies_opensm import specs

from ibprov.clusterspec import LoadedSpec, load_spec, load_spec_text
from ibprov.errors import SpecError
from ibprov.identity.guids import GuidBook
from ibprov.render import render_sm_files
from ibprov.render.sm import build_sm_data
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.opensm import parse_partitions_conf
from ibprov.smbackend.state import BackendState
from ibprov.smbackend.switch.commands import CARRIED as SWITCH_CARRIED
from ibprov.smbackend.switch.commands import parse_commands, render_commands
from ibprov.smbackend.ufm.payload import CARRIED as UFM_CARRIED
from ibprov.smbackend.ufm.payload import parse_payload, render_payload

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.yaml"))
RANDOM = settings(
    max_examples=int(os.environ.get("IBPROV_EQUIVALENCE_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def renderings(loaded: LoadedSpec) -> tuple[BackendState, BackendState, BackendState, BackendState | None]:
    """(the plan, OpenSM's, the switch's, UFM's -- None where the spec has a 'both' member UFM cannot hold)."""
    book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)
    desired, _ = desired_state(loaded, book)
    conf = render_sm_files(build_sm_data(loaded, book), "/etc/opensm", "test")["partitions.conf"]
    opensm = parse_partitions_conf(conf)
    switch = parse_commands(render_commands(desired, save=True))
    both = any(m == "both" for p in desired.partitions.values() for _g, m in p.members)
    ufm = None if both else parse_payload(render_payload(desired))
    return desired, opensm, switch, ufm


def assert_equivalent(loaded: LoadedSpec) -> None:
    desired, opensm, switch, ufm = renderings(loaded)
    assert sorted(desired.partitions) == sorted(p.pkey & 0x7FFF for p in loaded.spec.partitions)  # none left out
    assert opensm.partitions == desired.partitions
    assert switch.partitions == opensm.only(SWITCH_CARRIED).partitions
    if ufm is not None:
        assert ufm.partitions == opensm.only(UFM_CARRIED).partitions


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_renders_the_same_partitions_for_opensm_the_switch_and_ufm(example: Path) -> None:
    assert_equivalent(load_spec(example))


def test_the_switch_rendering_of_a_switch_spec_carries_its_priority_and_turns_the_sm_on() -> None:
    loaded = load_spec(EXAMPLES[[p.stem for p in EXAMPLES].index("switch-sm")])
    desired, _opensm, switch, _ufm = renderings(loaded)
    assert desired.sm is not None
    assert switch.sm == desired.sm


@RANDOM
@given(specs())
def test_random_specs_render_the_same_partitions_for_every_back_end(raw: dict[str, Any]) -> None:
    try:
        loaded = load_spec_text(yaml.safe_dump(raw, sort_keys=False), "random.yaml")
    except SpecError:
        assume(False)
        return
    assume(loaded.spec.partitions)
    assert_equivalent(loaded)
