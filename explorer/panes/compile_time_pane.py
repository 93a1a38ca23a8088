"""Compile-time pane: per-compile stage times as stacked bars, and cache hits/misses.

Stacked so the bar's height is the compile's total and each colour its stage, which answers both
"which compile was slow" and "where did the time go" at a glance.
"""

from __future__ import annotations

import heapq
import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from compiler_core.analysis.value_bounds import seconds
from compiler_core.session import Compile, Ref, Session
from explorer.panes.base import Pane
from explorer.panes.column_fit import fit_columns
from explorer.plain_text import tip
from explorer.state import SelectionModel, SessionState
from explorer.state.compile_status import status_text
from explorer.state.palette import indexed_color

STAGES = ("dynamo", "aot", "inductor", "codegen", "backend", "backward")
# PyTorch's timers nest within the frame's compile: backend ⊃ aot ⊃ inductor ⊃ codegen (Dynamo
# tracing is separate); a training graph's backward is compiled later, at its first call, and
# stacks on top (compiler_core/analysis/compile_builder.py keeps its time apart).
_NESTED_IN = {"codegen": "inductor", "inductor": "aot", "aot": "backend"}


_INNER = {parent: child for child, parent in _NESTED_IN.items()}
# One bar and one row per compile would freeze the GUI on a session of 1e6 compiles, so
# the chart keeps the slowest MAX_BARS (in execution order) and the table
# the first MAX_ROWS, with a last row saying how many more there are.
MAX_BARS = 200
MAX_ROWS = 2000


def exclusive_times(stage_s: dict[str, float]) -> dict[str, float]:
    """Seconds spent in each stage itself, so stacked bars add up to the real total. A time no
    compile takes (1e308 s, NaN: a saved session from someone else) counts as unmeasured: the
    builder drops such values with a warning (analysis/value_bounds.py), a saved file may hold them."""
    out = {}
    for stage in STAGES:
        inner = _INNER.get(stage)
        own = _seconds(stage_s.get(stage)) - (_seconds(stage_s.get(inner)) if inner else 0.0)
        out[stage] = max(0.0, own)
    return out


def _seconds(value: float | None) -> float:
    return seconds(value) or 0.0


def _total(c: Compile) -> float:
    return _seconds(c.metrics.total_s) or max(map(_seconds, c.metrics.stage_s.values()), default=0.0)


def charted(compiles: list[Compile], limit: int = MAX_BARS) -> tuple[list[Compile], int]:
    """The compiles with timing, or the `limit` slowest of them, in execution order; and how
    many have timing (one pass: a log may hold a million compiles)."""
    timed = [(i, c) for i, c in enumerate(compiles) if c.metrics.total_s or c.metrics.stage_s]
    count = len(timed)
    if count > limit:
        timed = sorted(heapq.nlargest(limit, timed, key=lambda ic: _total(ic[1])), key=lambda ic: ic[0])
    return [c for _, c in timed], count


def stage_rows(compiles: list[Compile]) -> list[tuple[str, dict[str, float]]]:
    """(compile id, stage -> exclusive seconds) for each compile that has any timing."""
    rows = []
    for c in compiles:
        times = exclusive_times(c.metrics.stage_s)
        if not any(times.values()) and _seconds(c.metrics.total_s):
            times["backend"] = _seconds(c.metrics.total_s)
        if any(times.values()):
            rows.append((c.compile_id if c.rank is None else f"r{c.rank} {c.compile_id}", times))
    return rows


