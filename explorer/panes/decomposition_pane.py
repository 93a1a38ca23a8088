"""Decompositions: each Dynamo op → the core ATen/prims ops it became → the kernels they landed in.

Shows the step the articles describe in words ("softmax becomes amax, sub, exp, sum, div") for
the user's own model, including the twist a pattern pass adds (the transformer's softmax is
rewritten into a fused attention kernel). Rows react to the shared selection; clicking a row
selects the Dynamo node and its kernels.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QVBoxLayout

from compiler_core.session import Compile, Ref, Session
from compiler_core.stages import DecompRow, decomposition_summary, decomposition_table, rows_for_refs
from explorer.panes.base import Pane
from explorer.panes.stage_table import StageTable
from explorer.plain_text import plain_label
from explorer.state import SelectionModel, SessionState
from explorer.state.off_thread import OffThread

COLUMNS = ("Op", "Node", "Line", "After decomposition (forward)", "Backward ops", "Kernels")


def _kernel_names(kernels: tuple[Ref, ...]) -> str:
    return ", ".join(k.name for k in kernels)


def row_cells(row: DecompRow) -> tuple[str, ...]:
    where = f"{Path(row.source.file).name}:{row.source.line}" if row.source else ""
    forward = ", ".join(row.forward_ops)
    if row.replaced:
        forward += f"  ⇒ rewritten: {', '.join(row.replaced_by) or 'by a pattern pass'}"
    return (row.op, row.dynamo_node, where, forward, ", ".join(row.backward_ops), _kernel_names(row.kernels))


def _table(session: Session, current: Compile | None) -> tuple[list[DecompRow], str]:
    """Rows with forward ops and the summary line; Qt-free, so it can run on a worker thread."""
    rows = decomposition_table(session, current.compile_id, current.rank) if current else []
    ops = [r for r in rows if r.forward_ops]
    if current is None or not ops:
        return ops, "No decomposition recorded for this compile."
    s = decomposition_summary(session, current.compile_id, current.rank, rows=ops)
    text = (f"{len(s.ops_in)} distinct high-level ops in → {len(s.ops_out)} distinct core ops out; "
            f"{s.decomposed_rows} ops decomposed.")
    if s.rewritten_ops:
        text += f" Rewritten by Inductor patterns: {', '.join(s.rewritten_ops)}"
        text += f" → {', '.join(s.introduced)}." if s.introduced else "."
    return ops, text


class DecompositionPane(Pane):
    title = "Decompositions"
    stage = "aot"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.rows: list[DecompRow] = []
        self.summary = plain_label()
        self.summary.setWordWrap(True)
        self.table = StageTable(COLUMNS)
        self.table.cellClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        self._worker = OffThread(self, "decompositions")  # ~0.5 s of CPU on a 32-layer model
        state.updates.track(self._worker)

    def on_compile(self, current: Compile | None) -> None:
        session = self.state.session
        if not self.state.updates.spread:  # a pane on its own (tests, exports): at once
            self._show(_table(session, current))
            return
        self.summary.setText("Working out decompositions…")
        self._worker.submit(lambda: _table(session, current), self._show)

    def _show(self, table: tuple[list[DecompRow], str]) -> None:
        ops, text = table
        tips = [r.source.code if r.source else "" for r in ops]
        self.rows = ops
        self.table.set_rows([row_cells(r) for r in ops], tips)
        self.summary.setText(text)
        self.on_selection(self.selection.selected, self.selection.highlighted)

    def _clicked(self, r: int, _c: int) -> None:
        current = self.state.current
        if current is not None and 0 <= r < len(self.rows):
            self.selection.select(self.rows[r].refs(current.compile_id, current.rank))

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        lit = set(rows_for_refs(self.rows, highlighted))
        self.table.highlight(lit, set(rows_for_refs(self.rows, selected)))

    def has_content(self) -> bool:
        return bool(self.rows)
