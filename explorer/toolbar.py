"""The navigation toolbar: stage navigator, compile/rank selector, back/forward of selections."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QToolBar, QWidget

from compiler_core.session import Compile, Session
from explorer.plain_text import plain_label
from explorer.state import SelectionModel, SessionState
from explorer.state.session_state import compile_key

STAGES = (
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
        self.addSeparator()
        self.addWidget(plain_label(" Compile "))
        self.compiles = QComboBox()
        self.compiles.setMinimumContentsLength(24)
        self.compiles.activated.connect(self._compile_picked)
        self.addWidget(self.compiles)
        self.rank_label = plain_label(" Rank ")
        self.ranks = QComboBox()
        self.ranks.activated.connect(self._rank_picked)
        self.rank_label_action = self.addWidget(self.rank_label)
        self.ranks_action = self.addWidget(self.ranks)
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

    def _on_compile(self, current: Compile | None) -> None:
        rank = current.rank if current is not None else None
        self.ranks.setCurrentIndex(max(0, self.ranks.findData(rank)))
        self.compiles.clear()
        for c in self.state.compiles():
            if c.rank == rank:
                self.compiles.addItem(compile_label(c), compile_key(c))
        if current is not None:
            self.compiles.setCurrentIndex(max(0, self.compiles.findData(compile_key(current))))

    def _compile_picked(self, index: int) -> None:
        key = self.compiles.itemData(index)
        if key is not None:
            self.state.set_compile(tuple(key))

    def _rank_picked(self, index: int) -> None:
        rank = self.ranks.itemData(index)
        for c in self.state.compiles():
            if c.rank == rank and (c.dynamo_graph or c.inductor or c.aot):
                self.state.set_compile(compile_key(c))
                return
