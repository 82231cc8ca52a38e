"""The 1,024-node benchmark fabric: 32 leaves x 32 nodes, 16 spines (radix 48), as a cluster.yaml text."""

from __future__ import annotations


def spec_text(leaves: int = 32, hosts_per_leaf: int = 32, spines: int = 16) -> str:
    nodes = leaves * hosts_per_leaf
    lines = [
        "version: 1",
        "cluster: {name: bench1024}",
        "nodes:",
    ]
    for i in range(1, nodes + 1):
        lines.append(f"  - {{name: node{i:04d}, groups: [compute], hcas: [{{device: mlx5_0}}]}}")
    lines += [
        "fabric:",
        "  speed: HDR",
        "  fat_tree:",
        f"    radix: {hosts_per_leaf + spines}",
        f"    leaves: {leaves}",
        f"    spines: {spines}",
        f"    hosts_per_leaf: {hosts_per_leaf}",
        f"    uplinks_per_leaf: {spines}",
        "subnet_manager:",
        "  routing_engine: ftree",
        "  instances:",
        "    - {node: node0001, priority: 15}",
        "    - {node: node0002, priority: 14}",
        "",
    ]
    return "\n".join(lines)
