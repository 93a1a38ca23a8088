"""Every kind of file opens: session JSON, trace log, trace directory (per rank), model file.

A model file never runs without a click: opening it shows the options dialog (with the
"this runs your code" notice the first time), and Recent goes through the same dialog.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from explorer.actions.capture_dialog import UNTRUSTED_NOTICE, CaptureOptionsDialog
from explorer.actions.loading import MODEL, SESSION, TRACE, kind_of
from explorer.main_window import MainWindow
from tests.conftest import EXAMPLES, FIXTURES, ROOT


def _open_and_wait(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    with qtbot.waitSignal(window.state.sessionChanged, timeout=30_000):
        window.files.open_path(str(path))
    # the panes fill in over the following event-loop turns (explorer/state/update_queue.py)
    qtbot.waitUntil(lambda: window.state.updates.pending() == 0, timeout=30_000)


def test_kinds_are_recognised(shared_traces: Path) -> None:
    assert kind_of(FIXTURES / "transformer_block.json") == SESSION
    assert kind_of(ROOT / "bench" / "corpus" / "sessions" / "cuda" / "hf_phi_infer.json.xz") == SESSION
    assert kind_of(shared_traces / "inputs" / "simple.log") == TRACE
    assert kind_of(shared_traces / "inputs" / "multi_rank_logs") == TRACE
    assert kind_of(EXAMPLES / "small_cnn.py") == MODEL


def test_open_session_shows_it_and_remembers_it(qtbot: QtBot, window: MainWindow) -> None:
    path = FIXTURES / "mlp_graph_break.json"
    _open_and_wait(qtbot, window, path)
    assert len(window.state.session.compiles) >= 2
    assert "breaks" in window.status_label.text()
    assert window.files.recent()[0] == str(path.resolve())


def test_open_trace_log_imports_it_in_the_background(
    qtbot: QtBot, window: MainWindow, shared_traces: Path
) -> None:
    _open_and_wait(qtbot, window, shared_traces / "inputs" / "inductor_provenance_jit_log.txt")
    c = window.state.current
    assert c is not None and c.inductor and c.inductor[0].kernels
    assert window.panes["KernelCodePane"].has_content()  # type: ignore[attr-defined]


def test_open_trace_directory_offers_a_rank_selector(
    qtbot: QtBot, window: MainWindow, shared_traces: Path
) -> None:
    _open_and_wait(qtbot, window, shared_traces / "inputs" / "multi_rank_logs")
    ranks = {c.rank for c in window.state.session.compiles}
    assert len(ranks) > 1
    assert window.navigation.ranks_action.isVisible()
    other = next(r for r in ranks if r != window.state.current.rank)  # type: ignore[union-attr]
    window.navigation._rank_picked(window.navigation.ranks.findData(other))
    assert window.state.current is not None and window.state.current.rank == other


def test_a_bad_file_reports_and_keeps_the_window_usable(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"schema_version": 999}')
    with qtbot.waitSignal(window.files.loader.failed, timeout=10_000):
        window.files.open_path(str(bad))
    box = window.findChild(QMessageBox, "problemBox")  # non-modal: the window stays usable
    assert box is not None and box.isVisible() and box.textFormat() == Qt.TextFormat.PlainText
    assert "newer CompileScope" in box.text()
    box.close()


def _close_dialog_when_shown(seen: list[CaptureOptionsDialog]) -> None:
    for w in QApplication.topLevelWidgets():
        if isinstance(w, CaptureOptionsDialog) and w.isVisible():
            seen.append(w)
            w.reject()
            return
    QTimer.singleShot(20, lambda: _close_dialog_when_shown(seen))


def test_model_file_asks_first_and_never_runs_without_a_click(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    model = tmp_path / "m.py"
    shutil.copy(EXAMPLES / "small_cnn.py", model)
    seen: list[CaptureOptionsDialog] = []
    QTimer.singleShot(0, lambda: _close_dialog_when_shown(seen))
    window.files.open_path(str(model))
    assert seen and seen[0].findChildren(type(seen[0].run_button))  # the dialog with its Run button
    assert any(UNTRUSTED_NOTICE[:40] in lbl.text() for lbl in seen[0].findChildren(type(window.status_label)))
    assert not window.files.worker.running(), "cancelled dialog: nothing ran"
    # Recent lists it, and clicking it goes through the same dialog
    assert window.files.recent()[0] == str(model.resolve())
    window.files._fill_recent()
    QTimer.singleShot(0, lambda: _close_dialog_when_shown(seen))
    window.files.recent_menu.actions()[0].trigger()
    assert len(seen) == 2 and not window.files.worker.running()


def test_layout_is_remembered_between_runs(qtbot: QtBot, settings: QSettings) -> None:
    first = MainWindow(settings)
    qtbot.addWidget(first)
    first.show()
    first.set_all_panes(True)
    first.docks["CompileTimePane"].hide()
    first.close()
    second = MainWindow(settings)
    qtbot.addWidget(second)
    second.show()
    assert second.workspace is None, "the all-panes view the user left"
    assert not second.docks["CompileTimePane"].isVisible()
    assert second.docks["SourcePane"].isVisible()
    second.reset_layout()
    assert second.docks["CompileTimePane"].isVisible()


def test_no_ghost_tab_bars_in_the_default_layout(qtbot: QtBot, window: MainWindow) -> None:
    """Qt 6.11 leaves a stale second tab bar per tab group; the window hides them."""
    from PySide6.QtWidgets import QTabBar

    from explorer.app import settle

    settle(window)
    visible = [b for b in window.findChildren(QTabBar) if b.isVisible() and not b.visibleRegion().isEmpty()]
    titles = [frozenset(b.tabText(i) for i in range(b.count())) for b in visible]
    assert len(titles) == len(set(titles)), titles
    assert all(b.geometry().bottom() <= window.height() - window.statusBar().height() for b in visible)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["trace.log", "session.json", "dedicated_log_torch_trace_rank_0.log"])
def test_a_fifo_is_refused_not_read_forever(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, name: str
) -> None:
    """A FIFO is never opened (it would show "Loading…" forever): a message names it, at once."""
    import os

    fifo = tmp_path / name
    os.mkfifo(fifo)
    with qtbot.waitSignal(window.files.loader.failed, timeout=20_000):
        window.files.open_path(str(fifo))
    box = window.findChild(QMessageBox, "problemBox")
    assert box is not None and "FIFO" in box.text()
    box.close()
