"""The fast YAML writer round-trips through PyYAML for any plain data (and quotes what YAML 1.1 would misread)."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ibprov.render.yamltext import dump, scalar

_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.text(max_size=12) | st.floats(allow_nan=False)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), _values, max_size=6))
def test_dump_round_trips_through_pyyaml(data: dict[str, object]) -> None:
    assert yaml.safe_load(dump(data)) == data


def test_strings_yaml_would_misread_are_quoted() -> None:
    for text in ("yes", "No", "ON", "null", "~", "0x10", "1.5", "10.0.0.1/24", "", " a", "a: b", "-x", "#c", "A\n"):
        assert scalar(text).startswith('"'), text
    assert scalar("mlx5_0") == "mlx5_0"
    assert scalar("ib0.8010") == "ib0.8010"
