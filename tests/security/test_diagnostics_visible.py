"""A damaged log opens with a banner and a Diagnostics pane; `summary` counts.

The log is tlparse's real test log, damaged the way logs get damaged: garbage lines, a broken
header, and cut off in the middle of a line (the reader warns about the cut).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QTreeWidget
from pytestqt.qtbot import QtBot

from compiler_core.analysis import import_trace
from explorer.main_window import MainWindow
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]


def damaged_log(tmp_path: Path) -> Path:
    real = gzip.decompress((FIXTURES / "traces" / "tlparse_simple.log.gz").read_bytes()).decode()
    lines = real.splitlines()
    lines.insert(40, "this is not a log line")
    lines.insert(60, 'V1206 15:18:20.254000 1500233 torch/x.py:1] {"dynamo_start": {"stack": [')
    text = "\n".join(lines)
    path = tmp_path / "damaged.log"
    path.write_text(text[: int(len(text) * 0.8)])  # cut mid-line
    return path


def test_truncated_plain_log_warns_with_a_line(tmp_path: Path) -> None:
    full = tmp_path / "full.log"
    full.write_bytes(gzip.decompress((FIXTURES / "traces" / "tlparse_simple.log.gz").read_bytes()))
    assert not [d for d in import_trace(str(full)).diagnostics if "cut short" in d.message]
    cut = tmp_path / "cut.log"
    cut.write_bytes(full.read_bytes()[:150_000])
    notes = [d for d in import_trace(str(cut)).diagnostics if "cut short" in d.message]
    assert len(notes) == 1 and notes[0].line is not None and notes[0].line > 1000


def test_damaged_log_opens_with_banner_and_diagnostics_pane(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    log = damaged_log(tmp_path)
    assert not window.banner.isVisible()
    with qtbot.waitSignal(window.files.loader.loaded, timeout=60_000):
        window.files.open_path(str(log))
    # a session that arrives while panes are still being built is shown once the last one is
    qtbot.waitUntil(lambda: bool(window.state.session.compiles), timeout=60_000)
    diags = window.state.session.diagnostics
    assert len(diags) >= 3 and window.state.session.compiles  # damaged, but it opened
    assert window.banner.isVisible()
    text = window.banner.label.text()
    assert "damaged" in text and f"{sum(d.severity == 'warning' for d in diags)} warning" in text
    window.banner.show_button.click()
    qtbot.waitUntil(lambda: window.state.updates.pending() == 0)  # panes fill over event-loop turns
    pane = window.panes["DiagnosticsPane"]
    assert window.docks["DiagnosticsPane"].isVisible()
    tree = pane.findChild(QTreeWidget)
    assert tree is not None and tree.topLevelItemCount() == len(diags)
    lines = {tree.topLevelItem(i).text(2) for i in range(tree.topLevelItemCount())}
    assert {str(d.line) for d in diags if d.line is not None} <= lines
    window.set_session(import_trace(str(FIXTURES / "traces" / "tlparse_simple.log.gz")), "clean")
    assert not window.banner.isVisible()  # a clean session hides it again


def test_summary_prints_the_count_and_the_first_few(tmp_path: Path) -> None:
    log = damaged_log(tmp_path)
    out = subprocess.run([sys.executable, "-m", "compiler_core", "summary", str(log)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True)
    summary = json.loads(out.stdout)
    assert summary["diagnostics"] >= 3
    assert len(summary["diagnostics_first"]) == min(5, summary["diagnostics"])
    assert any("damaged.log:" in d and "cut short" in d for d in summary["diagnostics_first"])
