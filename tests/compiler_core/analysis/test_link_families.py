"""Each family of links the builder computes, checked on a real log.

The log is a torchvision ResNet-50 training step with two graph breaks, made on an H200
(bench/data/tv_resnet_breaks.log.xz), imported by the real builder. Every family is asserted
for what it means, not only that some links exist: a wrong rule (a kernel line pointing at a
node outside its kernel, a break at the wrong line) fails its own test.
"""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.session import LinkIndex, Ref, RefKind, Session
from compiler_core.session.model import Compile, Graph
from compiler_core.session.refs import source_line
from tests.conftest import ROOT

LOG = ROOT / "bench" / "data" / "tv_resnet_breaks.log.xz"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    path = Path(tmp_path_factory.mktemp("log")) / "resnet.log"
    path.write_bytes(lzma.decompress(LOG.read_bytes()))
    return import_trace(str(path))


@pytest.fixture(scope="module")
def index(session: Session) -> LinkIndex:
    return LinkIndex(session.links)


def _main(session: Session) -> Compile:
    """The compile holding the training graph (the largest Dynamo graph)."""
    return max(session.compiles, key=lambda c: len(c.dynamo_graph.nodes) if c.dynamo_graph else 0)


def test_source_line_to_dynamo_node(session: Session, index: LinkIndex) -> None:
    c = _main(session)
    assert c.dynamo_graph is not None
    located = [n for n in c.dynamo_graph.nodes if n.source is not None]
    assert len(located) > 100
    for n in located:
        assert n.source is not None
        line = source_line(n.source.file, n.source.line, c.rank)
        assert line in index.direct(Ref.dynamo_node(c.compile_id, n.name, c.rank)), n.name


def test_post_grad_node_to_its_kernel(session: Session, index: LinkIndex) -> None:
    c = _main(session)
    kernels = [(out.graph, k) for out in c.inductor for k in out.kernels if k.fused_nodes]
    assert kernels
    for graph, k in kernels:
        kref = Ref.kernel(c.compile_id, graph, k.name, c.rank)
        linked = {r for r in index.direct(kref) if r.kind is RefKind.POST_GRAD_NODE}
        assert linked >= {Ref.post_grad_node(c.compile_id, graph, f, c.rank) for f in k.fused_nodes}, k.name


def test_kernel_line_belongs_to_its_kernel_and_names_nodes_of_that_kernel(
    session: Session, index: LinkIndex
) -> None:
    c = _main(session)
    checked = 0

    def inputs_of(graph: Graph | None, names: tuple[str, ...]) -> set[str]:
        """Values the kernel reads: inputs of its nodes, seen through `getitem` of a tuple op."""
        if graph is None:
            return set()
        direct = {i for n in names if (node := graph.node(n)) is not None for i in node.inputs}
        through = {j for i in direct if (node := graph.node(i)) is not None and "getitem" in node.target
                   for j in node.inputs}  # fmt: skip
        return direct | through

    for out in c.inductor:
        for k in out.kernels:
            kref = Ref.kernel(c.compile_id, out.graph, k.name, c.rank)
            lines = {r for r in index.direct(kref) if r.kind is RefKind.KERNEL_LINE}
            assert all(r.kernel_of_line() == kref for r in lines)
            for line, nodes in k.line_nodes.items():
                lref = Ref.kernel_line(c.compile_id, out.graph, k.name, int(line), c.rank)
                assert lref in lines
                marked = {r for r in index.direct(lref) if r.kind is RefKind.POST_GRAD_NODE}
                assert marked == {Ref.post_grad_node(c.compile_id, out.graph, n, c.rank) for n in nodes}
                if k.fused_nodes:  # a line computes a node of its own kernel or loads one's input
                    assert set(nodes) <= set(k.fused_nodes) | inputs_of(out.post_grad, k.fused_nodes), (
                        k.name, line, nodes)
                checked += 1
    assert checked > 50


def test_graph_break_to_the_line_that_broke(session: Session, index: LinkIndex) -> None:
    breaks = [(c, i, gb) for c in session.compiles for i, gb in enumerate(c.graph_breaks)]
    assert {gb.location.line for _, _, gb in breaks if gb.location} >= {18, 20}  # .item(), print
    for c, i, gb in breaks:
        assert gb.location is not None
        lines = index.direct(Ref.graph_break(c.compile_id, i, c.rank))
        assert lines == {source_line(gb.location.file, gb.location.line, c.rank)}


def test_saved_tensor_to_its_producer_and_consumers(session: Session, index: LinkIndex) -> None:
    c = _main(session)
    assert c.aot is not None and len(c.aot.saved_tensors) > 50
    for st in c.aot.saved_tensors:
        nodes = {(r.graph, r.name) for r in index.direct(Ref.saved_tensor(c.compile_id, st.name, c.rank))
                 if r.kind is RefKind.AOT_NODE}  # fmt: skip
        if st.producer:
            assert ("forward", st.producer) in nodes
        assert {("backward", x) for x in st.consumers} <= nodes


def test_dynamo_node_reaches_aot_and_post_grad_nodes_of_its_own_line(
    session: Session, index: LinkIndex
) -> None:
    """A Dynamo conv links to forward AOT/post-grad nodes from the same source line, not others."""
    c = _main(session)
    assert c.dynamo_graph is not None and c.aot is not None
    convs = [n for n in c.dynamo_graph.nodes if n.op == "call_function" and "conv" in n.target][:20]
    assert convs
    for n in convs:
        aot = {r for r in index.related(Ref.dynamo_node(c.compile_id, n.name, c.rank))
               if r.kind is RefKind.AOT_NODE}  # fmt: skip
        assert aot, n.name
        fwd = c.aot.forward
        assert fwd is not None
        for r in aot:
            if r.graph == "forward" and n.source is not None:
                node = fwd.node(r.name)
                assert node is not None
                assert node.source is None or node.source.line == n.source.line, (n.name, r.name)


def test_guard_to_a_user_line(session: Session, index: LinkIndex) -> None:
    linked = 0
    for c in session.compiles:
        for i, g in enumerate(c.guards):
            lines = index.direct(Ref.guard(c.compile_id, i, c.rank))
            for r in lines:
                assert r.kind is RefKind.SOURCE_LINE
                assert g.source is not None and r.line == g.source.line
                linked += 1
    assert linked > 0