class CompileTimePane(Pane):
    title = "Compile time"
    stage = "timeline"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        # Antialiasing for this plot only: as a global option it makes the timeline's
        # thousands-of-points curves far slower to repaint once this pane exists.
        pg.setConfigOptions(background="w", foreground="k")
        self.plot = pg.PlotWidget()
        self.plot.setAntialiasing(True)
        self.plot.setLabel("left", "own time (s)")
        self.plot.addLegend(offset=(-5, 5), colCount=3)
        self._labels: list[str] = []
        self.tick_stride = 1  # every how many compiles the x axis is labelled
        self.cache = QTreeWidget()
        self.cache.setHeaderLabels(["Compile", "Total (s)", "Cache", "Status", "Backward (s)"])
        header = self.cache.headerItem()
        header.setToolTip(1, tip("The frame's compile (torch's entire_frame_compile_time_s)"))
        header.setToolTip(4, tip("The backward graph's compile, lazily at its first call, after the frame's"))
        self.cache.setRootIsDecorated(False)
        self.cache.itemClicked.connect(self._clicked)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.cache)
        split.setSizes([300, 150])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._bars = 0

    def on_session(self, session: Session) -> None:
        compiles = self.state.compiles()
        shown, timed = charted(compiles)
        self._draw(stage_rows(shown))
        capped = timed > len(shown)
        self.plot.setTitle(f"the {len(shown)} slowest of {timed:,} timed compiles" if capped else None)
        self.cache.clear()
        items, texts = [], []
        for c in compiles[:MAX_ROWS]:
            cache = ", ".join(f"{k}: {v}" for k, v in sorted(c.metrics.cache.items())) or "—"
            total = f"{c.metrics.total_s:.3f}" if seconds(c.metrics.total_s) is not None else "—"
            backward = seconds(c.metrics.stage_s.get("backward"))
            backward_text = f"{backward:.3f}" if backward else "—"
            cells = [c.compile_id, total, cache, status_text(c.status), backward_text]
            texts.append(cells)
            item = QTreeWidgetItem(cells)
            item.setData(0, Qt.ItemDataRole.UserRole, Ref.compile(c.compile_id, c.rank))
            items.append(item)
        if len(compiles) > MAX_ROWS:
            texts.append([f"… {len(compiles) - MAX_ROWS:,} more", "", "", "", ""])
            items.append(QTreeWidgetItem(texts[-1]))
        self.cache.addTopLevelItems(items)
        fit_columns(self.cache, texts)

    def _draw(self, rows: list[tuple[str, dict[str, float]]]) -> None:
        self.plot.clear()
        self._bars = len(rows)
        xs = list(range(len(rows)))
        base = [0.0] * len(rows)
        for i, stage in enumerate(STAGES):
            heights = [times[stage] for _, times in rows]
            if not any(heights):
                continue
            brush = indexed_color(i)
            bar = pg.BarGraphItem(x=xs, y0=base, height=heights, width=0.6, brush=brush, name=stage)
            self.plot.addItem(bar)
            base = [b + h for b, h in zip(base, heights, strict=True)]
        self._labels = [label for label, _ in rows]
        self._set_ticks()
        self.plot.setXRange(-0.6, len(rows) - 0.4, padding=0)
        self.plot.setYRange(0, max(base, default=1.0) * 1.8, padding=0)  # headroom for the legend

    def _set_ticks(self) -> None:
        """Every k-th compile labelled, k such that labels never overlap at the plot's width
        (ten compiles of a T5 log printed "0/0/0#2/0..." as one smear); the rest get a bare tick."""
        labels = self._labels
        if not labels:
            return
        metrics = self.plot.fontMetrics()
        widest = max(metrics.horizontalAdvance(label) for label in labels) + 12
        room = max(1, self.plot.width() - 60)
        stride = max(1, math.ceil(widest * len(labels) / room))
        major = [(i, label) for i, label in enumerate(labels) if i % stride == 0]
        self.plot.getAxis("bottom").setTicks([major, [(i, "") for i in range(len(labels))]])
        self.tick_stride = stride

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._set_ticks()

    def _clicked(self, item: QTreeWidgetItem) -> None:
        ref = item.data(0, Qt.ItemDataRole.UserRole)
        if ref is not None:  # the "… more" row selects nothing
            self.selection.select({ref})

    def has_content(self) -> bool:
        return self._bars > 0 or self.cache.topLevelItemCount() > 0
