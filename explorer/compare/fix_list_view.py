"""What is left to fix in a session, as a list: each graph break or recompile cause with its
line, and either a button that applies its hint and re-runs, or the edit to make by hand.

The rows are the core's (`compiler_core.diff.fix_list.fix_rows`), then its levers (`lever_rows`:
a training capture's memory budget), under their own heading: a lever is a trade-off to try, not
a cause, so it is not counted among the causes left to fix. The widget runs nothing: a button
emits `applyRequested(hint)` and the controller that owns captures starts the re-run
(`compiler_core.diff.hint_rerun.rerun_with_hint`, off the GUI thread) and opens the comparison.

Signals: `applyRequested(object)`, the `Hint` of the row whose button was pressed.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QPushButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from compiler_core.diff.fix_list import FixRow
from explorer.plain_text import plain_label, tip

COLUMNS = ("Where", "Cause", "Fix")


class FixListView(QWidget):
    applyRequested = Signal(object)  # noqa: N815 (Qt signal naming)

    def __init__(self, rows: list[FixRow], levers: list[FixRow] | None = None,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.rows = rows
        self.levers = levers or []
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.buttons: list[QPushButton] = []
        box = QVBoxLayout(self)
        count = len(rows)
        box.addWidget(plain_label(f"{count} cause{'s' * (count != 1)} left to fix" if rows else
                                  "nothing left to fix: no graph break and no recompile"))  # fmt: skip
        box.addWidget(self.tree, 1)
        for row in rows:
            self._add(row, None)
        if self.levers:
            heading = QTreeWidgetItem(["", "Worth trying: a trade-off, not a cause", ""])
            self.tree.addTopLevelItem(heading)
            for row in self.levers:
                self._add(row, heading)
        self.tree.expandAll()
        for c in range(len(COLUMNS)):
            self.tree.resizeColumnToContents(c)

    def _add(self, row: FixRow, parent: QTreeWidgetItem | None) -> None:
        """One row (under `parent`, else at the top), with its button or its advice."""
        times = f" ×{row.count}" if row.count > 1 else ""
        item = QTreeWidgetItem([row.where, f"{row.kind}{times}: {row.cause}", ""])
        item.setToolTip(1, tip(row.cause))
        if parent is None:
            self.tree.addTopLevelItem(item)
        else:
            parent.addChild(item)
        if row.code:
            item.addChild(QTreeWidgetItem(["", row.code, ""]))
        if row.hint is not None:
            button = QPushButton(f"Apply and re-run: {row.hint.in_words()}")
            button.clicked.connect(lambda _=False, h=row.hint: self.applyRequested.emit(h))
            self.buttons.append(button)
            self.tree.setItemWidget(item, 2, button)
        else:
            item.setText(2, row.advice.splitlines()[0] if row.advice else "change the code at this line")
            item.setToolTip(2, tip(row.advice))
