"""Timeline pane: step time per step for eager and each compile mode, live, with the table of
median / p99 / total / speedup beside it.

Live updates arrive far faster than a screen can show (a CPU step can take 50 µs), so
`add_sample` / `add_event` / `add_record` only append to `TimelineData`; a QTimer repaints the
plot at most every `PLOT_INTERVAL_MS` (~40 Hz) and the table every `TABLE_INTERVAL_MS`, and
only when something changed. The samples are the application model's live timeline
(`state.timeline`, explorer/state/app_model.py): the run controller appends to the model, never to
this pane, and the pane reads what is there. The pane never runs anything: Run asks the model
for a run (`SessionState.timelineRunRequested`, which the run controller hears) and emits
`runRequested(dict)`. Exports use compiler_core's Qt-free exporters.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFileDialog,
    QHeaderView,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from compiler_core.export.timeline_files import write_chrome_trace, write_csv
from compiler_core.queries.step_stats import BLOCK, untrustworthy
from compiler_core.ranks.rank_trace import logs_for, write_multi_rank_trace
from compiler_core.session.model import ModeStats, Session, StepSample, TimelineEvent
from compiler_core.timeline.records import from_record
from explorer.jobs import service
from explorer.panes.base import Pane
from explorer.panes.number_text import human_bytes
from explorer.panes.timeline_controls import TimelineControls
from explorer.panes.timeline_plot import TimelinePlot, empty_title, mode_color
from explorer.plain_text import tip
from explorer.state import SelectionModel, SessionState
from explorer.state.timeline_data import TimelineData

PLOT_INTERVAL_MS = 25
TABLE_INTERVAL_MS = 200
COLUMNS = ["Mode", "Steps", "Median ms", "Spread", "p99 ms", "Total s", "Paired eager ms", "Speedup",
           "Compile s", "Recomp.",
           "Peak mem", "Saved act.", "Launch/step", "Kernels/step", "GPU idle/step", "In CUDA graphs"]
SPEEDUP_COLUMN = COLUMNS.index("Speedup")
SPREAD_COLUMN = COLUMNS.index("Spread")
NOISY_COLOR = "#b35c00"  # a speedup inside its own noise: shown, but not as a plain figure
MEDIAN_COLUMN = COLUMNS.index("Median ms")


class TimelinePane(Pane):
    """Signals:

    - `runRequested(dict)`: {"steps", "modes", "shape_change_step"}: Run was pressed (the same
      request goes to the model, where the run controller hears it).

    Built without a state (tests, bench/timeline_pane.py), it makes its own model.
    """

    title = "Timeline"
    stage = "timeline"
    runRequested = Signal(dict)  # noqa: N815 (Qt signal naming)

    def __init__(self, state: SessionState | None = None, selection: SelectionModel | None = None) -> None:
        state = state if state is not None else SessionState()
        super().__init__(state, selection if selection is not None else state.selection)
        self.data: TimelineData = state.timeline.data
        self.controls = TimelineControls()
        self.plot = TimelinePlot()
        self.table = _make_table()
        self.table.itemChanged.connect(self._toggle_mode)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.plot)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 1)
        splitter.setSizes([520, 800])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.controls)
        layout.addWidget(splitter, 1)
        self.controls.runRequested.connect(self._request_run)
        self.controls.logScaleToggled.connect(self._set_log_y)
        self.controls.exportCsvRequested.connect(self._export_csv)
        self.controls.exportTraceRequested.connect(self._export_trace)
        self.repaints = 0
        self._plotted = self._tabled = -1
        self._plot_timer = _timer(self, PLOT_INTERVAL_MS, self._repaint_plot)
        self._table_timer = _timer(self, TABLE_INTERVAL_MS, self._repaint_table)
        state.timelineOptionsChanged.connect(self._show_options)

    # -- the pane protocol ---------------------------------------------------------------------

    def _export_csv(self) -> None:
        self._export_dialog("csv")

    def _export_trace(self) -> None:
        self._export_dialog("json")

    def on_session(self, session: Session) -> None:
        """The model loaded the session's timeline already: paint it now (its empty-plot message
        too: what to do depends on what was opened)."""
        self._plotted = -1
        self.flush()

    def has_content(self) -> bool:
        return bool(self.data.series)

    # -- feeding -------------------------------------------------------------------------------

    def set_session(self, session: Session) -> None:
        """Show a saved session's timeline (replaces whatever was there)."""
        self.state.timeline.load_session(session)
        self.flush()

    def clear(self) -> None:
        self.state.timeline.clear()
        self.flush()

    def add_sample(self, sample: Mapping[str, Any] | StepSample) -> None:
        self.data.add_sample(sample if isinstance(sample, StepSample) else from_record(sample, StepSample))

    def add_event(self, event: Mapping[str, Any] | TimelineEvent) -> None:
        self.data.add_event(event if isinstance(event, TimelineEvent) else from_record(event, TimelineEvent))

    def add_record(self, record: Mapping[str, Any]) -> None:
        """Any record the run phase emits (sample, timeline_event, mode_stats, mode_start)."""
        self.data.add_record(record)

    def flush(self) -> None:
        """Repaint now instead of at the next tick (tests, screenshots, end of a run)."""
        self._repaint_plot()
        self._repaint_table()

    # -- running -------------------------------------------------------------------------------

    def _request_run(self, request: dict[str, Any]) -> None:
        self.runRequested.emit(request)
        self.state.request_timeline_run(request)

    def _show_options(self, options: dict[str, Any]) -> None:
        """The controls show the run in progress (it may come from the options dialog)."""
        controls = self.controls
        modes = list(options.get("modes", ()))
        controls.steps.setValue(int(options.get("steps", 0)))
        for mode, box in controls.mode_boxes.items():
            box.setChecked(mode in modes)
        shape = options.get("shape_change_step")
        controls.shape_change.setChecked(shape is not None)
        if shape is not None:
            controls.shape_step.setValue(int(shape))

    # -- exports -------------------------------------------------------------------------------

    def export_csv(self, path: str | Path) -> None:
        write_csv(path, self.data.all_samples(), self.data.all_events())

    def export_chrome_trace(self, path: str | Path) -> None:
        """One process per rank where the session has several (their steps on one clock, and the
        compile phases the rank logs recorded), else this run's steps, compiles and kernels."""
        session = self.state.session
        if self._several_ranks():
            write_multi_rank_trace(path, session, logs_for(session, self.state.source_path or None))
            return
        stats = [st for st, _ in self.data.table()]  # each mode's runtime profile: its kernel thread
        write_chrome_trace(path, self.data.all_samples(), self.data.all_events(), stats)

    def _several_ranks(self) -> bool:
        return len({c.rank for c in self.state.session.compiles if c.rank is not None}) > 1

    def _export_dialog(self, kind: str) -> None:
        pattern = "CSV (*.csv)" if kind == "csv" else "Chrome trace (*.json)"
        path, _ = QFileDialog.getSaveFileName(self, "Export timeline", f"timeline.{kind}", pattern)
        if not path:
            return
        if kind == "csv":
            self.export_csv(path)
        elif self._several_ranks():
            # every rank's log is read for its compile phases (seconds for many ranks): not on the GUI
            # thread; the session is immutable and the file is written atomically
            session, source = self.state.session, self.state.source_path or None
            service().run_detached(lambda: write_multi_rank_trace(path, session, logs_for(session, source)))
        else:
            self.export_chrome_trace(path)

    # -- painting ------------------------------------------------------------------------------

    def _repaint_plot(self) -> None:
        if self._plotted == self.data.revision:
            return
        self._plotted = self.data.revision
        self.plot.refresh(self.data, empty_title(self.state.session))
        self.repaints += 1

    def _repaint_table(self) -> None:
        if self._tabled == self.data.revision:
            return
        self._tabled = self.data.revision
        rows = self.data.table()
        self.table.blockSignals(True)
        self.table.setRowCount(len(rows))
        for r, (stats, speed) in enumerate(rows):
            for c, text in enumerate(_row_texts(stats, speed)):
                item = self._cell(stats.mode, c, text)
                if c == MEDIAN_COLUMN and stats.median_ms is not None:
                    item.setToolTip(tip(
                        f"Median over blocks of {BLOCK} steps (each timed between two synchronisations)\n"
                        f"of the block's mean steady step; {stats.samples} steps timed, warm-up left out.\n"
                        "Each block runs at the start of a fresh Python data-stack chunk: on CPython 3.12\n"
                        "and older a loop of yours can read up to 2x slower at some stack depths\n"
                        "(a chunk allocated and freed per call, CPython issue 142183)."))
                doubt = untrustworthy(stats, speed)
                if c == SPEEDUP_COLUMN and stats.baseline_ms is not None:
                    item.setToolTip(tip(f"Paired eager {stats.baseline_ms:.3f} ms / median: the median of "
                                        f"the eager steps run alternately with {stats.mode}'s, under the "
                                        f"same host conditions" + (f"\n{doubt}" if doubt else "")))
                if c == SPEEDUP_COLUMN and doubt:
                    item.setForeground(QColor(NOISY_COLOR))
                if c == SPREAD_COLUMN:
                    item.setToolTip(tip("Half the interquartile range of the steady blocks' mean step, "
                                        "over the median: how far a block of 10 steps typically "
                                        "strays from the median"))
                self.table.setItem(r, c, item)
        self.table.blockSignals(False)

    def _cell(self, mode: str, column: int, text: str) -> QTableWidgetItem:
        item = QTableWidgetItem(text)
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if column == 0:
            item.setFlags(flags | Qt.ItemFlag.ItemIsUserCheckable)
            hidden = mode in self.plot.hidden
            item.setCheckState(Qt.CheckState.Unchecked if hidden else Qt.CheckState.Checked)
            item.setForeground(mode_color(mode))
            item.setData(Qt.ItemDataRole.UserRole, mode)
        else:
            item.setFlags(flags)
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return item

    def _toggle_mode(self, item: QTableWidgetItem) -> None:
        if item.column() == 0:
            mode = str(item.data(Qt.ItemDataRole.UserRole))
            self.plot.set_mode_visible(mode, item.checkState() == Qt.CheckState.Checked)

    def set_mode_visible(self, mode: str, visible: bool) -> None:
        self.plot.set_mode_visible(mode, visible)
        self._tabled = -1
        self._repaint_table()

    def _set_log_y(self, on: bool) -> None:
        self.plot.set_log_y(on)
        self._plotted = -1
        self._repaint_plot()


