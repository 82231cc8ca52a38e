"""Load and check a cluster spec: ``load_spec(path)`` is the one entry point.

Problems come in two passes, each complete: first the structure (YAML syntax, unknown keys, types,
ranges), then — once the structure is sound — the rules across the whole spec (names, cabling, GUIDs,
partitions, SMs, IPoIB, QoS). A valid spec then gets its warnings (:mod:`.advice`): located like problems,
they reject nothing, and so do the deprecation warnings of old spellings (:class:`.model.Renamed`: the model
reads each as its new spelling, the loader says where it was written).
"""

from __future__ import annotations

import difflib
import functools
import gc
import re
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path as FsPath
from typing import Any

from pydantic import BaseModel, ValidationError

from ibprov.clusterspec import advice, rules
from ibprov.clusterspec.model import ClusterSpec, Renamed
from ibprov.clusterspec.positions import MAX_BYTES, Path, SourceMap, decode, load_yaml
from ibprov.clusterspec.topology import Topology, build_topology
from ibprov.clusterspec.types import PATTERN_WORDS
from ibprov.errors import Problem, SpecError

__all__ = ["ClusterSpec", "LoadedSpec", "collector_paused", "load_spec", "load_spec_text"]


@dataclass(frozen=True)
class LoadedSpec:
    """A valid spec, the topology it plans, where every value came from, and its warnings (located, sorted)."""

    spec: ClusterSpec
    topology: Topology
    source: SourceMap
    path: FsPath | None = None
    warnings: tuple[Problem, ...] = ()


