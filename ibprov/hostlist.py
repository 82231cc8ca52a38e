"""Slurm hostlists: ``node[001-010,015],gpu[1-2]`` to names and back.

:func:`expand` reads what Slurm writes and accepts (``scontrol show topology``, ``sinfo``, topology.conf):
names separated by commas outside brackets, each with any number of bracket groups (``a[1-2]b[3-4]`` is
a1b3, a1b4, a2b3, a2b4); a group lists numbers and ranges, and a range is as wide as its first number
(``[08-10]`` is 08, 09, 10; ``[8-10]`` is 8, 9, 10). Anything else is a ValueError that quotes the text.

:func:`compress` writes Slurm's sorted form (what ``scontrol show hostlistsorted`` prints): names that differ
only in their trailing number, written as wide, share one bracket group, ``gpu1,node[01-03,07]``; the
groups in natural order of their prefix. ``expand(compress(names))`` gives every name once, in that order.

Bottom floor: imports nothing of ibprov, so a probe's parser reads hostlists without loading the spec.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import product

__all__ = ["MAX_HOSTS", "compress", "expand", "natural_key"]

MAX_HOSTS = 1_000_000  # a hostlist that expands to more names is refused (a typo such as n[0-99999999])

_RANGE = re.compile(r"(\d+)(?:-(\d+))?")
_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$", re.DOTALL)
_FORBIDDEN = frozenset(",[] \t\n\r")


def expand(text: str) -> list[str]:
    """The names of hostlist ``text``, in its order (duplicates kept, as Slurm keeps them). "" is no name."""
    if not text:
        return []
    names: list[str] = []
    for part in _split_top(text):
        if not part:
            raise ValueError(f"empty name in hostlist {text!r} (two commas, or one at an end)")
        names.extend(_expand_one(part, text))
        if len(names) > MAX_HOSTS:
            raise ValueError(f"hostlist {text!r} names more than {MAX_HOSTS:,} hosts")
    return names


def _split_top(text: str) -> list[str]:
    """``text`` cut at the commas outside brackets; brackets checked for balance (never nested)."""
    parts, start, depth = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            if depth:
                raise ValueError(f"nested '[' at column {i + 1} of hostlist {text!r}")
            depth = 1
        elif ch == "]":
            if not depth:
                raise ValueError(f"']' without '[' at column {i + 1} of hostlist {text!r}")
            depth = 0
        elif ch == "," and not depth:
            parts.append(text[start:i])
            start = i + 1
        elif ch.isspace():
            raise ValueError(f"whitespace at column {i + 1} of hostlist {text!r}")
    if depth:
        raise ValueError(f"'[' without ']' in hostlist {text!r}")
    parts.append(text[start:])
    return parts


def _expand_one(part: str, text: str) -> list[str]:
    """One name with its bracket groups: the product of the groups, the first varying slowest."""
    pieces: list[list[str]] = []
    rest = part
    while "[" in rest:
        before, _, after = rest.partition("[")
        inside, _, rest = after.partition("]")
        pieces.append([before])
        pieces.append(_numbers(inside, text))
    pieces.append([rest])
    count = 1
    for piece in pieces:
        count *= len(piece)
    if count > MAX_HOSTS:
        raise ValueError(f"hostlist {text!r} names more than {MAX_HOSTS:,} hosts")
    return ["".join(combo) for combo in product(*pieces)]


def _numbers(inside: str, text: str) -> list[str]:
    """The numbers of one bracket group, ``001-003,7`` -> 001, 002, 003, 7."""
    out: list[str] = []
    for item in inside.split(","):
        match = _RANGE.fullmatch(item)
        if match is None:
            what = "an empty entry" if not item else f"{item!r}, which is no number or range N-M"
            raise ValueError(f"hostlist {text!r} has {what} in [{inside}]")
        low, high = match.group(1), match.group(2)
        if high is None:
            out.append(low)
            continue
        first, last = int(low), int(high)
        if last < first:
            raise ValueError(f"hostlist {text!r} has the range {item} running backwards")
        if last - first >= MAX_HOSTS:
            raise ValueError(f"hostlist {text!r} names more than {MAX_HOSTS:,} hosts")
        width = len(low)
        out.extend(f"{n:0{width}d}" for n in range(first, last + 1))
    return out


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that orders digit runs by value (gpu2 before gpu10), as Slurm sorts hostlists."""
    return tuple((0, int(tok)) if tok.isdigit() else (1, tok) for tok in re.findall(r"\d+|\D+", text))


def compress(names: Iterable[str]) -> str:
    """The sorted, compressed hostlist of ``names`` (duplicates dropped), e.g. ``gpu1,node[01-03,07]``.

    Names group by the text before their trailing number and by that number's width: a number written with
    a leading zero (``007``) joins only numbers of its width; one without (``7``, ``10``) joins the zero-padded
    group of its own width when there is one, else the group of plain numbers. A name with a ',', '[', ']' or
    whitespace cannot be written in a hostlist: ValueError."""
    plain: dict[str, set[int]] = {}
    padded: dict[tuple[str, int], set[int]] = {}
    loose: set[str] = set()
    natural: list[tuple[str, str]] = []
    for name in set(names):
        if not name or _FORBIDDEN & set(name):
            raise ValueError(f"{name!r} cannot be written in a hostlist (empty, or with ',', '[', ']' or a space)")
        match = _TRAILING_NUMBER.match(name)
        if match is None:
            loose.add(name)
            continue
        prefix, digits = match.groups()
        if len(digits) > 1 and digits[0] == "0":
            padded.setdefault((prefix, len(digits)), set()).add(int(digits))
        else:
            natural.append((prefix, digits))
    for prefix, digits in natural:
        group = padded.get((prefix, len(digits)))
        (group if group is not None else plain.setdefault(prefix, set())).add(int(digits))
    groups: list[tuple[tuple[tuple[tuple[int, int | str], ...], int, int], str]] = [
        ((natural_key(name), -1, -1), name) for name in loose
    ]
    for prefix, numbers in plain.items():
        groups.append(((natural_key(prefix), 0, min(numbers)), _group(prefix, numbers, 0)))
    for (prefix, width), numbers in padded.items():
        groups.append(((natural_key(prefix), width, min(numbers)), _group(prefix, numbers, width)))
    groups.sort()  # by the key, then the text: names of one natural key (a01b, a1b) in one order, every run
    return ",".join(text for _key, text in groups)


def _group(prefix: str, numbers: set[int], width: int) -> str:
    """``prefix[1-3,7]`` (or ``prefix7`` for one number), each number written ``width`` wide."""
    ordered = sorted(numbers)
    runs: list[tuple[int, int]] = []
    for n in ordered:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    if len(ordered) == 1:
        return f"{prefix}{ordered[0]:0{width}d}"
    body = ",".join(f"{a:0{width}d}" if a == b else f"{a:0{width}d}-{b:0{width}d}" for a, b in runs)
    return f"{prefix}[{body}]"
