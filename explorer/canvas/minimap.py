"""Overview in a corner of the canvas: the whole graph in miniature plus the viewport rectangle.

The miniature is rendered once per layout/overlay into a pixmap, so moving the main view only
repaints a rectangle. Clicking or dragging on the minimap centres the main view there.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap, QTransform
from PySide6.QtWidgets import QWidget

from explorer.canvas.canvas_view import EDGE, GROUP_FILL, CanvasView

MAX_SIZE = (180, 140)
MIN_SIZE = (72, 54)


class Minimap(QWidget):
    def __init__(self, view: CanvasView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self._pixmap: QPixmap | None = None
        self._map = QTransform()
        self.setFixedSize(MAX_SIZE[0], MAX_SIZE[1])
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        view.viewChanged.connect(self.update)
        view.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.view and event.type() == QEvent.Type.Resize:
            self._fit_to_view()
        return False

    def _fit_to_view(self) -> None:
        """Keep the overview a corner inset: a fifth of the view, hidden when the view is small.

        A fixed-size inset would cover half of a docked pane and hide the graph it summarises.
        """
        vw, vh = self.view.width(), self.view.height()
        w = int(min(MAX_SIZE[0], max(MIN_SIZE[0], vw * 0.2)))
        h = int(min(MAX_SIZE[1], max(MIN_SIZE[1], vh * 0.2)))
        self.setVisible(vw >= 4 * MIN_SIZE[0] and vh >= 4 * MIN_SIZE[1])
        if (w, h) != (self.width(), self.height()):
            self.setFixedSize(w, h)
            self.refresh()
        self.move(vw - w - 6, vh - h - 6)

    def refresh(self) -> None:
        """Re-render the miniature after a new layout, overlay or highlight."""
        st = self.view.state
        self._pixmap = None
        if st is not None:
            s = st.scene
            k = min((self.width() - 8) / max(s.width, 1.0), (self.height() - 8) / max(s.height, 1.0))
            ox = (self.width() - s.width * k) / 2
            oy = (self.height() - s.height * k) / 2
            self._map = QTransform(k, 0, 0, k, ox, oy)
            pm = QPixmap(self.size())
            pm.fill(QColor(255, 255, 255, 230))
            p = QPainter(pm)
            p.setTransform(self._map)
            pen = QPen(EDGE, 0)
            pen.setCosmetic(True)
            p.setPen(pen)
            p.drawPath(st.paths.edges)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(GROUP_FILL.darker(115))
            p.drawPath(st.paths.groups)
            for color, path in st.node_fill.items():
                p.setBrush(st.palette[color].darker(130))
                p.drawPath(path)
            p.setBrush(QColor("#ff9f1c"))
            p.drawPath(st.highlight)
            p.end()
            self._pixmap = pm
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setPen(QColor("#9aa4b2"))
        p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        if self._pixmap is not None:
            p.drawPixmap(0, 0, self._pixmap)
            r = self._map.mapRect(self.view.visible_rect())
            p.setPen(QPen(QColor("#e4572e"), 1.5))
            p.drawRect(r.intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1)))
        p.end()

    def _jump(self, pos: QPointF) -> None:
        inv, ok = self._map.inverted()
        if ok:
            at = inv.map(pos)
            self.view.center_on_point(at.x(), at.y())

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._jump(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons():
            self._jump(event.position())
