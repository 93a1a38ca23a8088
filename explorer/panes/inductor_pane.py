"""Inductor pane: post-grad graphs coloured by fusion group, and the kernel list.

One colour per kernel (the same colour the Source and Kernel code panes use), so the eye can
follow a fusion group from graph to code. The header gives the kernel count before and after
fusion, Inductor's own measure of what fusion bought.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from compiler_core.queries.summary import kernel_counts
from compiler_core.session import Compile, InductorOutput, Kernel, Ref
from explorer.canvas import GraphCanvas
from explorer.jobs import Lane
from explorer.panes.base import Pane
from explorer.panes.column_fit import fit_columns
from explorer.panes.graph_view import (
    Decoration,
    GraphSection,
    RefIndex,
    decoration,
    make_graph_view,
    sections_index,
)
from explorer.panes.list_rows import GRAPH_MIN_H, WrapAwareMinimum, rows_height
from explorer.plain_text import plain_label, tip
from explorer.state import SelectionModel, SessionState
from explorer.state.palette import SELECT_COLOR_HEX, color_for, color_icon
from explorer.state.runtime_times import RuntimeTimes, fmt_us, runtime_times
from explorer.state.stage_refs import kernel_ref, post_grad_ref

KERNEL_COLUMNS = ["Kernel", "Time/step", "Kind", "Graph", "Launches", "Nodes fused", "Lines"]
TIME_COLUMN = KERNEL_COLUMNS.index("Time/step")
LAUNCHES_COLUMN = KERNEL_COLUMNS.index("Launches")
FUSED_COLUMN = KERNEL_COLUMNS.index("Nodes fused")
COUNT_COLUMNS = (LAUNCHES_COLUMN, FUSED_COLUMN, KERNEL_COLUMNS.index("Lines"))
NAME_MIN_W = 240
LAUNCHES_TIP = ("Launches of this kernel in one run of its graph: a kernel every layer reuses is one "
                "definition launched once per layer, its nodes fused over all of them")


class _KernelItem(QTreeWidgetItem):
    """Sorts the time and count columns by value (µs, not text), unknown times last."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        col = self.treeWidget().sortColumn() if self.treeWidget() is not None else 0
        if col == TIME_COLUMN:
            mine = self.data(col, Qt.ItemDataRole.UserRole)
            theirs = other.data(col, Qt.ItemDataRole.UserRole)
            return (mine if mine is not None else -1.0) < (theirs if theirs is not None else -1.0)
        if col in COUNT_COLUMNS:
            return _count(self.text(col)) < _count(other.text(col))
        return self.text(col) < other.text(col)


def _count(text: str) -> int:
    return int(text) if text.isdigit() else -1  # "?": not recorded, sorted first


def _kind(kernel: Kernel) -> str:
    return {"triton": "Triton", "cpp": "C++", "extern": "extern"}.get(kernel.language, kernel.language)


def _post_grad_refs(c: Compile, graph: str, name: str) -> tuple[Ref, ...]:
    return (post_grad_ref(c, graph, name),)


def fusion_counts(out: InductorOutput) -> tuple[int | None, int]:
    """(kernels before fusion, kernels after). Before = one per post-grad compute node if unknown."""
    after = len(out.kernels)
    before = out.nodes_before_fusion
    if before is None and out.post_grad is not None:
        before = sum(1 for n in out.post_grad.nodes if n.op == "call_function")
    return before, after


@dataclass(frozen=True)
class _Plan:
    """The post-grad graphs as the pane draws them, built Qt-free (on a worker in the window):
    the sections and their ref index, each fused node's kernel (its colour), time badges, and
    the before/after fusion counts."""

    sections: list[GraphSection]
    index: RefIndex
    decoration: Decoration  # fused nodes keyed by their kernel's name (its colour), time badges
    counts: list[str]


