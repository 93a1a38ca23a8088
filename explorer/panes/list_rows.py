"""Heights in rows for the lists under a graph (saved tensors, kernels).

A pixel minimum (`setMinimumHeight(120)`) says nothing about how many rows a user sees: the
header, the frame and the font's row height decide that, and they differ between platforms."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QStyle, QTreeView, QWidget


def row_height(view: QTreeView, icons: bool = False) -> int:
    """One row's height: measured once a row exists, else the font's line (or the small icon's
    height, for rows with an icon). Guessing higher costs real rows: every pixel of these
    minimums is taken from the graph above."""
    measured = view.sizeHintForRow(0)
    if measured > 0:
        return measured
    icon = view.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize, None, view) if icons else 0
    return max(view.fontMetrics().height(), icon)


def rows_height(view: QTreeView, rows: int, icons: bool = False) -> int:
    """The view height that shows its header and `rows` whole rows."""
    header = view.header().sizeHint().height() if not view.isHeaderHidden() else 0
    scroll = 0  # a long kernel name or column set shows a horizontal scroll bar over the last row
    if view.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
        scroll = view.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, view)
    return header + rows * row_height(view, icons) + scroll + 2 * view.frameWidth()


GRAPH_MIN_H = 130  # the graph above such a list keeps room for a few rows of nodes


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
        # While a closed window is torn down Qt can still deliver a child event to this filter
        # after PySide has dropped the wrapper's attributes: there is nothing to size then.
        widget: QWidget | None = getattr(self, "_widget", None)
        if widget is None or watched is not widget:
            return False
        if event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest):
            layout = widget.layout()
            if layout is not None and layout.hasHeightForWidth():
                need = layout.minimumHeightForWidth(widget.width())
                if need > 0 and need != widget.minimumHeight():
                    widget.setMinimumHeight(need)
        return False
