"""Batched QPainterPaths for a laid-out `Scene`: the whole graph is a handful of paths.

One path per fill colour of node boxes, one for all edges, one for long-edge stubs, one for
group boxes. A path is built from numpy arrays in one call (pyqtgraph's `arrayToQPath` streams
the points through a QDataStream), so 50k nodes cost milliseconds, and QPainterPath is
reentrant, so this can run in the layout worker thread. Overlays and highlights only rebuild
the node paths, never the layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from pyqtgraph.functions import arrayToQPath
from PySide6.QtGui import QPainterPath

from explorer.layout import Scene

STUB = 18.0  # length of the two stubs drawn for an edge too long to route


def rects_path(x: NDArray, y: NDArray, w: NDArray, h: NDArray) -> QPainterPath:
    """Closed rectangles (centres x, y) as one path."""
    if len(x) == 0:
        return QPainterPath()
    lft, r, t, b = x - w / 2, x + w / 2, y - h / 2, y + h / 2
    xs = np.stack([lft, r, r, lft, lft], 1).ravel()
    ys = np.stack([t, t, b, b, t], 1).ravel()
    connect = np.ones(len(xs), dtype=np.int32)
    connect[4::5] = 0
    return arrayToQPath(xs, ys, connect=connect, finiteCheck=False)


def polylines_path(px: NDArray, py: NDArray, start: NDArray) -> QPainterPath:
    """Polylines `px/py[start[k]:start[k+1]]` as one path."""
    if len(px) == 0:
        return QPainterPath()
    connect = np.ones(len(px), dtype=np.int32)
    connect[start[1:] - 1] = 0  # last point of each polyline does not link to the next one
    return arrayToQPath(px, py, connect=connect, finiteCheck=False)


def stubs_path(scene: Scene, which: NDArray[np.int64]) -> QPainterPath:
    """Short dashed stubs below the source and above the target of each unrouted edge."""
    if len(which) == 0:
        return QPainterPath()
    a, b = scene.start[which], scene.start[which + 1] - 1
    x0, y0, x1, y1 = scene.px[a], scene.py[a], scene.px[b], scene.py[b]
    xs = np.stack([x0, x0, x1, x1], 1).ravel()
    ys = np.stack([y0, y0 + STUB, y1 - STUB, y1], 1).ravel()
    connect = np.tile(np.array([0, 1, 0, 1], dtype=np.int32), len(which))
    connect = np.roll(connect, -1)
    return arrayToQPath(xs, ys, connect=connect, finiteCheck=False)


@dataclass
class ScenePaths:
    edges: QPainterPath
    stubs: QPainterPath
    boxes: list[tuple[int, QPainterPath]]  # (nesting depth, boxes at that depth)
    groups: QPainterPath  # collapsed groups
    stub_edges: NDArray[np.int64]


def build_paths(scene: Scene, depth_of: list[int]) -> ScenePaths:
    lengths = np.diff(scene.start)
    keep_idx = np.repeat(~scene.long, lengths)
    new_start = np.concatenate([[0], np.cumsum(lengths[~scene.long])]).astype(np.int64)
    edges = polylines_path(scene.px[keep_idx], scene.py[keep_idx], new_start)
    stub_edges = np.flatnonzero(scene.long)
    n = scene.n
    vg = np.flatnonzero(scene.visible[n:]) + n
    boxes: list[tuple[int, QPainterPath]] = []
    depth = np.asarray([depth_of[g] for g in scene.boxes.tolist()], dtype=np.int64)
    for d in sorted(set(depth.tolist())):
        it = scene.boxes[depth == d] + n
        boxes.append((d, rects_path(scene.x[it], scene.y[it], scene.w[it], scene.h[it])))
    groups = rects_path(scene.x[vg], scene.y[vg], scene.w[vg], scene.h[vg])
    return ScenePaths(edges, stubs_path(scene, stub_edges), boxes, groups, stub_edges)


def node_paths(scene: Scene, colors: NDArray[np.int64]) -> dict[int, QPainterPath]:
    """Visible node boxes bucketed by colour index (`colors[node]`)."""
    out: dict[int, QPainterPath] = {}
    vis = np.flatnonzero(scene.visible[: scene.n])
    for c in np.unique(colors[vis]).tolist():
        it = vis[colors[vis] == c]
        out[int(c)] = rects_path(scene.x[it], scene.y[it], scene.w[it], scene.h[it])
    return out
