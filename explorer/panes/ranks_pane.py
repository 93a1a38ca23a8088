"""Many ranks side by side: what differs between them, which ranks agree, and who is slow.

Everything shown is computed by the core (compiler_core/ranks): `rank_divergence` for the
table, `rank_groups` for the line above it, `straggler_report` for the skew view; the pane
only lays it out, so the CLI's `summary` says the same. Three views:

- a table, one row per difference (compile id, aspect, the ranks that differ, each group of
  ranks with what it has, the detail: first differing node, first diverging collective...);
  clicking a row selects that compile on the first differing rank;
- a picture of the same: one column per difference, one row per rank, a cell coloured by the
  rank's group in that difference (grey: with the reference ranks), so "rank 7 differs in
  everything" is a coloured row and "ranks 5-6 stop early" a coloured block;
- the step-time skew: per rank its median lag behind the other ranks on one compiled callable
  (a `run --nproc` session), the straggler's bar in red; where the straggler was named by when
  it arrives (ranks coupled through their collectives, durations alike), its median arrival lag
  behind the earliest rank instead, since that is the lag that shows it.

A session of one rank shows one line saying there is nothing to compare.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox,
    QSizePolicy,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from compiler_core.ranks.rank_divergence import RankDifference, rank_divergence, session_ranks
from compiler_core.ranks.rank_sets import groups_text, rank_groups, ranks_text
from compiler_core.ranks.stragglers import ARRIVAL, StragglerReport, straggler_report
from compiler_core.session import Ref, Session
from explorer.panes.base import Pane
from explorer.plain_text import clip, plain_label, tip
from explorer.state import SelectionModel, SessionState
from explorer.state.palette import indexed_color

COLUMNS = ["Compile", "Aspect", "Ranks that differ", "Groups", "Detail"]
DETAIL = COLUMNS.index("Detail")
MAX_ROWS = 2000  # a table past this is read through `summary`; the picture keeps them all
REFERENCE = QColor(215, 215, 215)  # cells of ranks that agree with the reference ranks
STRAGGLER = QColor(214, 39, 40)


class RanksPane(Pane):
    """Signals: none of its own; it listens to the session (base Pane) and selects compiles."""

    title = "Ranks"
    stage = "overview"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        pg.setConfigOptions(background="w", foreground="k")
        self.summary = plain_label()
        self.summary.setWordWrap(True)
        self.summary.setContentsMargins(6, 4, 6, 4)
        self.summary.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.table = QTreeWidget()
        self.table.setHeaderLabels(COLUMNS)
        self.table.setRootIsDecorated(False)
        self.table.setAlternatingRowColors(True)
        self.table.itemClicked.connect(self._clicked)
        self.matrix = pg.PlotWidget()
        self.matrix.setLabel("left", "rank")
        self.matrix.setLabel("bottom", "difference (table row)")
        self.matrix.invertY(True)
        self.cells = pg.ScatterPlotItem(pxMode=False, symbol="s", pen=None)
        self.matrix.addItem(self.cells)
        self.callable = QComboBox()
        self.callable.currentTextChanged.connect(self._draw_skew)
        self.skew = pg.PlotWidget()
        self.skew.setLabel("bottom", "rank")
        self.skew.setLabel("left", "median lag behind the other ranks (ms)")
        self.pictures = pictures = QSplitter(Qt.Orientation.Horizontal)
        pictures.addWidget(self.matrix)
        self.skew_box = skew_box = QWidget()
        skew_layout = QVBoxLayout(skew_box)
        skew_layout.setContentsMargins(0, 0, 0, 0)
        skew_layout.addWidget(self.callable)
        skew_layout.addWidget(self.skew)
        pictures.addWidget(skew_box)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(pictures)
        split.setSizes([250, 250])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary, 0)
        layout.addWidget(split, 1)
        self.differences: list[RankDifference] = []
        self.ranks: tuple[int, ...] = ()
        self.report = StragglerReport()
        # (rank, median lag ms) drawn for the callable: its step's, or its arrival's (skew_signal)
        self.skew_bars: list[tuple[int, float]] = []
        self.skew_signal = ""

    # -- the session ----------------------------------------------------------------------

    def on_session(self, session: Session) -> None:
        self.ranks = session_ranks(session)
        self.differences = rank_divergence(session)
        self.report = straggler_report(session)
        self._fill_table()
        self._draw_matrix()
        self.callable.blockSignals(True)
        self.callable.clear()
        self.callable.addItems([c.label for c in self.report.callables])
        self.callable.blockSignals(False)
        self.callable.setVisible(len(self.report.callables) > 1)
        self._draw_skew(self.callable.currentText())
        self.summary.setText(self._summary_text())
        # a picture with nothing to show is left out (empty axes read as a drawing of nothing)
        self.matrix.setVisible(bool(self.differences))
        self.table.setVisible(bool(self.differences))
        self.skew_box.setVisible(bool(self.report.callables))
        self.pictures.setVisible(bool(self.differences or self.report.callables))

    def _summary_text(self) -> str:
        if len(self.ranks) < 2:
            return "One rank: nothing to compare (open a folder of rank logs or a run --nproc session)."
        lines = [groups_text(rank_groups(self.ranks, self.differences))]
        if not self.differences:
            lines[0] += ": every compile, graph, guard, cache result and collective agrees"
        lines += [s.text() for s in self.report.stragglers]
        if not self.report.callables:
            lines.append("no step times per rank in this input (a run --nproc session has them)")
        skew = self.report.compile_skew_s
        if skew is not None and self.report.compile_s:
            slow = max(self.report.compile_s, key=lambda r: self.report.compile_s[r])
            widest = self.report.compile_skews[0] if self.report.compile_skews else None
            on_one = (f"; widest on one compile: {widest.compile_id}, rank {widest.slowest} "
                      f"+{widest.skew_s:.2f} s") if widest is not None else ""  # fmt: skip
            lines.append(f"compile time: rank {slow} compiled longest, {skew:.2f} s more than the "
                         f"quickest rank{on_one}")
        return "\n".join(lines)

    def _fill_table(self) -> None:
        self.table.clear()
        items = []
        for i, d in enumerate(self.differences[:MAX_ROWS]):
            groups = "; ".join(f"{ranks_text(r, word=True)}: {v}" for r, v in d.groups)
            item = QTreeWidgetItem([d.compile_id, d.aspect, ranks_text(d.ranks), clip(groups, 200),
                                    clip(d.detail, 300)])  # fmt: skip
            item.setToolTip(DETAIL, tip(d.detail))
            item.setToolTip(3, tip(groups))
            item.setData(0, Qt.ItemDataRole.UserRole, i)
            items.append(item)
        if len(self.differences) > MAX_ROWS:
            items.append(QTreeWidgetItem([f"… {len(self.differences) - MAX_ROWS:,} more (see `summary`)"]))
        self.table.addTopLevelItems(items)
        for col in range(DETAIL):
            self.table.resizeColumnToContents(col)

    def _draw_matrix(self) -> None:
        """One square per (difference, rank), coloured by the rank's group in that difference."""
        spots = []
        row_of = {r: y for y, r in enumerate(self.ranks)}
        for x, d in enumerate(self.differences):
            for g, (ranks, _) in enumerate(d.groups):
                color = REFERENCE if g == 0 else indexed_color(g - 1)
                for r in ranks:
                    spots.append({"pos": (x, row_of[r]), "size": 0.9, "brush": QBrush(color)})
        self.cells.setData(spots)
        self.matrix.getAxis("left").setTicks([[(y, str(r)) for y, r in enumerate(self.ranks)]]
                                             if len(self.ranks) <= 32 else None)  # fmt: skip
        self.matrix.setTitle(None if self.differences else "all ranks agree")
        self.matrix.autoRange()

    def _draw_skew(self, label: str) -> None:
        self.skew.clear()
        self.skew_bars = []
        skew = next((c for c in self.report.callables if c.label == label), None)
        if skew is None:
            self.skew.setTitle("no step times per rank (a run --nproc session has them)")
            return
        named = next((s for s in self.report.stragglers if s.label == label), None)
        straggler = named.rank if named is not None else None
        self.skew_signal = named.signal if named is not None else ""
        if self.skew_signal == ARRIVAL:
            self.skew_bars = [(lag.rank, lag.median_arrival_ms or 0.0) for lag in skew.lags]
            self.skew.setLabel("left", "median arrival lag behind the earliest rank (ms)")
        else:
            self.skew_bars = [(lag.rank, lag.median_lag_ms) for lag in skew.lags]
            self.skew.setLabel("left", "median lag behind the other ranks (ms)")
        brushes = [QBrush(STRAGGLER if r == straggler else indexed_color(0)) for r, _ in self.skew_bars]
        bars = pg.BarGraphItem(x=[r for r, _ in self.skew_bars], height=[v for _, v in self.skew_bars],
                               width=0.7, brushes=brushes)  # fmt: skip
        self.skew.addItem(bars)
        ranks = [r for r, _ in self.skew_bars]
        self.skew.getAxis("bottom").setTicks([[(r, str(r)) for r in ranks]] if len(ranks) <= 32 else None)
        median = skew.median_skew_ms
        self.skew.setTitle(f"{label}: {len(skew.steps)} steady steps, median skew "
                           f"{median:.2f} ms" if median is not None else label)  # fmt: skip

    def _clicked(self, item: QTreeWidgetItem) -> None:
        index = item.data(0, Qt.ItemDataRole.UserRole)
        if index is None or not 0 <= index < len(self.differences):
            return
        d = self.differences[index]
        rank = d.ranks[0] if d.ranks else d.groups[0][0][0]
        if self.state.session.compile(d.compile_id, rank) is None:  # absent there: the reference's
            rank = d.groups[0][0][0]
        self.selection.select({Ref.compile(d.compile_id, rank)})

    def has_content(self) -> bool:
        return bool(self.summary.text())
