"""Nested layout: every expanded group is laid out on its own, as one box in its parent.

This is what keeps group boxes honest: a group's box is its own layout plus padding, so it holds
exactly its members and never overlaps a non-member. Each edge is lifted once, up front, to the
pair of sibling items under the lowest common group of its ends; that does not depend on which
groups are expanded. Expanding or collapsing a group therefore re-lays out only that group's
ancestors (each a small graph of siblings); every other group's local layout is reused.

Items are numbered `0..n-1` for nodes and `n + g` for group `g`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from explorer.layout.graph_arrays import GraphArrays
from explorer.layout.layered import layered_layout
from explorer.layout.module_groups import ROOT, GroupTree
from explorer.layout.ragged import Ragged
from explorer.layout.scene_assembly import HEADER, PAD, LocalLayout, Scene, assemble

COLLAPSED_H = 40.0


def _subtree_first(node_first: NDArray[np.int64], tree: GroupTree) -> list[int]:
    """Per group, the smallest order hint of any node in its subtree (`len(node_first)` if none)."""
    members = tree.members if isinstance(tree.members, Ragged) else Ragged(tree.members)
    first = np.full(tree.count, len(node_first), dtype=np.int64)
    rows = members.lengths() > 0
    if rows.any():
        first[rows] = np.minimum.reduceat(node_first[members.values], members.offsets[:-1][rows])
    out: list[int] = first.tolist()
    parent = tree.parent
    for g in range(tree.count - 1, 0, -1):  # children have larger ids than their parents
        if out[g] < out[parent[g]]:
            out[parent[g]] = out[g]
    return out


class CompoundLayout:
    """Caches per-group local layouts; `scene(expanded)` lays out only what changed."""

    def __init__(self, arrays: GraphArrays, tree: GroupTree) -> None:
        self.arrays, self.tree = arrays, tree
        n, count = arrays.n, tree.count
        self.n = n
        self.first = np.full(n + count, n, dtype=np.int64)  # order hint: first node in an item
        self.first[:n] = tree.order_rank if len(tree.order_rank) == n else np.arange(n)
        self.first[n:] = _subtree_first(self.first[:n], tree)
        self._lift_edges()
        self._cache: dict[int, LocalLayout] = {}
        self._cache_key: dict[int, frozenset[tuple[int, tuple[float, float] | None]]] = {}
        self._size: dict[int, tuple[float, float]] = {}

    def _lift_edges(self) -> None:
        """For each edge, the lowest common group and the sibling items under it."""
        tree, a = self.tree, self.arrays
        chains = [[*reversed(tree.ancestors(g)), g] for g in range(tree.count)]
        lca, cu, cv = [], [], []
        for u, v in zip(a.src.tolist(), a.dst.tolist(), strict=True):
            chu, chv = chains[int(tree.node_group[u])], chains[int(tree.node_group[v])]
            k = 0
            while k + 1 < min(len(chu), len(chv)) and chu[k + 1] == chv[k + 1]:
                k += 1
            lca.append(chu[k])
            cu.append(self.n + chu[k + 1] if k + 1 < len(chu) else u)
            cv.append(self.n + chv[k + 1] if k + 1 < len(chv) else v)
        self.lca = np.asarray(lca, dtype=np.int64)
        self.cu, self.cv = np.asarray(cu, dtype=np.int64), np.asarray(cv, dtype=np.int64)
        order = np.argsort(self.lca, kind="stable")
        bounds = np.searchsorted(self.lca[order], np.arange(tree.count + 1))
        self._by_lca = [order[bounds[g] : bounds[g + 1]] for g in range(tree.count)]

    @property
    def local_layouts(self) -> Mapping[int, LocalLayout]:
        """Each expanded group's cached local layout (what `scene_assembly.assemble` reads)."""
        return self._cache

    def item_size(self, item: int, expanded: set[int]) -> tuple[float, float]:
        if item < self.n:
            return float(self.arrays.widths[item]), float(self.arrays.heights[item])
        g = item - self.n
        if g in expanded:
            return self._size[g]
        label = self.tree.label[g]
        text = len(label) + len(str(self.tree.size[g])) + 6  # "▸ label  (count)"
        return max(90.0, 8.0 * text + 24.0), COLLAPSED_H

    def _local(self, g: int, expanded: set[int]) -> LocalLayout:
        tree, n = self.tree, self.n
        items = np.asarray(tree.members[g] + [n + c for c in tree.children[g]], dtype=np.int64)
        items = items[np.argsort(self.first[items], kind="stable")]
        where = {int(it): i for i, it in enumerate(items.tolist())}
        e = self._by_lca[g]
        pu = np.asarray([where[int(i)] for i in self.cu[e].tolist()], dtype=np.int64)
        pv = np.asarray([where[int(i)] for i in self.cv[e].tolist()], dtype=np.int64)
        if g == ROOT and any(tree.is_section[c] for c in tree.children[g]):
            secs = [where[n + c] for c in tree.children[g] if tree.is_section[c]]
            pu = np.concatenate([pu, secs[:-1]]).astype(np.int64)  # keep sections in order
            pv = np.concatenate([pv, secs[1:]]).astype(np.int64)
        sizes = [self.item_size(int(it), expanded) for it in items.tolist()]
        w = np.asarray([s[0] for s in sizes])
        h = np.asarray([s[1] for s in sizes])
        gap_y = 36.0 if not tree.is_section[g] and g != ROOT else 48.0
        lay = layered_layout(len(items), pu, pv, w, h, gap_y=gap_y)
        pairs = {
            (int(items[s]), int(items[d])): k
            for k, (s, d) in enumerate(zip(lay.src.tolist(), lay.dst.tolist(), strict=True))
        }
        return LocalLayout(items, lay, pairs)

    def _refresh(self, expanded: set[int]) -> None:
        """Recompute local layouts whose expanded descendants changed, deepest groups first."""
        tree = self.tree
        for g in sorted(expanded, key=lambda g: -tree.depth[g]):
            key = frozenset((c, self._size.get(c)) for c in tree.children[g] if c in expanded)
            if g in self._cache and self._cache_key.get(g) == key:
                continue
            local = self._local(g, expanded)
            self._cache[g], self._cache_key[g] = local, key
            header = 0.0 if tree.is_section[g] or g == ROOT else HEADER
            self._size[g] = (local.layout.width + 2 * PAD, local.layout.height + PAD + header)

    def scene(self, expanded: set[int]) -> Scene:
        expanded = set(expanded) | {ROOT} | {g for g in range(self.tree.count) if self.tree.is_section[g]}
        expanded = {g for g in expanded if all(a in expanded for a in self.tree.ancestors(g))}
        self._refresh(expanded)
        return assemble(self, expanded)
