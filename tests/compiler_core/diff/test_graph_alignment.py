"""Node-level graph diffs on real graphs (the bundled transformer block's recorded session, the
32-layer Llama training log): a graph against itself, and against a copy edited as a one-op code
change edits it (one node gone, every later node renamed, since FX names are counters)."""

from __future__ import annotations

import dataclasses as dc
import re

import pytest

from compiler_core.diff import graph_diff, rows
from compiler_core.session import Graph, load
from tests.conftest import ROOT

_WORD = re.compile(r"[A-Za-z_]\w*")
_DOTTED = re.compile(r"^[\w.]+$")


def _graph() -> Graph:
    session = load(str(ROOT / "resources" / "sessions" / "transformer_block.json"))
    graph = session.compiles[0].dynamo_graph
    assert graph is not None
    return graph


def without(graph: Graph, index: int) -> tuple[Graph, str]:
    """`graph` without node `index`; every later node renamed (`x` → `x_e`) in names, inputs and
    expression targets, the removed node's consumers reading one input less."""
    nodes = list(graph.nodes)
    gone = nodes[index].name
    new = {n.name: n.name + "_e" for n in nodes[index + 1 :] if n.op != "output"}
    out = []
    for n in nodes[:index] + nodes[index + 1 :]:
        target = n.target
        if n.op == "call_function" and not _DOTTED.match(target):  # an expression naming its operands
            target = _WORD.sub(lambda m: new.get(m.group(0), m.group(0)), target)
        out.append(dc.replace(n, name=new.get(n.name, n.name), target=target,
                              inputs=tuple(new.get(i, i) for i in n.inputs if i != gone)))  # fmt: skip
    return dc.replace(graph, nodes=tuple(out)), gone


def test_a_graph_against_itself_is_the_same() -> None:
    g = _graph()
    diff = graph_diff("dynamo", g, g)
    assert diff.same and not diff.renamed and diff.nodes_before == diff.nodes_after == len(g.nodes)
    assert rows(diff, g, g) == [(n.name, n.name, "same") for n in g.nodes]


def test_one_node_removed_renames_are_not_changes() -> None:
    g = _graph()
    index = next(i for i, n in enumerate(g.nodes) if n.name == "scores")
    edited, gone = without(g, index)
    consumers = {n.name for n in g.nodes if gone in n.inputs}
    diff = graph_diff("dynamo", g, edited)
    assert diff.removed == (gone,) and not diff.added
    # only the removed node's consumers changed (their inputs), the renamed rest is no change
    assert {c.before for c in diff.changed} == consumers
    assert all(any(w.startswith("inputs ") for w in c.what) for c in diff.changed)
    renamed = {a for a, _ in diff.renamed}
    later = {n.name for n in g.nodes[index + 1 :] if n.op != "output"}
    assert renamed == later - consumers
    assert all(b == a + "_e" for a, b in diff.renamed)


def test_side_by_side_rows_hold_every_node_once_in_order() -> None:
    g = _graph()
    index = len(g.nodes) // 2
    edited, gone = without(g, index)
    table = rows(graph_diff("dynamo", g, edited), g, edited)
    assert [a for a, _, _ in table if a] == [n.name for n in g.nodes]
    assert [b for _, b, _ in table if b] == [n.name for n in edited.nodes]
    at = table.index((gone, "", "removed"))
    assert table[at - 1][0] == g.nodes[index - 1].name
    statuses = {s for _, _, s in table}
    assert statuses <= {"same", "renamed", "changed", "removed"} and "renamed" in statuses


@pytest.mark.parametrize("stage", ["aot_backward", "post_grad_backward"])
def test_deep_backward_graph_pairs_repeated_ops_by_their_operands(stage: str) -> None:
    """A 6k-node backward repeats `aten.view` hundreds of times: the one removed must be the
    one reported, not a run of neighbours mispaired by op name alone."""
    from tests.bench_logs import bench_session

    compile_ = bench_session("hf_llama_train").compiles[0]
    assert compile_.aot is not None
    graph = compile_.aot.backward if stage == "aot_backward" else compile_.inductor[1].post_grad
    assert graph is not None and len(graph.nodes) > 5000
    index = len(graph.nodes) // 2
    edited, gone = without(graph, index)
    diff = graph_diff(stage, graph, edited)
    assert diff.removed == (gone,) and not diff.added
    assert {c.before for c in diff.changed} == {n.name for n in graph.nodes if gone in n.inputs}
