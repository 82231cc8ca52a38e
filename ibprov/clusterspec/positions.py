"""A YAML loader that keeps the line and column of every key and value.

It builds plain Python data from libyaml's event stream with an explicit stack, so that:

* every value (and every mapping key) has a position, looked up by its path (``("nodes", 3, "name")``);
* duplicate keys, unknown tags, multiple documents and recursive aliases are reported as problems;
* nesting depth and the size after alias expansion are bounded (no stack overflow, no alias bomb);
* nothing ever raises anything but :class:`~ibprov.errors.SpecError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

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
    """Where each value of a loaded YAML document came from (1-based line and column).

    A document loaded without its positions (the fast path of :func:`load_yaml`) keeps its text in
    ``pending`` and is parsed again for them the first time a position is asked for."""

    file: str
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    booleans: list[Path] = field(default_factory=list)  # where a YAML boolean (true, yes, on...) was given
    pending: str | None = field(default=None, repr=False)

    def locate(self, path: Path, *, prefer_key: bool = False) -> tuple[int, int]:
        """The position of ``path``; for a path that does not exist, that of its closest existing parent."""
        if self.pending is not None:
            text, self.pending = self.pending, None
            full = _positions(text, self.file)
            self.values, self.keys = full.values, full.keys
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


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")


def format_path(path: Path) -> str:
    """``("nodes", 3, "hcas", 0, "device")`` -> ``nodes[3].hcas[0].device``; odd keys are quoted: ``a['x y']``."""
    out = ""
    for part in path:
        if isinstance(part, int) or not _PLAIN_KEY.fullmatch(str(part)):
            out += f"[{part!r}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass(slots=True)
class _Frame:
    is_map: bool
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
    """Builds the document from parser events. Hot path: ~10 events per line of a large spec."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.smap = SourceMap(file)
        self.values = self.smap.values
        self.problems: list[Problem] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.stack: list[_Frame] = []
        self.root: Any = None
        self.documents = 0
        self.expanded = 0
        self.resolve: Callable[[type, str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve
        self.constructor = yaml.constructor.SafeConstructor()
        self.plain_tags: dict[str, str] = {}  # plain scalar -> resolved tag (resolution is regex matching)
        self.constructed: dict[tuple[str, str], Any] = {}  # (tag, text) -> immutable non-string value
        self.handlers: dict[type, Callable[[Any], None]] = {
            ev.ScalarEvent: self._on_scalar,
            ev.MappingStartEvent: self._on_start,
            ev.SequenceStartEvent: self._on_start,
            ev.MappingEndEvent: self._on_end,
            ev.SequenceEndEvent: self._on_end,
            ev.AliasEvent: self._on_alias,
            ev.DocumentStartEvent: self._on_document,
        }

    # -- helpers -------------------------------------------------------------------------------------
    def _fail(self, mark: tuple[int, int], path: Path, message: str) -> None:
        self.problems.append(Problem(self.file, mark[0], mark[1], format_path(path), message))

    def _resolve(self, event: ev.ScalarEvent) -> str:
        tag = event.tag
        if tag is not None and tag != "!":
            return tag
        if not event.implicit[0]:
            return _STR_TAG  # quoted: always a string
        tag = self.plain_tags.get(event.value)
        if tag is None:
            tag = self.plain_tags[event.value] = self.resolve(yaml.ScalarNode, event.value, event.implicit)
        return tag

    def _scalar(self, event: ev.ScalarEvent, tag: str, mark: tuple[int, int], path: Path) -> Any:
        if tag == _STR_TAG:
            return event.value
        cached = self.constructed.get((tag, event.value), _INVALID)
        if cached is not _INVALID:
            return cached
        ctor = self.constructor.yaml_constructors.get(tag)
        if ctor is None:
            self._fail(mark, path, f"unsupported YAML tag {event.tag!r}")
            return None
        node = yaml.ScalarNode(tag, event.value, cast(Any, event.start_mark), cast(Any, event.end_mark), event.style)
        try:
            value = ctor(self.constructor, node)
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            self._fail(mark, path, f"invalid value {event.value!r}: {exc}")
            return None
        self.constructed[(tag, event.value)] = value  # scalars construct to immutable values
        return value

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
        if not top.is_map:
            top.obj.append(value)
        elif not top.has_key:
            self._take_key(top, value, mark)
        else:
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

    def _locate(self, mark: tuple[int, int]) -> tuple[Path, bool]:
        """The path of the node that starts at ``mark``, and whether it is a mapping key.

        A value's position is recorded here; a key's goes to ``smap.keys`` in :meth:`_take_key`.
        """
        if not self.stack:
            self.values[()] = mark
            return (), False
        top = self.stack[-1]
        if not top.is_map:
            path = (*top.path, len(top.obj))
        elif top.has_key:
            path = (*top.path, top.key)
        else:
            return top.path, True
        self.values[path] = mark
        return path, False

    # -- event handlers ------------------------------------------------------------------------------
    def run(self, get_event: Any) -> None:  # noqa: C901 - the hot loop, inlined on purpose
        """Consume every event.

        Scalars and collection starts inside a collection (nearly all events) take the inlined fast path,
        which does what :meth:`_on_scalar`, :meth:`_on_start`, :meth:`_locate`, :meth:`_place` and
        :meth:`_take_key` do; anything unusual (anchors, aliases, merge keys, duplicate or non-string
        keys, documents) goes through those methods.
        """
        stack, values, keys, booleans = self.stack, self.values, self.smap.keys, self.smap.booleans
        plain_tags, resolve, handlers = self.plain_tags, self.resolve, self.handlers
        scalar_event, scalar_node = ev.ScalarEvent, yaml.ScalarNode
        map_start, seq_start = ev.MappingStartEvent, ev.SequenceStartEvent
        map_end, seq_end = ev.MappingEndEvent, ev.SequenceEndEvent
        event = get_event()
        while event is not None:
            kind = type(event)
            if kind is map_end or kind is seq_end:
                self._on_end(event)
                event = get_event()
                continue
            if not stack or not (
                kind is map_start or kind is seq_start or (kind is scalar_event and event.anchor is None)
            ):
                handler = handlers.get(kind)
                if handler is not None:
                    handler(event)
                event = get_event()
                continue
            m = event.start_mark
            mark = (m.line + 1, m.column + 1)
            top = stack[-1]
            is_key = False
            if not top.is_map:
                path: Path = (*top.path, len(top.obj))
            elif top.has_key:
                path = (*top.path, top.key)
            else:
                path, is_key = top.path, True
            if kind is not scalar_event:  # a mapping or a sequence starts
                if not is_key:
                    values[path] = mark
                self._push(event, kind is map_start, path, mark)
                event = get_event()
                continue
            text, tag = event.value, event.tag
            if tag is None or tag == "!":
                if not event.implicit[0]:
                    tag = _STR_TAG
                else:
                    tag = plain_tags.get(text)
                    if tag is None:
                        tag = plain_tags[text] = resolve(scalar_node, text, event.implicit)
            if is_key:
                if tag == _MERGE_TAG and event.tag is None:
                    top.merge_pending = top.has_key = True
                    top.key = _INVALID
                elif tag != _STR_TAG or text in top.seen or top.merge_pending:
                    key = text if tag == _STR_TAG else self._scalar(event, tag, mark, top.path)
                    self._place(key, 1, mark, None)
                else:  # the common case of _place + _take_key: a new string key
                    self.expanded += 1
                    top.size += 1
                    top.has_key = True
                    top.key_mark = top.seen[text] = mark
                    top.key = text
                    keys[(*top.path, text)] = mark
                event = get_event()
                continue
            values[path] = mark
            value = text if tag == _STR_TAG else self._scalar(event, tag, mark, path)
            if value is True or value is False:
                booleans.append(path)
            self.expanded += 1
            if self.expanded > MAX_EXPANDED_VALUES:
                raise _Abort(mark, (), f"document expands to more than {MAX_EXPANDED_VALUES} values (alias bomb?)")
            top.size += 1
            if not top.is_map:
                top.obj.append(value)
            else:
                if top.merge_pending:
                    self._take_merge(top, value, mark)
                elif top.key is not _INVALID:
                    top.obj[top.key] = value
                top.has_key = top.merge_pending = False
            event = get_event()

    def feed(self, event: ev.Event) -> None:
        handler = self.handlers.get(type(event))
        if handler is not None:
            handler(event)

    def _on_document(self, event: ev.Event) -> None:
        self.documents += 1
        if self.documents > 1:
            raise _Abort(_mark(event), (), "expected a single YAML document, found more than one")

    def _on_scalar(self, event: ev.ScalarEvent) -> None:
        mark = _mark(event)
        path, is_key = self._locate(mark)
        tag = self._resolve(event)
        if is_key and tag == _MERGE_TAG and event.tag is None:
            top = self.stack[-1]
            top.merge_pending = True
            top.has_key = True
            top.key = _INVALID
            return
        value = self._scalar(event, tag, mark, path)
        if not is_key and (value is True or value is False):
            self.smap.booleans.append(path)
        self._place(value, 1, mark, event.anchor)

    def _on_alias(self, event: ev.AliasEvent) -> None:
        mark = _mark(event)
        path, is_key = self._locate(mark)
        if event.anchor not in self.anchors:
            self._fail(mark, path, f"unknown or recursive alias *{event.anchor}")
            self._place(None, 1, mark, None)
            return
        value, size = self.anchors[event.anchor]
        if not is_key and (value is True or value is False):
            self.smap.booleans.append(path)
        self._place(value, size, mark, None)

    def _on_start(self, event: ev.CollectionStartEvent) -> None:
        mark = _mark(event)
        path, _ = self._locate(mark)
        self._push(event, type(event) is ev.MappingStartEvent, path, mark)

    def _push(self, event: ev.CollectionStartEvent, is_map: bool, path: Path, mark: tuple[int, int]) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise _Abort(mark, (), f"nesting deeper than {MAX_DEPTH} levels")
        if event.tag is not None and event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
            self._fail(mark, path, f"unsupported YAML tag {event.tag!r}")
        self.stack.append(_Frame(is_map, {} if is_map else [], path, event.anchor, key_mark=mark))

    def _on_end(self, event: ev.Event) -> None:
        frame = self.stack.pop()
        if frame.is_map and frame.merges:
            explicit = dict(frame.obj)
            for src in reversed(frame.merges):
                frame.obj.update(src)
            frame.obj.update(explicit)
        start = self.values.get(frame.path, frame.key_mark or (1, 1))
        self._place(frame.obj, frame.size, start, frame.anchor)


def _mark(event: ev.Event) -> tuple[int, int]:
    m = event.start_mark
    return (m.line + 1, m.column + 1) if m is not None else (1, 1)


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
    A plain document (no anchors, aliases, merge keys, explicit tags, duplicate keys, errors: nearly every
    spec) is built without positions first, which is faster; its positions are worked out when one is asked
    for. Anything else goes through the builder that records them as it goes.
    """
    fast = _plain_document(text)
    if fast is not None:
        root, booleans = fast
        return root, SourceMap(file, booleans=booleans, pending=text)
    builder = _positions_builder(text, file)
    if builder.problems:
        raise SpecError(builder.problems)
    return builder.root, builder.smap


def _positions(text: str, file: str) -> SourceMap:
    return _positions_builder(text, file).smap


def _positions_builder(text: str, file: str) -> _Builder:
    builder = _Builder(file)
    loader = _Loader(text)
    try:
        builder.run(loader.get_event)
    except _Abort as abort:
        builder.problems.append(Problem(file, abort.mark[0], abort.mark[1], format_path(abort.path), abort.message))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        what = "YAML syntax error: " + " ".join(s for s in (exc.context, exc.problem) if s)
        if "maximum nesting depth" in what:  # libyaml's own limit, reached while scanning ahead
            what = f"nesting deeper than {MAX_DEPTH} levels"
        builder.problems.append(Problem(file, line, col, "", what))
    except yaml.YAMLError as exc:  # reader errors (control characters) carry their own position text
        line, col = _reader_position(exc, text)
        reason = getattr(exc, "reason", None) or _one_line(exc)
        character = getattr(exc, "character", None)
        if isinstance(character, int):
            reason += f" (found U+{character:04X})"
        builder.problems.append(Problem(file, line, col, "", f"YAML error: {reason}"))
    finally:
        loader.dispose()
    return builder


class _Unusual(Exception):
    """Something :func:`_plain_document` leaves to the builder that records positions."""


def _plain_document(text: str) -> tuple[Any, list[Path]] | None:  # noqa: C901 - one hot loop
    """The data of a plain document and where its booleans are, built without positions; None if the
    document has anything else (then :class:`_Builder` builds it and reports any problem).

    The same data as :class:`_Builder` builds: the same tag resolution and constructors, the same caches."""
    builder = _Builder("")  # for its resolver, constructor and caches only
    plain_tags, resolve = builder.plain_tags, builder.resolve
    constructed, constructors = builder.constructed, builder.constructor.yaml_constructors
    constructor = builder.constructor
    scalar_event, scalar_node = ev.ScalarEvent, yaml.ScalarNode
    map_start, seq_start = ev.MappingStartEvent, ev.SequenceStartEvent
    map_end, seq_end = ev.MappingEndEvent, ev.SequenceEndEvent
    passing = (ev.StreamStartEvent, ev.StreamEndEvent, ev.DocumentEndEvent)
    # a frame: [the dict or list, is a mapping, its current key, that key is waiting for its value]
    stack: list[list[Any]] = []
    booleans: list[Path] = []
    root: Any = None
    documents = count = 0
    loader = _Loader(text)
    get_event = loader.get_event
    try:
        event = get_event()
        while event is not None:
            kind = type(event)
            if kind is scalar_event:
                if event.anchor is not None or not stack:
                    raise _Unusual
                scalar, tag = event.value, event.tag
                if tag is not None and tag != "!":
                    raise _Unusual
                if not event.implicit[0]:
                    tag = _STR_TAG
                else:
                    tag = plain_tags.get(scalar)
                    if tag is None:
                        tag = plain_tags[scalar] = resolve(scalar_node, scalar, event.implicit)
                if tag == _STR_TAG:
                    value = scalar
                else:
                    value = constructed.get((tag, scalar), _INVALID)
                    if value is _INVALID:
                        ctor = constructors.get(tag)
                        if ctor is None or tag == _MERGE_TAG:
                            raise _Unusual
                        node = scalar_node(
                            tag, scalar, cast(Any, event.start_mark), cast(Any, event.end_mark), event.style
                        )
                        try:
                            value = ctor(constructor, node)
                        except (yaml.YAMLError, ValueError, TypeError):
                            raise _Unusual from None
                        constructed[(tag, scalar)] = value
                top = stack[-1]
                count += 1
                if not top[1]:
                    if value is True or value is False:
                        booleans.append(_frames_path(stack))
                    top[0].append(value)
                elif top[3]:
                    if value is True or value is False:
                        booleans.append(_frames_path(stack))
                    top[0][top[2]] = value
                    top[3] = False
                else:  # a key
                    if value in top[0]:
                        raise _Unusual  # a duplicate key
                    top[2] = value
                    top[3] = True
            elif kind is map_start or kind is seq_start:
                is_map = kind is map_start
                if event.anchor is not None or len(stack) >= MAX_DEPTH:
                    raise _Unusual
                if event.tag is not None and event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
                    raise _Unusual
                if stack and stack[-1][1] and not stack[-1][3]:
                    raise _Unusual  # a mapping or sequence as a key
                stack.append([{} if is_map else [], is_map, None, False])
            elif kind is map_end or kind is seq_end:
                obj = stack.pop()[0]
                count += 1
                if not stack:
                    root = obj
                else:
                    top = stack[-1]
                    if top[1]:
                        top[0][top[2]] = obj
                        top[3] = False
                    else:
                        top[0].append(obj)
            elif kind is ev.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise _Unusual
            elif kind not in passing:
                raise _Unusual  # an alias
            if count > MAX_EXPANDED_VALUES:
                raise _Unusual
            event = get_event()
    except (_Unusual, yaml.YAMLError, TypeError):  # TypeError: an unhashable key
        return None
    finally:
        loader.dispose()
    return root, booleans


def _frames_path(stack: list[list[Any]]) -> Path:
    """The path of the value being placed: each mapping's current key, each sequence's next index."""
    return tuple(frame[2] if frame[1] else len(frame[0]) for frame in stack)


def _reader_position(exc: yaml.YAMLError, text: str) -> tuple[int, int]:
    pos = getattr(exc, "position", None)
    if not isinstance(pos, int):
        return 1, 1
    before = text[:pos]
    return before.count("\n") + 1, pos - (before.rfind("\n") + 1) + 1


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
