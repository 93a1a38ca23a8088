"""Columns sized to their contents from the rows whose texts look widest, not from every row.

`resizeColumnToContents` asks the delegate for the size of up to 1,000 rows of a column (Qt's
`resizeContentsPrecision`). On a deep model's tables (1,900 saved tensors by 6 columns, a
thousand guards) that was 30-40 ms of one event-loop turn. A text's width grows with its
length, so a column's widest cell is among its longest texts: those few are measured the way
Qt measures every cell (`sizeHintForIndex`: the view's delegate, font and options) and the
section gets the width `resizeColumnToContents` gives it.

Which texts are the widest: among the texts at least LENGTH_FLOOR of the longest's length (at
most CANDIDATES of them), the ones whose glyph advances add up to most (a per-character table;
asking Qt for each text's advance costs ~15 us a text, as much as the measuring it replaces).
Names of one length differ by their glyphs ("getitem_12" against "mul_1234"), which a count of
characters alone missed by 6 px. A text shorter than the floor drawn wider than all of them
(a run of "W" against one of "i") is elided; every table here shows its full text in the tooltip.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from PySide6.QtWidgets import QTableView, QTreeView

SAMPLE = 16  # widest texts measured per column
LENGTH_FLOOR = 0.75
CANDIDATES = 256


def fit_columns(view: QTreeView | QTableView, texts: Sequence[Sequence[str]],
                columns: Iterable[int] | None = None, sample: int = SAMPLE) -> None:  # fmt: skip
    """Size `columns` (default: all) of `view` to their contents; `texts[row][column]` is the
    text shown in that cell (rows in the view's order)."""
    model = view.model()
    header = view.header() if isinstance(view, QTreeView) else view.horizontalHeader()
    tree_column = -1
    if isinstance(view, QTreeView) and view.rootIsDecorated():  # -1: the tree is the first shown
        tree_column = view.treePosition() if view.treePosition() >= 0 else header.logicalIndex(0)
    for col in range(model.columnCount()) if columns is None else columns:
        rows = _widest(view, [row[col] if col < len(row) else "" for row in texts], sample)
        width = max((view.sizeHintForIndex(model.index(r, col)).width() for r in rows), default=0)
        if isinstance(view, QTreeView) and col == tree_column:
            width += view.indentation()  # top-level rows: the branch decoration's column
        elif isinstance(view, QTableView) and view.showGrid():
            width += 1  # the grid line, as QTableView::sizeHintForColumn counts it
        header_hint = 0 if header.isHidden() else header.sectionSizeHint(col)
        header.resizeSection(col, max(width, header_hint))


def _widest(view: QTreeView | QTableView, column: list[str], sample: int) -> list[int]:
    """Rows of the `sample` texts of `column` that look widest (see the module docstring)."""
    longest = max(map(len, column), default=0)
    floor = int(longest * LENGTH_FLOOR)
    candidates = [r for r, text in enumerate(column) if len(text) >= floor]
    if len(candidates) <= sample:
        return candidates
    candidates = heapq.nlargest(CANDIDATES, candidates, key=lambda r: len(column[r]))
    metrics = view.fontMetrics()
    advance: dict[str, int] = {}

    def width(text: str) -> int:
        missing = set(text).difference(advance)
        for char in missing:
            advance[char] = metrics.horizontalAdvance(char)
        return sum(map(advance.__getitem__, text))

    return heapq.nlargest(sample, candidates, key=lambda r: width(column[r]))
