"""Clicking in one pane highlights the linked items in all the others (real captured session)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from compiler_core.session import RefKind, Session
from explorer.main_window import MainWindow
from explorer.panes.aot_pane import AotPane
from explorer.panes.code_view import CodeView
from explorer.panes.dynamo_pane import DynamoPane
from explorer.panes.inductor_pane import InductorPane
from explorer.panes.kernel_code_pane import KernelCodePane
from explorer.panes.source_pane import SourcePane


def _line_of(session: Session, needle: str) -> int:
    text = next(iter(session.sources.values()))
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def settle(window: MainWindow) -> None:
    """Run the pane updates the window spreads over event-loop turns (explorer/state/update_queue)."""
    window.state.updates.flush()


def click_line(qtbot: QtBot, view: CodeView, line: int) -> None:
    """A real mouse click in the text, on `line` (1-based)."""
    view.scroll_to_line(line)
    block = view.document().findBlockByNumber(line - 1)
    top = view.blockBoundingGeometry(block).translated(view.contentOffset()).top()
    y = int(top + view.blockBoundingRect(block).height() / 2)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(40, y))


def test_clicking_a_source_line_highlights_nodes_kernels_and_kernel_lines(
    qtbot: QtBot, window: MainWindow, transformer: Session
) -> None:
    window.set_session(transformer, "transformer_block.json")
    source: SourcePane = window.panes["SourcePane"]  # type: ignore[assignment]
    line = _line_of(transformer, "F.gelu(")
    click_line(qtbot, source.view, line)
    settle(window)

    selected = window.selection.selected
    assert {r.kind for r in selected} == {RefKind.SOURCE_LINE}
    assert source.view.selected_lines() == {line}

    dynamo: DynamoPane = window.panes["DynamoPane"]  # type: ignore[assignment]
    lit_nodes = {r.name for r in dynamo.graphs.highlighted()}
    graph = window.state.current.dynamo_graph  # type: ignore[union-attr]
    from_line = {n.name for n in graph.nodes if n.source is not None and n.source.line == line}
    assert from_line and from_line <= lit_nodes
    assert len(lit_nodes) < len(graph.nodes) / 4, "only what this line produced, not the whole graph"

    inductor: InductorPane = window.panes["InductorPane"]  # type: ignore[assignment]
    kernels = inductor.highlighted_kernels()
    assert kernels, "gelu must map to at least one kernel"
    assert all(r.kind is RefKind.KERNEL for r in kernels)

    code: KernelCodePane = window.panes["KernelCodePane"]  # type: ignore[assignment]
    assert code.kernel is not None
    assert any(code.kernel.name == r.name for r in kernels), "kernel code pane switched to a linked kernel"
    marked = code.view.line_colors()
    assert marked, "the lines the gelu produced carry their nodes' colours"
    assert len(marked) < len(code.kernel.source.splitlines()), "only those lines, not the whole kernel"
    lit_nodes = {
        r.name for r in window.selection.highlighted if r.kind is RefKind.POST_GRAD_NODE
    }
    assert all(set(code.kernel.line_nodes[str(line)]) & lit_nodes for line in marked)


def test_clicking_a_kernel_line_selects_it_and_leads_back_to_source(
    qtbot: QtBot, window: MainWindow, transformer: Session
) -> None:
    window.set_session(transformer, "t.json")
    code: KernelCodePane = window.panes["KernelCodePane"]  # type: ignore[assignment]
    kernel = code.kernel
    assert kernel is not None and kernel.line_nodes
    line = int(next(iter(kernel.line_nodes)))
    click_line(qtbot, code.view, line)
    settle(window)
    (ref,) = window.selection.selected
    assert ref.kind is RefKind.KERNEL_LINE and (ref.name, ref.line) == (kernel.name, line)
    assert code.view.selected_lines() >= {line}
    source: SourcePane = window.panes["SourcePane"]  # type: ignore[assignment]
    assert source.view.selected_lines(), "a kernel line leads back to user source lines"


def test_selecting_a_saved_tensor_highlights_producer_and_consumers(
    qtbot: QtBot, window: MainWindow, transformer: Session
) -> None:
    window.set_session(transformer, "t.json")
    aot: AotPane = window.panes["AotPane"]  # type: ignore[assignment]
    compile_ = window.state.current
    assert compile_ is not None and compile_.aot is not None
    tensor = next(t for t in compile_.aot.saved_tensors if t.producer and t.consumers)
    item = next(
        aot.table.topLevelItem(i)
        for i in range(aot.table.topLevelItemCount())
        if aot.table.topLevelItem(i).text(0) == tensor.name
    )
    rect = aot.table.visualItemRect(item)
    qtbot.mouseClick(aot.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    settle(window)

    assert {r.kind for r in window.selection.selected} == {RefKind.SAVED_TENSOR}
    lit = {(r.graph, r.name) for r in aot.graphs.highlighted()}
    assert ("forward", tensor.producer) in lit
    assert {("backward", c) for c in tensor.consumers} <= lit


def test_back_and_forward_walk_the_selection_history(window: MainWindow, transformer: Session) -> None:
    window.set_session(transformer, "t.json")
    code: KernelCodePane = window.panes["KernelCodePane"]  # type: ignore[assignment]
    source: SourcePane = window.panes["SourcePane"]  # type: ignore[assignment]
    line = _line_of(transformer, "F.gelu(")
    source.view.lineClicked.emit(line)
    first = window.selection.selected
    code.view.lineClicked.emit(1)
    second = window.selection.selected
    assert first != second
    window.navigation.back_action.trigger()
    settle(window)
    assert window.selection.selected == first
    assert source.view.selected_lines() == {line}
    window.navigation.forward_action.trigger()
    assert window.selection.selected == second
    assert not window.navigation.forward_action.isEnabled()


def test_picking_a_compile_brings_its_dynamo_graph_into_view(window: MainWindow, qtbot: QtBot) -> None:
    """GPT-2's frame stacks [1/0] (1,397 nodes) above [3/0]: picking [3/0] left the view at
    the top of [1/0]. An empty compile says it captured no graph."""
    from tests.bench_logs import bench_session

    session = bench_session("hf_gpt2_train")
    window.set_session(session, "hf_gpt2_train.log")
    pane = window.panes["DynamoPane"]
    canvas = pane.graph_canvas()  # type: ignore[attr-defined]
    target = next(c for c in session.compiles if c.compile_id == "3/0")
    assert target.dynamo_graph is not None
    window.state.set_compile(("3/0", None))
    window.state.updates.flush()
    qtbot.waitUntil(lambda: not canvas.busy, timeout=60_000)
    sections = canvas.sections()
    at = next(i for i, (g, _) in enumerate(sections) if g is target.dynamo_graph)
    assert at > 0, "[3/0] is not the first graph of its frame"
    rect = canvas.node_rect(f"{at}:{target.dynamo_graph.nodes[0].name}")
    assert rect is not None and canvas.view.rect().intersects(rect.toRect())
    empty = next(c for c in session.compiles if c.dynamo_graph is None)
    window.state.set_compile((empty.compile_id, empty.rank))
    window.state.updates.flush()
    assert "captured no graph" in pane.reasons.toPlainText()  # type: ignore[attr-defined]
