# Copyright: ibprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Filters for the ib_slurm_topology role.

ib_slurm_topology_problems(settings) -> list of human-readable problems ([] when valid); settings is a
                                        dict with the role's variables without the ib_slurm_topology_ prefix
"""

from __future__ import annotations

import re

# Names are internal to Slurm: at most 64 characters (topology.conf(5)); a space, comma, '=' or '#'
# would end or split the value in topology.conf.
_NAME_RE = re.compile(r"^[^\s,=#\[\]]{1,64}$")
# Slurm hostlist expressions: node[001-032,40],gpu1 - no spaces, '=' or '#'.
_HOSTLIST_RE = re.compile(r"^[^\s=#\"']+$")


def _names(kind, items, problems):
    seen = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            problems.append(f"{kind}[{i}] is not a mapping: {item!r}")
            continue
        name = item.get("name")
        if not isinstance(name, str) or not _NAME_RE.match(name):
            problems.append(
                f"{kind}[{i}].name {name!r}: 1-64 characters without spaces, commas, '=', '#' or brackets"
            )
        elif name in seen:
            problems.append(f"{kind}[{i}].name {name!r} already used by {kind}[{seen[name]}]")
        else:
            seen[name] = i


def _hostlist(where, value, problems, required=False):
    if value in (None, ""):
        if required:
            problems.append(f"{where} is missing (a Slurm hostlist such as node[01-04])")
        return False
    if not isinstance(value, str) or not _HOSTLIST_RE.match(value):
        problems.append(f"{where} {value!r} is not a Slurm hostlist (no spaces, quotes, '=' or '#')")
    return True


def _tree(switches, problems):
    if not switches:
        problems.append("plugin tree needs ib_slurm_topology_switches (at least one switch)")
        return
    _names("switches", switches, problems)
    for i, sw in enumerate(switches):
        if not isinstance(sw, dict):
            continue
        has_nodes = _hostlist(f"switches[{i}].nodes", sw.get("nodes"), problems)
        has_switches = _hostlist(f"switches[{i}].switches", sw.get("switches"), problems)
        if not (has_nodes or has_switches):
            problems.append(f"switches[{i}] ({sw.get('name')}) has neither nodes nor switches")


def _block(blocks, sizes, problems):
    if not blocks:
        problems.append("plugin block needs ib_slurm_topology_blocks (at least one block)")
    else:
        _names("blocks", blocks, problems)
        for i, blk in enumerate(blocks):
            if isinstance(blk, dict):
                _hostlist(f"blocks[{i}].nodes", blk.get("nodes"), problems, required=True)
    prev = None
    for i, size in enumerate(sizes or []):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            problems.append(f"block_sizes[{i}] {size!r} is not a positive integer")
            return
        if prev is not None:
            ratio, rest = divmod(size, prev)
            if rest or ratio < 2 or ratio & (ratio - 1):
                problems.append(
                    f"block_sizes[{i}] {size} is not a power-of-two multiple (2x, 4x, ...) of {prev}"
                )
        prev = size


def ib_slurm_topology_problems(settings):
    """Everything wrong with the role's settings, all at once."""
    problems = []
    plugin = settings.get("plugin")
    if plugin == "tree":
        _tree(settings.get("switches") or [], problems)
    elif plugin == "block":
        _block(settings.get("blocks") or [], settings.get("block_sizes") or [], problems)
    else:
        problems.append(f"plugin {plugin!r} is not tree or block")
    if settings.get("file") == "yaml":
        name = settings.get("name")
        if not isinstance(name, str) or not _NAME_RE.match(name):
            problems.append(f"name {name!r} (the topology's name in topology.yaml): 1-64 characters without spaces")
    return problems


class FilterModule:
    def filters(self):
        return {"ib_slurm_topology_problems": ib_slurm_topology_problems}
