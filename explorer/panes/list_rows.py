"""Heights in rows for the lists under a graph (saved tensors, kernels).

A pixel minimum (`setMinimumHeight(120)`) says nothing about how many rows a user sees: the
header, the frame and the font's row height decide that, and they differ between platforms."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTreeView, QWidget


def row_height(view: QTreeView) -> int:
    """One row's height: measured once a row exists, else the font's line plus the style's padding."""
    measured = view.sizeHintForRow(0)
    return measured if measured > 0 else view.fontMetrics().height() + 4


def rows_height(view: QTreeView, rows: int) -> int:
    """The view height that shows its header and `rows` whole rows."""
    header = view.header().sizeHint().height() if not view.isHeaderHidden() else 0
    return header + rows * row_height(view) + 2 * view.frameWidth()


GRAPH_MIN_H = 150  # the graph above such a list keeps room for a few rows of nodes


class WrapAwareMinimum(QObject):
    """Keeps `widget`'s minimum height at what its layout needs at its current width.

    A splitter sizes its children by `minimumSizeHint`, which counts a word-wrapped label as one
    line: the AOT pane's three-line totals label was then laid over the saved-tensor rows. The
    layout's `minimumHeightForWidth` counts the wrapped lines; re-read on resize and whenever a
    label's text changes (a layout request)."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self._widget = widget
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._widget and event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest):
            layout = self._widget.layout()
            if layout is not None and layout.hasHeightForWidth():
                need = layout.minimumHeightForWidth(self._widget.width())
                if need > 0 and need != self._widget.minimumHeight():
                    self._widget.setMinimumHeight(need)
        return False
