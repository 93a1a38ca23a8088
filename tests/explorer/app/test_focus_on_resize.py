"""Focus mode follows the window's height, not only the height it had when the session opened:
a window shrunk to 1366x768 after opening a log kept six stages side by side, and the Timeline
plot was left ~30 px tall."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from explorer.main_window import DEFAULT_SIZE, MainWindow
from tests.bench_logs import bench_session


def _settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def test_shrinking_an_open_session_turns_focus_on_and_growing_turns_it_off(window: MainWindow) -> None:
    window.resize(*DEFAULT_SIZE)
    window.set_session(bench_session("hf_llama_dynamic"), "hf_llama_dynamic.log")
    _settle()
    assert not window.focused
    window.resize(1366, 768)
    _settle()
    assert window.focused, "below 850 px the open session switches to focus mode"
    window.show_stage("timeline")
    _settle()
    plot = window.panes["TimelinePane"].plot
    assert plot.height() >= 250, f"timeline plot {plot.height()} px tall at 1366x768"
    window.resize(*DEFAULT_SIZE)
    _settle()
    assert not window.focused, "focus mode the window chose itself ends when the window grows back"
    assert window.docks["SourcePane"].isVisible() and window.docks["DynamoPane"].isVisible()


def test_focus_the_user_turned_off_stays_off_while_resizing(window: MainWindow) -> None:
    window.resize(1366, 768)
    window.set_session(bench_session("hf_llama_dynamic"), "hf_llama_dynamic.log")
    _settle()
    assert window.focused
    window.navigation.focus_action.setChecked(False)  # the user's choice
    window.resize(1366, 740)
    _settle()
    assert not window.focused
