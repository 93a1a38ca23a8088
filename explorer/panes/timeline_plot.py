"""The step-time plot: one curve per mode, warm-up steps as red rings, markers with reasons.

Step times span five orders of magnitude (a 3 s compile next to 0.1 ms steady steps), so the
y axis is logarithmic by default; a linear axis would flatten every steady-state difference.
The plot transforms y itself (log10) and only asks the axis to label ticks as powers of ten:
pyqtgraph's `setLogMode` transforms curves but not bare scatter or text items, which would
then sit at 10^3954. Compile/recompile/shape-change markers sit above their step; hovering
one shows its reason, and a label per step names the kind and the compile seconds.
`refresh(data)` rebuilds from arrays and is cheap enough to call 30+ times a second.
"""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from compiler_core.session.model import Session, TimelineEvent
from explorer.plain_text import tip
from explorer.state.timeline_data import MODE_ORDER, ModeSeries, TimelineData

MODE_COLORS = {
    "eager": "#7f7f7f", "default": "#4e79a7", "reduce-overhead": "#f28e2b",
    "max-autotune": "#59a14f", "max-autotune-no-cudagraphs": "#b07aa1",
}
MARKER_SYMBOLS = {"compile": "t", "recompile": "t", "shape_change": "d", "cudagraph_record": "s",
                  "error": "x"}
LABELLED = ("compile", "recompile", "error")
MAX_LABELS = 8  # text labels per mode; further markers keep their hover tooltip only


# Other series (a script run's compiled callables, `Net`, `r1:train_step`): a stable colour per
# name, so two callables never share one and a name keeps its colour from run to run.
OTHER_COLORS = ("#e15759", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac", "#17becf", "#bcbd22")


def mode_color(mode: str) -> QColor:
    if mode in MODE_COLORS:
        return QColor(MODE_COLORS[mode])
    import zlib

    return QColor(OTHER_COLORS[zlib.crc32(mode.encode()) % len(OTHER_COLORS)])


def marker_tip(x: float, y: float, data: Any) -> str:
    return tip(data)  # the reason comes from the session: shown verbatim, never as markup


def step_label(events: list[TimelineEvent]) -> str:
    """One label for all labelled events of a step: `recompile 7.5s` (durations summed)."""
    kinds = list(dict.fromkeys(e.kind for e in events))
    seconds = sum(e.duration_s or 0.0 for e in events)
    return "+".join(kinds) + (f" {seconds:.1f}s" if seconds else "")


class ModeLayer:
    """A mode's plot items: the curve, the warm-up rings, the markers and their labels."""

    def __init__(self, plot: pg.PlotItem, mode: str) -> None:
        color = mode_color(mode)
        self.mode = mode
        self.rank = MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER)
        self.plot = plot
        self.curve = plot.plot([], [], pen=pg.mkPen(color, width=1.5), name=escape(mode),
                                skipFiniteCheck=True)  # the legend renders names as HTML
        self.curve.setDownsampling(auto=True, method="peak")  # spikes survive downsampling
        self.curve.setClipToView(True)
        self.warm = pg.ScatterPlotItem(size=11, pen=pg.mkPen("#d62728", width=2), brush=None)
        self.marks = pg.ScatterPlotItem(size=13, pen=pg.mkPen(color.darker(160)), brush=pg.mkBrush(color),
                                        hoverable=True, tip=marker_tip)
        self.warm.setToolTip("warm-up step (compile, recompile or CUDA graph recording)")
        plot.addItem(self.warm)
        plot.addItem(self.marks)
        self.labels: list[pg.TextItem] = []
        self._drawn: tuple[int, int, bool] | None = None
        self._refreshed: tuple[int, int, bool] | None = None

    def items(self) -> list[Any]:
        return [self.curve, self.warm, self.marks, *self.labels]

    def set_visible(self, visible: bool) -> None:
        for item in self.items():
            item.setVisible(visible)

    def refresh(self, series: ModeSeries, log_y: bool) -> None:
        key = (id(series), series.revision, log_y)
        if key == self._refreshed:
            return
        self._refreshed = key
        x = np.asarray(series.steps, dtype=float)
        y = np.asarray(series.ms, dtype=float)
        if log_y:
            y = np.log10(np.maximum(y, 1e-6))
        order = np.argsort(x, kind="stable")
        self.curve.setData(x[order], y[order])
        warm = np.asarray(series.warmup, dtype=bool)
        self.warm.setData(x[warm], y[warm])
        if self._drawn != (id(series), len(series.events), log_y):
            self._draw_markers(series, dict(zip(series.steps, y.tolist(), strict=True)), log_y)

    def _above(self, y: float, log_y: bool) -> float:
        """A little above a point, staggered per mode so markers of modes don't cover each other."""
        lift = 0.08 + 0.06 * self.rank
        return y + lift if log_y else y * (1 + lift)

    def _draw_markers(self, series: ModeSeries, y_at: dict[int, float], log_y: bool) -> None:
        spots = []
        by_step: dict[int, list[TimelineEvent]] = {}
        for e in series.events:
            if e.step not in y_at:
                continue  # its step is not resolved yet; drawn on a later refresh
            tip = f"{series.mode} · step {e.step} · {e.kind}"
            tip += f" ({e.duration_s:.2f} s)" if e.duration_s else ""
            tip += f"\n{e.reason}" if e.reason else ""
            spots.append({"pos": (e.step, self._above(y_at[e.step], log_y)), "data": tip,
                          "symbol": MARKER_SYMBOLS.get(e.kind, "o")})
            if e.kind in LABELLED:
                by_step.setdefault(e.step, []).append(e)
        self.marks.setData(spots)
        self._draw_labels(by_step, y_at, log_y)
        complete = len(spots) == len(series.events)
        self._drawn = (id(series), len(series.events), log_y) if complete else None

    def _draw_labels(self, by_step: dict[int, list[TimelineEvent]], y_at: dict[int, float],
                     log_y: bool) -> None:
        for label in self.labels:
            self.plot.removeItem(label)
        self.labels = []
        for step, events in list(by_step.items())[:MAX_LABELS]:
            label = pg.TextItem(step_label(events), color=mode_color(self.mode), anchor=(0, 1))
            label.setPos(step + 1, self._above(y_at[step], log_y))
            self.plot.addItem(label)
            self.labels.append(label)


