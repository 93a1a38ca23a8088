"""Per-line pipeline table: one row per user line and what each stage did with it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QVBoxLayout

from compiler_core.session import Ref, RefKind, Session
from compiler_core.session.refs import source_line
from explorer.panes.base import Pane
from explorer.panes.column_fit import fit_columns
from explorer.plain_text import tip
from explorer.state import SelectionModel, SessionState
from explorer.state.line_facts import LineFacts, line_facts
from explorer.state.palette import color_for
from explorer.state.runtime_times import RuntimeTimes, fmt_us, runtime_times

COLUMNS = ["Line", "Code", "Time/step", "Dynamo", "AOT ops", "Kernels", "Graph break", "Recompiles"]
TIME_COLUMN = COLUMNS.index("Time/step")


def row_cells(session: Session, file: str, line: int, facts: LineFacts, us: float | None = None,
              lines: list[str] | None = None) -> list[str]:  # fmt: skip
    """The row's cells; `lines`: the file's lines when the caller has split them already."""
    text = lines if lines is not None else session.sources.get(file, "").splitlines()
    code = text[line - 1].strip() if 0 < line <= len(text) else ""
    return [
        f"{Path(file).name}:{line}",
        code,
        fmt_us(us),
        f"{len(facts.dynamo_nodes)} nodes" if facts.captured else "—",
        str(facts.aot_ops) if facts.aot_nodes else "—",
        ", ".join(facts.kernel_names) or "—",
        sorted(set(facts.breaks))[0].splitlines()[0] if facts.breaks else "",
        str(len(facts.recompiles)) if facts.recompiles else "",
    ]


class LinePipelinePane(Pane):
    title = "Per-line pipeline"
    stage = "source"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.itemClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        self._items: dict[Ref, QTreeWidgetItem] = {}

    def on_session(self, session: Session) -> None:
        """Rows in slices of the event loop: a deep model's hundred lines, each counting its
        thousands of AOT refs, are too long for one turn."""
        self.tree.clear()
        self._items.clear()
        current = self.state.current
        rank = current.rank if current is not None else None
        times = runtime_times(session)
        rows = sorted(line_facts(session, self.state.links, rank).items())
        split: dict[str, list[str]] = {}
        texts: list[list[str]] = []  # each row's cells, for sizing the columns

        def add(start: int, stop: int) -> None:
            if self.state.session is not session:
                return  # another session came meanwhile; it fills its own rows
            for (file, line), facts in rows[start:stop]:
                lines = split.get(file)
                if lines is None:
                    lines = split[file] = session.sources.get(file, "").splitlines()
                ref = source_line(file, line, rank)
                us = times.get(ref)
                cells = row_cells(session, file, line, facts, us, lines)
                texts.append(cells)
                self._add_row(ref, cells, facts, times, us)

        def done() -> None:
            if self.state.session is not session:
                return
            if not self._items:
                note = ("No line of your files reached the compiler: the model's code lives in "
                        "library modules.")
                self.tree.addTopLevelItem(QTreeWidgetItem(["—", note]))
                texts.append(["—", note])
            fit_columns(self.tree, texts)
            self.on_selection(self.selection.selected, self.selection.highlighted)

        self.fill_in_slices("rows", len(rows), add, done)

    def _add_row(self, ref: Ref, cells: list[str], facts: LineFacts, times: RuntimeTimes,
                 us: float | None) -> None:  # fmt: skip
        item = QTreeWidgetItem(cells)
        if us is not None:
            right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            item.setTextAlignment(TIME_COLUMN, right)
            share = f"{times.share(ref):.1%} of the profiled step ({times.mode})"
            item.setToolTip(TIME_COLUMN, tip(share))
        item.setData(0, Qt.ItemDataRole.UserRole, ref)
        if facts.kernel_names:
            item.setForeground(COLUMNS.index("Kernels"), color_for(facts.kernel_names[0]).darker(130))
        if facts.breaks:
            item.setToolTip(COLUMNS.index("Graph break"), tip("\n".join(sorted(set(facts.breaks)))))
        self.tree.addTopLevelItem(item)
        self._items[ref] = item

    def _clicked(self, item: QTreeWidgetItem) -> None:
        ref = item.data(0, Qt.ItemDataRole.UserRole)
        if ref is not None:
            self.selection.select({ref})

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        self.tree.blockSignals(True)
        self.tree.clearSelection()
        first = None
        for ref in highlighted:
            item = self._items.get(ref) if ref.kind is RefKind.SOURCE_LINE else None
            if item is not None:
                item.setSelected(True)
                first = first or item
        if first is not None:
            self.tree.scrollToItem(first)
        self.tree.blockSignals(False)

    def has_content(self) -> bool:
        return self.tree.topLevelItemCount() > 0
