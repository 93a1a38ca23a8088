"""GUI: a session of very many compiles is shown a page at a time.

1e6 compiles shown whole would freeze the window for many seconds (`bench/gui_many_compiles.py` measures
that case); here 25,000 show what is bounded: the selector holds one page plus page rows and still
reaches every compile, the compile-time table and chart are capped with a note, and a huge error is
clipped.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QTreeWidget
from pytestqt.qtbot import QtBot

from compiler_core.session import Compile, CompileMetrics, Session
from explorer.main_window import MainWindow
from explorer.panes.compile_time_pane import MAX_BARS, MAX_ROWS
from explorer.plain_text import MAX_SHOWN
from explorer.toolbar import PAGE, PAGE_ROLE

N = 25_000


@pytest.fixture(scope="module")
def many() -> Session:
    timed = [CompileMetrics(total_s=t / 10) for t in range(97)]
    return Session(compiles=tuple(
        Compile(compile_id=f"{i}/0", frame_id=i, frame_compile_id=0, metrics=timed[i % 97])
        for i in range(N)
    ))


def test_many_compiles_are_paged_and_capped(qtbot: QtBot, window: MainWindow, many: Session) -> None:
    window.ensure_panes()
    t0 = time.perf_counter()
    window.set_session(many, "many")
    assert time.perf_counter() - t0 < 60  # loose: a hang guard, the figure is in bench/
    combo = window.navigation.compiles
    assert combo.count() == PAGE + 1 and combo.currentText().startswith("[0/0]")
    assert combo.itemData(PAGE, PAGE_ROLE) == 1
    for _ in range(3):  # page forward three times, then pick a compile on that page
        combo.activated.emit(combo.count() - 1)
    assert combo.itemData(0, PAGE_ROLE) == -1 and combo.count() == PAGE + 2
    combo.activated.emit(5)
    assert window.state.current is not None and window.state.current.compile_id == f"{3 * PAGE + 4}/0"
    assert combo.currentIndex() == 5
    pane = window.panes["CompileTimePane"]
    tree = pane.findChild(QTreeWidget)
    assert tree is not None and tree.topLevelItemCount() == MAX_ROWS + 1
    assert "more" in tree.topLevelItem(MAX_ROWS).text(0)
    assert pane._bars == MAX_BARS  # type: ignore[attr-defined]


def test_a_huge_error_message_is_clipped(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    """A huge exception message must not become a huge first line; the box shows 2,000 characters."""
    window.files.loader.failed.emit(str(tmp_path / "x.json"), "ValueError: " + "x" * 5_000_000)
    box = window.findChild(QMessageBox, "problemBox")
    assert box is not None and box.textFormat() == Qt.TextFormat.PlainText
    assert "more characters not shown" in box.text() and len(box.text()) < MAX_SHOWN + 100
    box.close()
