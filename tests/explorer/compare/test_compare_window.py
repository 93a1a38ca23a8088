"""The before/after window on real sessions, offscreen: a `.item()` graph break and the same
model with `capture_scalar_outputs=True` (both imported from TORCH_TRACE logs of CPU runs of
tests/compiler_core/diff/scripts/item_model.py, variants `item` and `capture`), and the 32-layer
Llama training log against itself. No torch: the diff is the core's, made from the sessions."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from compiler_core.diff import diff_sessions
from compiler_core.session import Session, load
from explorer.compare import CompareOpener, CompareWindow, FixListView, GraphRowsModel
from explorer.compare.graph_rows_model import STATUS_COLORS

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def pair() -> tuple[Session, Session]:
    return load(str(DATA / "item_break.json")), load(str(DATA / "item_captured.json"))


def _window(qtbot: object, before: Session, after: Session) -> CompareWindow:
    win = CompareWindow(diff_sessions(before, after), before, after)
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    win.show()
    return win


def test_compiles_listed_matched_then_one_side_only(qtbot: object, pair: tuple[Session, Session]) -> None:
    win = _window(qtbot, *pair)
    tree = win.compiles
    matched, only_before = tree.topLevelItem(0), tree.topLevelItem(1)
    assert matched is not None and only_before is not None and tree.topLevelItemCount() == 2
    assert matched.childCount() == 1 and "forward" in matched.child(0).text(0)
    assert "breaks −1 +0" in matched.child(0).text(1)
    assert only_before.text(0) == "Only before"
    assert "torch_dynamo_resume_in_forward" in only_before.child(0).text(0)
    summary = win.summary.toPlainText()
    assert "graphs           2 → 1" in summary and "scale = h.mean().item()" in summary


def test_graphs_side_by_side_coloured_by_change(qtbot: object, pair: tuple[Session, Session]) -> None:
    win = _window(qtbot, *pair)
    assert [win.tabs.tabText(i) for i in range(win.tabs.count())] == [
        "Summary", "Compile", "Graphs", "Step times", "Left to fix"]
    # the first matched compile is shown, on its first stage that changed: Dynamo's graph
    assert win.stage.currentData() == "dynamo"
    model = win.graph.model()
    assert isinstance(model, GraphRowsModel)
    graph_diff = win.diff.compiles[0].graphs[0]
    assert model.rowCount() == graph_diff.nodes_after + len(graph_diff.removed)
    # the scalar now inside the graph is an added row, its text on the after side only
    item_row = model.find("item", after=True)
    assert item_row >= 0 and model.row(item_row)[2] == "added"
    assert model.data(model.index(item_row, 0)) == ""
    assert "item" in str(model.data(model.index(item_row, 2)))
    brush = model.data(model.index(item_row, 1), Qt.ItemDataRole.BackgroundRole)
    assert brush.color() == STATUS_COLORS["added"]
    # a node both sides have, unchanged, is uncoloured and named on both sides
    same = model.find("l_x_")
    assert model.row(same) == ("l_x_", "l_x_", "same")
    assert model.data(model.index(same, 1), Qt.ItemDataRole.BackgroundRole) is None
    # every stage of the compile can be shown
    stages = [win.stage.itemData(i) for i in range(win.stage.count())]
    assert {"dynamo", "aot_forward", "aot_backward", "post_grad_forward", "post_grad_backward"} <= set(stages)
    win.stage.setCurrentIndex(stages.index("aot_backward"))
    model = win.graph.model()
    assert isinstance(model, GraphRowsModel)
    assert {model.row(i)[2] for i in range(model.rowCount())} >= {"same", "added"}


def test_a_lone_compile_shows_its_facts_and_no_graph(qtbot: object, pair: tuple[Session, Session]) -> None:
    win = _window(qtbot, *pair)
    chosen: list[int] = []
    win.compileChosen.connect(chosen.append)
    only_before = win.compiles.topLevelItem(1)
    assert only_before is not None
    win.compiles.setCurrentItem(only_before.child(0))
    assert chosen == [-1]
    assert "only before" in win.detail.toPlainText() and win.graph.model() is None
    win.show_compile(0)
    assert chosen == [-1, 0] and isinstance(win.graph.model(), GraphRowsModel)


def test_without_sessions_the_changed_nodes_are_listed_by_name(qtbot: object,
                                                               pair: tuple[Session, Session]) -> None:
    win = CompareWindow(diff_sessions(*pair))
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    model = win.graph.model()
    assert isinstance(model, GraphRowsModel)
    graph_diff = win.diff.compiles[0].graphs[0]
    assert model.rowCount() == len(graph_diff.removed) + len(graph_diff.added) + len(graph_diff.changed)
    assert "same" not in {model.row(i)[2] for i in range(model.rowCount())}


def test_deep_graph_rows_are_served_lazily(qtbot: object) -> None:
    """32-layer Llama training (H200 log), against itself: 6k backward rows in one model."""
    from tests.bench_logs import bench_session

    s = bench_session("hf_llama_train")
    win = _window(qtbot, s, s)
    stages = [win.stage.itemData(i) for i in range(win.stage.count())]
    win.stage.setCurrentIndex(stages.index("post_grad_backward"))
    model = win.graph.model()
    assert isinstance(model, GraphRowsModel) and model.rowCount() > 5000
    assert {model.row(i)[2] for i in range(model.rowCount())} == {"same"}


def test_clicking_a_graph_row_names_both_nodes(qtbot: object, pair: tuple[Session, Session]) -> None:
    win = _window(qtbot, *pair)
    model = win.graph.model()
    assert isinstance(model, GraphRowsModel)
    chosen: list[tuple[str, str, str]] = []
    win.nodeChosen.connect(lambda *args: chosen.append(args))
    row = model.find("item", after=True)
    win.graph.clicked.emit(model.index(row, 2))
    assert chosen == [("dynamo", "", "item")]


def test_left_to_fix_offers_the_hint_as_a_button(qtbot: object, pair: tuple[Session, Session]) -> None:
    """Compared the other way round, the after session has the `.item()` break: its row offers
    capture_scalar_outputs, and pressing the button asks for the re-run."""
    captured, broken = pair[1], pair[0]
    win = _window(qtbot, captured, broken)
    assert win.fixes is not None and len(win.fixes.rows) == 1
    assert len(win.fixes.buttons) == 1 + len(win.fixes.levers)  # a training run: its budget lever too
    item = win.fixes.tree.topLevelItem(0)
    assert item is not None and item.text(0) == "item_model.py:26" and "item()" in item.text(1)
    assert item.child(0).text(1) == "scale = h.mean().item()"
    asked: list[object] = []
    win.applyRequested.connect(asked.append)
    win.fixes.buttons[0].click()
    assert [getattr(h, "kind", None) for h in asked] == ["capture_scalar_outputs"]


def test_nothing_left_to_fix_is_said(qtbot: object, pair: tuple[Session, Session]) -> None:
    from compiler_core.diff.fix_list import fix_rows

    view = FixListView(fix_rows(pair[1]))
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    assert view.tree.topLevelItemCount() == 0 and not view.buttons


def test_opener_diffs_off_the_gui_thread_and_opens_the_window(qtbot: object,
                                                              pair: tuple[Session, Session]) -> None:
    opener = CompareOpener()
    opener.open(*pair)
    assert opener.busy()
    with qtbot.waitSignal(opener.opened, timeout=30_000) as blocker:  # type: ignore[attr-defined]
        pass
    (win,) = blocker.args
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    assert isinstance(win, CompareWindow) and win.isVisible()
    assert win.diff.total("graphs").after == 1
    opener.shutdown()
