"""A read-only code view: line numbers, gutter markers, per-line colours and a selection outline.

Shared by the Source and Kernel code panes. Colours work as in Compiler Explorer: a line may carry
several colours at once (one per related item); the first tints the line, all of them show as
stripes in the gutter. Line numbers are 1-based throughout, like `SourceLoc.line`.

Annotations (a graph break's reason under its line) are appended to the line's own text block
behind Unicode line separators (U+2028): they show as extra visual lines under the code, while
block N stays source line N+1, so colours, markers, clicks and selection need no renumbering.
QPlainTextEdit's layout ignores block margins, which rules out drawing into a gap instead.

A view may hold only some lines of a file (`set_quoted_lines`: the lines a log quotes, at their
numbers): every other line is a gap, drawn hatched and without a number, so a blank gap never
reads as a blank line of the file.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontDatabase,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from explorer.jobs import Lane, PieceQueue
from explorer.panes.syntax import PygmentsHighlighter, Span, cached_spans, lex, lexer_ready, remember
from explorer.plain_text import tip
from explorer.state.palette import SELECT_COLOR_HEX

# Pygments lexes Python at ~3-5 us a character here (a Triton kernel's dense tokens at the slow
# end): below this a text is lexed in the same turn (~10 ms at most), above it on a worker.
LEX_LATER_CHARS = 2_000
COLOUR_SLICE_S = 0.005
_STRIPE_W = 4
LINE_SEPARATOR = "\u2028"
_MARKER_W = 12
HEAT = QColor(214, 69, 38)
SELECT_COLOR = QColor(SELECT_COLOR_HEX)
GAP = QColor(170, 170, 170)


class _Gutter(QWidget):
    def __init__(self, view: CodeView) -> None:
        super().__init__(view)
        self._view = view
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(self._view.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._view.paint_gutter(self, event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        line = self._view.line_at(event.position().toPoint().y())
        text = "\n".join(t for t in (self._view.heat_tip(line), self._view.marker_tip(line)) if t)
        if text:
            QToolTip.showText(event.globalPosition().toPoint(), tip(text), self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        line = self._view.line_at(event.position().toPoint().y())
        if line:
            self._view.lineClicked.emit(line)


class CodeView(QPlainTextEdit):
    """Signals: `lineClicked(int)` — the user clicked a line (1-based), in the text or the gutter."""

    lineClicked = Signal(int)  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self._gutter = _Gutter(self)
        self._highlighter = PygmentsHighlighter(self.document())
        self._colors: dict[int, list[QColor]] = {}
        self._markers: dict[int, tuple[QColor, str]] = {}
        self._selected: set[int] = set()
        self._heat: dict[int, tuple[float, str, str]] = {}
        self._annotations: dict[int, list[str]] = {}
        self._quoted: set[int] | None = None  # None: every line is text; else the others are gaps
        self._quoted_end = 0
        self._shown = 0  # texts set so far: a text's colouring in slices stops when it is replaced
        self.blockCountChanged.connect(self._update_margins)
        self.updateRequest.connect(self._on_update_request)
        self._update_margins()

    # ----- content -----
    def set_code(
        self, text: str, language: str = "python", annotations: dict[int, list[str]] | None = None,
        later: Lane | None = None,
    ) -> None:
        """Show `text`; `annotations[line]` are notes shown under that 1-based line.

        With `later` (a pane in the main window), a long text not lexed before is lexed on that
        worker and coloured when it is done: lexing a library file of thousands of lines
        (transformers' modeling_bert.py) would take one long turn."""
        self._colors.clear()
        self._markers.clear()
        self._selected.clear()
        self._quoted = None
        self._annotations = {k: list(v) for k, v in (annotations or {}).items() if v}
        shown, notes_from = text, {}
        if self._annotations:
            lines = text.split("\n")
            for line, notes in self._annotations.items():
                if 0 < line <= len(lines):
                    notes_from[line - 1] = len(lines[line - 1])
                    lines[line - 1] += "".join(LINE_SEPARATOR + "   " + n for n in notes)
            shown = "\n".join(lines)
        spans = cached_spans(text, language)
        slow = len(text) > LEX_LATER_CHARS or not lexer_ready(language)
        lex_later = spans is None and later is not None and slow
        if later is not None:
            later.cancel()  # an earlier, longer text's colours must not land on this one
        # the spans first: setPlainText highlights every block with what the highlighter holds
        now = [] if lex_later else spans
        self._highlighter.set_source(text, language, notes_from, now, rehighlight=False)
        self._shown += 1  # colouring still under way for an earlier text stops
        self.setPlainText(shown)
        if lex_later and later is not None:

            def lexed(result: list[list[Span]]) -> None:
                remember(text, language, result)
                self._highlighter.set_spans(result, rehighlight=False)
                self._colour_blocks(later.queue, self._shown)

            later.submit(partial(lex, text, language), lexed)  # only the latest text's result lands
        self._refresh()

    def _colour_blocks(self, queue: PieceQueue | None, shown: int, start: int | None = None) -> None:
        """Apply the lexed colours: the lines in view first, then the rest in slices of about
        COLOUR_SLICE_S, one queued piece each. Colouring a long file's every line in one go (a
        Python call per line from Qt) took 60 ms of one turn on GPT-2's modeling file, longer
        on the wall clock while workers computed."""
        if shown != self._shown:
            return
        highlighter, doc = self._highlighter, self.document()
        if start is None:  # the lines in view, then from the top
            block = self.firstVisibleBlock()
            bottom, offset = self.viewport().rect().bottom(), self.contentOffset()
            while block.isValid() and self.blockBoundingGeometry(block).translated(offset).top() <= bottom:
                highlighter.rehighlightBlock(block)
                block = block.next()
            start = 0
        block, began = doc.findBlockByNumber(start), time.perf_counter()
        # no queue (a view outside the window): no event loop to spread over, all lines now
        while block.isValid() and (queue is None or time.perf_counter() - began < COLOUR_SLICE_S):
            highlighter.rehighlightBlock(block)
            block = block.next()
        if block.isValid() and queue is not None:
            queue.post(self, "colour", partial(self._colour_blocks, queue, shown, block.blockNumber()))

    def set_quoted_lines(self, lines: set[int] | None) -> None:
        """Only `lines` (1-based) hold text of the file; every other line is a gap, drawn
        hatched and unnumbered. None: every line is the file's."""
        self._quoted = None if lines is None else set(lines)
        self._quoted_end = max(self._quoted, default=0) if self._quoted is not None else 0
        self.viewport().update()
        self._gutter.update()

    def is_gap(self, line: int) -> bool:
        """Whether `line` lies between quoted lines (the empty block after the last is no gap)."""
        return self._quoted is not None and line < self._quoted_end and line not in self._quoted

    def annotations(self) -> dict[int, list[str]]:
        return {k: list(v) for k, v in self._annotations.items()}

    def set_line_colors(self, colors: dict[int, list[QColor]]) -> None:
        self._colors = {k: v for k, v in colors.items() if v}
        self._refresh()

    def set_markers(self, markers: dict[int, tuple[QColor, str]]) -> None:
        """Gutter markers (e.g. graph breaks): colour and the tooltip shown on hover."""
        self._markers = dict(markers)
        self._gutter.update()

    def set_heat(self, heat: dict[int, tuple[float, str, str]]) -> None:
        """A heat column left of the line numbers: line -> (share 0..1, short label, tooltip),
        e.g. the share of a profiled step's time the line's kernels took."""
        self._heat = dict(heat)
        self._update_margins()
        self._place_gutter()
        self._gutter.update()

    def heat_tip(self, line: int) -> str:
        entry = self._heat.get(line)
        return entry[2] if entry else ""

    def heat(self) -> dict[int, tuple[float, str, str]]:
        return dict(self._heat)

    def set_selected_lines(self, lines: set[int], scroll: bool = True) -> None:
        self._selected = set(lines)
        self._refresh()
        if scroll and lines:
            self.scroll_to_line(min(lines))

    def selected_lines(self) -> set[int]:
        return set(self._selected)

    def line_colors(self) -> dict[int, list[QColor]]:
        return dict(self._colors)

    def marker_tip(self, line: int) -> str:
        marker = self._markers.get(line)
        return marker[1] if marker else ""

    def scroll_to_line(self, line: int) -> None:
        if line > self.document().blockCount():
            return  # past the text (a saved session may name any 64-bit line; Qt takes a C int)
        block = self.document().findBlockByNumber(max(0, line - 1))
        cursor = QTextCursor(block)
        self.setTextCursor(cursor)
        self.centerCursor()

    # ----- geometry -----
    def heat_width(self) -> int:
        return self.fontMetrics().horizontalAdvance("99.9 ms") + 6 if self._heat else 0

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return (8 + self.fontMetrics().horizontalAdvance("9") * digits + _MARKER_W + 3 * _STRIPE_W
                + self.heat_width())

    def line_at(self, y: int) -> int:
        block = self.firstVisibleBlock()
        while block.isValid():
            top = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
            bottom = top + self.blockBoundingRect(block).height()
            if top <= y < bottom:
                return block.blockNumber() + 1
            if top > y:
                break
            block = block.next()
        return 0

    def _update_margins(self, *_: object) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_gutter()

    def _place_gutter(self) -> None:
        cr = self.contentsRect()
        self._gutter.setGeometry(QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton and not self.textCursor().hasSelection():
            line = self.cursorForPosition(event.position().toPoint()).blockNumber() + 1
            self.lineClicked.emit(line)

    # ----- painting -----
    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._quoted is None:
            return
        painter = QPainter(self.viewport())  # over the text: a gap holds none to cover
        brush = QBrush(GAP, Qt.BrushStyle.BDiagPattern)
        width = self.viewport().width()
        block = self.firstVisibleBlock()
        while block.isValid():
            geo = self.blockBoundingGeometry(block).translated(self.contentOffset())
            if geo.top() > event.rect().bottom():
                break
            if self.is_gap(block.blockNumber() + 1):
                painter.fillRect(QRectF(0, geo.top(), width, geo.height()), brush)
            block = block.next()
        painter.end()

    def _refresh(self) -> None:
        extras = []
        count = self.document().blockCount()  # a line past the text has nothing to tint
        for line, colors in self._colors.items():
            tint = QColor(colors[0])
            tint.setAlpha(70)
            if 1 <= line <= count:
                extras.append(self._line_extra(line, tint))
        for line in self._selected:
            if 1 <= line <= count:
                extras.append(self._line_extra(line, SELECT_COLOR))
        self.setExtraSelections(extras)
        self._gutter.update()

    def _line_extra(self, line: int, color: QColor) -> QTextEdit.ExtraSelection:
        # Any: PySide6 6.7's stubs omit ExtraSelection's `format` and `cursor` fields
        sel: Any = QTextEdit.ExtraSelection()
        sel.format.setBackground(color)
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        sel.cursor = QTextCursor(self.document().findBlockByNumber(line - 1))
        return sel

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        painter.fillRect(event.rect(), QColor(245, 245, 245))
        heat_w = self.heat_width()
        digits_w = gutter.width() - _MARKER_W - 3 * _STRIPE_W - 4 - heat_w
        painter.translate(heat_w, 0)
        block = self.firstVisibleBlock()
        while block.isValid():
            geo = self.blockBoundingGeometry(block).translated(self.contentOffset())
            if geo.top() > event.rect().bottom():
                break
            line = block.blockNumber() + 1
            top, h = int(geo.top()), int(geo.height())
            if line in self._heat:
                self._paint_heat(painter, line, top, h, heat_w)
            self._paint_line_gutter(painter, line, top, h, digits_w)
            block = block.next()
        painter.end()

    def _paint_heat(self, painter: QPainter, line: int, top: int, h: int, heat_w: int) -> None:
        share, label, _ = self._heat[line]
        fill = QColor(HEAT)
        fill.setAlpha(int(25 + 200 * max(0.0, min(1.0, share))))
        painter.fillRect(-heat_w, top, heat_w - 2, h, fill)
        painter.setPen(QColor(255, 255, 255) if share > 0.5 else QColor(60, 20, 10))
        painter.drawText(-heat_w, top, heat_w - 5, h, Qt.AlignmentFlag.AlignRight, label)

    def _paint_line_gutter(self, painter: QPainter, line: int, top: int, h: int, digits_w: int) -> None:
        if self.is_gap(line):
            painter.fillRect(0, top, digits_w, h, QBrush(GAP, Qt.BrushStyle.BDiagPattern))
            return
        for i, color in enumerate(self._colors.get(line, [])[:3]):
            painter.fillRect(digits_w + 2 + i * _STRIPE_W, top, _STRIPE_W - 1, h, color)
        marker = self._markers.get(line)
        if marker:
            painter.setBrush(marker[0])
            painter.setPen(Qt.PenStyle.NoPen)
            x, cy = digits_w + 3 * _STRIPE_W + 4, top + self.fontMetrics().height() // 2
            painter.drawPolygon([QPoint(x, cy - 5), QPoint(x + 8, cy), QPoint(x, cy + 5)])
        pen = QColor(40, 40, 40) if line in self._selected else QColor(150, 150, 150)
        painter.setPen(pen)
        painter.drawText(0, top, digits_w - 2, h, Qt.AlignmentFlag.AlignRight, str(line))
