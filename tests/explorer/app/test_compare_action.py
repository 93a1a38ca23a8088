"""File ▸ Compare… in the window: two recorded sessions (a model with an `.item()` break, and
the same model captured with `capture_scalar_outputs`) load off the GUI thread and open a
comparison window that the main window keeps; a file that does not load says so in the status
bar and leaves the window as it was; a trace log's comparison refuses "apply and re-run"."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from compiler_core.diff.hint_plan import Hint
from explorer.compare.compare_window import CompareWindow
from explorer.main_window import MainWindow
from tests.conftest import SHARED_TRACES

DATA = Path(__file__).resolve().parents[1] / "compare" / "data"


def test_compare_two_files_opens_a_kept_comparison(qtbot: QtBot, window: MainWindow) -> None:
    compares = window.compares
    with qtbot.waitSignal(compares.opener.opened, timeout=60_000) as opened:
        compares.compare_paths(str(DATA / "item_break.json"), str(DATA / "item_captured.json"))
    shown = opened.args[0]
    assert isinstance(shown, CompareWindow) and shown in compares.windows
    assert shown.diff.compiles and shown.isVisible()
    text = shown.summary.toPlainText()
    assert "graph break" in text.lower() or "break" in text.lower(), text[:500]
    shown.close()


def test_a_file_that_does_not_load_is_named_and_nothing_opens(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with qtbot.waitSignal(window.compares.failed, timeout=60_000) as failed:
        window.compares.compare_paths(str(DATA / "item_break.json"), str(bad))
    assert failed.args[0].startswith("Could not compare")
    assert not window.compares.windows


def test_a_trace_log_cannot_be_rerun_with_a_hint(qtbot: QtBot, window: MainWindow) -> None:
    log = str(SHARED_TRACES / "inputs" / "comp_metrics.log")
    with qtbot.waitSignal(window.compares.opener.opened, timeout=60_000) as opened:
        window.compares.compare_paths(log, log)
    with qtbot.waitSignal(window.compares.failed, timeout=10_000) as failed:
        window.compares.rerun(opened.args[0], Hint("capture_scalar_outputs"))
    assert "a trace log cannot be re-run" in failed.args[0]
    opened.args[0].close()
