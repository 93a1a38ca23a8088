"""Nested group layout: boxes hold exactly their members, expansion is incremental."""

from __future__ import annotations

import numpy as np

from compiler_core.session import Graph, Node
from explorer.layout import ROOT, CompoundLayout, Scene, build_groups, from_graph, from_sections
from explorer.layout.synthetic_graphs import transformer_graph


def _rect(s: Scene, it: int) -> tuple[float, float, float, float]:
    return s.x[it] - s.w[it] / 2, s.y[it] - s.h[it] / 2, s.x[it] + s.w[it] / 2, s.y[it] + s.h[it] / 2


def _inside(a: tuple, b: tuple) -> bool:
    return a[0] >= b[0] - 1e-6 and a[1] >= b[1] - 1e-6 and a[2] <= b[2] + 1e-6 and a[3] <= b[3] + 1e-6


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_group_boxes_contain_exactly_their_members() -> None:
    a = from_graph(transformer_graph(400))
    tree = build_groups(a)
    scene = CompoundLayout(a, tree).scene(set(range(tree.count)))
    assert scene.visible[: a.n].all()
    assert len(scene.boxes) == tree.count - 1
    for g in scene.boxes.tolist():
        box = _rect(scene, a.n + g)
        members = set(tree.subtree_nodes(g))
        for i in range(a.n):
            r = _rect(scene, i)
            if i in members:
                assert _inside(r, box), (tree.path[g], a.ids[i])
            else:
                assert not _overlap(r, box), (tree.path[g], a.ids[i])


def test_parameters_join_the_module_that_uses_them_and_repeated_calls_split() -> None:
    nodes = (
        Node("x", "placeholder"),
        Node("w", "placeholder"),
        Node("mm", "call_function", "aten.mm", ("x", "w"), module_path="fc"),
        Node("act1", "call_function", "aten.relu", ("mm",), module_path="act"),
        Node("mm2", "call_function", "aten.mm", ("act1", "w"), module_path="fc2"),
        Node("act2", "call_function", "aten.relu", ("mm2",), module_path="act"),
        Node("output", "output", "output", ("act2",)),
    )
    a = from_graph(Graph("dynamo", nodes))
    tree = build_groups(a)
    group_of = {a.ids[i]: tree.label[int(g)] for i, g in enumerate(tree.node_group)}
    assert group_of["w"] == "fc" and group_of["x"] == "fc"  # first consumer's module
    assert group_of["act1"] == "act" and group_of["act2"] == "act (2)"
    scene = CompoundLayout(a, tree).scene(set(range(tree.count)))
    assert not scene.upward.any()  # the split keeps the group graph acyclic


def test_default_view_is_small_and_expanding_reuses_unrelated_layouts() -> None:
    a = from_graph(transformer_graph(10_000))
    tree = build_groups(a)
    expanded = tree.default_expanded(300)
    cl = CompoundLayout(a, tree)
    scene = cl.scene(expanded)
    assert 3 <= scene.visible.sum() <= 300
    collapsed = [g for g in range(1, tree.count) if g not in expanded and tree.parent[g] in expanded]
    big = max(collapsed, key=lambda g: tree.size[g])
    kept = {g: cl._cache[g] for g in expanded}
    after = cl.scene(expanded | {big})
    assert after.visible.sum() > scene.visible.sum()
    ancestors = set(tree.ancestors(big))
    for g, local in kept.items():
        assert (cl._cache[g] is local) == (g not in ancestors)
    # Every drawn edge leaves the bottom of its source item and enters the top of its target.
    for k in range(len(after.edge_u)):
        u, v = after.edge_u[k], after.edge_v[k]
        ys = after.py[after.start[k] : after.start[k + 1]]
        assert abs(ys[0] - (after.y[u] + after.h[u] / 2)) < 1e-6
        assert abs(ys[-1] - (after.y[v] - after.h[v] / 2)) < 1e-6


def test_sections_stack_graphs_in_order() -> None:
    graphs = [(transformer_graph(120), "graph 0"), (transformer_graph(90), "graph 1")]
    a = from_sections(graphs)
    assert a.ids[0] == "0:l_x_0"
    tree = build_groups(a)
    scene = CompoundLayout(a, tree).scene(set(range(tree.count)))
    y0 = scene.y[: a.n][a.section == 0]
    y1 = scene.y[: a.n][a.section == 1]
    assert y0.max() < y1.min()
    ((g, line_y),) = scene.sections
    assert tree.label[g] == "graph 1" and y0.max() < line_y < y1.min()
    assert ROOT not in scene.boxes
    assert np.all(scene.edge_of >= 0)
