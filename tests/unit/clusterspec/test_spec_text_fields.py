"""Every string of the spec that can reach a rendered file has a rule of its own (a pattern, or a check of the
characters that file's grammar can hold); the few that do not are checked against the names they refer to."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from ibprov.clusterspec import load_spec_text
from ibprov.clusterspec.model import ClusterSpec
from ibprov.errors import SpecError

# Strings that are never rendered as given: parsed into parts, or resolved to a name another rule checks.
RESOLVED = {
    ".fabric.links[].link": "parsed into two ports",
    ".qos.match_rules[].qos_level": "must name a qos level (rendered as that level's checked name)",
    ".qos.match_rules[].partitions[]": "must name a partition (rendered as its P_Key)",
    ".ipoib[].partition": "must name a partition or be 'default'",
}


def _strings(tp: Any, meta: list[Any], path: str, seen: set[type]) -> Iterator[tuple[str, list[Any]]]:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(tp)
        yield from _strings(base, [*extra, *meta], path, seen)
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            yield from _strings(arg, meta, path, seen)
    elif origin in (tuple, list):
        for arg in typing.get_args(tp):
            if arg is not Ellipsis:
                yield from _strings(arg, [], f"{path}[]", seen)
    elif origin is dict:
        key, value = typing.get_args(tp)
        yield from _strings(key, [], f"{path}{{key}}", seen)
        yield from _strings(value, [], f"{path}{{}}", seen)
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        if tp not in seen:
            for name, field in tp.model_fields.items():
                yield from _strings(field.annotation, list(field.metadata), f"{path}.{name}", seen | {tp})
    elif tp is str:
        yield path, meta


def test_every_string_field_has_a_rule_or_names_something_checked() -> None:
    unruled = sorted(path for path, meta in _strings(ClusterSpec, [], "", set()) if not meta)
    assert unruled == sorted(RESOLVED)


SPEC = """\
version: 1
cluster: {name: t}
nodes:
  - {name: a, description: DESC, hcas: [{device: mlx5_0}]}
  - {name: b, hcas: [{device: mlx5_0}]}
switches: [{name: leaf01, role: leaf, ports: 4}]
fabric: {speed: HDR, links: ['leaf01:1 <-> a/mlx5_0:1', 'leaf01:2 <-> b/mlx5_0:1']}
subnet_manager: {instances: [{node: a}]}
"""


@pytest.mark.parametrize(
    "text",
    ["a\u2028b", "a\u0085b", "\u00e9t\u00e9", "a\x1bb", "tab\there", '"quoted"', "x" * 65, " lead", "{{ x }}"],
)
def test_no_unicode_trick_gets_a_description_past_validation(text: str) -> None:
    import json

    with pytest.raises(SpecError):
        load_spec_text(SPEC.replace("DESC", json.dumps(text)))


def _patterns(tp: Any, meta: list[Any], seen: set[type]) -> Iterator[str]:
    for _path, found in _strings(tp, meta, "", seen):
        for item in found:
            pattern = getattr(item, "pattern", None)
            for sub in getattr(item, "metadata", ()):  # FieldInfo(pattern=...) keeps it in its metadata
                pattern = pattern or getattr(sub, "pattern", None)
            if pattern:
                yield pattern


def test_every_pattern_has_words_for_its_error_message() -> None:
    from ibprov.clusterspec.types import PATTERN_WORDS

    missing = sorted(set(_patterns(ClusterSpec, [], set())) - set(PATTERN_WORDS))
    assert missing == []
