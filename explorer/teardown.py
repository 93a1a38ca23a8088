"""What a closed window lets go of at once, on the GUI thread, instead of leaving it to the collector.

pyqtgraph's plot items sit in reference cycles. Left to the collector, a cycle's Python halves are
cleared first and its C++ objects deleted after, and that teardown lays out items whose Python
half is already empty (a plot's title `LabelItem` without its `_sizeHint`): an exception in a
virtual call, raised from whatever code triggered the collection. So a closed window's
graphics scenes are cleared, which deletes their items in C++ while every Python half is whole,
after the periodic repaints that would draw into them have stopped.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QWidget


def release_views(root: QWidget) -> None:
    """Stop `root`'s timers and delete the items of every graphics scene shown under it."""
    timer: QTimer
    for timer in root.findChildren(QTimer):
        timer.stop()
    view: QGraphicsView
    for view in root.findChildren(QGraphicsView):
        scene: QGraphicsScene | None = view.scene()
        if scene is not None:
            scene.clear()
