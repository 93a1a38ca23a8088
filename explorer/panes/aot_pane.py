"""AOTAutograd pane: forward and backward as separate bands, and the tensors that cross them.

Saved tensors are the edges between the bands; the table lists them with bytes, totals
de-duplicated by storage (q/k/v views of one projection count once). Clicking a forward op
lights what the core linked to it (analysis/backward_links.py): its backward partners and the
saved tensors it produces or its backward reads; a detail line says how the partners were found
and whether its value is saved or recomputed (♻). A second tab lists the activation-memory-budget
sweep (`python -m compiler_core budget`) when the session holds one.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from compiler_core.analysis.aot_splits import aot_pieces_note
from compiler_core.analysis.saved_tensors import storage_bytes
from compiler_core.session import AotInfo, Compile, Ref, RefKind, Session
from compiler_core.session.model import BudgetPoint
from compiler_core.session.vocab import Partition
from explorer.canvas import EdgeStyle, GraphCanvas
from explorer.jobs import Lane
from explorer.panes.aot_facts import (
    BUDGET_COLUMNS,
    budget_row,
    forward_op_facts,
    log_cannot_tell,
    recompute_summary,
)
from explorer.panes.base import Pane
from explorer.panes.column_fit import fit_columns
from explorer.panes.graph_view import (
    Decoration,
    GraphSection,
    RefIndex,
    banded_index,
    decoration,
    make_graph_view,
    sections_index,
)
from explorer.panes.list_rows import GRAPH_MIN_H, WrapAwareMinimum, rows_height
from explorer.panes.number_text import human_bytes
from explorer.plain_text import plain_label, rich, rich_label, tip
from explorer.state import SelectionModel, SessionState
from explorer.state.palette import SAVED

PROMPT = "Click a forward op: its backward partners, saved or recomputed."
TABLE_COLUMNS = ["Saved tensor", "Shape", "Dtype", "Bytes", "Producer", "Consumers"]


class AotPane(Pane):
    """Signals: `sweepRequested(str model, str budgets, str device)`: Re-partition was pressed;
    the budget controller (explorer/actions/budget_runs.py) runs the sweep and calls
    `sweep_point` / `sweep_ended` back. The pane never runs it or replaces the session itself."""

    title = "AOTAutograd"
    stage = "aot"
    sweepRequested = Signal(str, str, str)  # noqa: N815 (Qt signal naming)

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.graphs = make_graph_view()
        self._joint_refs = Lane(self, "joint-refs", current=lambda: state.session)
        state.updates.track(self._joint_refs)
        self._building: Compile | None = None
        self.graphs.nodeClicked.connect(self._node_clicked)
        self.table = QTreeWidget()
        self.table.setHeaderLabels(TABLE_COLUMNS)
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)  # O(1) row geometry, not a measure per changed row
        self.table.itemClicked.connect(self._tensor_clicked)
        self.totals = plain_label()
        self.totals.setWordWrap(True)
        self.detail = rich_label()  # aot_facts escapes every session string it puts in
        # one line at the default width: each line here is a saved-tensor row less
        self.detail.setText(PROMPT)
        self.detail.setWordWrap(True)
        self.budget = QTreeWidget()
        self.budget.setHeaderLabels(BUDGET_COLUMNS)
        self.budget.setRootIsDecorated(False)
        self.budget_note = plain_label()
        self.budget_note.setWordWrap(True)
        self.budget_values = QLineEdit("1,0.5,0.2")
        self.budget_device = QComboBox()
        self.budget_device.addItems(["cpu", "cuda"])
        self.budget_run = QPushButton("Re-partition at these budgets")
        self.budget_run.clicked.connect(self._run_sweep)
        controls = QHBoxLayout()
        for w in (plain_label("activation_memory_budget values:"), self.budget_values, self.budget_device,
                  self.budget_run):  # fmt: skip
            controls.addWidget(w)
        controls.addStretch(1)
        self._sweeping = False
        budget_page = QWidget()
        budget_layout = QVBoxLayout(budget_page)
        budget_layout.setContentsMargins(0, 0, 0, 0)
        budget_layout.addLayout(controls)
        budget_layout.addWidget(self.budget)
        budget_layout.addWidget(self.budget_note)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.table, "Saved tensors")
        self.tabs.addTab(budget_page, "Memory budget")
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.detail)
        lower_layout.addWidget(self.tabs)
        lower_layout.addWidget(self.totals)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.graphs)
        split.addWidget(lower)
        split.setSizes([500, 250])
        # 6 rows of the list whatever the pane's height; a splitter that may collapse a child
        # squeezes the list's parent below its minimum instead, and the labels lie over the rows
        self.table.setMinimumHeight(rows_height(self.table, 6))
        self.graphs.setMinimumHeight(GRAPH_MIN_H)
        split.setChildrenCollapsible(False)
        WrapAwareMinimum(lower)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._tensor_items: dict[Ref, QTreeWidgetItem] = {}

    def _node_clicked(self, ref: Ref) -> None:
        self.selection.select({ref})

    def on_compile(self, current: Compile | None) -> None:
        self._building = current  # the compile whose queued slices may still fill this pane
        self.table.clear()
        self._tensor_items.clear()
        aot = current.aot if current is not None else None
        if current is None or aot is None:
            self.graphs.set_sections([])
            self.totals.setText("No AOTAutograd graphs for this compile.")
            return
        self._draw_graphs(current, aot)
        # The saved-tensor table is its own slice of the event loop (1,900 rows on a deep model).
        self.state.updates.post(self, "saved tensors", lambda: self._fill_table(current, aot))

    def _fill_table(self, current: Compile, aot: AotInfo) -> None:
        if self._building is not current:
            return
        tensors = aot.saved_tensors
        texts: list[list[str]] = []  # each row's cells, for sizing the columns

        def add(start: int, stop: int) -> None:
            if self._building is not current:
                return
            for t in tensors[start:stop]:
                ref = Ref.saved_tensor(current.compile_id, t.name, current.rank)
                shape = "[" + ", ".join(str(d) for d in t.meta.shape) + "]"
                consumers = ", ".join(t.consumers)
                cells = [t.name, shape, t.meta.dtype, human_bytes(t.bytes), t.producer, consumers]
                texts.append(cells)
                item = QTreeWidgetItem(cells)
                item.setData(0, Qt.ItemDataRole.UserRole, ref)
                self.table.addTopLevelItem(item)
                self._tensor_items[ref] = item

        def done() -> None:
            if self._building is not current:
                return
            fit_columns(self.table, texts)
            total, dedup = sum(t.bytes for t in tensors), storage_bytes(tensors)
            note = (" · partners by source line: this log has no seq_nr, so they are approximate"
                    if log_cannot_tell(aot) else "")  # fmt: skip
            pieces = aot_pieces_note(current)
            note += f" · {pieces}" if pieces else ""
            self.totals.setText(
                f"{len(tensors)} saved tensors · {human_bytes(total)} "
                f"({human_bytes(dedup)} de-duplicated by storage) · {recompute_summary(aot)} · "
                f"{len(aot.backward_of)} forward ops with backward partners{note}"
            )
            self.on_selection(self.selection.selected, self.selection.highlighted)

        self.fill_in_slices("saved tensors", len(tensors), add, done)

    def _draw_graphs(self, c: Compile, aot: AotInfo) -> None:
        """The joint graph banded forward/backward when there is one, else the partitions."""
        def refs(graph: str, name: str) -> tuple[Ref, ...]:
            return (Ref.aot_node(c.compile_id, graph, name, c.rank),)

        if aot.joint is not None and aot.forward is not None:
            fw = {n.name for n in aot.forward.nodes}
            links = self.state.links

            def joint_refs(name: str) -> tuple[Ref, ...]:
                """The node's own partition ref first (a click selects it, and the backward
                partners are linked to the partition node), then the joint ref and the other
                partition nodes the session links it to."""
                own = refs("joint", name)
                part = tuple(r for r in links.direct(own[0]) if r.kind is RefKind.AOT_NODE
                             and r.graph in (Partition.FORWARD, Partition.BACKWARD))  # fmt: skip
                band_name = "forward" if name in fw else "backward"
                first = tuple(r for r in part if (r.graph, r.name) == (band_name, name))
                return first + own + tuple(sorted(r for r in part if r not in first))

            joint = aot.joint
            band = {n.name: "forward" if n.name in fw else "backward" for n in joint.nodes}

            def compute() -> tuple[GraphSection, RefIndex, Decoration]:
                table = {n.name: joint_refs(n.name) for n in joint.nodes}
                section = GraphSection("Joint graph", joint,
                                       lambda name: table.get(name) or refs("joint", name))  # fmt: skip
                index = banded_index(section)
                marks, edges = self._marks(c, aot, refs), self._saved_edges(c, aot)
                return section, index, decoration(index[1], marks, edges)

            def show(prepared: tuple[GraphSection, RefIndex, Decoration]) -> None:
                if self._building is not c:
                    return  # another compile was picked meanwhile
                section, index, decorated = prepared
                self.graphs.set_banded(section, band, index)
                self.graphs.set_decoration(decorated)
                self.on_selection(self.selection.selected, self.selection.highlighted)

            # Mapping a deep model's thousands of joint nodes to their refs through the link index
            # is too long for one turn: done on a worker in the main window, at once elsewhere.
            if self.state.updates.spread:
                self._joint_refs.submit(compute, show)
            else:
                show(compute())
        else:
            parts = [(g, name) for g, name in ((aot.forward, "forward"), (aot.backward, "backward"),
                                               (aot.inference, "inference"), (aot.joint, "joint")) if g]
            sections = [GraphSection(name.capitalize(), g, partial(refs, name)) for g, name in parts]
            part_marks = self._marks(c, aot, refs)

            def show_parts(index: RefIndex) -> None:
                if self._building is not c:
                    return
                self.graphs.set_sections(sections, index)
                self.graphs.set_marks(part_marks)
                self.on_selection(self.selection.selected, self.selection.highlighted)

            # a deep model's forward and backward: thousands of nodes' refs, too long for one turn
            if self.state.updates.spread:
                self._joint_refs.submit(partial(sections_index, sections), show_parts)
            else:
                self.graphs.set_sections(sections)
                self.graphs.set_marks(part_marks)

    @staticmethod
    def _marks(c: Compile, aot: AotInfo, refs: Callable[[str, str], tuple[Ref, ...]]) -> dict[Ref, str]:
        return {refs(g, n)[0]: "♻" for n in aot.recomputed for g in ("forward", "backward", "joint")}

    @staticmethod
    def _saved_edges(c: Compile, aot: AotInfo) -> dict[tuple[Ref, Ref], EdgeStyle]:
        """Saved tensors as the edges that cross from forward to backward, width by bytes."""
        def ref(graph: str, name: str) -> Ref:
            return Ref.aot_node(c.compile_id, graph, name, c.rank)

        biggest = max((t.bytes for t in aot.saved_tensors), default=1) or 1
        styles = {}
        for t in aot.saved_tensors:
            style = EdgeStyle(SAVED.name(), 1.5 + 4.5 * t.bytes / biggest, human_bytes(t.bytes))
            for consumer in t.consumers:
                styles[(ref("forward", t.producer), ref("backward", consumer))] = style
        return styles

    def _tensor_clicked(self, item: QTreeWidgetItem) -> None:
        self.selection.select({item.data(0, Qt.ItemDataRole.UserRole)})

    def on_session(self, session: Session) -> None:
        self.budget.clear()
        for p in session.memory_budget:
            self._budget_point(p)
        model = session.meta.origin_path
        runnable = model.endswith(".py") and bool(session.meta.train)
        self.budget_run.setEnabled(runnable and not self._sweeping)
        hint = (f"runs {model} in a worker process, one fresh compile per value" if runnable
                else "needs a session captured from a training model file")
        self.budget_run.setToolTip(tip(hint))
        if session.memory_budget:
            p = session.memory_budget[0]
            self.budget_note.setText(
                f"Each row re-partitions the training graph at torch._functorch.config."
                f"activation_memory_budget = budget (torch {p.torch_version}, {p.device or 'cpu'}); "
                "step time and peak memory are measured, not estimated.")
        else:
            self.budget_note.setText(
                "No memory-budget sweep in this session: press the button above (a session captured "
                "from a training model file), or run python -m compiler_core budget MODEL.py "
                "--budgets 1,0.5,0.2 --device cuda -o SESSION.json")

    def _budget_point(self, p: BudgetPoint) -> None:
        self.budget.addTopLevelItem(QTreeWidgetItem(budget_row(p)))
        for col in range(len(BUDGET_COLUMNS)):
            self.budget.resizeColumnToContents(col)

    def _run_sweep(self) -> None:
        """Ask for the sweep; its controller (explorer/actions/budget_runs.py) runs it and puts
        the points in the session when it ends."""
        self.budget.clear()
        self.budget_run.setEnabled(False)
        self._sweeping = True
        self.budget_note.setText("Re-partitioning: each value is a fresh compile in a worker process…")
        self.sweepRequested.emit(self.state.session.meta.origin_path, self.budget_values.text(),
                                 self.budget_device.currentText())  # fmt: skip

    def sweep_point(self, point: BudgetPoint) -> None:
        """A budget of the running sweep is measured (its controller says so)."""
        self._budget_point(point)

    def sweep_ended(self, error: str) -> None:
        self._sweeping = False
        self.budget_run.setEnabled(True)
        if error:
            self.budget_note.setText(f"Sweep stopped: {error}")

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        current = self.state.current
        lit = set(highlighted)
        self._show_detail(current, selected, highlighted)
        self.graphs.set_highlight(lit, set(selected))
        self.table.blockSignals(True)
        for item in self.table.selectedItems():  # few; a full pass over every row is slow
            if item.data(0, Qt.ItemDataRole.UserRole) not in lit:
                item.setSelected(False)
        for ref in lit:
            tensor_item = self._tensor_items.get(ref)
            if tensor_item is not None:
                tensor_item.setSelected(True)
        self.table.blockSignals(False)

    def _show_detail(self, current: Compile | None, selected: frozenset[Ref],
                     highlighted: frozenset[Ref] = frozenset()) -> None:
        """What the selection is, in this graph: the selected AOT node, else (a selection made in
        another pane: a kernel line, a source line) the AOT nodes it lights; never the text of a
        node selected earlier."""
        if current is None or current.aot is None:
            return
        here = (current.compile_id, current.rank)
        for ref in sorted(selected):
            text = self._node_detail(current, ref) if (ref.compile_id, ref.rank) == here else None
            if text is not None:
                self.detail.setText(text)
                return
        lit = sorted(r for r in highlighted - selected
                     if r.kind is RefKind.AOT_NODE and (r.compile_id, r.rank) == here)
        if len(lit) == 1 and (text := self._node_detail(current, lit[0])) is not None:
            self.detail.setText(text)
        elif lit:
            names = ", ".join(f"{r.name} ({r.graph})" for r in lit[:8]) + (" …" if len(lit) > 8 else "")
            self.detail.setText(rich("{n} nodes here map to the selection: {names}. Click one for its "
                                     "backward partners.", n=len(lit), names=names))
        else:
            self.detail.setText(PROMPT)

    def _node_detail(self, current: Compile, ref: Ref) -> str | None:
        assert current.aot is not None
        if ref.kind is not RefKind.AOT_NODE:
            return None
        graph, name = ref.graph, ref.name
        if graph in ("forward", "joint", "inference") and (
                name in current.aot.backward_of or graph == "forward"):  # fmt: skip
            return forward_op_facts(current.aot, name)
        if graph == "backward":
            owners = sorted(r.name for r in self.state.links.direct(ref)
                            if r.kind is RefKind.AOT_NODE and r.graph is Partition.FORWARD)
            rec = " · ♻ recomputed forward op" if name in current.aot.recomputed else ""
            template = "<b>{name}</b> (backward){rec}<br>derived from forward: {owners}"
            shown = ", ".join(owners[:8]) or "—"
            return rich(template, name=name, rec=rec, owners=shown)
        return None

    def graph_canvas(self) -> GraphCanvas:
        return self.graphs.canvas

    def has_content(self) -> bool:
        return bool(self.graphs.refs())
