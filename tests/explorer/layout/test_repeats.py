"""Repeated layers fold into one block, on the real 32-layer HF Llama training log."""

from __future__ import annotations

import pytest

from compiler_core.session import Compile, Graph, Node
from explorer.layout import CompoundLayout, build_groups, from_graph, from_sections
from explorer.layout.repeats import op_token
from tests.bench_logs import bench_session


@pytest.fixture(scope="module")
def llama() -> Compile:
    return next(c for c in bench_session("hf_llama_train").compiles if c.dynamo_graph is not None)


def _fold_labels(tree) -> list[str]:  # type: ignore[no-untyped-def]
    return [tree.label[f] for f in tree.fold]


def test_dynamo_graph_folds_32_layers_into_one_block(llama: Compile) -> None:
    assert llama.dynamo_graph is not None
    a = from_graph(llama.dynamo_graph)
    tree = build_groups(a)
    assert _fold_labels(tree) == ["layers.0–31 × 32"]
    fold = tree.fold[0]
    assert [tree.label[c] for c in tree.children[fold]] == [str(i) for i in range(32)]
    # first view: the fold is one closed block; the whole graph is a few dozen items
    expanded = tree.default_expanded(300)
    scene = CompoundLayout(a, tree).scene(expanded)
    assert fold not in expanded and scene.visible[a.n + fold]
    assert 10 <= int(scene.visible.sum()) <= 300
    # expanding the fold shows the list; expanding one layer shows that layer only
    listed = CompoundLayout(a, tree).scene(expanded | {fold})
    assert all(listed.visible[a.n + c] for c in tree.children[fold])
    layer7 = tree.children[fold][7]
    one = CompoundLayout(a, tree).scene(expanded | {fold, layer7})
    assert not one.visible[a.n + layer7] and one.visible[a.n + tree.children[fold][8]]


def test_joint_graph_bands_fold_forward_and_backward_layers(llama: Compile) -> None:
    assert llama.aot is not None and llama.aot.joint is not None and llama.aot.forward is not None
    fw = {n.name for n in llama.aot.forward.nodes}
    g = llama.aot.joint
    band = ["forward" if n.name in fw else "backward" for n in g.nodes]
    a = from_sections([(g, "joint")], band_of=band)
    tree = build_groups(a)
    counts = [int(lab.rsplit("× ", 1)[1]) for lab in _fold_labels(tree)]
    assert max(counts) >= 30 and sum(c >= 30 for c in counts) >= 2  # forward and backward
    scene = CompoundLayout(a, tree).scene(tree.default_expanded(300))
    assert int(scene.visible.sum()) <= 300  # 8.8k nodes, first view a few hundred items


def test_different_siblings_do_not_fold() -> None:
    nodes = [Node("x", "placeholder"), Node("pre", "call_function", "aten.neg", ("x",))]
    prev = "pre"
    for i, op in enumerate(["aten.relu", "aten.relu", "aten.tanh", "aten.relu"]):
        nodes.append(Node(f"n{i}", "call_function", op, (prev,), module_path=f"blocks/{i}"))
        prev = f"n{i}"
    tree = build_groups(from_graph(Graph("dynamo", tuple(nodes))))
    assert _fold_labels(tree) == ["blocks.0–1 × 2"]
    assert op_token("call_function", "hidden_states_5 + down_proj") == op_token("call_function", "a_1 + b")


def test_layers_named_with_a_prefix_fold_and_numbered_names_do_not() -> None:
    """torchvision's ViT names its layers `encoder_layer_0..11` (the corpus's ViT-B/16 log, H100):
    eleven fold (the last layer's closing add is placed by its line with the encoder's norm);
    timm's DeiT MLPs call their projections `fc1`, `fc2`: names, never folded as copies, and its
    twelve blocks fold whole now that each block's closing residual add stays in the block."""
    from pathlib import Path

    from compiler_core.analysis import import_trace

    logs = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs"
    vit = next(c for c in import_trace(logs / "tv_vit_b16_train.log.xz").compiles if c.dynamo_graph)
    assert vit.dynamo_graph is not None
    tree = build_groups(from_graph(vit.dynamo_graph))
    assert any(lab.startswith("encoder_layer_") and lab.endswith("× 11") for lab in _fold_labels(tree))
    deit = next(c for c in import_trace(logs / "timm_deit_small_train.log.xz").compiles if c.dynamo_graph)
    assert deit.dynamo_graph is not None
    labels = _fold_labels(build_groups(from_graph(deit.dynamo_graph)))
    assert labels == ["blocks.0–11 × 12"]


def test_a_layout_leaves_no_garbage_cycles(llama: Compile) -> None:
    """What a layout drops goes by refcount: a cycle would keep the unfolded tree (a list per
    group) for the GUI thread's collector to walk (explorer/gc_policy.py)."""
    import gc

    from explorer.canvas.layout_job import full_layout

    assert llama.dynamo_graph is not None
    graph = llama.dynamo_graph
    full_layout(lambda: from_graph(graph), 300)  # first use imports, whose classes are cycles
    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        result = full_layout(lambda: from_graph(graph), 300)
        assert result.tree.fold, "nothing folded: the fold's copy did not run"
        del result
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_a_built_tree_keeps_its_per_group_tables_out_of_the_collector(llama: Compile) -> None:
    """A list per group for children and one for members would be walked by every collector
    pass for as long as the graph is shown (explorer/layout/ragged.py)."""
    import gc

    assert llama.dynamo_graph is not None
    a = from_graph(llama.dynamo_graph)
    build_groups(a)  # first use imports
    gc.collect()
    before = len(gc.get_objects())
    tree = build_groups(a)
    gc.collect()
    assert tree.count > 300
    assert len(gc.get_objects()) - before < tree.count // 10
