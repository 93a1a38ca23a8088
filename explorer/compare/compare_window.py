"""The before/after window: a comparison of two sessions, made by the core, shown.

`CompareWindow(diff, before, after)` takes a `compiler_core.diff.SessionDiff` and, for the
side-by-side graphs, the two sessions it was made from (without them the graph tab lists the
changed nodes by name only). Left, the compiles: matched pairs with what changed in each, then
the compiles one side alone has. Right, tabs: the summary (the CLI's text), the selected
compile's changes stage by stage, its graphs side by side (a stage picker and one row per node
pair, coloured removed/added/changed/renamed), and step times per mode with their verdict
against the noise. The window computes nothing: every pairing and verdict is the core's, which
is also what `python -m compiler_core diff` prints.

With the after session, a last tab lists what is left to fix in it (fix_list_view.py), each
mechanical hint with a button, and the levers worth trying (a training capture's memory budget).

Signals: `compileChosen(int)`, the index into `diff.compiles` of the matched compile shown (-1
for a compile one side alone has); `nodeChosen(str, str, str)`, the stage and the before and
after node names of a clicked graph row ("" for a side without the node), for linking to the
main window's selection; `applyRequested(object)`, a `Hint` whose button was pressed.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QMainWindow,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from compiler_core.diff import CompileDiff, GraphDiff, LoneCompile, ModeDiff, SessionDiff, rows, session_text
from compiler_core.diff.diff_text import compile_lines, fmt
from compiler_core.diff.fix_list import fix_rows, lever_rows
from compiler_core.session import Compile, Graph, Session
from explorer.compare.fix_list_view import FixListView
from explorer.compare.graph_rows_model import STATUS_COLORS, GraphRowsModel, Row
from explorer.plain_text import plain_label

_ROLE = Qt.ItemDataRole.UserRole
MODE_COLUMNS = ("Mode", "Before (ms)", "After (ms)", "Change", "Noise", "Verdict")


def _graph_of(c: Compile | None, stage: str) -> Graph | None:
    """The graph a `GraphDiff.stage` names in one compile."""
    if c is None:
        return None
    if stage == "dynamo":
        return c.dynamo_graph
    if stage.startswith("aot_"):
        return getattr(c.aot, stage[4:], None) if c.aot is not None else None
    part = stage.removeprefix("post_grad_")
    return next((o.post_grad for o in c.inductor if str(o.graph) == part), None)


def _changes_in_words(cd: CompileDiff) -> str:
    """`dynamo −1 +5, breaks −1, kernels ±`: the compile list's one-line digest."""
    parts = []
    for g in cd.graphs:
        if not g.same:
            parts.append(f"{g.stage} −{len(g.removed)} +{len(g.added)} ~{len(g.changed)}")
    if cd.breaks_removed or cd.breaks_added:
        parts.append(f"breaks −{len(cd.breaks_removed)} +{len(cd.breaks_added)}")
    if cd.guards_removed or cd.guards_added:
        parts.append("guards")
    if any(k.removed or k.added for k in cd.kernels):
        parts.append("kernels")
    return ", ".join(parts) or "no change"


