"""Graph breaks de-duplicated by (reason, location), with counts; each row selects its line.

The same break usually recurs across recompiles and ranks; users want one row per cause, not one
per occurrence.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QVBoxLayout

from compiler_core.session import Ref, RefKind, Session
from compiler_core.session.refs import source_line
from explorer.panes.base import Pane
from explorer.plain_text import tip
from explorer.state import SelectionModel, SessionState

BreakKey = tuple[str, str, int]  # reason, file, line (line 0 when unknown)


def summarize_breaks(session: Session, rank: int | None) -> list[tuple[BreakKey, int, list[Ref]]]:
    """Rows sorted by count (desc): the key, how often it occurred, and the break refs."""
    counts: Counter[BreakKey] = Counter()
    refs: dict[BreakKey, list[Ref]] = {}
    for c in session.compiles:
        if c.rank != rank:
            continue
        for i, brk in enumerate(c.graph_breaks):
            loc = brk.location
            key = (brk.reason, loc.file if loc else "", loc.line if loc else 0)
            counts[key] += 1
            refs.setdefault(key, []).append(Ref(RefKind.GRAPH_BREAK, c.compile_id, str(i), c.rank))
    return [(k, n, refs[k]) for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]



class BreakSummaryPane(Pane):
    title = "Graph breaks"
    stage = "dynamo"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Count", "Reason", "Location"])
        self.tree.setRootIsDecorated(False)
        self.tree.itemClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)

    def on_session(self, session: Session) -> None:
        self.tree.clear()
        current = self.state.current
        rank = current.rank if current is not None else None
        for (reason, file, line), count, refs in summarize_breaks(session, rank):
            where = f"{Path(file).name}:{line}" if file else "(unknown)"
            item = QTreeWidgetItem([str(count), reason.splitlines()[0] if reason else "", where])
            item.setToolTip(1, tip(reason))
            item.setToolTip(2, tip(f"{file}:{line}"))
            targets = list(refs) + ([source_line(file, line, rank)] if file else [])
            item.setData(0, Qt.ItemDataRole.UserRole, targets)
            self.tree.addTopLevelItem(item)
        if not self.tree.topLevelItemCount():
            self.tree.addTopLevelItem(QTreeWidgetItem(["0", "No graph breaks", ""]))
        for col in range(3):
            self.tree.resizeColumnToContents(col)

    def _clicked(self, item: QTreeWidgetItem) -> None:
        refs = item.data(0, Qt.ItemDataRole.UserRole)
        if refs:
            self.selection.select(refs)
