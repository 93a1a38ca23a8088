"""A read-only table shared by the stage panes: rows of text, one payload per row, highlighting.

Small on purpose: the Decompositions, CUDA graphs and Modes panes differ only in what a row
holds and what clicking it selects.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QBrush, QColor, QFont, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from explorer.panes.column_fit import fit_columns
from explorer.plain_text import tip
from explorer.state.palette import SELECT_COLOR_HEX

REMEASURE_ROWS = 200  # a table this short is measured again when its bold rows change


class StageTable(QTableWidget):
    """Signals: those of QTableWidget (`cellClicked(row, col)` is what panes connect to)."""

    def __init__(self, columns: Sequence[str]) -> None:
        super().__init__(0, len(columns))
        self.setHorizontalHeaderLabels(list(columns))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        # Sized once per `set_rows`, not ResizeToContents: that mode re-measures every row on each
        # cell change, and a click on a deep model's Decompositions table changes thousands of
        # cells (quadratic: a click would take many seconds).
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(False)  # spare width goes to the text (_spread)
        self.setWordWrap(False)
        self._natural: list[int] = []  # column widths measured on the rows, before spreading
        self._rows: Sequence[Sequence[str]] = ()  # the texts shown (`begin_rows`..`end_rows`)
        self._lit: set[int] = set()
        self._bold: set[int] = set()

    def set_rows(self, rows: Sequence[Sequence[str]], tooltips: Sequence[str] | None = None) -> None:
        self.begin_rows(len(rows))
        self.add_rows(rows, tooltips, 0, len(rows))
        self.end_rows()

    # A long table filled over several event-loop turns (a pane's `fill_in_slices`): a deep
    # model's rows of cells with tooltips are too many for one turn.
    def begin_rows(self, count: int) -> None:
        """Empty the table and make room for `count` rows; `add_rows` fills them."""
        self.clearContents()
        self.setRowCount(count)
        self._rows = ()
        self._lit, self._bold = set(), set()

    def add_rows(self, rows: Sequence[Sequence[str]], tooltips: Sequence[str] | None,
                 start: int, stop: int) -> None:  # fmt: skip
        """Items for rows `start..stop` of `rows` (indices into the whole table; every call of
        one fill passes the same `rows`)."""
        self._rows = rows
        self.setUpdatesEnabled(False)
        try:
            for r in range(start, stop):
                for c, text in enumerate(rows[r]):
                    item = QTableWidgetItem(text)
                    if tooltips is not None and tooltips[r]:
                        item.setToolTip(tip(tooltips[r]))
                    self.setItem(r, c, item)
        finally:
            self.setUpdatesEnabled(True)

    def end_rows(self) -> None:
        """Size the columns once the rows are in."""
        fit_columns(self, self._rows)
        self._natural = [self.columnWidth(c) for c in range(self.columnCount())]
        self._spread()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._spread()

    def _spread(self) -> None:
        """Spare width to the widest column, the one holding text: stretching the last column
        gave an empty Recompiles column half the Modes table while the mode's name was cut."""
        if not self._natural:
            return
        spare = self.viewport().width() - sum(self._natural)
        widest = max(range(len(self._natural)), key=self._natural.__getitem__)
        for c, w in enumerate(self._natural):
            self.setColumnWidth(c, w + spare if c == widest and spare > 0 else w)

    def highlight(self, rows: set[int], bold: set[int] | None = None) -> None:
        """Mark `rows`, embolden `bold`; only rows whose marking changes are touched."""
        bold = set(bold or ())
        changed = (set(rows) ^ self._lit) | (bold ^ self._bold)
        marked, plain = QBrush(QColor(SELECT_COLOR_HEX)), QBrush()
        strong = QFont(self.font())
        strong.setBold(True)
        normal = QFont(self.font())
        for r in changed:
            for c in range(self.columnCount()):
                item = self.item(r, c)
                if item is None:
                    continue
                item.setBackground(marked if r in rows else plain)
                item.setFont(strong if r in bold else normal)
        emboldened = bold != self._bold
        self._lit, self._bold = set(rows), bold
        if emboldened and self.rowCount() <= REMEASURE_ROWS:
            self.end_rows()  # bold text is wider: the Modes table cut its best mode's name