class CompareWindow(QMainWindow):
    compileChosen = Signal(int)  # noqa: N815 (Qt signal naming)
    nodeChosen = Signal(str, str, str)  # noqa: N815
    applyRequested = Signal(object)  # noqa: N815

    def __init__(self, diff: SessionDiff, before: Session | None = None, after: Session | None = None,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.diff = diff
        self._sessions = (before, after)
        self.setObjectName("CompareWindow")
        self.setWindowTitle(f"Compare: {diff.before.path or 'before'} → {diff.after.path or 'after'}")
        self.compiles = QTreeWidget()
        self.compiles.setHeaderLabels(["Compile", "Changes"])
        self.tabs = QTabWidget()
        self.summary = self._text_view()
        self.detail = self._text_view()
        self.stage = QComboBox()
        self.graph = QTableView()
        self.graph.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.graph.verticalHeader().setVisible(False)
        self.graph.setWordWrap(False)
        header = self.graph.horizontalHeader()
        header.setMinimumSectionSize(24)
        self.graph_counts = plain_label()
        self.modes = QTableWidget(0, len(MODE_COLUMNS))
        self.modes.setHorizontalHeaderLabels(list(MODE_COLUMNS))
        self.tabs.addTab(self.summary, "Summary")
        self.tabs.addTab(self.detail, "Compile")
        self.tabs.addTab(self._graph_tab(), "Graphs")
        self.tabs.addTab(self.modes, "Step times")
        self.fixes: FixListView | None = None
        if after is not None:
            self.fixes = FixListView(fix_rows(after), lever_rows(after))
            self.fixes.applyRequested.connect(self.applyRequested)
            self.tabs.addTab(self.fixes, "Left to fix")
        split = QSplitter()
        split.addWidget(self.compiles)
        split.addWidget(self.tabs)
        split.setStretchFactor(1, 3)
        split.setSizes([380, 820])
        self.setCentralWidget(split)
        self._current: CompileDiff | None = None
        self.summary.setPlainText(session_text(diff))
        self._fill_compiles()
        self._fill_modes(diff.modes)
        self.compiles.currentItemChanged.connect(self._compile_picked)
        self.stage.currentIndexChanged.connect(self._stage_picked)
        self.graph.clicked.connect(self._row_clicked)
        first = self.compiles.topLevelItem(0)
        if first is not None and first.childCount():
            self.compiles.setCurrentItem(first.child(0))
        self.resize(1200, 760)

    @property
    def sessions(self) -> tuple[Session | None, Session | None]:
        """The two sessions compared (before, after), where the window was given them."""
        return self._sessions

    @staticmethod
    def _text_view() -> QPlainTextEdit:
        view = QPlainTextEdit()
        view.setReadOnly(True)
        view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        return view

    def _graph_tab(self) -> QWidget:
        tab = QWidget()
        top = QHBoxLayout()
        top.addWidget(plain_label("Stage:"))
        top.addWidget(self.stage, 1)
        top.addWidget(self.graph_counts, 2)
        legend = QHBoxLayout()
        for status, color in STATUS_COLORS.items():
            mark = plain_label(status)
            mark.setAutoFillBackground(True)
            mark.setStyleSheet(f"background: {color.name()}; padding: 1px 6px;")
            legend.addWidget(mark)
        legend.addStretch(1)
        box = QVBoxLayout(tab)
        box.addLayout(top)
        box.addWidget(self.graph, 1)
        box.addLayout(legend)
        return tab

    # -- filling --------------------------------------------------------------------------

    def _fill_compiles(self) -> None:
        matched = QTreeWidgetItem(["Matched", f"{len(self.diff.compiles)}"])
        for i, cd in enumerate(self.diff.compiles):
            ids = cd.before if cd.before == cd.after else f"{cd.before} → {cd.after}"
            rank = f"rank {cd.rank} " if cd.rank is not None else ""
            item = QTreeWidgetItem([f"[{ids}] {rank}{cd.frame}", _changes_in_words(cd)])
            item.setData(0, _ROLE, ("matched", i))
            matched.addChild(item)
        self.compiles.addTopLevelItem(matched)
        for title, side, lone in (("Only before", "before", self.diff.only_before),
                                  ("Only after", "after", self.diff.only_after)):  # fmt: skip
            if not lone:
                continue
            group = QTreeWidgetItem([title, f"{len(lone)}"])
            for i, c in enumerate(lone):
                item = QTreeWidgetItem([f"[{c.compile_id}] {c.frame}", c.recompile_reason or
                                        ("; ".join(c.breaks) if c.breaks else f"{c.nodes} ops")])  # fmt: skip
                item.setData(0, _ROLE, (side, i))
                group.addChild(item)
            self.compiles.addTopLevelItem(group)
        self.compiles.expandAll()
        self.compiles.resizeColumnToContents(0)

    def _fill_modes(self, modes: tuple[ModeDiff, ...]) -> None:
        self.modes.setRowCount(len(modes))
        for r, m in enumerate(modes):
            verdict = ("noise unknown" if m.beyond_noise is None else
                       "beyond the noise" if m.beyond_noise else "within the noise")  # fmt: skip
            cells = (m.mode, fmt(m.step_ms.before), fmt(m.step_ms.after),
                     "—" if m.change is None else f"{m.change:+.1%}",
                     "—" if m.noise is None else f"±{m.noise:.1%}", verdict)  # fmt: skip
            for c, text in enumerate(cells):
                self.modes.setItem(r, c, QTableWidgetItem(text))
        self.modes.resizeColumnsToContents()

    # -- choosing -------------------------------------------------------------------------

    def show_compile(self, index: int) -> None:
        """Show matched compile `index` (into `diff.compiles`) in the compile and graph tabs."""
        top = self.compiles.topLevelItem(0)
        if top is not None and 0 <= index < top.childCount():
            self.compiles.setCurrentItem(top.child(index))

    def _compile_picked(self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        data = item.data(0, _ROLE) if item is not None else None
        if not data:
            return
        side, i = data
        if side == "matched":
            cd = self.diff.compiles[i]
            self._current = cd
            self.detail.setPlainText("\n".join(compile_lines(cd)) or f"[{cd.before}] {cd.frame}: no change")
            self._fill_stages(cd)
            self.compileChosen.emit(i)
            return
        lone = (self.diff.only_before if side == "before" else self.diff.only_after)[i]
        self._current = None
        self.detail.setPlainText(_lone_text(lone, side))
        self.stage.clear()
        self.graph.setModel(None)
        self.graph_counts.setText(f"only {side}: no counterpart to compare with")
        self.compileChosen.emit(-1)

    def _fill_stages(self, cd: CompileDiff) -> None:
        self.stage.blockSignals(True)
        self.stage.clear()
        for g in cd.graphs:
            mark = "" if g.same else " *"
            self.stage.addItem(f"{g.stage}{mark}", g.stage)
        changed = next((k for k, g in enumerate(cd.graphs) if not g.same), 0)
        self.stage.setCurrentIndex(changed)
        self.stage.blockSignals(False)
        self._stage_picked(changed)

    def _stage_picked(self, k: int) -> None:
        cd = self._current
        if cd is None or not 0 <= k < len(cd.graphs):
            return
        self.show_graph(cd.graphs[k])

    def show_graph(self, g: GraphDiff) -> None:
        cd = self._current
        before, after = self._compiles(cd) if cd is not None else (None, None)
        ga, gb = _graph_of(before, g.stage), _graph_of(after, g.stage)
        table = rows(g, ga, gb) if ga is not None or gb is not None else _name_rows(g)
        whats = {c.after: c.what for c in g.changed}
        self.graph.setModel(GraphRowsModel(table, ga, gb, whats))
        header = self.graph.horizontalHeader()
        header.setSectionResizeMode(0, header.ResizeMode.Stretch)
        header.setSectionResizeMode(1, header.ResizeMode.Fixed)
        header.setSectionResizeMode(2, header.ResizeMode.Stretch)
        header.resizeSection(1, 24)
        counts = (f"{g.nodes_before} → {g.nodes_after} nodes: {len(g.removed)} removed, "
                  f"{len(g.added)} added, {len(g.changed)} changed, {len(g.renamed)} renamed")  # fmt: skip
        self.graph_counts.setText(counts)
        first = next((i for i, r in enumerate(table) if r[2] != "same"), -1)
        if first >= 0:
            self.graph.scrollTo(self.graph.model().index(first, 0), QTableView.ScrollHint.PositionAtCenter)

    def _row_clicked(self, index: QModelIndex) -> None:
        model = self.graph.model()
        if isinstance(model, GraphRowsModel) and index.isValid():
            before, after, _status = model.row(index.row())
            self.nodeChosen.emit(str(self.stage.currentData() or ""), before, after)

    def _compiles(self, cd: CompileDiff) -> tuple[Compile | None, Compile | None]:
        before, after = self._sessions
        return (before.compile(cd.before, cd.rank) if before is not None else None,
                after.compile(cd.after, cd.rank) if after is not None else None)  # fmt: skip


def _name_rows(g: GraphDiff) -> list[Row]:
    """Without the sessions: the changed nodes by name, nothing of the unchanged rest."""
    return ([(a, "", "removed") for a in g.removed] + [("", b, "added") for b in g.added]
            + [(c.before, c.after, "changed") for c in g.changed])  # fmt: skip


def _lone_text(c: LoneCompile, side: str) -> str:
    lines = [f"[{c.compile_id}] {c.frame}: only {side}", f"  {c.nodes} graph ops, {c.kernels} kernels"]
    if c.compile_s is not None:
        lines.append(f"  compile {c.compile_s:.3f} s")
    if c.recompile_reason:
        lines.append(f"  recompiled because: {c.recompile_reason}")
    lines += [f"  graph break: {b}" for b in c.breaks]
    return "\n".join(lines)
