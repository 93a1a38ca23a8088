"""The navigation toolbar: stage navigator, compile/rank/run selector, back/forward of selections.

A log may hold several runs (`torch._dynamo.reset()` and compiling again, `explain()`, a script
run twice into one file): each numbers its compiles from `0/0`, so the compile list shows one
run at a time, picked like a rank."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QListView, QToolBar, QWidget

from compiler_core.session import Compile, Session
from explorer.plain_text import plain_label
from explorer.state import SelectionModel, SessionState
from explorer.state.session_state import compile_key

_ROOT = QModelIndex()
DISPLAY = Qt.ItemDataRole.DisplayRole
PAGE = 1000  # compiles per page of the selector
PAGE_ROLE = Qt.ItemDataRole.UserRole + 1  # on the "previous/next page" rows: -1 or +1
STAGES = (
    ("overview", "Overview"),
    ("source", "Source"),
    ("dynamo", "Dynamo"),
    ("aot", "AOTAutograd"),
    ("inductor", "Inductor"),
    ("kernels", "Kernels"),
    ("timeline", "Timeline"),
)


def compile_label(c: Compile) -> str:
    name = c.code.function if c.code is not None and c.code.function else ""
    status = "" if c.status == "ok" else f" ({'cached' if c.status == 'cache_hit' else c.status})"
    return f"[{c.compile_id}] {name}{status}".strip()


class CompileListModel(QAbstractListModel):
    """The compile selector's rows: one page of `PAGE` compiles, labelled on demand.

    One combo item per compile, built up front, is too slow for a session of 1e6 compiles, and a
    combo's popup sizes itself over every row (a minute for 1e6 even with a lazy model), so the selector
    shows the page holding the current compile, with "previous / next page" rows at its ends.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.all: list[Compile] = []
        self.start = 0

    def set_compiles(self, compiles: list[Compile], current: Compile | None) -> None:
        self.beginResetModel()
        self.all = compiles
        at = next((i for i, c in enumerate(compiles) if c is current), 0)
        self.start = at - at % PAGE
        self.endResetModel()

    def page(self, delta: int) -> None:
        self.beginResetModel()
        self.start = min(max(0, self.start + delta * PAGE), max(0, len(self.all) - 1) // PAGE * PAGE)
        self.endResetModel()

    def _prev(self) -> int:
        return 1 if self.start > 0 else 0

    def _shown(self) -> int:
        return min(PAGE, len(self.all) - self.start)

    def _next(self) -> int:
        return 1 if self.start + PAGE < len(self.all) else 0

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else self._prev() + self._shown() + self._next()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = DISPLAY) -> Any:
        row = index.row() - self._prev()
        if not index.isValid() or not -self._prev() <= row < self._shown() + self._next():
            return None
        if row < 0 or row == self._shown():
            return self._page_row(-1 if row < 0 else 1, role)
        c = self.all[self.start + row]
        if role == Qt.ItemDataRole.DisplayRole:
            return compile_label(c)
        if role == Qt.ItemDataRole.UserRole:
            return compile_key(c)
        return None

    def _page_row(self, delta: int, role: int) -> Any:
        if role == PAGE_ROLE:
            return delta
        if role == Qt.ItemDataRole.DisplayRole:
            if delta < 0:
                return f"▲ previous {PAGE:,} of {len(self.all):,} compiles"
            return f"▼ next {PAGE:,} ({len(self.all) - self.start - PAGE:,} more)"
        return None

    def row_of(self, c: Compile | None) -> int:
        """The combo row of `c` if it is on this page, else -1."""
        end = self.start + self._shown()
        return next((self._prev() + i for i, r in enumerate(self.all[self.start:end]) if r is c), -1)


