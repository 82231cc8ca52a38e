#!/usr/bin/env python3
"""Regenerate the field reference in docs/spec.md from the pydantic models of cluster.yaml.

The reference is written between the markers

    <!-- BEGIN_SPEC_REFERENCE -->
    <!-- END_SPEC_REFERENCE -->

Everything outside the markers is hand-written prose and is never touched. The reference walks
ClusterSpec's fields recursively: one section per model, one row per field (type, default, description).

Usage:
    scripts/gen_spec_docs.py [--check]

--check writes nothing and exits 1 when docs/spec.md is out of date (for CI/lint).
"""

from __future__ import annotations

import argparse
import enum
import sys
import types
import typing
from pathlib import Path
from typing import Any

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from docblock import replace_block, update_doc  # noqa: E402

from ibprov.clusterspec import model as m  # noqa: E402
from ibprov.clusterspec import types as t  # noqa: E402

DOC = REPO / "docs" / "spec.md"
BEGIN = "<!-- BEGIN_SPEC_REFERENCE -->"
END = "<!-- END_SPEC_REFERENCE -->"

# Values given in a string form are parsed by a before-validator: name the form instead of the parsed type.
NAMED_BY_VALIDATOR: dict[Any, str] = {
    t._parse_guid: "GUID",
    t._parse_secret: "secret reference",
    t._endpoint: "port",
    t._network: "IP subnet",
    t._address: "IP address",
    t._parse_sl2vl: "SL2VL table",
    t._parse_vlarb: "VLArb table",
    m._mtu_bytes: "IB MTU (bytes)",
    m._rate_gbps: "rate (Gb/s)",
    m._link_shorthand: "link",
}
NAMED_BY_PATTERN = {t.NAME_RE: "name", r"^[a-z][a-z0-9_]*$": "device name"}
_group = getattr(m, "GroupName", None)
if _group is not None:
    for _item in typing.get_args(_group)[1:]:
        for _meta in getattr(_item, "metadata", [_item]):
            if getattr(_meta, "pattern", None):
                NAMED_BY_PATTERN[_meta.pattern] = "group name"
