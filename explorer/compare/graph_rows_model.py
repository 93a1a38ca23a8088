"""The side-by-side graph table of a comparison: one row per matched node pair, or per node only
one side has, coloured by what changed.

A Qt item model rather than a table of items: a 32-layer Llama backward is 6k rows, which a
QTableWidget builds as 12k items up front (seconds on a busy host) and a model serves lazily, a
screenful at a time. Rows come from the core (`compiler_core.diff.rows`), so the GUI decides
nothing about which node is which.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from compiler_core.session import Graph, Node
from explorer.plain_text import tip

STATUS_COLORS = {
    "removed": QColor("#f4c7c3"),
    "added": QColor("#c9e7c9"),
    "changed": QColor("#fde9a9"),
    "renamed": QColor("#e3ecf7"),
}
COLUMNS = ("before", "", "after")
_MARKS = {"removed": "−", "added": "+", "changed": "~", "renamed": "→", "same": ""}
Row = tuple[str, str, str]  # before name, after name, status
AnyIndex = QModelIndex | QPersistentModelIndex
_DOTTED = re.compile(r"^[\w.]+$")


def node_text(node: Node | None) -> str:
    """`mul_3 = aten.mul.Tensor(x, y)  (4, 16)`: what a reader compares across the two sides."""
    if node is None:
        return ""
    if node.op in ("placeholder", "output"):
        text = f"{node.name} ({node.op})" if node.op == "placeholder" else f"output({', '.join(node.inputs)})"
    elif _DOTTED.match(node.target):
        text = f"{node.name} = {node.target}({', '.join(node.inputs)})"
    else:  # Dynamo writes an operator's target as the expression itself: `h * item`
        text = f"{node.name} = {node.target}"
    shapes = " ".join("(" + ", ".join(str(d) for d in o.shape) + ")" for o in node.outputs)
    return f"{text}  {shapes}" if shapes else text


class GraphRowsModel(QAbstractTableModel):
    """Columns: the before node, a change mark, the after node. `whats` maps an after-side
    name to the changes the diff found in it (shown as the mark's tooltip)."""

    def __init__(self, rows: list[Row], before: Graph | None, after: Graph | None,
                 whats: dict[str, tuple[str, ...]] | None = None) -> None:  # fmt: skip
        super().__init__()
        self._rows = rows
        self._before = before
        self._after = after
        self._whats = whats or {}
        self._brushes = {k: QBrush(v) for k, v in STATUS_COLORS.items()}

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:  # fmt: skip
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def row(self, i: int) -> Row:
        return self._rows[i]

    def find(self, name: str, after: bool = False) -> int:
        """The row of node `name` of the before graph (of the after graph with `after`); -1
        when that side has no such node."""
        side = 1 if after else 0
        for i, r in enumerate(self._rows):
            if r[side] == name:
                return i
        return -1

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        before, after, status = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return node_text(self._before.node(before)) if self._before and before else before
            if col == 2:
                return node_text(self._after.node(after)) if self._after and after else after
            return _MARKS.get(status, "")
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._brushes.get(status)
        if role == Qt.ItemDataRole.ToolTipRole and col == 1 and status == "changed":
            return tip("\n".join(self._whats.get(after, ())))
        return None