def _plan(current: Compile, times: RuntimeTimes) -> _Plan:
    sections, overlay, counts, marks = [], {}, [], {}
    for out in current.inductor:
        if out.post_grad is not None:
            make = partial(post_grad_ref, current, out.graph)
            title = f"Post-grad · {out.graph}"
            refs = partial(_post_grad_refs, current, out.graph)
            sections.append(GraphSection(title, out.post_grad, refs))
            for k in out.kernels:
                for name in k.fused_nodes:
                    overlay[make(name)] = k.name
            if times.by_ref:
                for n in out.post_grad.nodes:
                    us = times.get(make(n.name))
                    if us is not None:
                        marks[make(n.name)] = fmt_us(us).replace(" ", "")
        before, _ = fusion_counts(out)
        launched = kernel_counts([out]).describe()  # as the summary counts
        counts.append(f"{out.graph}: {before if before is not None else '?'} nodes → {launched}")
    index = sections_index(sections)
    return _Plan(sections, index, decoration(index[1], marks, overlay=overlay), counts)


class InductorPane(Pane):
    title = "Inductor"
    stage = "inductor"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.header = plain_label()
        self.header.setWordWrap(True)  # two partitions with extern calls: ~110 characters
        self.graphs = make_graph_view()
        self.graphs.nodeClicked.connect(self._node_clicked)
        self.kernels = QTreeWidget()
        self.kernels.setHeaderLabels(KERNEL_COLUMNS)
        self.kernels.setRootIsDecorated(False)
        self.kernels.setUniformRowHeights(True)  # O(1) row geometry, not a measure per changed row
        self.kernels.setSortingEnabled(True)
        self.kernels.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # output-code order until a click
        self.kernels.itemClicked.connect(self._kernel_clicked)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.header)
        lower_layout.addWidget(self.kernels)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.graphs)
        split.addWidget(lower)
        split.setSizes([500, 250])
        # 8 rows of the list whatever the pane's height; a splitter that may collapse a child
        # squeezes the list's parent below its minimum instead, and the labels lie over the rows
        self.kernels.setMinimumHeight(rows_height(self.kernels, 8, icons=True))
        self.graphs.setMinimumHeight(GRAPH_MIN_H)
        split.setChildrenCollapsible(False)
        WrapAwareMinimum(lower)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._kernel_items: dict[Ref, QTreeWidgetItem] = {}
        self._kernels_lit: set[Ref] = set()
        self._times = RuntimeTimes()
        self._times_of: object = None
        self._building: Compile | None = None
        self._plans = Lane(self, "post-grad-refs", current=lambda: state.session)
        state.updates.track(self._plans)

    def _node_clicked(self, ref: Ref) -> None:
        self.selection.select({ref})

    def on_compile(self, current: Compile | None) -> None:
        self._building = current  # the compile whose queued slices may still fill this pane
        if self._times_of is not self.state.session:  # the session's joined kernel times
            self._times, self._times_of = runtime_times(self.state.session), self.state.session
        self.kernels.clear()
        self.kernels.setSortingEnabled(True)  # a fill cut short by a switch left it off
        self._kernel_items.clear()
        self._kernels_lit = set()
        outputs = current.inductor if current is not None else ()
        if current is None or not outputs:
            self.graphs.set_sections([])
            self.header.setText("No Inductor output for this compile.")
            return
        times = self._times
        if self.state.updates.spread:  # thousands of post-grad nodes' refs: off the GUI thread
            self._plans.submit(lambda: _plan(current, times), lambda plan: self._show(current, plan))
        else:
            self._show(current, _plan(current, times))

    def _show(self, current: Compile, plan: _Plan) -> None:
        if self._building is not current:
            return  # switched again meanwhile
        self.graphs.set_sections(plan.sections, plan.index)
        colors = {name: color_for(name) for name in set(plan.decoration.overlay.values())}
        self.graphs.set_decoration(plan.decoration, colors)
        caption = self._times.caption()
        # one line per graph, not a paragraph: a DDP run's dozen graphs read as a wall of text
        lines = ["Before vs after fusion:", *(f"  • {c}" for c in plan.counts)]
        if caption:
            lines.append(f"Time/step and node badges: {caption}")
        self.header.setText("\n".join(lines))
        # The kernel list is its own slice of the event loop (770 rows on a 32-layer model).
        self.state.updates.post(self, "kernel list", lambda: self._fill_kernels(current))

    def _fill_kernels(self, current: Compile) -> None:
        if self._building is not current:
            return  # switched again meanwhile; that switch fills its own list
        kernels = [k for out in current.inductor for k in out.kernels]
        # sessions written before launches were recorded have none: no column of "?"
        self.kernels.setColumnHidden(LAUNCHES_COLUMN, not any(k.launches for k in kernels))

        texts: list[list[str]] = []  # each row's cells, in the order added, for sizing the columns
        # unsorted while filling: the columns are sized on rows in the order added, and a sorted
        # tree places each insertion (770 rows); turning sorting on sorts once, as the user chose
        self.kernels.setSortingEnabled(False)

        def add(start: int, stop: int) -> None:
            if self._building is current:
                texts.extend(self._add_kernel(current, k) for k in kernels[start:stop])

        def done() -> None:
            if self._building is not current:
                return
            fit_columns(self.kernels, texts)
            self.kernels.setSortingEnabled(True)
            # Fused kernel names run past 100 characters: sized to the longest, the name column
            # pushed time, launches and nodes out of view. The full name is the row's tooltip.
            cap = max(NAME_MIN_W, self.kernels.viewport().width() // 2)
            if self.kernels.columnWidth(0) > cap:
                self.kernels.setColumnWidth(0, cap)
            self.on_selection(self.selection.selected, self.selection.highlighted)

        self.fill_in_slices("kernel list", len(kernels), add, done)

    def _add_kernel(self, c: Compile, k: Kernel) -> list[str]:
        """Adds `k`'s row; returns its cells."""
        loc = len(k.source.splitlines())
        ref = kernel_ref(c, k)
        us = self._times.get(ref)
        launches = str(k.launches) if k.launches else "?"
        fused = str(len(k.fused_nodes))
        cells = [k.name, fmt_us(us), _kind(k), k.graph, launches, fused, str(loc)]
        item = _KernelItem(cells)
        item.setIcon(0, color_icon(color_for(k.name)))
        item.setToolTip(FUSED_COLUMN, tip(", ".join(k.fused_nodes)))
        item.setToolTip(LAUNCHES_COLUMN, tip(LAUNCHES_TIP))
        item.setToolTip(0, tip(k.name))
        if us is not None:
            item.setTextAlignment(TIME_COLUMN, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setData(TIME_COLUMN, Qt.ItemDataRole.UserRole, us)
            item.setToolTip(TIME_COLUMN, tip(f"{self._times.share(ref):.1%} of the profiled step's "
                                             f"busy time ({self._times.mode})"))
        item.setData(0, Qt.ItemDataRole.UserRole, ref)
        self.kernels.addTopLevelItem(item)
        self._kernel_items[ref] = item
        return cells

    def _kernel_clicked(self, item: QTreeWidgetItem) -> None:
        self.selection.select({item.data(0, Qt.ItemDataRole.UserRole)})

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        self.graphs.set_highlight(set(highlighted), set(selected))
        lit = {r for r in highlighted if r in self._kernel_items}
        on, off = QColor(SELECT_COLOR_HEX), QColor(0, 0, 0, 0)
        for ref in lit ^ self._kernels_lit:  # only rows whose marking changes (770 kernels)
            item = self._kernel_items[ref]
            for col in range(len(KERNEL_COLUMNS)):
                item.setBackground(col, on if ref in lit else off)
        self._kernels_lit = lit
        # Qt's own row selection (the row last clicked) stays blue after the user picks something
        # else, which reads as "this kernel belongs to it": it is dropped when that kernel is no
        # longer part of the selection.
        clicked = self.kernels.selectedItems()
        if clicked and clicked[0].data(0, Qt.ItemDataRole.UserRole) not in highlighted:
            self.kernels.clearSelection()
        first = next((item for ref, item in self._kernel_items.items() if ref in lit), None)
        if first is not None:
            self.kernels.scrollToItem(first)

    def highlighted_kernels(self) -> set[Ref]:
        """Rows drawn marked (a row never marked has Qt's default brush, NoBrush, whose colour
        is opaque black: reading only the alpha counted every row as lit)."""
        brushes = {r: item.background(0) for r, item in self._kernel_items.items()}
        return {r for r, b in brushes.items() if b.style() != Qt.BrushStyle.NoBrush and b.color().alpha() > 0}

    def graph_canvas(self) -> GraphCanvas:
        return self.graphs.canvas

    def has_content(self) -> bool:
        return bool(self._kernel_items) or bool(self.graphs.refs())

