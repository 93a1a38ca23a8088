"""Modes: the article's "eager vs default vs reduce-overhead vs max-autotune" table, measured on
the user's model by the timeline run (compile time, step time, speedup, memory, kernels, launches,
CUDA graphs). The fastest compiled mode is bold."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout

from compiler_core.queries.mode_compare import COLUMNS, ModeRow, session_mode_rows
from compiler_core.session import Session
from explorer.panes.base import Pane
from explorer.panes.stage_table import StageTable
from explorer.plain_text import plain_label
from explorer.state import SelectionModel, SessionState


class ModeComparePane(Pane):
    title = "Modes"
    stage = "timeline"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.rows: list[ModeRow] = []
        self.note = plain_label()
        self.table = StageTable(COLUMNS)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table)

    def on_session(self, session: Session) -> None:
        self.rows = session_mode_rows(session)
        self.table.set_rows([r.cells() for r in self.rows])
        self.table.highlight(set(), {i for i, r in enumerate(self.rows) if r.best})
        device = session.meta.device or "this machine"
        self.note.setText(f"Measured on {device}." if self.rows else
                          "No timeline run yet: run the model over the compile modes to fill this table.")

    def has_content(self) -> bool:
        return bool(self.rows)
