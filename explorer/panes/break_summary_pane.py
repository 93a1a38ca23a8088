"""Graph breaks, one row per cause, most costly first; recompile causes below them.

The same break recurs across recompiles, restart attempts, resume frames and ranks: rows come
from the core's `distinct_breaks` (same GB code, specific reason and user line → one row with a
count), ranked by the graphs each splits and the ops it cuts off, so the top row is the break to
fix first. Selecting a row selects its occurrences and its line; the details below show Dynamo's
explanation, hints and the documentation link of its GB code, and the user traceback, whose
frames are links that select their source line.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QSplitter, QTextBrowser, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from compiler_core.queries.break_ranking import DistinctBreak, distinct_breaks
from compiler_core.queries.recompile_explain import RecompileCause, distinct_recompiles
from compiler_core.session import Compile, Ref, Session
from compiler_core.session.model import SourceLoc
from compiler_core.session.refs import source_line
from explorer.panes.base import Pane
from explorer.plain_text import tip
from explorer.state import SelectionModel, SessionState

SELECT_HINT = "Select a break or recompile above: Dynamo's reason, where it happened and what to change."
NOTHING_HINT = "Dynamo captured every frame of this run without a graph break or a recompile."
# Reason last: it is the longest and the details repeat it; the user frame stays in view.
COLUMNS = ["#", "Code", "Where (user frame)", "Count", "Graphs split", "Ops cut", "Eager ms", "Reason"]
REASON = COLUMNS.index("Reason")
_WHERE_W = 300
_FRAME_SCHEME = "frame"


def _where(loc: SourceLoc | None) -> str:
    if loc is None:
        return "(unknown)"
    fn = f" in {loc.function}" if loc.function else ""
    return f"{Path(loc.file).name}:{loc.line}{fn}"


class BreakSummaryPane(Pane):
    title = "Graph breaks"
    stage = "dynamo"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.currentItemChanged.connect(self._current_changed)
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(self._anchor)
        self.details.setPlaceholderText(SELECT_HINT)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.details)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self.rows: list[DistinctBreak | RecompileCause] = []
        self._frames: list[SourceLoc] = []
        self._shown_for: tuple[int | None, int] = (None, 0)

    def _current_changed(self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        self._show_details(item)

    def on_session(self, session: Session) -> None:
        self.tree.clear()
        self.details.clear()
        current = self.state.current
        rank = current.rank if current is not None else None
        run = current.run if current is not None else 0
        self._shown_for = (rank, run)  # a log's runs are counted each on its own
        self.rows = [*distinct_breaks(session, rank, run=run), *distinct_recompiles(session, rank, run=run)]
        for i, row in enumerate(self.rows):
            self.tree.addTopLevelItem(self._item(i, row, rank))
        if not self.rows:
            self.tree.addTopLevelItem(QTreeWidgetItem(["", "", "No graph breaks or recompiles"]))
        self.details.setPlaceholderText(SELECT_HINT if self.rows else NOTHING_HINT)
        for col in range(len(COLUMNS)):
            self.tree.resizeColumnToContents(col)
        self.tree.setColumnWidth(2, min(self.tree.columnWidth(2), _WHERE_W))
        top = self.tree.topLevelItem(0)
        if self.rows and top is not None:
            self.tree.setCurrentItem(top)

    def on_compile(self, current: Compile | None) -> None:
        """Another rank or run picked: its own rows (a compile of the same one keeps the list)."""
        if current is not None and (current.rank, current.run) != self._shown_for:
            self.on_session(self.state.session)

    def _item(self, i: int, row: DistinctBreak | RecompileCause, rank: int | None) -> QTreeWidgetItem:
        if isinstance(row, DistinctBreak):
            loc = row.location
            measured = "—" if row.measured_ms is None else f"{row.measured_ms:.3f} ({row.ops_outside} ops)"
            cells = [str(i + 1), row.gb_code or "—", _where(loc), str(row.count), str(row.graphs_split),
                     str(row.ops_cut), measured, row.reason]  # fmt: skip
            targets: list[Ref] = list(row.refs) + ([source_line(loc.file, loc.line, rank)] if loc else [])
            hint = row.reason + (f"\n{row.first.explanation}" if row.first.explanation else "")
        else:
            loc = SourceLoc(row.file, row.line, row.function) if row.file else None
            cells = [str(i + 1), "recompile", _where(loc), str(row.count), "", "", "", row.in_words()]
            targets = [source_line(row.file, row.line, rank)] if row.file else []
            hint = f"{row.in_words()}\nfix: {row.fix}" if row.fix else row.in_words()
        item = QTreeWidgetItem(cells)
        item.setData(0, Qt.ItemDataRole.UserRole, targets)
        item.setData(1, Qt.ItemDataRole.UserRole, i)
        item.setToolTip(REASON, tip(hint))
        item.setToolTip(2, tip(f"{loc.file}:{loc.line}") if loc else "")
        return item

    def _clicked(self, item: QTreeWidgetItem) -> None:
        refs = item.data(0, Qt.ItemDataRole.UserRole)
        self._show_details(item)
        if refs:
            self.selection.select(refs)

    # ----- details -----
    def _show_details(self, item: QTreeWidgetItem | None) -> None:
        index = item.data(1, Qt.ItemDataRole.UserRole) if item is not None else None
        if index is None or not 0 <= index < len(self.rows):
            return
        row = self.rows[index]
        html = self._break_html(row) if isinstance(row, DistinctBreak) else self._recompile_html(row)
        self.details.setHtml(html)  # markup: ours, every data value escaped

    def _break_html(self, row: DistinctBreak) -> str:
        b = row.first
        code = (f'<a href="{escape(b.doc_url)}">{escape(b.gb_code)}</a> ' if b.doc_url
                else f"{escape(b.gb_code)} " if b.gb_code else "")  # fmt: skip
        parts = [f"<p><b>{code}{escape(b.reason)}</b></p>"]
        if b.explanation:
            parts.append(f"<p>{escape(b.explanation)}</p>")
        if b.hints:
            parts.append("<ul>" + "".join(f"<li>Hint: {escape(h)}</li>" for h in b.hints) + "</ul>")
        where = ", ".join(row.compile_ids)
        resume = f" {row.resume_note()}" if row.resume_note() else ""
        measured = ("" if row.measured_ms is None else f" In one profiled step, {row.measured_ms:.3f} ms and "
                    f"{row.ops_outside} ops ran eagerly between the graphs it separates.")  # fmt: skip
        parts.append(f"<p style='color:#555'>{row.count} occurrence{'s' * (row.count != 1)} in "
                     f"compile{'s' * (len(row.compile_ids) != 1)} {escape(where)}; splits "
                     f"{row.graphs_split} graph{'s' * (row.graphs_split != 1)} holding {row.ops_cut} "
                     f"ops.{resume}{measured}</p>")  # fmt: skip
        if b.header:
            parts.append(f"<p style='color:#777'>Dynamo: {escape(b.header)}</p>")
        self._frames = list(b.user_stack) or ([b.location] if b.location else [])
        if self._frames:
            parts.append("<p><b>User traceback</b> (click a frame to select its line)</p><pre>")
            for i, f in enumerate(self._frames):
                mark = "▶ " if f == b.location else "  "
                parts.append(f'{mark}<a href="{_FRAME_SCHEME}:{i}">{escape(f.file)}:{f.line}</a> '
                             f"in {escape(f.function)}\n")  # fmt: skip
                if f.code:
                    parts.append(f"      {escape(f.code)}\n")
            parts.append("</pre>")
        return "".join(parts)

    def _recompile_html(self, row: RecompileCause) -> str:
        self._frames = [SourceLoc(row.file, row.line, row.function)] if row.file else []
        frame = (f'<p>Frame: <a href="{_FRAME_SCHEME}:0">{escape(row.file)}:{row.line}</a> '
                 f"in {escape(row.function)}</p>") if row.file else ""  # fmt: skip
        fix = f"<p><b>Fix:</b> {escape(row.fix)}</p>" if row.fix else ""
        return (f"<p><b>Recompiled {row.count}×: {escape(row.in_words())}</b></p>{fix}{frame}"
                f"<p style='color:#777'>Dynamo: {escape(row.raw)}</p>")  # fmt: skip

    def _anchor(self, url: QUrl) -> None:
        if url.scheme() == _FRAME_SCHEME:
            if url.path().isdecimal():
                self.select_frame(int(url.path()))
        elif url.scheme() == "https":  # doc_url comes from the session: never file:// or an app scheme
            QDesktopServices.openUrl(url)

    def select_frame(self, index: int) -> None:
        """Select the source line of frame `index` of the shown traceback."""
        if 0 <= index < len(self._frames):
            f = self._frames[index]
            current = self.state.current
            self.selection.select({source_line(f.file, f.line, current.rank if current else None)})

    def has_content(self) -> bool:
        return self.tree.topLevelItemCount() > 0
