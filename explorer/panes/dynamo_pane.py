"""Dynamo pane: the frame's FX graphs in execution order, breaks between them, guards beside.

For a recompile it also shows the recompile reasons and a diff of guards against the compile it
replaced, which is usually the quickest answer to "why did this recompile?".
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QPlainTextEdit,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from compiler_core.session import Compile, Ref, Session
from explorer.canvas import GraphCanvas
from explorer.jobs import Lane
from explorer.panes.base import Pane
from explorer.panes.column_fit import fit_columns
from explorer.panes.graph_view import GraphSection, RefIndex, make_graph_view, sections_index
from explorer.plain_text import plain_label, tip
from explorer.state import SelectionModel, SessionState
from explorer.state.compile_status import status_text
from explorer.state.guard_diff import guard_diff, previous_compile


def frame_sequence(session: Session, current: Compile) -> list[Compile]:
    """Compiles that ran one after another with `current`: same rank, run and recompile
    generation (a break is never drawn between a graph and its re-run in a later run). A failed
    compile that captured nothing stands alone: the others' graphs are not its own."""
    if current.dynamo_graph is None and current.status == "failed":
        return [current]
    same = [
        c for c in session.compiles
        if c.rank == current.rank and c.run == current.run and c.frame_compile_id == current.frame_compile_id
        and c.dynamo_graph
    ]  # fmt: skip
    same.sort(key=lambda c: (c.frame_id if c.frame_id is not None else -1, c.attempt))
    return same or [current]


def _dynamo_refs(c: Compile, name: str) -> tuple[Ref, ...]:
    return (Ref.dynamo_node(c.compile_id, name, c.rank),)


class DynamoPane(Pane):
    title = "Dynamo"
    stage = "dynamo"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.graphs = make_graph_view()
        self.graphs.nodeClicked.connect(self._node_clicked)
        self.guards = QTreeWidget()
        self.guards.setHeaderLabels(["Guard", "Kind"])
        self.guards.setRootIsDecorated(False)
        self.guards.itemClicked.connect(self._guard_clicked)
        self.reasons = QPlainTextEdit()
        self.reasons.setReadOnly(True)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(plain_label("Guards"))
        side_layout.addWidget(self.guards, 2)
        side_layout.addWidget(plain_label("Recompile reasons and guard diff"))
        side_layout.addWidget(self.reasons, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.graphs)
        split.addWidget(side)
        split.setSizes([700, 220])
        split.setStretchFactor(0, 3)  # the graph takes what a wider window adds
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._building: Compile | None = None
        self._index = Lane(self, "dynamo-refs", current=lambda: state.session)
        state.updates.track(self._index)

    def _node_clicked(self, ref: Ref) -> None:
        self.selection.select({ref})

    def on_compile(self, current: Compile | None) -> None:
        self._building = current
        self.guards.clear()
        self.reasons.clear()
        if current is None:
            self.graphs.set_sections([])
            return
        sections = self._sections(current)
        if self.state.updates.spread:  # thousands of nodes' refs on a worker, guards in slices
            self._index.submit(partial(sections_index, sections), partial(self._show, current, sections))
        else:
            self._show(current, sections, sections_index(sections))

    def _show(self, current: Compile, sections: list[GraphSection], index: RefIndex) -> None:
        if self._building is not current:
            return
        self.graphs.set_sections(sections, index)
        # The frame's graphs are stacked in order; the picked compile may be far down (GPT-2's
        # [3/0] below [1/0]'s 1,397 nodes): its section's first node is brought into view.
        at = next((i for i, s in enumerate(sections) if s.graph is current.dynamo_graph), None)
        if at is not None and current.dynamo_graph is not None and current.dynamo_graph.nodes:
            first = current.dynamo_graph.nodes[0].name
            self.graphs.canvas.show_at_top_when_ready(first if len(sections) == 1 else f"{at}:{first}")
        self.reasons.setPlainText(self._reason_text(current))
        guards = current.guards

        def add(start: int, stop: int) -> None:
            if self._building is not current:
                return
            for i in range(start, stop):
                guard = guards[i]
                item = QTreeWidgetItem([guard.code, guard.kind])
                item.setToolTip(0, tip(guard.code))
                item.setData(0, Qt.ItemDataRole.UserRole, Ref.guard(current.compile_id, i, current.rank))
                self.guards.addTopLevelItem(item)

        def done() -> None:
            if self._building is current:
                fit_columns(self.guards, [(g.code,) for g in guards], [0])

        self.fill_in_slices("guards", len(guards), add, done)
        self.on_selection(self.selection.selected, self.selection.highlighted)

    def _sections(self, current: Compile) -> list[GraphSection]:
        sections = []
        previous_break = ""
        for c in frame_sequence(self.state.session, current):
            if c.dynamo_graph is not None:
                mark = "▶ " if c is current else ""
                name = c.code.function if c.code else ""
                sections.append(GraphSection(
                    f"{mark}[{c.compile_id}] {name}", c.dynamo_graph, partial(_dynamo_refs, c),
                    break_before=previous_break,
                ))
            previous_break = c.graph_breaks[-1].reason if c.graph_breaks else ""
        return sections

    def _reason_text(self, current: Compile) -> str:
        lines = [f"recompile: {r}" for r in current.recompile_reasons]
        if current.dynamo_graph is None and current.status == "failed":
            lines.insert(0, f"[{current.compile_id}] failed before Dynamo captured a graph: "
                            f"{current.failure}")  # fmt: skip
        elif current.dynamo_graph is None:
            lines.insert(0, f"[{current.compile_id}] captured no graph (nothing to compile in this frame, "
                            "or only a graph break); the graphs shown are its frame's others.")  # fmt: skip
        before = previous_compile(self.state.session, current)
        if before is not None:
            lines.append(f"\nguards vs [{before.compile_id}]:")
            lines.extend(guard_diff(before, current) or ["(identical)"])
        if current.status != "ok" and current.dynamo_graph is not None:
            lines.append(f"\nstatus: {status_text(current.status)} {current.failure}".rstrip())
        return "\n".join(lines) if lines else "First compile of this frame: no recompile."

    def _guard_clicked(self, item: QTreeWidgetItem) -> None:
        self.selection.select({item.data(0, Qt.ItemDataRole.UserRole)})

    def on_selection(self, selected: frozenset[Ref], highlighted: frozenset[Ref]) -> None:
        self.graphs.set_highlight(set(highlighted), set(selected))

    def graph_canvas(self) -> GraphCanvas:
        return self.graphs.canvas

    def has_content(self) -> bool:
        return bool(self.graphs.refs())
