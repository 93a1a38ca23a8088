"""A read-only table shared by the stage panes: rows of text, one payload per row, highlighting.

Small on purpose: the Decompositions, CUDA graphs and Modes panes differ only in what a row
holds and what clicking it selects.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from explorer.plain_text import tip
from explorer.state.palette import SELECT_COLOR_HEX


class StageTable(QTableWidget):
    """Signals: those of QTableWidget (`cellClicked(row, col)` is what panes connect to)."""

    def __init__(self, columns: Sequence[str]) -> None:
        super().__init__(0, len(columns))
        self.setHorizontalHeaderLabels(list(columns))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.setWordWrap(False)

    def set_rows(self, rows: Sequence[Sequence[str]], tooltips: Sequence[str] | None = None) -> None:
        self.setRowCount(len(rows))
        for r, cells in enumerate(rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if tooltips is not None and tooltips[r]:
                    item.setToolTip(tip(tooltips[r]))
                self.setItem(r, c, item)

    def highlight(self, rows: set[int], bold: set[int] | None = None) -> None:
        marked = QBrush(QColor(SELECT_COLOR_HEX))
        for r in range(self.rowCount()):
            for c in range(self.columnCount()):
                item = self.item(r, c)
                if item is None:
                    continue
                item.setBackground(marked if r in rows else QBrush())
                font = QFont(item.font())
                font.setBold(bold is not None and r in bold)
                item.setFont(font)
