"""In the GUI, a session with `"compile_id": 5` (which would SIGSEGV pyqtgraph) is refused: the
window says which field is wrong, in a plain-text non-modal box, and keeps the session it had."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from compiler_core.session import Session
from explorer.main_window import MainWindow
from tests.conftest import FIXTURES
from tests.session_rows import set_at


def test_a_wrong_typed_session_is_reported_by_field_and_the_window_stays_up(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, transformer: Session
) -> None:
    window.set_session(transformer, "good.json")
    data = json.loads((FIXTURES / "transformer_block.json").read_text())
    set_at(data, "compiles[0].compile_id", 5)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with qtbot.waitSignal(window.files.loader.failed, timeout=20_000):
        window.files.open_path(str(bad))
    box = window.findChild(QMessageBox, "problemBox")
    assert box is not None and box.isVisible() and box.textFormat() == Qt.TextFormat.PlainText
    assert "compiles[0].compile_id: expected str, got int" in box.text()
    assert window.state.session is transformer and window.isVisible()  # nothing of it reached Qt
    box.close()
