"""A YAML loader that keeps the line and column of every key and value.

It builds plain Python data from libyaml's event stream with an explicit stack, so that:

* every value (and every mapping key) has a position, looked up by its path (``("nodes", 3, "name")``);
* duplicate keys, unknown tags, multiple documents and recursive aliases are reported as problems;
* nesting depth and the size after alias expansion are bounded (no stack overflow, no alias bomb);
* nothing ever raises anything but :class:`~ibprov.errors.SpecError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml import events as ev

from ibprov.errors import Problem, SpecError

Path = tuple[str | int, ...]

MAX_DEPTH = 64
MAX_EXPANDED_VALUES = 5_000_000
MAX_BYTES = 64 * 1024 * 1024

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAGS = {None, "!", "tag:yaml.org,2002:map"}
_SEQ_TAGS = {None, "!", "tag:yaml.org,2002:seq"}
_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass
class SourceMap:
    """Where each value of a loaded YAML document came from (1-based line and column)."""

    file: str
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: Path, *, prefer_key: bool = False) -> tuple[int, int]:
        """The position of ``path``; for a path that does not exist, that of its closest existing parent."""
        for i in range(len(path), -1, -1):
            sub = path[:i]
            if prefer_key and sub in self.keys:
                return self.keys[sub]
            if sub in self.values:
                return self.values[sub]
            if sub in self.keys:
                return self.keys[sub]
        return (1, 1)

    def problem(self, path: Path, message: str, *, prefer_key: bool = False) -> Problem:
        line, col = self.locate(path, prefer_key=prefer_key)
        return Problem(self.file, line, col, format_path(path), message)


def format_path(path: Path) -> str:
    """``("nodes", 3, "hcas", 0, "device")`` -> ``nodes[3].hcas[0].device``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass
