"""Fuzzing the loader: whatever the input, the result is a LoadedSpec or a SpecError whose problems all have a
position (line >= 1, col >= 1) and fit on one line — never any other exception."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.positions import decode
from ibprov.errors import SpecError

REPO = Path(__file__).resolve().parents[3]
VALID = (REPO / "examples" / "rack.yaml").read_text()
VALID_QOS = (REPO / "examples" / "qos-partitions.yaml").read_text()
RAW = {text: yaml.load(text, Loader=yaml.CSafeLoader) for text in (VALID, VALID_QOS)}
# IBPROV_FUZZ_EXAMPLES=5000 pytest tests/unit/spec/test_spec_fuzz.py fuzzes for longer.
FUZZ = settings(
    max_examples=int(os.environ.get("IBPROV_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

YAMLISH = st.text(alphabet=" \n\t-:,[]{}&*!|>'\"#%@`?.=<~0123456789abcxyzTFnul\\/\x00\ufeff", max_size=300)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(["0x7fff", "HDR", "4x", "leaf01:1 <-> node01/mlx5_0:1", "env:X", "10.0.0.0/8", "full", "ftree"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12) | st.integers(), inner, max_size=4)
    ),
    max_leaves=12,
)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True)


def check(text: str) -> LoadedSpec | SpecError:
    try:
        return load_spec_text(text, "fuzz.yaml")
    except SpecError as exc:
        error = exc
    assert error.problems, "a SpecError must carry at least one problem"
    for problem in error.problems:
        assert problem.line >= 1, problem
        assert problem.column >= 1, problem
        assert problem.file == "fuzz.yaml"
        assert problem.message
        assert "\n" not in str(problem), problem
    return error


def decode_or_check(data: bytes) -> None:
    """Bytes that are not UTF-8 fail in ``decode`` with a positioned problem; the rest go through ``check``."""
    try:
        text = decode(data, "fuzz.yaml")
    except SpecError as exc:
        error = exc
    else:
        check(text)
        return
    assert [(p.line >= 1, p.column >= 1) for p in error.problems] == [(True, True)]


@FUZZ
@given(st.text(max_size=500))
def test_arbitrary_text_loads_or_fails_with_positions(text: str) -> None:
    check(text)


@FUZZ
@given(YAMLISH)
def test_yaml_punctuation_soup_loads_or_fails_with_positions(text: str) -> None:
    check(text)


@FUZZ
@given(st.binary(max_size=500))
def test_arbitrary_bytes_decode_then_load_or_fail_with_positions(data: bytes) -> None:
    decode_or_check(data)


@FUZZ
@given(st.binary(max_size=60), st.integers(min_value=0, max_value=len(VALID)))
def test_bytes_spliced_into_a_valid_spec_load_or_fail_with_positions(junk: bytes, at: int) -> None:
    data = VALID.encode()
    decode_or_check(data[:at] + junk + data[at:])


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += _paths(value, (*prefix, i))
    return out


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        data = data[part]
    return data


@FUZZ
@given(st.data(), st.sampled_from([VALID, VALID_QOS]))
def test_structured_mutations_of_a_valid_spec_load_or_fail_with_positions(data: st.DataObject, base: str) -> None:
    raw = copy.deepcopy(RAW[base])
    for _ in range(data.draw(st.integers(min_value=1, max_value=4), label="mutations")):
        paths = _paths(raw)
        path = data.draw(st.sampled_from(paths), label="path")
        parent, last = _parent(raw, path), path[-1]
        action = data.draw(st.sampled_from(["drop", "retype", "rename", "copy"]), label="action")
        if action == "drop":
            del parent[last]
        elif action == "retype":
            parent[last] = data.draw(VALUES, label="value")
        elif action == "rename" and isinstance(parent, dict):
            parent[data.draw(st.text(min_size=1, max_size=10), label="key")] = parent.pop(last)
        elif action == "copy":
            target = _parent(raw, data.draw(st.sampled_from(paths), label="target"))
            value = copy.deepcopy(parent[last])
            if isinstance(target, list):
                target.append(value)
            elif isinstance(target, dict):
                target[f"{last}x"] = value
    check(dump(raw))


@FUZZ
@given(st.data())
def test_line_edits_of_a_valid_spec_load_or_fail_with_positions(data: st.DataObject) -> None:
    """Duplicate, drop, swap or re-indent lines: duplicate keys, broken indentation, orphaned values."""
    lines = VALID.splitlines()
    for _ in range(data.draw(st.integers(min_value=1, max_value=4), label="edits")):
        i = data.draw(st.integers(min_value=0, max_value=len(lines) - 1), label="line")
        action = data.draw(st.sampled_from(["duplicate", "drop", "swap", "indent", "dedent", "replace"]))
        if action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "drop" and len(lines) > 1:
            del lines[i]
        elif action == "swap":
            j = data.draw(st.integers(min_value=0, max_value=len(lines) - 1), label="other")
            lines[i], lines[j] = lines[j], lines[i]
        elif action == "indent":
            lines[i] = "  " + lines[i]
        elif action == "dedent":
            lines[i] = lines[i][2:]
        else:
            lines[i] = data.draw(YAMLISH, label="text").replace("\n", " ")
    check("\n".join(lines) + "\n")


@FUZZ
@given(VALUES)
def test_arbitrary_yaml_documents_load_or_fail_with_positions(value: Any) -> None:
    check(dump(value))


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted(RAW[VALID_QOS])), VALUES, max_size=6))
def test_sections_replaced_by_random_values_load_or_fail_with_positions(sections: dict[str, Any]) -> None:
    check(dump({**RAW[VALID_QOS], **sections}))
