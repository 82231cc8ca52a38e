# Test helpers for the molecule verify playbooks (not part of the roles).
"""ibprov_test_hostlist(expr) -> the host names of a Slurm hostlist ("node[01-03,7],gpu1" -> [node01, node02, ...]).
ibprov_test_slurm_topology(text) -> {switch name: {level, nodes, switches}} from `scontrol show topology`
(nodes and switches expanded to sorted lists of names).
"""

from __future__ import annotations

import re


def _split_top(expr):
    """Split at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        parts.append(cur)
    return parts


def _expand_one(item):
    m = re.match(r"^([^\[]*)\[([^\]]+)\](.*)$", item)
    if not m:
        return [item]
    prefix, ranges, rest = m.groups()
    out = []
    for r in ranges.split(","):
        lo, _, hi = r.partition("-")
        hi = hi or lo
        width = len(lo)
        for n in range(int(lo), int(hi) + 1):
            out.extend(prefix + str(n).zfill(width) + tail for tail in _expand_one(rest))
    return out


def ibprov_test_hostlist(expr):
    out = []
    for part in _split_top(str(expr or "")):
        out.extend(_expand_one(part))
    return out


def ibprov_test_slurm_topology(text):
    topo = {}
    for line in str(text).splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if "SwitchName" not in fields:
            continue
        topo[fields["SwitchName"]] = {
            "level": int(fields.get("Level", -1)),
            "nodes": sorted(ibprov_test_hostlist(fields.get("Nodes"))),
            "switches": sorted(ibprov_test_hostlist(fields.get("Switches"))),
        }
    return topo


class FilterModule:
    def filters(self):
        return {
            "ibprov_test_hostlist": ibprov_test_hostlist,
            "ibprov_test_slurm_topology": ibprov_test_slurm_topology,
        }
