"""Disjoint sets (union-find): which of many items belong together, for the spec's rules (the parts of a
fabric no cable joins) and for discover (the CAs of one host)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class UnionFind(Generic[K]):
    """Sets of items, each item its own set until :meth:`union` joins two; an item is added when first seen.
    :meth:`find` is the representative of an item's set (the same for every item of it)."""

    def __init__(self, items: Iterable[K] = ()) -> None:
        self.parent: dict[K, K] = {item: item for item in items}

    def find(self, item: K) -> K:
        parent = self.parent
        while parent.setdefault(item, item) != item:
            parent[item] = parent[parent[item]]  # path halving
            item = parent[item]
        return item

    def union(self, a: K, b: K) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[root_a] = root_b
