"""Export ▸ Kernels (the compile on screen) and Export ▸ Kernels of all compiles, through the real
menu actions of a real window: the core engine's files, one index, a dialog on failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox

from compiler_core.session import load
from explorer.main_window import MainWindow
from tests.conftest import ROOT
from tests.explorer.app.conftest import settings, window

__all__ = ["settings", "window"]
MLP = ROOT / "resources" / "sessions" / "mlp_graph_break.json"


def _trigger(window: MainWindow, text: str) -> None:
    (action,) = [a for a in window.findChildren(QAction) if a.text() == text]
    action.trigger()


def test_both_menu_actions_export_runnable_files(
    window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.set_session(load(MLP), "mlp.json")
    chosen = {"folder": str(tmp_path / "one")}
    monkeypatch.setattr("explorer.actions.export_actions.QFileDialog.getExistingDirectory",
                        lambda *a: chosen["folder"])  # fmt: skip
    _trigger(window, "&Kernels…")
    one = json.loads((tmp_path / "one" / "index.json").read_text())
    assert [c["compile_id"] for c in one["compiles"]] == [window.state.current.compile_id]
    assert (tmp_path / "one" / "graph_repro.py").is_file()
    assert "MACHINE = {'device': 'cpu', 'torch': '2.13'" in (tmp_path / "one" / "graph_repro.py").read_text()
    chosen["folder"] = str(tmp_path / "all")
    _trigger(window, "Kernels of &all compiles…")
    every = json.loads((tmp_path / "all" / "index.json").read_text())
    assert [c["compile_id"] for c in every["compiles"]] == ["0/0", "1/0"]
    names = {p.name for p in (tmp_path / "all").iterdir()}
    assert {"c0_0__inference__cpp_fused_mean_relu_0.py", "c1_0__inference__cpp_fused_mul_0.py"} <= names
    assert f"Exported {len(names)} files" in window.statusBar().currentMessage()


def test_a_folder_that_cannot_be_written_is_a_dialog(window: MainWindow, tmp_path: Path) -> None:
    window.set_session(load(MLP), "mlp.json")
    (tmp_path / "a_file").write_text("")
    assert window.exports.export_kernels_to(str(tmp_path / "a_file"), None) is False
    boxes = [b for b in window.findChildren(QMessageBox) if b.objectName() == "problemBox"]
    assert boxes and "a_file" in boxes[-1].text()