PLAIN = {int: "integer", float: "number", str: "string", bool: "boolean"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _metadata(tp: Any, extra: tuple[Any, ...] = ()) -> tuple[Any, tuple[Any, ...]]:
    """Strip Annotated layers, collecting their metadata (FieldInfo metadata flattened)."""
    meta = list(extra)
    while typing.get_origin(tp) is typing.Annotated:
        tp, *more = typing.get_args(tp)
        meta = more + meta
    flat: list[Any] = []
    for item in meta:
        flat.extend(item.metadata if isinstance(item, FieldInfo) else [item])
    return tp, tuple(flat)


def _bounds(meta: tuple[Any, ...]) -> str:
    """`` 1..254``, `` >= 0``, `` (at least 1 entries)`` from annotated-types constraints."""
    ge = next((x.ge for x in meta if isinstance(x, at.Ge)), None)
    gt = next((x.gt for x in meta if isinstance(x, at.Gt)), None)
    le = next((x.le for x in meta if isinstance(x, at.Le)), None)
    lo = next((x.min_length for x in meta if isinstance(x, at.MinLen) and x.min_length), None)
    hi = next((x.max_length for x in meta if isinstance(x, at.MaxLen)), None)
    parts = []
    if ge is not None and le is not None:
        parts.append(f"{ge}..{le}")
    else:
        parts.append(" and ".join(f"{op} {v}" for op, v in ((">=", ge), (">", gt), ("<=", le)) if v is not None))
    if lo is not None and lo == hi:
        parts.append(f"(exactly {lo})")
    else:
        parts += [f"({word} {v})" for word, v in (("at least", lo), ("at most", hi)) if v is not None]
    return "".join(f" {p}" for p in parts if p)


def type_name(tp: Any, extra: tuple[Any, ...] = (), models: list[type[BaseModel]] | None = None) -> str:
    """A reader's name for an annotation: ``list of port``, ``integer 1..254``, ```full`, `limited```."""
    tp, meta = _metadata(tp, extra)
    for item in meta:
        func = getattr(item, "func", None)
        if func in NAMED_BY_VALIDATOR:
            return NAMED_BY_VALIDATOR[func]
        pattern = getattr(item, "pattern", None)
        if pattern and pattern in NAMED_BY_PATTERN:
            return NAMED_BY_PATTERN[pattern]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a, meta, models) for a in args if a is not type(None))
    if origin is typing.Literal:
        return ", ".join(f"`{_literal(v)}`" for v in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list of {type_name(args[0], (), models)}{_bounds(meta)}"
        return "[" + ", ".join(type_name(a, (), models) for a in args) + "]"
    if origin is dict:
        return f"mapping of {type_name(args[0], (), models)} to {type_name(args[1], (), models)}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if models is not None and tp not in models:
            models.append(tp)
        return f"[{tp.__name__}](#{tp.__name__.lower()})"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return ", ".join(f"`{v.value}`" for v in tp)
    if tp in PLAIN:
        name = PLAIN[tp]
        if tp is str:
            pattern = next((getattr(x, "pattern", None) for x in meta if getattr(x, "pattern", None)), None)
            return f"string `{pattern}`" if pattern else name
        return name + _bounds(meta)
    return getattr(tp, "__name__", str(tp))


def _literal(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "*required*"
    value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
    if value is None or value is PydanticUndefined:
        return ""
    if isinstance(value, BaseModel):
        return "(all defaults)"
    named = {getattr(x, "func", None) for x in field.metadata}
    if t._parse_guid in named and isinstance(value, int):
        return f"`0x{value:016x}`"
    return f"`{_cell(_flow(value))}`"


def _flow(value: Any) -> str:
    """A value in YAML flow style."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flow(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _paths(root: type[BaseModel]) -> dict[type[BaseModel], list[str]]:
    """Every model reachable from ``root`` and the spec paths where it appears, depth first."""
    found: dict[type[BaseModel], list[str]] = {root: [""]}

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            path = f"{prefix}.{name}" if prefix else name
            for child, suffix in _models_in(field.annotation):
                if path + suffix not in found.setdefault(child, []):
                    found[child].append(path + suffix)
                    walk(child, path + suffix)

    walk(root, "")
    return found


def _models_in(tp: Any, suffix: str = "") -> list[tuple[type[BaseModel], str]]:
    tp, _ = _metadata(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [(tp, suffix)]
    if origin in (typing.Union, types.UnionType):
        return [x for a in args for x in _models_in(a, suffix)]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _models_in(args[0], suffix + "[]")
    if origin is dict:
        return _models_in(args[1], suffix + ".*")
    return []


def render_reference() -> str:
    out: list[str] = []
    for model, paths in _paths(m.ClusterSpec).items():
        title = "top level" if paths == [""] else ", ".join(f"`{p}`" for p in paths)
        out.append(f"### {model.__name__}\n")
        out.append(f"Used at: {title}.\n")
        doc = (model.__doc__ or "").strip()
        if doc and model is not m.ClusterSpec and not doc.startswith(("!!!", "Usage docs")):
            out.append(_cell(doc) + "\n")
        out.append("| Field | Type | Default | Description |")
        out.append("|---|---|---|---|")
        for name, field in model.model_fields.items():
            kind = type_name(field.annotation, tuple(field.metadata))
            desc = _cell(field.description or "") + _renamed_text(field)
            out.append(f"| `{name}` | {_cell(kind)} | {default_text(field)} | {desc} |")
        out.append("")
    return "\n".join(out)


def _renamed_text(field: FieldInfo) -> str:
    """The old spellings a field still reads (model.Renamed), each with the one to write now."""
    _, meta = _metadata(field.annotation, tuple(field.metadata))
    spellings = [pair for item in meta if isinstance(item, m.Renamed) for pair in item.spellings]
    if not spellings:
        return ""
    words = ", ".join(f"`{old}` (write `{new}`)" for old, new in spellings)
    return f" Deprecated spellings, still read with a warning: {words}."


def render_doc(doc: str) -> str:
    note = "<!-- generated by scripts/gen_spec_docs.py from ibprov/clusterspec/model.py; do not edit -->"
    return replace_block(doc, BEGIN, END, f"{note}\n\n{render_reference()}", where=DOC)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if docs/spec.md is out of date")
    args = ap.parse_args(argv)
    return update_doc(DOC, render_doc, check=args.check, script="scripts/gen_spec_docs.py")


if __name__ == "__main__":
    sys.exit(main())
