"""The painting surface: draws a `RenderState` with a pan/zoom transform, a few paths per frame.

A plain QWidget rather than a QGraphicsScene: at 50k nodes one QGraphicsItem per node costs
seconds and hundreds of MB, while a dozen pre-built paths redraw within a frame. Labels are the only
per-item drawing and appear only when legible (node at least ~16 px tall), for items on screen.

Signals: `itemClicked(int)`, `itemDoubleClicked(int)`, `itemHovered(int)` (item ids as in
`explorer.layout.Scene`, -1 for background), `viewChanged()` after any pan or zoom,
`zoomToSelection()` when the user asks (Z) to frame what is selected.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QMouseEvent,
    QPaintDevice,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QResizeEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QWidget

from explorer.canvas.scene_paths import ScenePaths
from explorer.layout import GraphArrays, GroupTree, Scene
from explorer.layout.scene_assembly import HEADER

BACKGROUND = QColor("#fbfbfc")
EDGE = QColor("#8a93a0")
BOX_FILL = QColor(70, 110, 170, 18)
BOX_LINE = QColor("#9fb0c8")
GROUP_FILL = QColor("#fdf1d8")
GROUP_LINE = QColor("#c8a35a")
HIGHLIGHT = QColor("#ff9f1c")
PRIMARY = QColor("#e4572e")
LABEL_MIN_PX = 16.0  # node boxes (30 scene units tall) show their label from this screen height
LABEL_PT = 9.0  # label font size: readable, and it does not grow or shrink with the zoom
FIRST_VIEW_SCALE = 0.9  # the first view of a graph too big to fit legibly starts at this zoom


@dataclass
class EdgeStyle:
    """Emphasis for one edge: colour, width in screen pixels and an optional label (bytes...)."""

    color: str = "#d62828"
    width: float = 3.0
    label: str = ""


@dataclass
class StyledEdge:
    """An emphasised edge as straight segments (`lines`) with a round dot at each bend
    (`bends`), not as a QPainterPath: Qt strokes a wide antialiased path through its general
    stroker, which takes tens of milliseconds for the few hundred saved-tensor edges of a deep
    joint graph, and has a fast rasterizer for wide flat-capped lines. `bounds`: scene rect, to
    skip an edge off screen; `mid`: where its label goes."""

    lines: list[QLineF]
    bends: list[QPointF]
    style: EdgeStyle
    mid: QPointF
    bounds: QRectF

    @classmethod
    def through(cls, xs: list[float], ys: list[float], style: EdgeStyle) -> StyledEdge:
        points = [QPointF(x, y) for x, y in zip(xs, ys, strict=True)]
        lines = [QLineF(a, b) for a, b in itertools.pairwise(points)]
        # a straight vertical edge has a zero-width box, which Qt never counts as intersecting
        bounds = QRectF(min(xs) - 1, min(ys) - 1, max(xs) - min(xs) + 2, max(ys) - min(ys) + 2)
        return cls(lines, points[1:-1], style, points[len(points) // 2], bounds)


@dataclass
class RenderState:
    scene: Scene
    arrays: GraphArrays
    tree: GroupTree
    paths: ScenePaths
    node_fill: dict[int, QPainterPath]
    palette: list[QColor]
    highlight: QPainterPath = field(default_factory=QPainterPath)
    primary: QPainterPath = field(default_factory=QPainterPath)
    styled: list[StyledEdge] = field(default_factory=list)
    marks: dict[int, str] = field(default_factory=dict)  # node -> short badge ("R", "saved")
    legend: dict[str, str] | None = None


class CanvasView(QWidget):
    itemClicked = Signal(int)  # noqa: N815
    itemDoubleClicked = Signal(int)  # noqa: N815
    itemHovered = Signal(int)  # noqa: N815
    viewChanged = Signal()  # noqa: N815
    zoomToSelection = Signal()  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state: RenderState | None = None
        self.scale, self.tx, self.ty = 1.0, 0.0, 0.0
        self._press: QPointF | None = None
        self._dragged = False
        self._hover = -1
        self.setMouseTracking(True)
        self.setMinimumSize(200, 150)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._font = QFont()
        self._font.setPointSizeF(LABEL_PT)
        self._extent: tuple[float, float] | None = None  # set while rendering the whole scene
        self.section_labels: list[tuple[float, str]] = []
        # the placement the app chose (first view, a compile's section, a selected node), made
        # again when the view is resized until the user pans or zooms: a pane laid out while
        # hidden (200 px wide) placed its first view for 200 px and kept it when shown at 640
        self._auto: Callable[[], None] | None = None

    def _w(self) -> float:
        return self._extent[0] if self._extent is not None else float(self.width())

    def _h(self) -> float:
        return self._extent[1] if self._extent is not None else float(self.height())

    # -- view transform -------------------------------------------------------------------
    def transform(self) -> QTransform:
        return QTransform(self.scale, 0, 0, self.scale, self.tx, self.ty)

    def to_scene(self, p: QPointF) -> tuple[float, float]:
        return (p.x() - self.tx) / self.scale, (p.y() - self.ty) / self.scale

    def visible_rect(self) -> QRectF:
        x0, y0 = self.to_scene(QPointF(0, 0))
        return QRectF(x0, y0, self._w() / self.scale, self._h() / self.scale)

    def fit(self) -> None:
        """Frame the whole drawing, centred: what a person means by Fit, even when a long thin
        graph then shows as a sliver (the first view, `show_top`, is the legible one)."""
        if self.state is None:
            return
        s = self.state.scene
        margin = 20.0
        sx = (self._w() - 2 * margin) / max(s.width, 1.0)
        sy = (self._h() - 2 * margin) / max(s.height, 1.0)
        self.scale = max(1e-4, min(sx, sy, 1.5))
        self.tx = (self._w() - s.width * self.scale) / 2
        self.ty = (self._h() - s.height * self.scale) / 2
        self._auto = self.fit
        self.viewChanged.emit()
        self.update()

    def show_top(self) -> None:
        """First view: the whole drawing if its labels stay legible; else a legible zoom at the
        graph's entry (its top), with the leftmost top item and the group boxes around it inside
        the left edge (a wide drawing's corner or middle may be empty)."""
        self.fit()
        self._auto = self.show_top
        if self.state is None or self.scale * 30.0 >= LABEL_MIN_PX:
            return
        s = self.state.scene
        self.scale = max(FIRST_VIEW_SCALE, min(1.0, (self._w() - 40.0) / max(s.width, 1.0)))
        if s.width * self.scale <= self._w() - 40.0:
            self.tx = (self._w() - s.width * self.scale) / 2
        else:
            self.tx = 20.0 - max(0.0, self._entry_left(s) - 20.0) * self.scale
        self.ty = 20.0
        self._auto = self.show_top
        self.viewChanged.emit()
        self.update()

    def show_item_at_top(self, it: int) -> None:
        """Item `it` near the top of the view at a legible zoom, the drawing's left (or the
        boxes around the item) inside the left edge, as the first view shows a graph's entry."""
        if self.state is None:
            return
        s = self.state.scene
        if self.scale * 30.0 < LABEL_MIN_PX:
            self.scale = max(FIRST_VIEW_SCALE, min(1.0, (self._w() - 40.0) / max(s.width, 1.0)))
        if s.width * self.scale <= self._w() - 40.0:
            self.tx = (self._w() - s.width * self.scale) / 2
        else:
            own = self._entry_left(s, np.array([it]))
            row = min(own, self._entry_left(s, None, float(s.y[it])))
            right = s.x[it] + s.w[it] / 2
            # the widest left edge that still shows the item: its section's, its row's, its own
            left = next((x for x in (min(row, _section_left(s, it)), row)
                         if (right - x) * self.scale <= self._w() - 40.0), own)
            self.tx = 20.0 - max(0.0, left - 20.0) * self.scale
        self.ty = 44.0 - (s.y[it] - s.h[it] / 2) * self.scale  # room for a section's label above
        self._auto = lambda: self.show_item_at_top(it)
        self.viewChanged.emit()
        self.update()

    def _entry_left(self, s: Scene, top: np.ndarray | None = None, row_y: float | None = None) -> float:
        """Scene x of the left edge of the topmost items (or of `top`, or of the items in the row
        at height `row_y`) and of every group box holding them."""
        vis = np.flatnonzero(s.visible)
        if not len(vis):
            return 0.0
        if top is None and row_y is not None:
            row = vis[np.abs(s.y[vis] - row_y) <= s.h[vis] / 2 + 1.0]
            top = row if len(row) else vis[np.argsort(np.abs(s.y[vis] - row_y), kind="stable")[:1]]
        if top is None:
            top = vis[np.argsort(s.y[vis] - s.h[vis] / 2, kind="stable")[:5]]
        left = float(np.min(s.x[top] - s.w[top] / 2))
        if len(s.boxes):
            b = s.boxes
            bx0, bx1 = s.x[b] - s.w[b] / 2, s.x[b] + s.w[b] / 2
            by0, by1 = s.y[b] - s.h[b] / 2, s.y[b] + s.h[b] / 2
            for it in top.tolist():
                holds = (bx0 <= s.x[it]) & (s.x[it] <= bx1) & (by0 <= s.y[it]) & (s.y[it] <= by1)
                if holds.any():
                    left = min(left, float(np.min(bx0[holds])))
        return left

    def zoom_to(self, rect: QRectF) -> None:
        """Frame scene rectangle `rect` (a selection), never closer than a legible 1.5x."""
        if rect.isEmpty() and rect.width() <= 0:
            return
        margin = 40.0
        sx = (self._w() - 2 * margin) / max(rect.width(), 1.0)
        sy = (self._h() - 2 * margin) / max(rect.height(), 1.0)
        self.scale = max(1e-4, min(sx, sy, 1.5))
        c = rect.center()
        self.tx = self._w() / 2 - c.x() * self.scale
        self.ty = self._h() / 2 - c.y() * self.scale
        self._auto = None
        self.viewChanged.emit()
        self.update()

    def jump_to_end(self) -> None:
        """The graph's exit (its bottom) at the current zoom, horizontally as for the entry."""
        if self.state is None:
            return
        s = self.state.scene
        self.ty = self._h() - 20.0 - s.height * self.scale
        self._auto = None
        self.viewChanged.emit()
        self.update()

    def jump_to_start(self) -> None:
        """The graph's entry (its top) at the current zoom."""
        if self.state is None:
            return
        self.ty = 20.0
        self._auto = None
        self.viewChanged.emit()
        self.update()

    def keep_at(self, x: float, y: float, screen: QPointF) -> None:
        """Pan so scene point (x, y) sits at `screen` (after a re-layout moved it)."""
        self.tx = screen.x() - x * self.scale
        self.ty = screen.y() - y * self.scale
        self._auto = None
        self.viewChanged.emit()
        self.update()

    def center_on_point(self, x: float, y: float, scale: float | None = None) -> None:
        """Centre scene point (x, y); but where the drawing's left edge can be in view with the
        point still well inside, it is (a centred node of a wide graph cut its row at the left)."""
        if scale is not None:
            self.scale = scale
        self.tx = self.width() / 2 - x * self.scale
        self.ty = self.height() / 2 - y * self.scale
        if self.state is not None:
            flush = 20.0 - max(0.0, self._entry_left(self.state.scene, None, y) - 20.0) * self.scale
            if flush > self.tx and x * self.scale + flush <= 0.75 * self.width():
                self.tx = flush
        self._auto = lambda: self.center_on_point(x, y)
        self.viewChanged.emit()
        self.update()

    def zoom_at(self, factor: float, at: QPointF) -> None:
        sx, sy = self.to_scene(at)
        self.scale = float(np.clip(self.scale * factor, 1e-4, 8.0))
        self.tx, self.ty = at.x() - sx * self.scale, at.y() - sy * self.scale
        self._auto = None  # the user's own view from now on
        self.viewChanged.emit()
        self.update()

    def pan_by(self, dx: float, dy: float) -> None:
        self.tx += dx
        self.ty += dy
        self._auto = None
        self.viewChanged.emit()
        self.update()

    # -- hit testing ----------------------------------------------------------------------
    def item_at(self, p: QPointF) -> int:
        """Topmost visible node or collapsed group under a widget point, or -1."""
        if self.state is None:
            return -1
        s = self.state.scene
        x, y = self.to_scene(p)
        hit = s.visible & (np.abs(s.x - x) <= s.w / 2) & (np.abs(s.y - y) <= s.h / 2)
        idx = np.flatnonzero(hit)
        if len(idx):
            return int(idx[0])
        boxes = s.boxes + s.n
        inside = (np.abs(s.x[boxes] - x) <= s.w[boxes] / 2) & (np.abs(s.y[boxes] - y) <= s.h[boxes] / 2)
        inside &= y <= s.y[boxes] - s.h[boxes] / 2 + HEADER  # only the header row of a box
        idx = np.flatnonzero(inside)
        return int(boxes[idx[-1]]) if len(idx) else -1

    # -- painting -------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        self._paint(p, limit=3000)
        p.end()

    def _paint(self, p: QPainter, limit: int) -> None:
        p.fillRect(QRectF(0, 0, self._w(), self._h()), BACKGROUND)
        st = self.state
        if st is None:
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing, self.scale > 0.25)
        p.setTransform(self.transform())
        self._paint_structure(p, st)
        p.resetTransform()
        if self.scale * 30.0 >= LABEL_MIN_PX:
            self._paint_labels(p, st, limit)
        self._paint_sections(p, st)

    def render_size(self, scale: float, margin: float = 20.0) -> tuple[int, int]:
        """Pixel size of the whole scene rendered at `scale`."""
        if self.state is None:
            return 1, 1
        s = self.state.scene
        return int((s.width + 2 * margin) * scale) + 1, int((s.height + 2 * margin) * scale) + 1

    def render_scene(self, device: QPaintDevice, scale: float, margin: float = 20.0) -> None:
        """Paint the WHOLE scene (not the viewport) onto `device` (a QSvgGenerator, a QImage)
        with the colours, labels and separators on screen; the view is left as it was."""
        saved = (self.scale, self.tx, self.ty, self._extent)
        w, h = self.render_size(scale, margin)
        self.scale, self.tx, self.ty, self._extent = scale, margin * scale, margin * scale, (w, h)
        try:
            p = QPainter(device)
            self._paint(p, limit=1_000_000)
            p.end()
        finally:
            self.scale, self.tx, self.ty, self._extent = saved

    def _pen(self, color: QColor, width: float = 1.0, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
        pen = QPen(color, width, style)
        pen.setCosmetic(True)
        return pen

    def _paint_structure(self, p: QPainter, st: RenderState) -> None:
        for depth, path in st.paths.boxes:
            p.setPen(self._pen(BOX_LINE))
            p.setBrush(BOX_FILL if depth % 2 else QColor(120, 140, 90, 16))
            p.drawPath(path)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(self._pen(EDGE))
        p.drawPath(st.paths.edges)
        p.setPen(self._pen(EDGE, 1.0, Qt.PenStyle.DashLine))
        p.drawPath(st.paths.stubs)
        view = self.visible_rect()
        for edge in st.styled:
            if edge.bounds.intersects(view):
                pen = self._pen(QColor(edge.style.color), edge.style.width)
                pen.setCapStyle(Qt.PenCapStyle.FlatCap)
                p.setPen(pen)
                p.drawLines(edge.lines)
                if edge.bends:
                    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
                    p.setPen(pen)
                    p.drawPoints(edge.bends)
        p.setPen(self._pen(GROUP_LINE))
        p.setBrush(GROUP_FILL)
        p.drawPath(st.paths.groups)
        p.setPen(self._pen(QColor("#7d8794")) if self.scale > 0.08 else Qt.PenStyle.NoPen)
        for color, path in st.node_fill.items():
            p.setBrush(st.palette[color])
            p.drawPath(path)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(self._pen(HIGHLIGHT, 3.0))
        p.drawPath(st.highlight)
        p.setPen(self._pen(PRIMARY, 4.0))
        p.drawPath(st.primary)

    def _on_screen(self, st: RenderState, pad: float = 0.0) -> np.ndarray:
        s, r = st.scene, self.visible_rect()
        return (
            (s.x + s.w / 2 >= r.left() - pad)
            & (s.x - s.w / 2 <= r.right() + pad)
            & (s.y + s.h / 2 >= r.top() - pad)
            & (s.y - s.h / 2 <= r.bottom() + pad)
        )

    def _paint_labels(self, p: QPainter, st: RenderState, limit: int = 3000) -> None:
        s, tree = st.scene, st.tree
        on = self._on_screen(st)
        p.setFont(self._font)
        fm = QFontMetrics(self._font)
        p.setPen(QColor("#1d2530"))
        items = np.flatnonzero(on & s.visible)[:limit]
        for it in items.tolist():
            if it < s.n:
                text = st.arrays.labels[it] if st.arrays.labels is not None else st.arrays.ids[it]
                if it in st.marks:
                    text = f"{st.marks[it]} {text}"
            else:
                g = it - s.n
                text = f"▸ {tree.label[g]}  ({tree.size[g]})"
            r = self._screen_rect(s, it)
            p.drawText(
                r,
                Qt.AlignmentFlag.AlignCenter,
                fm.elidedText(text, Qt.TextElideMode.ElideRight, int(r.width()) - 4),
            )
        if self.scale * HEADER >= 12:
            p.setPen(QColor("#3b4a63"))
            for g in s.boxes[on[s.boxes + s.n]].tolist()[:limit]:
                r = self._screen_rect(s, s.n + g)
                r.setHeight(HEADER * self.scale)
                r.adjust(6, 0, -4, 0)
                text = f"▾ {tree.label[g]}"
                p.drawText(r, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)
        view = self.visible_rect()
        for edge in st.styled:
            if edge.style.label and view.contains(edge.mid):
                p.setPen(QColor(edge.style.color))
                p.drawText(self.transform().map(edge.mid) + QPointF(4, 0), edge.style.label)

    def _paint_sections(self, p: QPainter, st: RenderState) -> None:
        """Dashed separators between sections (graphs of one frame, forward/backward). A label
        that would overlap the previous one is left out (the line stays), and each is elided to
        the width, so that long graph-break reasons never print on top of each other."""
        tree = st.tree
        p.setFont(self._font)
        fm = QFontMetrics(self._font)
        last = -1e9
        self.section_labels = []  # (screen y, text) drawn, for tests
        for g, y in st.scene.sections:
            sy = y * self.scale + self.ty
            p.setPen(self._pen(QColor("#c0392b"), 1.5, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(0, sy), QPointF(self._w(), sy))
            if sy - last < fm.height() + 2 or sy < 0 or sy > self._h() + fm.height():
                continue
            last = sy
            p.setPen(QColor("#c0392b"))
            text = fm.elidedText(tree.label[g], Qt.TextElideMode.ElideRight, max(40, int(self._w()) - 16))
            p.drawText(QPointF(8, sy - 4), text)
            self.section_labels.append((sy, text))

    def _screen_rect(self, s: Scene, it: int) -> QRectF:
        k = self.scale
        return QRectF(
            (s.x[it] - s.w[it] / 2) * k + self.tx,
            (s.y[it] - s.h[it] / 2) * k + self.ty,
            s.w[it] * k,
            s.h[it] * k,
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._auto is not None and self.state is not None:
            self._auto()

    # -- interaction ----------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Keys a person expects of a map: arrows pan (Shift: further), PageUp/PageDown a screen,
        Home/End the graph's entry/exit, F or Ctrl+0 fit, +/- zoom about the centre, Z zoom to the
        selection (`zoomToSelection`, emitted for the canvas, which knows what is selected)."""
        key, mods = event.key(), event.modifiers()
        k = Qt.Key
        step = 0.5 if mods & Qt.KeyboardModifier.ShiftModifier else 0.15
        w, h = self._w(), self._h()
        pans: dict[object, tuple[float, float]] = {
            k.Key_Left: (step * w, 0.0), k.Key_Right: (-step * w, 0.0), k.Key_Up: (0.0, step * h),
            k.Key_Down: (0.0, -step * h), k.Key_PageUp: (0.0, 0.9 * h), k.Key_PageDown: (0.0, -0.9 * h)}
        centre = QPointF(self._w() / 2, self._h() / 2)
        if key in pans:
            self.pan_by(*pans[key])
        elif key == k.Key_Home:
            self.jump_to_start()
        elif key == k.Key_End:
            self.jump_to_end()
        elif key == k.Key_F or (key == k.Key_0 and mods & Qt.KeyboardModifier.ControlModifier):
            self.fit()
        elif key in (k.Key_Plus, k.Key_Equal):
            self.zoom_at(1.25, centre)
        elif key == k.Key_Minus:
            self.zoom_at(0.8, centre)
        elif key == k.Key_Z:
            self.zoomToSelection.emit()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:
        self.zoom_at(1.0015 ** event.angleDelta().y(), event.position())

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._press, self._dragged = event.position(), False

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is not None and event.buttons():
            d = event.position() - self._press
            if self._dragged or abs(d.x()) + abs(d.y()) > 3:
                self._dragged = True
                self._press = event.position()
                self.pan_by(d.x(), d.y())
            return
        it = self.item_at(event.position())
        if it != self._hover:
            self._hover = it
            self.itemHovered.emit(it)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._press is not None and not self._dragged:
            self.itemClicked.emit(self.item_at(event.position()))
        self._press = None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        self.itemDoubleClicked.emit(self.item_at(event.position()))


def _section_left(s: Scene, it: int) -> float:
    """Left edge of the stacked section (one of a frame's graphs) holding item `it`, or +inf."""
    left = float("inf")
    for g, _ in s.sections:
        k = s.n + g
        if k >= len(s.x) or np.isnan(s.x[k]):
            continue
        if abs(s.y[it] - s.y[k]) <= s.h[k] / 2 and abs(s.x[it] - s.x[k]) <= s.w[k] / 2:
            left = min(left, float(s.x[k] - s.w[k] / 2))
    return left
