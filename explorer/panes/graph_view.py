"""Adapts the graph canvas (explorer.canvas.GraphCanvas) to panes that think in Refs.

Panes hand over `GraphSection`s (a graph plus how its node names become Refs) and colour,
mark and highlight by Ref; this adapter maps Refs to the canvas's node ids (`"<i>:<name>"`
when several graphs are stacked) and back, so no pane knows the canvas's id scheme.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QVBoxLayout, QWidget

from compiler_core.session import Graph, Ref
from explorer.canvas import EdgeStyle, GraphCanvas


@dataclass(frozen=True)
class GraphSection:
    """One graph to draw. `make_refs(name)` gives the node's Refs, the first one is selected on
    click (a joint-graph node may stand for both a `joint:` and a `forward:` AOT ref)."""

    title: str
    graph: Graph
    make_refs: Callable[[str], tuple[Ref, ...]]
    break_before: str = ""  # graph-break reason drawn on the separator above this graph


class GraphView(QWidget):
    """Signals: `nodeClicked(Ref)` — the primary Ref of the clicked node."""

    nodeClicked = Signal(object)  # noqa: N815 (Qt signal naming)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Layout off the GUI thread from 1,000 nodes: a deep model's Dynamo graph laid out inline
        # takes one long turn (the canvas's own default, 3,000, suits a single view).
        self.canvas = GraphCanvas(self, sync_limit=1000)
        self.canvas.nodeClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.canvas)
        self._refs: dict[str, tuple[Ref, ...]] = {}
        self._ids: dict[Ref, str] = {}
        self._nodes_of: dict[Ref, list[str]] = {}  # every node a ref stands on (highlighting)
        self._lit: set[str] = set()
        self._pos: dict[str, int] = {}  # node id -> draw order, to centre on the earliest lit node

    # ----- structure -----
    def set_sections(self, sections: list[GraphSection], prepared: RefIndex | None = None) -> None:
        """Stack graphs in execution order; a section's `break_before` labels the line above it.
        `prepared` is `sections_index(sections)`, built by the caller off the GUI thread for
        large graphs (thousands of post-grad nodes)."""
        self._install_index(prepared if prepared is not None else sections_index(sections))
        graphs = [(s.graph, s.title) for s in sections]
        separators = [s.break_before for s in sections[1:]]
        self.canvas.set_graphs(graphs, separators)

    def set_banded(self, section: GraphSection, band_of: dict[str, str],
                   prepared: RefIndex | None = None) -> None:  # fmt: skip
        """One graph split into bands (AOT joint: forward above backward). `prepared` is
        `banded_index(section)`, built by the caller off the GUI thread for a large graph."""
        self._install_index(prepared if prepared is not None else banded_index(section))
        self.canvas.set_graph(section.graph)
        self.canvas.set_bands(band_of)

    def _install_index(self, index: RefIndex) -> None:
        self._refs, self._ids, self._nodes_of, self._pos = index
        self._lit.clear()

    # ----- decoration -----
    def set_marks(self, marks: dict[Ref, str]) -> None:
        self.canvas.set_marks(decoration(self._ids, marks).marks)

    def set_decoration(self, prepared: Decoration, colors: dict[str, QColor] | None = None) -> None:
        """Marks, edge styles and fill colours mapped to node ids by `decoration` over the
        installed index, off the GUI thread (a deep joint graph's 2k saved-tensor edges, a
        post-grad graph's 5k fused nodes: tens of ms of Ref hashing in one turn otherwise).
        `colors` gives each overlay key its colour; without it the overlay is left as it is."""
        if colors is not None:
            self.canvas.set_overlay({nid: colors[key] for nid, key in prepared.overlay.items()})
        self.canvas.set_edge_styles(prepared.edges)
        self.canvas.set_marks(prepared.marks)

    def set_highlight(self, refs: set[Ref], primary: set[Ref]) -> None:
        wanted = refs | primary
        nodes_of = self._nodes_of
        # by the highlighted refs, not a scan of every node: O(selection), not O(graph) per click
        # one hash per ref (a Ref hashes in Python: a source line lights 5k refs in three panes)
        lit = {nid for r in wanted for nid in nodes_of.get(r, ())}
        first = next((self._ids[r] for r in sorted(primary) if r in self._ids), None)
        self._lit = lit
        self.canvas.set_highlight(lit, first)
        target = first or (min(lit, key=self._pos.__getitem__) if lit else None)
        if target is not None:
            self.canvas.center_on(target)

    # ----- queries (tests, exports) -----
    def refs(self) -> list[Ref]:
        return list(self._ids)

    def highlighted(self) -> set[Ref]:
        return {r for nid in self._lit for r in self._refs[nid]}

    def _clicked(self, nid: str) -> None:
        refs = self._refs.get(nid)
        if refs:
            self.nodeClicked.emit(refs[0])


RefIndex = tuple[dict[str, tuple[Ref, ...]], dict[Ref, str], dict[Ref, list[str]], dict[str, int]]


def build_index(sections: list[GraphSection], node_id: Callable[[int, str], str]) -> RefIndex:
    """Node id -> refs, ref -> first node id, ref -> every node id, node id -> draw order.
    Qt-free, so a pane can build it on a worker thread (`banded_index`)."""
    refs_of: dict[str, tuple[Ref, ...]] = {}
    ids: dict[Ref, str] = {}
    nodes_of: dict[Ref, list[str]] = {}
    pos: dict[str, int] = {}
    for i, section in enumerate(sections):
        for node in section.graph.nodes:
            nid = node_id(i, node.name)
            refs = section.make_refs(node.name)
            refs_of[nid] = refs
            pos[nid] = len(pos)
            for ref in refs:
                ids.setdefault(ref, nid)
                nodes_of.setdefault(ref, []).append(nid)
    return refs_of, ids, nodes_of, pos


class Decoration(NamedTuple):
    """Marks, edge styles and overlay keys by the canvas's node ids (opaque to panes)."""

    marks: dict[str, str]
    edges: dict[tuple[str, str], EdgeStyle]
    overlay: dict[str, str]


def decoration(ids: dict[Ref, str], marks: dict[Ref, str],
               styles: dict[tuple[Ref, Ref], EdgeStyle] | None = None,
               overlay: dict[Ref, str] | None = None) -> Decoration:  # fmt: skip
    """`marks`, `styles` and `overlay` (ref -> a colour's key) by node id, through an index's
    ref -> id map (`RefIndex[1]`); refs the graph does not hold are left out. Qt-free: a pane
    maps them on a worker."""
    edges = {(ids[a], ids[b]): s for (a, b), s in (styles or {}).items() if a in ids and b in ids}
    keys = {ids[r]: key for r, key in (overlay or {}).items() if r in ids}
    return Decoration({ids[r]: m for r, m in marks.items() if r in ids}, edges, keys)


def sections_index(sections: list[GraphSection]) -> RefIndex:
    """The index `set_sections` installs (ids `"<i>:<name>"` when several graphs stack)."""
    if len(sections) > 1:
        return build_index(sections, lambda i, name: f"{i}:{name}")
    return build_index(sections, lambda _i, name: name)


def banded_index(section: GraphSection) -> RefIndex:
    return build_index([section], lambda _i, name: name)


def make_graph_view(parent: QWidget | None = None) -> GraphView:
    return GraphView(parent)