def load_spec(path: str | FsPath) -> LoadedSpec:
    """Read, parse and check the spec at ``path``; raise :class:`SpecError` with every problem found."""
    fs_path = FsPath(path)
    name = str(path)
    try:
        size = fs_path.stat().st_size if fs_path.is_file() else 0
        if size > MAX_BYTES:  # refused before it is read: a spec of gigabytes never reaches memory
            raise SpecError([Problem(name, 1, 1, "", f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB")])
        data = fs_path.read_bytes()
    except FileNotFoundError:
        raise SpecError([Problem(name, 1, 1, "", "no such file")]) from None
    except IsADirectoryError:
        raise SpecError([Problem(name, 1, 1, "", "is a directory, not a spec file")]) from None
    except OSError as exc:
        raise SpecError([Problem(name, 1, 1, "", f"cannot read: {exc.strerror or exc}")]) from None
    loaded = load_spec_text(decode(data, name), name)
    return replace(loaded, path=fs_path)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside (a context manager and a decorator).

    Loading a spec and rendering it build millions of small objects and free almost none of them: the
    cyclic collector would rescan them over and over (a fifth of the time on a 10,000-node spec) to find
    nothing. Reference counting still frees what is dropped; the previous state is restored on exit.

    When the block leaves more than ``FREEZE_AFTER`` new tracked objects (a spec of thousands of nodes,
    never the small ones of the tests), they are moved to the collector's permanent generation
    (:func:`gc.freeze`) first: they live as long as the command anyway, and the first collection after
    the block would otherwise scan all of them (0.7 s for 100,000 HCA ports) to find nothing."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    except BaseException:
        if collecting:
            gc.enable()
        raise
    if collecting:
        if gc.get_count()[0] > FREEZE_AFTER:
            gc.freeze()
        gc.enable()


FREEZE_AFTER = 500_000


def load_spec_text(text: str, name: str = "cluster.yaml") -> LoadedSpec:
    """Parse and check spec ``text`` (named ``name`` in problems); raise :class:`SpecError` with every problem."""
    with collector_paused():
        return _load(text, name)


def _load(text: str, name: str) -> LoadedSpec:
    raw, smap = load_yaml(text, name)
    if raw is None:
        raise SpecError([Problem(name, 1, 1, "", "the spec is empty (start from `ibprov example`)")])
    if not isinstance(raw, dict):
        kind = _KINDS.get(type(raw), type(raw).__name__)
        raise SpecError(
            [smap.problem((), f"the spec must be a mapping of sections (cluster, nodes, ...), found {kind}")]
        )
    booleans = boolean_problems(smap)
    try:
        spec = ClusterSpec.model_validate(raw)
    except ValidationError as exc:
        raise SpecError(_merge(booleans, validation_problems(exc, raw, smap))) from None
    if booleans:
        raise SpecError(booleans)
    topology = build_topology(spec)
    findings = rules.check(spec, topology)
    if findings:
        raise SpecError([smap.problem(path, message) for path, message in findings])
    warnings = {smap.problem(path, message) for path, message in advice.advise(spec, topology)}
    warnings.update(deprecation_warnings(raw, smap))
    return LoadedSpec(spec, topology, smap, warnings=tuple(sorted(warnings)))


_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


# ---------------------------------------------------------------------------------- old spellings
# Where a field with old spellings is: its keys, None for every item of a list (or value of a mapping).
Pattern = tuple[str | None, ...]


def deprecation_warnings(raw: Any, smap: SourceMap) -> list[Problem]:
    """An old spelling of format version 1 (a field's :class:`Renamed`), located at the value as written.

    The model has already read it as its new spelling; only the data as written (``raw``, with the source map
    keyed by the same paths) still knows where it was, so the warning is made here rather than in the model's
    validator, which sees the value but not its place in the file. Only the paths of fields with old spellings
    are visited, not the whole spec."""
    problems = []
    for pattern, renamed in _renamed_fields():
        for path, value in _values_at(raw, pattern, ()):
            message = renamed.warning(value)
            if message is not None:
                problems.append(smap.problem(path, message))
    return problems


@functools.cache
def _renamed_fields() -> tuple[tuple[Pattern, Renamed], ...]:
    """Every field of ClusterSpec (at any depth) with old spellings, and where it is."""
    found: list[tuple[Pattern, Renamed]] = []

    def walk(tp: Any, pattern: Pattern, metadata: tuple[Any, ...], models: frozenset[type]) -> None:
        while typing.get_origin(tp) is typing.Annotated:
            tp, *more = typing.get_args(tp)
            metadata = (*metadata, *more)
        found.extend((pattern, meta) for meta in metadata if isinstance(meta, Renamed))
        origin = typing.get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and tp not in models:
            for name, field in tp.model_fields.items():
                walk(field.annotation, (*pattern, name), tuple(field.metadata), models | {tp})
        elif origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
            for arg in typing.get_args(tp):
                walk(arg, pattern, (), models)
        elif origin in (tuple, list) and typing.get_args(tp):
            walk(typing.get_args(tp)[0], (*pattern, None), (), models)
        elif origin is dict:
            walk(typing.get_args(tp)[1], (*pattern, None), (), models)

    walk(ClusterSpec, (), (), frozenset())
    return tuple(found)


def _values_at(data: Any, pattern: Pattern, path: Path) -> Iterator[tuple[Path, Any]]:
    if not pattern:
        yield path, data
        return
    head, rest = pattern[0], pattern[1:]
    if head is None:
        items = enumerate(data) if isinstance(data, list) else data.items() if isinstance(data, dict) else ()
        for key, item in items:
            yield from _values_at(item, rest, (*path, key))
    elif isinstance(data, dict) and head in data:
        yield from _values_at(data[head], rest, (*path, head))


# ------------------------------------------------------------------------------ booleans as numbers
def boolean_problems(smap: SourceMap) -> list[Problem]:
    """YAML booleans given where a number is expected (pydantic would silently read true/yes/on as 1)."""
    problems = []
    for path in smap.booleans:
        tp: Any = ClusterSpec
        for part in path:
            tp = _step(tp, part)
            if tp is None:
                break
        else:
            if _wants_number(tp):
                problems.append(
                    smap.problem(path, "expected a number, got a YAML boolean (true/false, yes/no and on/off)")
                )
    return problems


def _wants_number(tp: Any) -> bool:
    kinds: set[Any] = set()
    for candidate in _flatten(tp):
        if typing.get_origin(candidate) is typing.Literal:
            kinds.update(type(v) for v in typing.get_args(candidate))
        else:
            kinds.add(candidate if isinstance(candidate, type) else object)
    return bool(kinds & {int, float}) and not kinds & {bool, object}


def _merge(first: list[Problem], second: list[Problem]) -> list[Problem]:
    """Both lists; where both have a problem at the same place, the one from ``first``."""
    taken = {(p.line, p.column, p.path) for p in first}
    return first + [p for p in second if (p.line, p.column, p.path) not in taken]


# ---------------------------------------------------------------------------- pydantic -> Problem
def validation_problems(exc: ValidationError, raw: Any, smap: SourceMap) -> list[Problem]:
    problems: dict[Path, Problem] = {}
    errors = exc.errors(include_url=False)
    item_errors = {tuple(e["loc"])[:i] for e in errors for i in range(len(e["loc"]))}
    for err in errors:
        loc = tuple(err["loc"])
        if err["type"] == "too_short" and loc in item_errors:
            continue  # pydantic counts the items that failed as missing: their own errors say more
        path, key_error = _data_path(raw, loc)
        kind = err["type"]
        if kind == "extra_forbidden":
            message = f"unknown key {path[-1]!r}{_suggest(str(path[-1]), _fields_at(path[:-1]))}"
            problem = smap.problem(path, message, prefer_key=True)
        elif kind == "missing":
            problem = smap.problem(path, f"missing required key {path[-1]!r}")
        else:
            problem = smap.problem(path, _message(err), prefer_key=key_error)
        # a union reports one error per member: keep the first, it names the most common form
        problems.setdefault(path, problem)
    return list(problems.values())


def _data_path(raw: Any, loc: tuple[Any, ...]) -> tuple[Path, bool]:
    """Map a pydantic loc onto the data path, dropping union tags; True if the error is about a dict key."""
    out: list[str | int] = []
    cur = raw
    for i, part in enumerate(loc):
        if part == "[key]" and not (isinstance(cur, dict) and part in cur):  # a key named "[key]" is a key
            return tuple(out), True
        if (isinstance(cur, dict) and part in cur) or (
            isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur)
        ):
            out.append(part)
            cur = cur[part]
        elif isinstance(part, int) and cur is not None and not isinstance(cur, (dict, list)):
            break  # an item of a value given in its string form ("0:64,1:32"): the error is about that value
        elif i == len(loc) - 1 and isinstance(part, (str, int)) and not _is_tag(part):
            out.append(part)  # a missing key
        elif isinstance(cur, dict) and isinstance(part, str) and not _is_tag(part):
            out.append(part)
            cur = None
    return tuple(out), False


def _is_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        "[" in part or part in {"int", "str", "float", "bool", "list", "tuple", "dict"} or part[:1].isupper()
    )


def _message(err: Any) -> str:
    msg: str = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    if msg[1:2].islower():  # "Input should..." -> "input should...", but keep "IB MTU..."
        msg = msg[:1].lower() + msg[1:]
    msg = re.sub(r"a valid dictionary( or instance of \w+)?", "a mapping", msg)
    msg = msg.replace("a valid tuple", "a list").replace("a valid list", "a list")
    value = err.get("input")
    if err["type"] == "string_pattern_mismatch":
        words = PATTERN_WORDS.get(err.get("ctx", {}).get("pattern", ""), "")
        if words:
            return f"{value!r} is not allowed: write {words}"
    if err["type"] == "too_short":
        n = err.get("ctx", {}).get("min_length", 1)
        return f"needs at least {n} entr{'y' if n == 1 else 'ies'}"
    if err["type"] == "too_long":
        n = err.get("ctx", {}).get("max_length", 1)
        return f"allows at most {n} entr{'y' if n == 1 else 'ies'}"
    if err["type"] in {"literal_error", "enum"} and isinstance(value, str):
        expected = err.get("ctx", {}).get("expected", "")
        options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip(" '")]
        msg = f"{value!r} is not allowed: {msg}{_suggest(value, options)}"
    elif err["type"] not in {"value_error", "assertion_error"} and isinstance(value, (str, int, float)):
        msg = f"{msg} (got {value!r})"
    return msg


def _suggest(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if not close:
        close = [o for o in options if o.lower() == word.lower()]
    return f" (did you mean {close[0]!r}?)" if close else ""


def _fields_at(path: Path) -> list[str]:
    """Field names of the model found at ``path`` inside ClusterSpec (for 'did you mean')."""
    cur: Any = ClusterSpec
    for part in path:
        cur = _step(cur, part)
        if cur is None:
            return []
    model = _as_model(cur)
    return list(model.model_fields) if model else []


def _as_model(tp: Any) -> type[BaseModel] | None:
    for candidate in _flatten(tp):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _flatten(tp: Any) -> list[Any]:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _flatten(typing.get_args(tp)[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return [x for arg in typing.get_args(tp) for x in _flatten(arg)]
    return [tp]


def _step(tp: Any, part: str | int) -> Any:
    for candidate in _flatten(tp):
        origin = typing.get_origin(candidate)
        if isinstance(candidate, type) and issubclass(candidate, BaseModel) and isinstance(part, str):
            field = candidate.model_fields.get(part)
            return field.annotation if field else None
        if origin in (tuple, list) and isinstance(part, int):
            return typing.get_args(candidate)[0]
        if origin is dict:
            return typing.get_args(candidate)[1]
    return None
