"""Turns cached per-group local layouts into one absolute `Scene` (positions, boxes, edge lines).

Kept apart from `compound.py` because this step runs on every expand/collapse and is written
to be whole-array numpy: all local routes are concatenated once, then every drawn edge gathers
its route plus, when an end sits inside an expanded group, one extra point at that node.

It reads a compound layout through `GroupLayouts`, the protocol `compound.CompoundLayout`
satisfies, so the import runs one way (compound -> scene_assembly), never back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from explorer.layout.graph_arrays import GraphArrays
from explorer.layout.layered import LayeredLayout
from explorer.layout.module_groups import ROOT, GroupTree

PAD, HEADER = 14.0, 26.0


@dataclass(frozen=True)
class LocalLayout:
    """One expanded group laid out on its own: its items and their layered layout."""

    items: NDArray[np.int64]  # item ids, local index order
    layout: LayeredLayout
    pairs: dict[tuple[int, int], int]  # (item u, item v) -> local edge index


class GroupLayouts(Protocol):
    """What `assemble` reads of a compound layout: the graph, its group tree, each edge lifted
    to its lowest common group (`lca`) and sibling items (`cu`, `cv`), and the local layouts."""

    n: int
    tree: GroupTree
    arrays: GraphArrays
    lca: NDArray[np.int64]
    cu: NDArray[np.int64]
    cv: NDArray[np.int64]

    @property
    def local_layouts(self) -> Mapping[int, LocalLayout]: ...

    def item_size(self, item: int, expanded: set[int]) -> tuple[float, float]: ...


@dataclass(frozen=True)
class Scene:
    """Absolute geometry of everything drawn, top-left of the drawing at (0, 0).

    `x, y, w, h` are indexed by item (centres; item `i < n` is node i, `n + g` is group g);
    `visible` marks drawn nodes and collapsed groups; `boxes` are expanded groups drawn as boxes
    (not root, not sections). `rep[node]` is the visible item standing for a node. Drawn edge `k`
    joins items `edge_u[k] -> edge_v[k]` along `px/py[start[k]:start[k+1]]`; `edge_of[e]` maps
    input edge `e` to its drawn edge, or -1 when hidden inside a collapsed group.
    """

    n: int
    x: NDArray[np.float64]
    y: NDArray[np.float64]
    w: NDArray[np.float64]
    h: NDArray[np.float64]
    visible: NDArray[np.bool_]
    boxes: NDArray[np.int64]
    rep: NDArray[np.int64]
    edge_u: NDArray[np.int64]
    edge_v: NDArray[np.int64]
    start: NDArray[np.int64]
    px: NDArray[np.float64]
    py: NDArray[np.float64]
    long: NDArray[np.bool_]
    upward: NDArray[np.bool_]
    edge_of: NDArray[np.int64]
    sections: list[tuple[int, float]]  # (group, y of the separator) for each later section
    width: float
    height: float


def _place(cl: GroupLayouts, expanded: set[int]) -> tuple[NDArray[np.float64], ...]:
    """Absolute centres/sizes of all items under expanded groups, and each group's origin."""
    n, tree = cl.n, cl.tree
    total = n + tree.count
    x, y = np.full(total, np.nan), np.full(total, np.nan)
    w, h = np.zeros(total), np.zeros(total)
    ox, oy = np.zeros(tree.count), np.zeros(tree.count)
    stack = [ROOT]
    while stack:
        g = stack.pop()
        loc = cl.local_layouts[g]
        items = loc.items
        x[items] = ox[g] + loc.layout.x
        y[items] = oy[g] + loc.layout.y
        for it in items.tolist():
            w[it], h[it] = cl.item_size(it, expanded)
            c = it - n
            if c >= 0 and c in expanded:
                head = 0.0 if tree.is_section[c] else HEADER
                pad = 0.0 if tree.is_section[c] else PAD
                ox[c], oy[c] = x[it] - w[it] / 2 + pad, y[it] - h[it] / 2 + head
                stack.append(c)
    return x, y, w, h, ox, oy


