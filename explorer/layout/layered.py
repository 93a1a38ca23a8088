"""Sugiyama-style layered layout of a DAG in numpy: data flows top to bottom.

Why not grandalf or Graphviz: grandalf takes minutes for 10k nodes and dot is an external process
that still needs seconds. Here every phase is a handful of whole-array numpy operations, so 50k
nodes lay out in well under a second or two:

1. cycle removal: edges that go backwards in `order` (FX order is topological) are reversed;
2. layer assignment: longest path from the sources, then "floating" nodes (sources and nodes fed
   only by sources, i.e. placeholders, parameters and their views) are pulled down to sit just
   above their first consumer instead of crowding the top row;
3. long edges get one dummy node per crossed layer, so they are routed between the nodes rather
   than straight across the picture; edges longer than `max_span` (or beyond the dummy budget)
   are flagged `long` and drawn as short stubs by the renderer;
4. crossing reduction: Jacobi barycenter sweeps (all layers at once, one global lexsort each);
5. coordinates: neighbours pull each node towards their mean x; order and spacing are restored
   by a left-packing and a right-packing pass (segmented cummax/cummin), which are averaged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class LayeredLayout:
    """Node centres plus one polyline per edge (`route_x/y[route_start[e]:route_start[e+1]]`).

    Edge `e` is `(src[e], dst[e])` of the de-duplicated input; routes run from the bottom of the
    source to the top of the target, so a `reversed_` edge's route climbs. `width`/`height` give
    the bounding box, with the top-left corner of the drawing at (0, 0).
    """

    x: FloatArray
    y: FloatArray
    layer: IntArray
    src: IntArray
    dst: IntArray
    route_start: IntArray
    route_x: FloatArray
    route_y: FloatArray
    reversed_: NDArray[np.bool_]
    long: NDArray[np.bool_]
    width: float
    height: float

    def route(self, e: int) -> tuple[FloatArray, FloatArray]:
        a, b = self.route_start[e], self.route_start[e + 1]
        return self.route_x[a:b], self.route_y[a:b]


def layered_layout(
    n: int,
    src: IntArray,
    dst: IntArray,
    widths: FloatArray,
    heights: FloatArray,
    *,
    order: IntArray | None = None,
    gap_x: float = 24.0,
    gap_y: float = 36.0,
    max_span: int = 120,
    sweeps: int = 4,
) -> LayeredLayout:
    """Lay out `n` nodes with edges `src[i] -> dst[i]`; `order` is a topological hint (FX order)."""
    rank = np.arange(n, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
    src, dst, rev = _acyclic_edges(n, np.asarray(src, np.int64), np.asarray(dst, np.int64), rank)
    us, ud = np.where(rev, dst, src), np.where(rev, src, dst)  # upper -> lower after reversal
    layer = _assign_layers(n, us, ud, rank)
    span = layer[ud] - layer[us]
    routed = span <= max(2, max_span)
    if n > 0:
        routed &= np.cumsum(np.where(routed, span - 1, 0)) <= 3 * n + 1000
    total, seg_u, seg_d, lay, chain_start = _add_dummies(n, us, ud, layer, routed)
    w = np.concatenate([np.asarray(widths, np.float64), np.full(total - n, 4.0)])
    h = np.concatenate([np.asarray(heights, np.float64), np.zeros(total - n)])
    hint = np.concatenate([rank.astype(np.float64), _dummy_hint(us, routed, layer, ud, rank)])
    pos = _reduce_crossings(total, seg_u, seg_d, lay, hint, sweeps)
    x = _assign_x(total, seg_u, seg_d, lay, pos, w, gap_x)
    y, height = _assign_y(lay, h, gap_y)
    x -= (x - w / 2).min() if total else 0.0
    width = float((x + w / 2).max()) if total else 0.0
    start, rx, ry = _routes(n, us, ud, routed, chain_start, layer, x, y, h, rev)
    return LayeredLayout(x[:n], y[:n], lay[:n], src, dst, start, rx, ry, rev, ~routed, width, height)


def _acyclic_edges(
    n: int, src: IntArray, dst: IntArray, rank: IntArray
) -> tuple[IntArray, IntArray, NDArray[np.bool_]]:
    keep = src != dst
    key = np.unique(src[keep] * max(n, 1) + dst[keep])
    src, dst = key // max(n, 1), key % max(n, 1)
    return src, dst, rank[src] > rank[dst]


def _assign_layers(n: int, us: IntArray, ud: IntArray, rank: IntArray) -> IntArray:
    """Longest path from sources, then pull floating nodes down next to their first consumer."""
    by_dst = np.argsort(rank[ud], kind="stable")
    layer = [0] * n
    for s, d in zip(us[by_dst].tolist(), ud[by_dst].tolist(), strict=True):
        if layer[s] + 1 > layer[d]:
            layer[d] = layer[s] + 1
    lay = np.asarray(layer, dtype=np.int64)
    floating = _floating(n, us, ud)
    if not floating.any():
        return lay
    by_src = np.argsort(us, kind="stable")
    succ_start = np.searchsorted(us[by_src], np.arange(n + 1))
    succ = ud[by_src].tolist()
    starts = succ_start.tolist()
    layer = lay.tolist()
    for v in np.flatnonzero(floating)[np.argsort(-rank[floating], kind="stable")].tolist():
        a, b = starts[v], starts[v + 1]
        if a < b:
            layer[v] = min(layer[d] for d in succ[a:b]) - 1
    return np.asarray(layer, dtype=np.int64)


def _floating(n: int, us: IntArray, ud: IntArray) -> NDArray[np.bool_]:
    """Sources, and nodes whose every input floats (a few hops: weight -> permute -> view)."""
    indeg = np.bincount(ud, minlength=n)
    floating = indeg == 0
    for _ in range(3):
        grounded_in = np.bincount(ud, weights=(~floating[us]).astype(np.float64), minlength=n) > 0
        nxt = floating | ~grounded_in
        if (nxt == floating).all():
            break
        floating = nxt
    return floating


def _add_dummies(
    n: int, us: IntArray, ud: IntArray, layer: IntArray, routed: NDArray[np.bool_]
) -> tuple[int, IntArray, IntArray, IntArray, IntArray]:
    """Split routed edges into unit-span segments; returns the first dummy id of each edge."""
    span = np.where(routed, layer[ud] - layer[us], 1)
    k = span - 1
    chain_start = n + np.concatenate([[0], np.cumsum(k)[:-1]]) if len(k) else np.zeros(0, np.int64)
    total = n + int(k.sum())
    ids = np.arange(n, total, dtype=np.int64)
    owner = np.repeat(np.arange(len(k)), k)
    step = ids - chain_start[owner]  # 0 .. k-1 along the chain
    lay = np.concatenate([layer, layer[us][owner] + step + 1])
    # Segment list: src -> d0 -> d1 ... -> dst (or src -> dst when k == 0).
    direct = (k == 0) & routed
    nxt = np.where(step + 1 < k[owner], ids + 1, ud[owner])
    seg_u = np.concatenate([us[direct], us[k > 0], ids])
    seg_d = np.concatenate([ud[direct], chain_start[k > 0], nxt])
    return total, seg_u, seg_d, lay, chain_start


def _dummy_hint(
    us: IntArray, routed: NDArray[np.bool_], layer: IntArray, ud: IntArray, rank: IntArray
) -> FloatArray:
    k = np.where(routed, layer[ud] - layer[us], 1) - 1
    return np.repeat(rank[us].astype(np.float64) + 0.5, k)


def _positions(lay: IntArray, key: FloatArray, tie: FloatArray) -> FloatArray:
    """Index of each node inside its layer when layers are sorted by `key` (then `tie`)."""
    order = np.lexsort((tie, key, lay))
    counts = np.bincount(lay)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos = np.empty(len(lay), dtype=np.float64)
    pos[order] = np.arange(len(lay)) - starts[lay[order]]
    return pos


def _reduce_crossings(
    total: int, seg_u: IntArray, seg_d: IntArray, lay: IntArray, hint: FloatArray, sweeps: int
) -> FloatArray:
    pos = _positions(lay, hint, hint)
    if total == 0 or len(seg_u) == 0:
        return pos
    for i in range(2 * sweeps):
        a, b = (seg_u, seg_d) if i % 2 == 0 else (seg_d, seg_u)  # down sweep, then up sweep
        deg = np.bincount(b, minlength=total)
        bary = np.bincount(b, weights=pos[a], minlength=total)
        key = np.where(deg > 0, bary / np.maximum(deg, 1), pos)
        pos = _positions(lay, key, pos)
    return pos


def _segmented_pack(d: FloatArray, c: FloatArray, lay: IntArray, big: float) -> FloatArray:
    """Closest-from-both-sides positions with x[i+1] - x[i] >= c[i+1] - c[i] inside each layer."""
    off = lay * big
    left = np.maximum.accumulate(d - c + off) - off + c
    right = np.minimum.accumulate((d - c + off)[::-1])[::-1] - off + c
    return (left + right) / 2


def _assign_x(
    total: int,
    seg_u: IntArray,
    seg_d: IntArray,
    lay: IntArray,
    pos: FloatArray,
    w: FloatArray,
    gap: float,
) -> FloatArray:
    if total == 0:
        return np.zeros(0)
    order = np.lexsort((pos, lay))
    lo, wo = lay[order], w[order]
    first = np.r_[True, lo[1:] != lo[:-1]]
    step = np.where(first, 0.0, (np.r_[0.0, wo[:-1]] + wo) / 2 + gap)
    cum = np.cumsum(step)
    c = cum - np.maximum.accumulate(np.where(first, cum, -np.inf))  # offset from layer start
    lw = np.zeros(int(lo.max()) + 1)
    np.maximum.at(lw, lo, c)
    x = c - lw[lo] / 2  # each layer centred on 0 before neighbours pull it around
    # Layer offsets must dwarf any coordinate so the running max/min never leaks across layers.
    big = 1e3 * (float(c.max()) + float(w.max()) + gap + 1.0) + 1e7
    where = np.empty(total, np.int64)
    where[order] = np.arange(total)
    a, b = where[seg_u], where[seg_d]
    deg = np.bincount(a, minlength=total) + np.bincount(b, minlength=total)
    for _ in range(8):
        pull = np.bincount(a, weights=x[b], minlength=total) + np.bincount(b, weights=x[a], minlength=total)
        desired = np.where(deg > 0, pull / np.maximum(deg, 1), x)
        x = _segmented_pack(desired, c, lo, big)
    out = np.empty(total)
    out[order] = x
    return out


def _assign_y(lay: IntArray, h: FloatArray, gap: float) -> tuple[FloatArray, float]:
    if len(lay) == 0:
        return np.zeros(0), 0.0
    nl = int(lay.max()) + 1
    lh = np.zeros(nl)
    np.maximum.at(lh, lay, h)
    top = np.concatenate([[0.0], np.cumsum(lh + gap)[:-1]])
    return top[lay] + lh[lay] / 2, float(top[-1] + lh[-1])


def _routes(
    n: int,
    us: IntArray,
    ud: IntArray,
    routed: NDArray[np.bool_],
    chain_start: IntArray,
    layer: IntArray,
    x: FloatArray,
    y: FloatArray,
    h: FloatArray,
    rev: NDArray[np.bool_],
) -> tuple[IntArray, FloatArray, FloatArray]:
    k = np.where(routed, layer[ud] - layer[us], 1) - 1
    npts = k + 2
    start = np.concatenate([[0], np.cumsum(npts)]).astype(np.int64)
    m = int(start[-1])
    rx, ry = np.empty(m), np.empty(m)
    rx[start[:-1]], ry[start[:-1]] = x[us], y[us] + h[us] / 2
    rx[start[1:] - 1], ry[start[1:] - 1] = x[ud], y[ud] - h[ud] / 2
    owner = np.repeat(np.arange(len(k)), k)
    if len(owner):
        dummy = np.arange(n, n + len(owner))
        idx = start[owner] + 1 + (dummy - chain_start[owner])
        rx[idx], ry[idx] = x[dummy], y[dummy]
    for e in np.flatnonzero(rev):  # keep routes in the caller's edge direction
        a, b = start[e], start[e + 1]
        rx[a:b], ry[a:b] = rx[a:b][::-1].copy(), ry[a:b][::-1].copy()
    return start, rx, ry