class NavigationBar(QToolBar):
    """Signals: `stageRequested(str)` — a stage button was clicked (key from STAGES)."""

    stageRequested = Signal(str)  # noqa: N815 (Qt signal naming)

    def __init__(self, state: SessionState, selection: SelectionModel, parent: QWidget | None = None) -> None:
        super().__init__("Navigation", parent)
        self.setObjectName("NavigationBar")
        self.state = state
        self.selection = selection
        self.back_action = QAction("◀ Back", self)
        self.back_action.setShortcut(QKeySequence("Alt+Left"))
        self.back_action.triggered.connect(selection.back)
        self.forward_action = QAction("Forward ▶", self)
        self.forward_action.setShortcut(QKeySequence("Alt+Right"))
        self.forward_action.triggered.connect(selection.forward)
        self.addAction(self.back_action)
        self.addAction(self.forward_action)
        self.addSeparator()
        self.stage_actions: dict[str, QAction] = {}
        for i, (key, label) in enumerate(STAGES):
            if i:
                self.addWidget(plain_label(" → "))
            action = QAction(label, self)
            action.triggered.connect(lambda _=False, k=key: self.stageRequested.emit(k))
            self.addAction(action)
            self.stage_actions[key] = action
        self.all_panes_action = QAction("All panes", self)
        self.all_panes_action.setCheckable(True)
        self.all_panes_action.setShortcut(QKeySequence("Ctrl+Shift+F"))
        self.all_panes_action.setToolTip("Every pane at once (Ctrl+Shift+F); again to go back to one "
                                         "stage's workspace. Each arrangement is kept as you leave it")
        self.addAction(self.all_panes_action)
        self.addSeparator()
        self.addWidget(plain_label(" Compile "))
        self.compiles = QComboBox()
        self.compiles.setMinimumContentsLength(24)
        # never measure every row for the width: with 1e6 compiles that alone takes seconds
        self.compiles.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.compile_model = CompileListModel(self.compiles)
        self.compiles.setModel(self.compile_model)
        view = self.compiles.view()
        if isinstance(view, QListView):
            view.setUniformItemSizes(True)
        self.compiles.activated.connect(self._compile_picked)
        self.addWidget(self.compiles)
        self.rank_label = plain_label(" Rank ")
        self.ranks = QComboBox()
        self.ranks.activated.connect(self._rank_picked)
        self.rank_label_action = self.addWidget(self.rank_label)
        self.ranks_action = self.addWidget(self.ranks)
        self.run_label = plain_label(" Run ")
        self.runs = QComboBox()
        self.runs.setToolTip("This log holds several runs (torch._dynamo.reset() and compiling again, "
                             "explain(), a script run twice): each is shown and counted on its own")
        self.runs.activated.connect(self._run_picked)
        self.run_label_action = self.addWidget(self.run_label)
        self.runs_action = self.addWidget(self.runs)
        state.sessionChanged.connect(self._on_session)
        state.compileChanged.connect(self._on_compile)
        selection.historyChanged.connect(self._on_history)
        self._on_history()

    def _on_history(self) -> None:
        self.back_action.setEnabled(self.selection.can_back())
        self.forward_action.setEnabled(self.selection.can_forward())

    def _on_session(self, session: Session) -> None:
        ranks = sorted({c.rank for c in session.compiles}, key=lambda r: -1 if r is None else r)
        self.ranks.clear()
        for r in ranks:
            self.ranks.addItem("—" if r is None else str(r), r)
        multi = len(ranks) > 1
        self.rank_label_action.setVisible(multi)
        self.ranks_action.setVisible(multi)
        runs = sorted({c.run for c in session.compiles})
        self.runs.clear()
        for r in runs:
            self.runs.addItem(f"{r + 1} of {len(runs)}", r)
        self.run_label_action.setVisible(len(runs) > 1)
        self.runs_action.setVisible(len(runs) > 1)

    def _on_compile(self, current: Compile | None) -> None:
        rank = current.rank if current is not None else None
        run = current.run if current is not None else 0
        self.ranks.setCurrentIndex(max(0, self.ranks.findData(rank)))
        self.runs.setCurrentIndex(max(0, self.runs.findData(run)))
        shown = [c for c in self.state.compiles() if c.rank == rank and c.run == run]
        self.compile_model.set_compiles(shown, current)
        if current is not None:
            self.compiles.setCurrentIndex(max(0, self.compile_model.row_of(current)))

    def _compile_picked(self, index: int) -> None:
        delta = self.compiles.itemData(index, PAGE_ROLE)
        if delta is not None:  # a page row: turn the page and reopen the list there
            self.compile_model.page(int(delta))
            row = self.compile_model.row_of(self.state.current)
            self.compiles.setCurrentIndex(row if row >= 0 else (1 if self.compile_model.start else 0))
            QTimer.singleShot(0, self.compiles, self.compiles.showPopup)
            return
        key = self.compiles.itemData(index)
        if key is not None:
            self.state.set_compile(tuple(key))

    def _rank_picked(self, index: int) -> None:
        current = self.state.current
        self._pick(self.ranks.itemData(index), current.run if current is not None else 0)

    def _run_picked(self, index: int) -> None:
        current = self.state.current
        self._pick(current.rank if current is not None else None, self.runs.itemData(index))

    def _pick(self, rank: int | None, run: int) -> None:
        """The first compile with something to show of `rank` in `run` (the run's first compile
        when none has, or the rank's when it has no such run)."""
        mine = [c for c in self.state.compiles() if c.rank == rank]
        in_run = [c for c in mine if c.run == run] or mine
        shown = [c for c in in_run if c.dynamo_graph or c.inductor or c.aot] or in_run
        if shown:
            self.state.set_compile(compile_key(shown[0]))