def _reps(cl: GroupLayouts, expanded: set[int]) -> NDArray[np.int64]:
    tree = cl.tree
    top = [-1] * tree.count
    for g in range(1, tree.count):  # parents have smaller ids than children
        p = top[tree.parent[g]]
        top[g] = p if p >= 0 else (-1 if g in expanded else g)
    t = np.asarray(top, dtype=np.int64)[tree.node_group]
    return np.where(t >= 0, cl.n + t, np.arange(cl.n))


def _global_routes(cl: GroupLayouts, expanded: set[int], ox: NDArray, oy: NDArray) -> tuple:
    base: dict[int, int] = {}
    xs, ys, lens, longs, revs = [], [], [], [], []
    count = 0
    for g in sorted(expanded):
        lay = cl.local_layouts[g].layout
        base[g] = count
        count += len(lay.src)
        xs.append(lay.route_x + ox[g])
        ys.append(lay.route_y + oy[g])
        lens.append(np.diff(lay.route_start))
        longs.append(lay.long)
        revs.append(lay.reversed_)
    cat = np.concatenate
    return base, cat(xs), cat(ys), cat(lens).astype(np.int64), cat(longs), cat(revs)


def assemble(cl: GroupLayouts, expanded: set[int]) -> Scene:
    n, tree, a = cl.n, cl.tree, cl.arrays
    x, y, w, h, ox, oy = _place(cl, expanded)
    rep = _reps(cl, expanded)
    visible = ~np.isnan(x)
    visible[n:] &= np.asarray([g not in expanded for g in range(tree.count)])
    visible[:n] &= rep == np.arange(n)
    ru, rv = rep[a.src], rep[a.dst]
    keep = ru != rv
    key = ru * (n + tree.count) + rv
    uniq, first, inverse = np.unique(key[keep], return_index=True, return_inverse=True)
    edge_of = np.full(len(a.src), -1, dtype=np.int64)
    edge_of[keep] = inverse
    e_first = np.flatnonzero(keep)[first]
    base, gx, gy, glen, glong, grev = _global_routes(cl, expanded, ox, oy)
    gstart = np.concatenate([[0], np.cumsum(glen)])
    rid = np.asarray(
        [
            base[g] + cl.local_layouts[g].pairs[(u, v)]
            for g, u, v in zip(
                cl.lca[e_first].tolist(), cl.cu[e_first].tolist(), cl.cv[e_first].tolist(), strict=True
            )
        ],
        dtype=np.int64,
    )
    eu, ev = uniq // (n + tree.count), uniq % (n + tree.count)
    pre, post = eu != cl.cu[e_first], ev != cl.cv[e_first]
    rl = glen[rid] if len(rid) else np.zeros(0, np.int64)
    k_len = rl + pre + post
    start = np.concatenate([[0], np.cumsum(k_len)]).astype(np.int64)
    px, py = np.empty(int(start[-1])), np.empty(int(start[-1]))
    owner = np.repeat(np.arange(len(rid)), rl)
    j = np.arange(len(owner)) - np.repeat(np.concatenate([[0], np.cumsum(rl)[:-1]]), rl) if len(rl) else owner
    src_idx = gstart[rid][owner] + j
    dst_idx = start[owner] + pre[owner] + j
    px[dst_idx], py[dst_idx] = gx[src_idx], gy[src_idx]
    s0, s1 = start[:-1][pre], start[1:][post] - 1
    px[s0], py[s0] = x[eu[pre]], y[eu[pre]] + h[eu[pre]] / 2
    px[s1], py[s1] = x[ev[post]], y[ev[post]] - h[ev[post]] / 2
    boxes = np.asarray([g for g in sorted(expanded) if g != ROOT and not tree.is_section[g]], dtype=np.int64)
    secs = [c for c in tree.children[ROOT] if tree.is_section[c]]
    sections = [(g, float(y[n + g] - h[n + g] / 2 - 24.0)) for g in secs[1:]]
    root = cl.local_layouts[ROOT].layout
    return Scene(
        n,
        x,
        y,
        w,
        h,
        visible,
        boxes,
        rep,
        eu,
        ev,
        start,
        px,
        py,
        glong[rid] if len(rid) else np.zeros(0, bool),
        grev[rid] if len(rid) else np.zeros(0, bool),
        edge_of,
        sections,
        root.width,
        root.height,
    )
