"""Columns sized from their widest-looking texts come out as wide as Qt's own measuring of every
row makes them, on real models' tables (bench/corpus sessions made on a GPU): saved tensors,
whose names differ by glyphs more than by length, and guards, hundreds of characters long."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from compiler_core.session import Session, load
from explorer.panes.column_fit import fit_columns
from explorer.panes.stage_table import StageTable

ROOT = Path(__file__).resolve().parents[3]
ENTRIES = ("hf_t5_train", "timm_deit_small_train", "hf_roberta_train")


def _tables(session: Session) -> list[list[list[str]]]:
    guards = max(session.compiles, key=lambda c: len(c.guards))
    saved = max(session.compiles, key=lambda c: len(c.aot.saved_tensors) if c.aot else 0)
    assert saved.aot is not None and len(saved.aot.saved_tensors) > 40 and len(guards.guards) > 40
    return [
        [[g.code, g.kind] for g in guards.guards],
        [[t.name, str(list(t.meta.shape)), t.meta.dtype, str(t.bytes), t.producer, ", ".join(t.consumers)]
         for t in saved.aot.saved_tensors],
    ]  # fmt: skip


def _qt_widths(view: Any, columns: int) -> list[int]:
    header = view.header() if isinstance(view, QTreeWidget) else view.horizontalHeader()
    header.setResizeContentsPrecision(-1)  # every row, not Qt's default of 1,000
    for col in range(columns):
        view.resizeColumnToContents(col)
    return [view.columnWidth(col) for col in range(columns)]


@pytest.mark.parametrize("entry", ENTRIES)
def test_fitted_columns_are_as_wide_as_qt_measuring_every_row(qtbot: Any, entry: str) -> None:
    session = load(ROOT / "bench" / "corpus" / "sessions" / "cuda" / f"{entry}.json.xz")
    for rows in _tables(session):
        columns = len(rows[0])
        for decorated in (True, False):
            tree = QTreeWidget()
            qtbot.addWidget(tree)
            tree.setColumnCount(columns)
            tree.setRootIsDecorated(decorated)
            tree.addTopLevelItems([QTreeWidgetItem(r) for r in rows])
            expected = _qt_widths(tree, columns)
            for col in range(columns):
                tree.setColumnWidth(col, 10)
            fit_columns(tree, rows)
            assert [tree.columnWidth(c) for c in range(columns)] == expected
        table = StageTable([f"c{i}" for i in range(columns)])
        qtbot.addWidget(table)
        table.set_rows(rows)
        expected = _qt_widths(table, columns)
        fit_columns(table, rows)
        assert [table.columnWidth(c) for c in range(columns)] == expected
