"""Inputs for the discover tests: ibnetdiscover text of the project's examples (the real captures are read with
``captures.read_capture``, from tests/fixtures)."""

from __future__ import annotations

import re
from pathlib import Path

from ibprov.clusterspec import LoadedSpec, load_spec
from ibprov.identity.guids import GuidBook, LockFile
from ibprov.render.topology_file import build_topology_file

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
FAT_TREE = ROOT / "examples" / "fat-tree.yaml"
RACK = ROOT / "examples" / "rack.yaml"

_NODE_ID = re.compile(r'"([SHR])-([0-9a-fA-F]+)"')
_NODE_LINE = re.compile(r'^(?:Switch|Ca|Rt)\s+\d+\s+"([SHR])-([0-9a-fA-F]+)"')
_PORT_LINE = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([SHR])-([0-9a-fA-F]+)"\[(\d+)\]')


def census(text: str) -> tuple[set[int], set[frozenset[tuple[int, int]]]]:
    """Node GUIDs and cables of an ibnetdiscover topology file, read with a few regexes (not the parser)."""
    guids: set[int] = set()
    cables: set[frozenset[tuple[int, int]]] = set()
    current: int | None = None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        guids |= {int(g, 16) for _kind, g in _NODE_ID.findall(line)}
        if node := _NODE_LINE.match(line):
            current = int(node[2], 16)
        elif (port := _PORT_LINE.match(line)) and current is not None:
            cables.add(frozenset({(current, int(port[1])), (int(port[3], 16), int(port[4]))}))
    return guids, cables


def planned_text(loaded: LoadedSpec) -> tuple[str, GuidBook]:
    """The ibnetdiscover text of a plan, with synthetic GUIDs where the spec names none."""
    book = GuidBook(loaded, LockFile(), allow_synthetic=True)
    return build_topology_file(loaded, book), book


def example_text(path: Path = FAT_TREE) -> tuple[LoadedSpec, str, GuidBook]:
    loaded = load_spec(path)
    text, book = planned_text(loaded)
    return loaded, text, book


def drop_device(text: str, guid: int) -> str:
    """The fabric without one device: its block and every port line that leads to it."""
    ident = f'-{guid:016x}"'
    blocks = text.split("\n\n")
    kept = [b for b in blocks if not any(_NODE_LINE.match(line) and ident in line for line in b.splitlines())]
    return "\n".join(line for line in "\n\n".join(kept).split("\n") if ident not in line) + "\n"


def redescribe(text: str, old: str, new: str) -> str:
    """Change a NodeDescription everywhere it is printed."""
    assert f'"{old}"' in text
    return text.replace(f'"{old}"', f'"{new}"')