def _timer(parent: QWidget, interval_ms: int, slot: Any) -> QTimer:
    timer = QTimer(parent)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    timer.start()
    return timer


def _make_table() -> QTableWidget:
    table = QTableWidget(0, len(COLUMNS))
    table.setHorizontalHeaderLabels(COLUMNS)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.setToolTip("Median and p99 leave out warm-up steps (compiles, recompiles, CUDA graph "
                     "recording); Total includes them. Speedup = paired eager / median, "
                     "where paired eager is the median of eager steps alternating with the mode's "
                     "own (eager's own row has none: its speedup is 1). A speedup the blocks' spread "
                     "exceeds is marked (noisy). Medians are over blocks of 10 steps, "
                     "timed between two synchronisations. Saved act.: bytes the forward graphs "
                     "save for backward, part of Peak mem. Kernels/step counts every device kernel "
                     "(extern GEMMs and attention included) the same way in every mode; GPU idle/step "
                     "is the median step minus the GPU's busy time in a few profiled steps.")
    return table


def _row_texts(s: ModeStats, speed: float | None) -> list[str]:
    rt = s.runtime
    noisy = " (noisy)" if untrustworthy(s, speed) else ""
    return [
        s.mode, str(s.samples), _num(s.median_ms, 3), "" if s.spread is None else f"±{s.spread:.0%}",
        _num(s.p99_ms, 3), _num(None if s.total_ms is None else s.total_ms / 1000, 2),
        _num(s.baseline_ms, 3), "" if speed is None else f"{speed:.2f}×{noisy}", _num(s.compile_s, 2),
        str(s.recompiles), _bytes(s.peak_mem_bytes), _bytes(s.saved_bytes),
        "" if s.kernel_launches_per_step is None else str(s.kernel_launches_per_step),
        "" if s.kernels is None else str(s.kernels),
        "" if rt is None or rt.idle_us_per_step is None else f"{rt.idle_us_per_step / 1000:.3f} ms",
        _share(rt.cudagraph_us_per_step, rt.busy_us_per_step) if rt is not None else "",
    ]


def _share(part: float | None, whole: float | None) -> str:
    return "" if part is None or not whole else f"{part / whole:.0%}"


def _num(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _bytes(n: int | None) -> str:
    return "" if n is None else human_bytes(n)