class _Frame:
    kind: str  # "map" | "seq"
    obj: Any
    path: Path
    anchor: str | None
    size: int = 1
    key: Any = None
    has_key: bool = False
    key_mark: tuple[int, int] | None = None
    merge_pending: bool = False
    merges: list[dict[Any, Any]] = field(default_factory=list)
    seen: dict[Any, tuple[int, int]] = field(default_factory=dict)


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.smap = SourceMap(file)
        self.problems: list[Problem] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.stack: list[_Frame] = []
        self.root: Any = None
        self.documents = 0
        self.expanded = 0
        self.resolver = yaml.resolver.Resolver()
        self.constructor = yaml.constructor.SafeConstructor()

    # -- helpers -------------------------------------------------------------------------------------
    def _mark(self, event: ev.Event) -> tuple[int, int]:
        m = event.start_mark
        return (m.line + 1, m.column + 1) if m is not None else (1, 1)

    def _fail(self, mark: tuple[int, int], path: Path, message: str) -> None:
        self.problems.append(Problem(self.file, mark[0], mark[1], format_path(path), message))

    def _scalar(self, event: ev.ScalarEvent, path: Path) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR_TAG:
            return event.value
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        ctor = self.constructor.yaml_constructors.get(tag)
        if ctor is None:
            self._fail(self._mark(event), path, f"unsupported YAML tag {event.tag!r}")
            return None
        try:
            return ctor(self.constructor, node)
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            self._fail(self._mark(event), path, f"invalid value {event.value!r}: {exc}")
            return None

    def _child_path(self) -> Path:
        top = self.stack[-1]
        if top.kind == "seq":
            return (*top.path, len(top.obj))
        return (*top.path, top.key)

    def _place(self, value: Any, size: int, mark: tuple[int, int], anchor: str | None) -> None:
        """Put a finished node into its parent (as key or value) or make it the document root."""
        if anchor is not None:
            self.anchors[anchor] = (value, size)
        self.expanded += size
        if self.expanded > MAX_EXPANDED_VALUES:
            raise _Abort(mark, (), f"document expands to more than {MAX_EXPANDED_VALUES} values (alias bomb?)")
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        top.size += size
        if top.kind == "seq":
            top.obj.append(value)
            return
        if not top.has_key:
            self._take_key(top, value, mark)
            return
        if top.merge_pending:
            self._take_merge(top, value, mark)
        elif top.key is not _INVALID:
            top.obj[top.key] = value
        top.has_key = False
        top.merge_pending = False

    def _take_key(self, top: _Frame, key: Any, mark: tuple[int, int]) -> None:
        top.has_key = True
        top.key_mark = mark
        if isinstance(key, (dict, list)):
            self._fail(mark, top.path, "mapping keys must be plain scalars")
            top.key = _INVALID
            return
        if key in top.seen and not top.merge_pending:
            first = top.seen[key]
            self._fail(mark, (*top.path, key), f"duplicate key {key!r} (first defined at line {first[0]})")
            top.key = _INVALID
            return
        top.seen[key] = mark
        top.key = key
        self.smap.keys[(*top.path, key)] = mark

    def _take_merge(self, top: _Frame, value: Any, mark: tuple[int, int]) -> None:
        sources = value if isinstance(value, list) else [value]
        for src in sources:
            if isinstance(src, dict):
                top.merges.append(src)
            else:
                self._fail(mark, top.path, "'<<' merge key needs a mapping or a list of mappings")

    def _mark_value(self, mark: tuple[int, int]) -> Path:
        path = self._child_path() if self.stack else ()
        if self.stack and self.stack[-1].kind == "map" and not self.stack[-1].has_key:
            return path  # a key: its position goes to smap.keys in _take_key
        self.smap.values[path] = mark
        return path

    # -- event handlers ------------------------------------------------------------------------------
    def feed(self, event: ev.Event) -> None:
        if isinstance(event, ev.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise _Abort(self._mark(event), (), "expected a single YAML document, found more than one")
            return
        if isinstance(event, (ev.StreamStartEvent, ev.StreamEndEvent, ev.DocumentEndEvent)):
            return
        if isinstance(event, ev.ScalarEvent):
            self._on_scalar(event)
        elif isinstance(event, ev.AliasEvent):
            self._on_alias(event)
        elif isinstance(event, (ev.MappingStartEvent, ev.SequenceStartEvent)):
            self._on_start(event)
        elif isinstance(event, (ev.MappingEndEvent, ev.SequenceEndEvent)):
            self._on_end()

    def _on_scalar(self, event: ev.ScalarEvent) -> None:
        mark = self._mark(event)
        is_key = bool(self.stack) and self.stack[-1].kind == "map" and not self.stack[-1].has_key
        path = self._mark_value(mark)
        if is_key and event.tag is None and event.implicit[0]:
            tag = self.resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
            if tag == _MERGE_TAG:
                top = self.stack[-1]
                top.merge_pending = True
                top.has_key = True
                top.key = _INVALID
                return
        self._place(self._scalar(event, path), 1, mark, event.anchor)

    def _on_alias(self, event: ev.AliasEvent) -> None:
        mark = self._mark(event)
        path = self._mark_value(mark)
        if event.anchor not in self.anchors:
            self._fail(mark, path, f"unknown or recursive alias *{event.anchor}")
            self._place(None, 1, mark, None)
            return
        value, size = self.anchors[event.anchor]
        self._place(value, size, mark, None)

    def _on_start(self, event: ev.CollectionStartEvent) -> None:
        mark = self._mark(event)
        is_map = isinstance(event, ev.MappingStartEvent)
        path = self._mark_value(mark)
        if len(self.stack) >= MAX_DEPTH:
            raise _Abort(mark, path, f"nesting deeper than {MAX_DEPTH} levels")
        if event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
            self._fail(mark, path, f"unsupported YAML tag {event.tag!r}")
        self.stack.append(
            _Frame("map" if is_map else "seq", {} if is_map else [], path, event.anchor, key_mark=mark)
        )

    def _on_end(self) -> None:
        frame = self.stack.pop()
        if frame.kind == "map" and frame.merges:
            explicit = dict(frame.obj)
            for src in reversed(frame.merges):
                frame.obj.update(src)
            frame.obj.update(explicit)
        start = self.smap.values.get(frame.path, frame.key_mark or (1, 1))
        self._place(frame.obj, frame.size, start, frame.anchor)


class _Invalid:
    def __repr__(self) -> str:
        return "<invalid key>"


_INVALID = _Invalid()


class _Abort(Exception):
    def __init__(self, mark: tuple[int, int], path: Path, message: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.path = path
        self.message = message


def decode(data: bytes, file: str) -> str:
    """Bytes -> text, or a SpecError that names the offending byte."""
    if len(data) > MAX_BYTES:
        raise SpecError([Problem(file, 1, 1, "", f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB")])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        byte = data[exc.start]
        raise SpecError(
            [Problem(file, line, col, "", f"file is not UTF-8 text (byte 0x{byte:02x} at offset {exc.start})")]
        ) from None


def load_yaml(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse one YAML document into plain data plus its :class:`SourceMap`.

    Raises :class:`SpecError` listing every problem found (syntax errors stop the parse at the first one).
    """
    builder = _Builder(file)
    loader = _Loader(text)
    try:
        while loader.check_event():
            builder.feed(loader.get_event())
    except _Abort as abort:
        builder.problems.append(Problem(file, abort.mark[0], abort.mark[1], format_path(abort.path), abort.message))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        what = " ".join(s for s in (exc.context, exc.problem) if s)
        builder.problems.append(Problem(file, line, col, "", f"YAML syntax error: {what}"))
    except yaml.YAMLError as exc:  # reader errors (control characters) carry their own position text
        line, col = _reader_position(exc, text)
        reason = getattr(exc, "reason", None) or _one_line(exc)
        builder.problems.append(Problem(file, line, col, "", f"YAML error: {reason}"))
    finally:
        loader.dispose()
    if builder.problems:
        raise SpecError(builder.problems)
    return builder.root, builder.smap


def _reader_position(exc: yaml.YAMLError, text: str) -> tuple[int, int]:
    pos = getattr(exc, "position", None)
    if not isinstance(pos, int):
        return 1, 1
    before = text[:pos]
    return before.count("\n") + 1, pos - (before.rfind("\n") + 1) + 1


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
