"""Geometry invariants of the numpy layered layout on FX-shaped and random DAGs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.layout import from_graph, layered_layout
from explorer.layout.layered import LayeredLayout
from explorer.layout.synthetic_graphs import transformer_graph


def _flat(n_nodes: int) -> tuple[LayeredLayout, object]:
    a = from_graph(transformer_graph(n_nodes))
    return layered_layout(a.n, a.src, a.dst, a.widths, a.heights), a


def _assert_no_overlap(lay: LayeredLayout, w: np.ndarray, h: np.ndarray) -> None:
    order = np.lexsort((lay.x, lay.layer))
    same = lay.layer[order][1:] == lay.layer[order][:-1]
    right_of_prev = lay.x[order][:-1] + w[order][:-1] / 2
    left = lay.x[order][1:] - w[order][1:] / 2
    assert (left[same] >= right_of_prev[same] - 1e-6).all()
    # Different layers: vertical extents are disjoint.
    top, bottom = lay.y - h / 2, lay.y + h / 2
    for lyr in range(int(lay.layer.max())):
        a, b = lay.layer == lyr, lay.layer == lyr + 1
        if a.any() and b.any():
            assert bottom[a].max() < top[b].min()


def test_every_edge_points_down_and_nodes_do_not_overlap() -> None:
    lay, a = _flat(2000)
    assert not lay.reversed_.any()
    assert (lay.y[lay.dst] > lay.y[lay.src]).all()
    assert (lay.layer[lay.dst] > lay.layer[lay.src]).all()
    _assert_no_overlap(lay, a.widths, a.heights)


def test_placeholders_sit_just_above_their_first_consumer() -> None:
    lay, a = _flat(1000)
    weights = [i for i, n in enumerate(a.nodes) if n.name.startswith("p_weight")]
    assert len(weights) > 20
    for p in weights:
        consumers = lay.dst[lay.src == p]
        assert lay.layer[p] == lay.layer[consumers].min() - 1
    # Not all crowded on the top row (what plain longest-path layering would do).
    assert len(set(lay.layer[weights].tolist())) > len(weights) // 2


def test_routes_run_between_layers_from_source_bottom_to_target_top() -> None:
    lay, a = _flat(1000)
    for e in range(0, len(lay.src), 7):
        xs, ys = lay.route(e)
        u, v = lay.src[e], lay.dst[e]
        assert len(xs) == lay.layer[v] - lay.layer[u] + 1  # one bend per crossed layer
        assert ys[0] == lay.y[u] + a.heights[u] / 2 and ys[-1] == lay.y[v] - a.heights[v] / 2
        assert (np.diff(ys) > 0).all()


def test_cycles_are_broken_by_order_and_reported_as_reversed() -> None:
    n = 4
    src, dst = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 1])
    lay = layered_layout(n, src, dst, np.full(n, 50.0), np.full(n, 20.0))
    assert lay.reversed_.tolist() == [False, False, False, True]
    _xs, ys = lay.route(3)  # 3 -> 1 drawn climbing, in the caller's direction
    assert ys[0] > ys[-1]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.lists(st.tuples(st.integers(0, 59), st.integers(0, 59)), max_size=150))
def test_random_dags_keep_invariants(n: int, pairs: list[tuple[int, int]]) -> None:
    edges = [(min(a, b), max(a, b)) for a, b in pairs if a != b and max(a, b) < n]
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.full(n, 60.0) + np.arange(n) % 3 * 20
    h = np.full(n, 24.0)
    lay = layered_layout(n, src, dst, w, h, max_span=3)
    ok = ~lay.long
    assert (lay.y[lay.dst] > lay.y[lay.src]).all()
    assert np.isfinite(lay.x).all()
    _assert_no_overlap(lay, w, h)
    assert lay.width >= (lay.x + w / 2).max() - 1e-6
    for e in np.flatnonzero(ok):
        assert len(lay.route(e)[0]) == lay.layer[lay.dst[e]] - lay.layer[lay.src[e]] + 1
