"""Decompositions: each Dynamo op → the core ATen/prims ops it became → the kernels they landed in.

Shows the step the articles describe in words ("softmax becomes amax, sub, exp, sum, div") for
the user's own model, including the twist a pattern pass adds (the transformer's softmax is
rewritten into a fused attention kernel). Rows react to the shared selection; clicking a row
selects the Dynamo node and its kernels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtWidgets import QVBoxLayout

from compiler_core.queries.decompositions import DecompRow, decomposition_summary, decomposition_table
from compiler_core.session import Compile, Ref, RefKind, Session
from explorer.jobs import Lane
from explorer.panes.base import Pane
from explorer.panes.stage_table import StageTable
from explorer.plain_text import plain_label
from explorer.state import SelectionModel, SessionState

COLUMNS = ("Op", "Node", "Line", "After decomposition (forward)", "Backward ops", "Kernels")


def _kernel_names(kernels: tuple[Ref, ...]) -> str:
    return ", ".join(k.name for k in kernels)


def row_cells(row: DecompRow) -> tuple[str, ...]:
    where = f"{Path(row.source.file).name}:{row.source.line}" if row.source else ""
    forward = ", ".join(row.forward_ops)
    if row.replaced:
        forward += f"  ⇒ rewritten: {', '.join(row.replaced_by) or 'by a pattern pass'}"
    return (row.op, row.dynamo_node, where, forward, ", ".join(row.backward_ops), _kernel_names(row.kernels))


RowKey = tuple[object, ...]  # ("dynamo", name), ("node", name) or ("kernel", graph, name)


@dataclass(frozen=True)
class DecompTable:
    """What the pane shows, computed on a worker thread (Qt-free): the rows, their cells and
    tooltips, the summary line, and which rows each clickable thing touches."""

    rows: list[DecompRow]
    text: str
    cells: list[tuple[str, ...]] = field(default_factory=list)
    tips: list[str] = field(default_factory=list)
    index: dict[RowKey, list[int]] = field(default_factory=dict)


def row_index(rows: list[DecompRow]) -> dict[RowKey, list[int]]:
    """Rows by what a selection may name: its Dynamo node, AOT/post-grad node names, kernels
    (`rows_for_refs`'s rule, indexed once: that scan builds sets per row, twice per click)."""
    index: dict[RowKey, list[int]] = {}
    for i, row in enumerate(rows):
        keys: set[RowKey] = {("dynamo", row.dynamo_node)}
        keys.update(("node", n) for n in (*row.aot_nodes, *row.backward_nodes))
        keys.update(("kernel", k.graph, k.name) for k in (*row.kernels, *row.backward_kernels))
        for key in keys:
            index.setdefault(key, []).append(i)
    return index


def rows_hit(index: dict[RowKey, list[int]], refs: frozenset[Ref]) -> set[int]:
    """The rows `refs` touch, by `row_index`: O(selection), not O(rows)."""
    hit: set[int] = set()
    for r in refs:
        if r.kind is RefKind.DYNAMO_NODE:
            hit.update(index.get(("dynamo", r.name), ()))
        elif r.kind in (RefKind.AOT_NODE, RefKind.POST_GRAD_NODE):
            hit.update(index.get(("node", r.name), ()))
        elif r.kind is RefKind.KERNEL:
            hit.update(index.get(("kernel", r.graph, r.name), ()))
    return hit


def _table(session: Session, current: Compile | None) -> DecompTable:
    """Rows with forward ops and the summary line; Qt-free, so it can run on a worker thread."""
    rows = decomposition_table(session, current.compile_id, current.rank) if current else []
    ops = [r for r in rows if r.forward_ops]
    if current is None or not ops:
        return DecompTable(ops, "No decomposition recorded for this compile.")
    s = decomposition_summary(session, current.compile_id, current.rank, rows=ops)
    text = (f"{len(s.ops_in)} distinct high-level ops in → {len(s.ops_out)} distinct core ops out; "
            f"{s.decomposed_rows} ops decomposed.")
    if s.rewritten_ops:
        text += f" Rewritten by Inductor patterns: {', '.join(s.rewritten_ops)}"
        text += f" → {', '.join(s.introduced)}." if s.introduced else "."
    tips = [r.source.code if r.source else "" for r in ops]
    return DecompTable(ops, text, [row_cells(r) for r in ops], tips, row_index(ops))


class DecompositionPane(Pane):
    title = "Decompositions"
    stage = "aot"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.rows: list[DecompRow] = []
        self._index: dict[RowKey, list[int]] = {}
        self._filled: DecompTable | None = None  # the table whose rows are all in
        self.summary = plain_label()
        self.summary.setWordWrap(True)
        self.table = StageTable(COLUMNS)
        self.table.cellClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        # too long for one turn on a deep model
        self._worker = Lane(self, "decompositions", current=lambda: state.session)
        state.updates.track(self._worker)

    def on_compile(self, current: Compile | None) -> None:
        session = self.state.session
        if not self.state.updates.spread:  # a pane on its own (tests, exports): at once
            self._show(_table(session, current))
            return
        self.summary.setText("Working out decompositions…")
        self._worker.submit(lambda: _table(session, current), self._show)

    def _show(self, table: DecompTable) -> None:
        self.rows, self._index, self._filled = table.rows, table.index, None
        self.summary.setText(table.text)
        if not self.state.updates.spread:
            self.table.set_rows(table.cells, table.tips)
            self._filled = table
            self.on_selection(self.selection.selected, self.selection.highlighted)
            return
        # rows in slices of the event loop (too long in one turn), then the columns' widths
        self.table.begin_rows(len(table.cells))

        def add(start: int, stop: int) -> None:
            if self._index is table.index:  # not replaced by a newer compile's table meanwhile
                self.table.add_rows(table.cells, table.tips, start, stop)

        def done() -> None:
            if self._index is table.index:
                self.table.end_rows()
                self._filled = table
                self.on_selection(self.selection.selected, self.selection.highlighted)

        self.fill_in_slices("rows", len(table.cells), add, done)

    def _clicked(self, r: int, _c: int) -> None:
        current = self.state.current
        if current is not None and 0 <= r < len(self.rows):
            self.selection.select(self.rows[r].refs(current.compile_id, current.rank))

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        if self._filled is None or self._filled.index is not self._index:
            return  # rows still arriving: the last slice highlights
        self.table.highlight(rows_hit(self._index, highlighted), rows_hit(self._index, selected))

    def has_content(self) -> bool:
        return bool(self.rows)