class StepTimeAxis(pg.AxisItem):
    """Over one to two decades pyqtgraph labels every 1..9 tick of a log axis and the labels
    pile on top of each other; with more than a handful, only 1, 2 and 5 keep theirs."""

    def logTickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        strings: list[str] = super().logTickStrings(values, scale, spacing)
        if len(values) <= 6:
            return strings
        leading = [round(10 ** (v % 1)) for v in values]
        return [s if d in (1, 2, 5) else "" for s, d in zip(strings, leading, strict=True)]


EMPTY_TITLE = "No step times in this session: open a model file and press Run"
TRACE_TITLE = ("A trace log records compiles, not step times: to time them, open the model file "
               "(File ▸ Open model…) or run your script (File ▸ Run script…)")
NO_SESSION_TITLE = "Open a model file, a script, a trace log or a session (File menu, or drop it here)"
CAPTURE_TITLE = "No step times yet: press Run above to time this model in eager and the checked modes"
# a stage capture stores each mode's figures (the table) but not its steps
FIGURES_ONLY_TITLE = "This session stores each mode's figures, not its steps: press Run to plot them"


class TimelinePlot(pg.PlotWidget):
    """Step time (ms) against step index, all modes overlaid."""

    def __init__(self) -> None:
        super().__init__(background="w", axisItems={"left": StepTimeAxis("left")})
        self.item: pg.PlotItem = self.getPlotItem()
        self.item.setLabel("bottom", "step")
        self.item.setLabel("left", "step time (ms)")
        self.item.showGrid(x=False, y=True, alpha=0.15)
        self.item.addLegend(offset=(-10, 10))
        self.layers: dict[str, ModeLayer] = {}
        self.hidden: set[str] = set()
        self.log_y = True
        self.item.getAxis("left").setLogMode(False, True)

    def set_log_y(self, on: bool) -> None:
        self.log_y = on
        self.item.getAxis("left").setLogMode(False, on)
        self.item.enableAutoRange()

    def set_mode_visible(self, mode: str, visible: bool) -> None:
        (self.hidden.discard if visible else self.hidden.add)(mode)
        if mode in self.layers:
            self.layers[mode].set_visible(visible)

    def refresh(self, data: TimelineData, empty: str = EMPTY_TITLE) -> None:
        """Curves of `data`; `empty` is the title when it holds no step (empty_title)."""
        for mode in [m for m in self.layers if m not in data.series]:
            layer = self.layers.pop(mode)
            if self.item.legend is not None:
                self.item.legend.removeItem(layer.curve)
            for item in layer.items():
                self.item.removeItem(item)
        nothing = not any(series.ms for series in data.series.values())
        title = (empty if not data.series else FIGURES_ONLY_TITLE) if nothing else None
        self.item.setTitle(title, size="9pt")
        if nothing:
            self.item.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)  # not the last run's axes
            self.item.enableAutoRange()  # setRange turned it off: the next run's samples need it
        for mode, series in data.series.items():
            if mode not in self.layers:
                self.layers[mode] = ModeLayer(self.item, mode)
                self.layers[mode].set_visible(mode not in self.hidden)
            self.layers[mode].refresh(series, self.log_y)


def empty_title(session: Session) -> str:
    """What an empty plot says: it depends on what is open (a log cannot be run)."""
    if not session.compiles and not session.meta.origin:
        return NO_SESSION_TITLE
    return {"trace": TRACE_TITLE, "capture": CAPTURE_TITLE}.get(session.meta.origin, EMPTY_TITLE)
