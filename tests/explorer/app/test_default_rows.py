"""The default layout shows a useful list under each graph: at 1600x1000 on the 32-layer Llama
training log the AOT pane's saved-tensor table showed ~1.5 rows (the totals label was laid over
it) and the Inductor pane's kernel list ~5, while the graphs above kept most of the height."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QTreeWidget, QWidget

from explorer.main_window import DEFAULT_SIZE, MainWindow
from tests.bench_logs import bench_session


def _visible_rows(view: QTreeWidget, below: QWidget | None) -> float:
    """Rows that fit in the part of `view`'s viewport that `below` (a sibling under it) leaves."""
    row = view.sizeHintForRow(0)
    assert row > 0
    top = view.viewport().mapTo(view.window(), view.viewport().rect().topLeft()).y()
    bottom = top + view.viewport().height()
    if below is not None and below.isVisible():
        bottom = min(bottom, below.mapTo(view.window(), below.rect().topLeft()).y())
    return (bottom - top) / row


def test_default_layout_shows_saved_tensors_and_kernels(window: MainWindow) -> None:
    window.resize(*DEFAULT_SIZE)
    window.set_session(bench_session("hf_llama_train"), "hf_llama_train.log")
    for _ in range(10):
        QApplication.processEvents()
    window.set_all_panes(True)  # the all-panes view keeps a useful list under each graph too
    for _ in range(10):
        QApplication.processEvents()
    aot, inductor = window.panes["AotPane"], window.panes["InductorPane"]
    saved = _visible_rows(aot.table, aot.totals)  # type: ignore[attr-defined]
    kernels = _visible_rows(inductor.kernels, None)  # type: ignore[attr-defined]
    assert saved >= 6, f"{saved:.1f} saved-tensor rows visible"
    assert kernels >= 8, f"{kernels:.1f} kernel rows visible"
    for pane in (aot, inductor):  # laid out, not clipped: the last label under the list is whole
        last = pane.totals if pane is aot else pane.kernels  # type: ignore[attr-defined]
        bottom = last.mapTo(pane, last.rect().bottomLeft()).y()
        assert bottom < pane.height(), f"{type(pane).__name__} clipped: {bottom} >= {pane.height()}"
    for pane in (aot, inductor, window.panes["DynamoPane"]):
        graphs = pane.graphs  # type: ignore[attr-defined]
        assert graphs.height() >= 130, f"{type(pane).__name__} graph {graphs.height()} px"
    # a trace log has no step times and cannot be run: no timeline area takes their room
    assert not window.docks["TimelinePane"].isVisible()
