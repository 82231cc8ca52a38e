"""A small, fast, deterministic YAML writer for render's plain data (dicts, lists, strings, numbers).

PyYAML's representer costs ~0.3 ms per host file, seconds on a 10,000-node cluster; this writes the same
block style directly. Strings that YAML 1.1 could read as anything but the same string are quoted.
"""

from __future__ import annotations

import re
from typing import Any

from ibprov.clusterspec import collector_paused

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
# words YAML 1.1 resolves to booleans or null
_RESERVED = {
    w
    for word in ("y", "n", "yes", "no", "true", "false", "on", "off", "null")
    for w in (word, word.capitalize(), word.upper())
} | {"~"}


_STRINGS: dict[str, str] = {}  # keys and values repeat across thousands of host files


def scalar(value: Any) -> str:
    if type(value) is str:
        return _STRINGS.get(value) or _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if "e" in text and "." not in text:  # YAML 1.1 floats need a dot: 5e-324 -> 5.0e-324
            text = text.replace("e", ".0e")
        return text
    text = str(value)
    return _STRINGS.get(text) or _string(text)


def _string(text: str) -> str:
    first = text[:1]
    if first.isascii() and (first.isalpha() or first == "_"):
        cached = text if _PLAIN.fullmatch(text) and text not in _RESERVED else _quote(text)
    else:  # not plain, whatever follows (GUIDs: 0x...)
        cached = _quote(text)
    if len(_STRINGS) < 100_000:
        _STRINGS[text] = cached
    return cached


_QUOTABLE = re.compile(r"[ !#-\[\]-~]*")  # printable ASCII but '"' and '\\': quoted as it is


def _quote(text: str) -> str:
    """A YAML double-quoted scalar in printable ASCII (YAML forbids some control and line-break chars)."""
    if _QUOTABLE.fullmatch(text):  # the common case (GUIDs, descriptions): no escapes needed
        return f'"{text}"'
    out = []
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _lines(value: Any, indent: str, out: list[str]) -> None:
    strings = _STRINGS
    if isinstance(value, dict):
        for key, item in value.items():
            head = f"{indent}{scalar(key)}:"
            if type(item) is str:
                out.append(f"{head} {strings.get(item) or _string(item)}")
            elif isinstance(item, (dict, list)) and item:
                out.append(head)
                _lines(item, indent + ("  " if isinstance(item, dict) else ""), out)
            else:
                out.append(f"{head} {_empty(item)}")
    elif isinstance(value, list):
        first, rest = f"{indent}- ", f"{indent}  "
        for item in value:
            if type(item) is str:
                out.append(f"{first}{strings.get(item) or _string(item)}")
            elif isinstance(item, dict) and item:
                prefix = first
                for key, sub in item.items():
                    if type(sub) is str:
                        text = (strings.get(key) if type(key) is str else None) or scalar(key)
                        out.append(f"{prefix}{text}: {strings.get(sub) or _string(sub)}")
                    elif isinstance(sub, (dict, list)) and sub:
                        out.append(f"{prefix}{scalar(key)}:")
                        _lines(sub, indent + "  " + ("  " if isinstance(sub, dict) else ""), out)
                    else:
                        out.append(f"{prefix}{scalar(key)}: {_empty(sub)}")
                    prefix = rest
            elif isinstance(item, list) and item:
                out.append(f"{indent}-")
                _lines(item, indent + "  ", out)
            else:
                out.append(f"{first}{_empty(item)}")


def _empty(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return scalar(value)


@collector_paused()
def dump(data: dict[str, Any]) -> str:
    if not data:
        return "{}\n"
    out: list[str] = []
    _lines(data, "", out)
    return "\n".join(out) + "\n"
