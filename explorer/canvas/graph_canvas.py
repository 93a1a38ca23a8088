"""`GraphCanvas`: the graph widget the Dynamo, AOTAutograd and Inductor panes embed.

Structure (graph, groups, layout) and decoration (overlay colours, edge styles, marks,
highlight) are kept apart: decoration setters only rebuild a few paths and repaint, and are
remembered across re-layouts (expand/collapse, a new graph with the same node names).
Graphs under `sync_limit` nodes lay out on the calling thread, so `set_graph` returns with the
picture ready; larger ones lay out in a worker thread and `layoutFinished` says when.

Signals: `nodeClicked(str)`, `nodeHovered(str)` ("" when leaving a node), `layoutFinished()`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Signal
from PySide6.QtGui import QColor, QCursor, QPainterPath
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QToolButton, QToolTip, QVBoxLayout, QWidget

from compiler_core.session import Graph
from explorer.canvas.canvas_view import CanvasView, EdgeStyle, RenderState, StyledEdge
from explorer.canvas.layout_job import LayoutResult, LayoutRunner, full_layout, relayout
from explorer.canvas.minimap import Minimap
from explorer.canvas.node_text import group_tooltip, node_tooltip
from explorer.canvas.scene_paths import node_paths, rects_path
from explorer.layout import GraphArrays, from_sections
from explorer.plain_text import plain_label

OP_COLORS = ["#dce8f7", "#d8ecd0", "#e6e0f0", "#e0e0e0"]  # call, placeholder, get_attr, output


class GraphCanvas(QWidget):
    nodeClicked = Signal(str)  # noqa: N815
    nodeHovered = Signal(str)  # noqa: N815
    layoutFinished = Signal()  # noqa: N815

    def __init__(
        self, parent: QWidget | None = None, *, item_limit: int = 300, sync_limit: int = 3000
    ) -> None:
        super().__init__(parent)
        self.item_limit, self.sync_limit = item_limit, sync_limit
        self.view = CanvasView(self)
        self.minimap = Minimap(self.view, self.view)
        self.search_box = QLineEdit(self)
        self.search_box.setPlaceholderText("Search name / op / target, Enter for next")
        self.search_box.returnPressed.connect(self._search_next)
        self.status = plain_label(parent=self)
        fit = QToolButton(self)
        fit.setText("Fit")
        fit.clicked.connect(self.fit_to_view)
        fit.setToolTip("Fit the whole graph (F or Ctrl+0). In the graph: arrows and PageUp/PageDown "
                       "pan, Home/End jump to the entry/exit, +/- zoom, Z zooms to the selection")
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.search_box, 1)
        bar.addWidget(self.status)
        bar.addWidget(fit)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addLayout(bar)
        box.addWidget(self.view, 1)
        self.runner = LayoutRunner(self)
        self.runner.finished.connect(self._install)
        self.view.itemClicked.connect(self._clicked)
        self.view.itemHovered.connect(self._hovered)
        self.view.zoomToSelection.connect(self.zoom_to_selection)
        self.result: LayoutResult | None = None
        self._key: Callable[[str], object] | None = None
        self._sections: list[tuple[Graph, str]] = []
        self._colors: dict[str, QColor] = {}
        self._legend: dict[str, str] | None = None
        self._edge_styles: dict[tuple[str, str], EdgeStyle] = {}
        self._pairs: tuple[GraphArrays, dict[tuple[int, int], int]] | None = None
        self._marks: dict[str, str] = {}
        self._highlight: set[str] = set()
        self._primary: str | None = None
        self._search_hits: list[str] = []
        self._search_pos = -1
        self._center_after: str | None = None
        self._top_after = False  # _center_after is shown at the top (a section's entry), not centred
        self._anchor: tuple[int, QPointF] | None = None  # group kept in place across expand/collapse
        self._fit_after = True
        self._index: dict[str, int] = {}
        self._decorated: object = None  # the RenderState whose fills/edges/marks are current

    # -- structure ------------------------------------------------------------------------
    def set_graph(self, graph: Graph, *, node_key: Callable[[str], object] | None = None) -> None:
        """Show one graph; node ids are the FX node names."""
        self.set_graphs([(graph, graph.name or graph.kind)], node_key=node_key)

    def set_graphs(
        self,
        graphs: Sequence[tuple[Graph, str]],
        separators: Sequence[str] | None = None,
        *,
        node_key: Callable[[str], object] | None = None,
    ) -> None:
        """Show graphs one below another, each a section headed by a dashed separator.

        With several graphs node ids become `"<index>:<name>"` (index into `graphs`).
        `separators[i]`, when given, labels the line above graph i+1 (e.g. a graph-break reason).
        """
        labels = [lab for _, lab in graphs]
        for i, reason in enumerate(separators or ()):
            if reason and i + 1 < len(labels):
                labels[i + 1] = f"{labels[i + 1]}  ⟵ break: {reason}"
        self._sections = [(g, lab) for (g, _), lab in zip(graphs, labels, strict=True)]
        self._key = node_key
        sections = list(self._sections)
        self._start(lambda: from_sections(sections), sum(len(g.nodes) for g, _ in sections))

    def set_bands(self, bands: dict[str, str]) -> None:
        """Split the current single graph into bands stacked top to bottom, in first-seen order.

        `bands` maps node id -> band label (e.g. "forward"/"backward"; missing ids join the first
        band). Edges from one band into a later one (saved tensors) are the ones that cross the
        separator; style them with `set_edge_styles`.
        """
        if len(self._sections) != 1:
            raise ValueError("set_bands needs exactly one graph (use set_graph first)")
        graph = self._sections[0][0]
        first = next(iter(bands.values()), "")
        order = [bands.get(n.name, first) for n in graph.nodes]
        sections = list(self._sections)
        self._start(lambda: from_sections(sections, band_of=order), len(order))

    def _start(self, make_arrays: Callable[[], GraphArrays], n: int) -> None:
        self._fit_after = True
        limit = self.item_limit
        if n < self.sync_limit:
            self.runner.generation += 1
            self._install(self.runner.generation, full_layout(make_arrays, limit), sync=True)
        else:
            self.status.setText(f"laying out {n} nodes…")
            self.runner.submit(lambda: full_layout(make_arrays, limit))

    def _relayout(self, expanded: set[int]) -> None:
        res = self.result
        if res is None:
            return
        self._fit_after = False
        if res.arrays.n < self.sync_limit:
            self.runner.generation += 1
            new = relayout(res.arrays, res.tree, res.layout, expanded, res)
            self._install(self.runner.generation, new, sync=True)
        else:
            self.runner.submit(lambda: relayout(res.arrays, res.tree, res.layout, expanded, res))

    def _install(self, gen: int, res: object, sync: bool = False) -> None:
        if gen != self.runner.generation:
            return
        if isinstance(res, BaseException):
            self.status.setText(f"layout failed: {res}")
            raise res
        assert isinstance(res, LayoutResult)
        self.result = res
        self._index = res.index
        self.view.state = RenderState(res.scene, res.arrays, res.tree, res.paths, {}, [])
        self._redecorate()
        n_vis = int(res.scene.visible.sum())
        self.status.setText(f"{res.arrays.n} nodes · {n_vis} shown")
        if self._fit_after:
            self.view.show_top()
        elif self._anchor is not None:
            g, at = self._anchor
            s, n = res.scene, res.arrays.n
            if not np.isnan(s.x[n + g]):
                self.view.keep_at(float(s.x[n + g] - s.w[n + g] / 2), float(s.y[n + g] - s.h[n + g] / 2), at)
                if not self.view.rect().intersects(self.view._screen_rect(s, n + g).toRect()):
                    # its corner was off screen (a tall group scrolled into): show the group itself
                    self.view.center_on_point(float(s.x[n + g]), float(s.y[n + g] - s.h[n + g] / 2 + 40.0))
        self._anchor = None
        if self._center_after is not None:
            name, self._center_after = self._center_after, None
            top, self._top_after = self._top_after, False
            (self.show_at_top if top else self.center_on)(name)
        self.layoutFinished.emit()

    @property
    def busy(self) -> bool:
        """True while a worker layout is still running."""
        return self.runner.busy()

    # -- groups ---------------------------------------------------------------------------
    def group_path(self, g: int) -> str:
        """Display path of group `g` ("model/layers/0/attn"); repeated calls get " (2)"."""
        assert self.result is not None
        tree = self.result.tree
        parts = [tree.label[a] for a in reversed(tree.ancestors(g)) if a != 0] + [tree.label[g]]
        return "/".join(parts)

    def _hold(self, g: int) -> None:
        """Keep group `g`'s top-left corner where it is on screen through the next re-layout, so
        the item the user clicked stays in view (collapsing could otherwise leave an empty view)."""
        res = self.result
        if res is None:
            return
        s, n = res.scene, res.arrays.n
        if np.isnan(s.x[n + g]):
            return
        r = self.view._screen_rect(s, n + g)
        self._anchor = (g, r.topLeft())

    def expand_all(self) -> None:
        if self.result is not None:
            self._relayout(set(range(self.result.tree.count)))

    def is_visible(self, name: str) -> bool:
        """Whether the node is drawn itself (not hidden inside a collapsed group)."""
        res = self.result
        i = self._index.get(name)
        return res is not None and i is not None and bool(res.scene.rep[i] == i)

    # -- decoration -----------------------------------------------------------------------
    def set_overlay(self, colors: dict[str, QColor | str], legend: dict[str, str] | None = None) -> None:
        """Per-node fill colours (node id -> colour); `legend` maps colour -> caption."""
        made: dict[str | int, QColor] = {}  # one QColor per colour, not per node (5k fused nodes)
        self._colors = {}
        for k, v in colors.items():
            key = v if isinstance(v, str) else v.rgba()
            color = made.get(key)
            if color is None:
                color = made[key] = QColor(v)
            self._colors[k] = color
        self._legend = legend
        self._redecorate()

    def sections(self) -> list[tuple[Graph, str]]:
        """The graphs shown, top to bottom, with their section labels (what an export writes)."""
        return list(self._sections)

    def overlay(self) -> dict[str, QColor]:
        """The per-node fill colours set by `set_overlay` (node id -> colour)."""
        return dict(self._colors)

    def set_edge_styles(self, styles: dict[tuple[str, str], EdgeStyle]) -> None:
        """Emphasise edges (src id, dst id): colour, width and a label such as "2.0 MiB"."""
        self._edge_styles = dict(styles)
        self._redecorate()

    def set_marks(self, marks: dict[str, str]) -> None:
        """Short badges drawn before node labels, e.g. {"relu_1": "♻"} for recomputed nodes."""
        self._marks = dict(marks)
        self._redecorate()

    def set_highlight(self, names: set[str], primary: str | None = None) -> None:
        self._highlight, self._primary = set(names), primary
        self._redecorate(highlight_only=True)

    def _redecorate(self, highlight_only: bool = False) -> None:
        """Rebuild the decoration paths. A highlight change (every click) rebuilds only the
        highlight outlines: fills, styled edges and marks depend on the overlay, edge styles,
        marks and layout, and rebuilding them per click is too slow on a large graph."""
        st, res = self.view.state, self.result
        if st is None or res is None:
            return
        if highlight_only and self._decorated is st:
            st.highlight = self._items_path(self._highlight, 4.0)
            st.primary = self._items_path({n for n in (self._primary, *self._search_current()) if n}, 6.0)
            self.minimap.refresh()
            self.view.update()
            return
        self._decorated = st
        s = res.scene
        palette = [QColor(c) for c in OP_COLORS]
        colors = res.op_color.copy()
        slot: dict[int, int] = {}
        for name, color in self._colors.items():
            i = self._index.get(name)
            if i is not None:
                key = color.rgba()
                if key not in slot:
                    slot[key] = len(palette)
                    palette.append(color)
                colors[i] = slot[key]
        st.palette, st.node_fill = palette, node_paths(s, colors)
        st.highlight = self._items_path(self._highlight, 4.0)
        st.primary = self._items_path({n for n in (self._primary, *self._search_current()) if n}, 6.0)
        st.styled = self._styled_edges()
        st.marks = {self._index[k]: v for k, v in self._marks.items() if k in self._index}
        st.legend = self._legend
        self.minimap.refresh()
        self.view.update()

    def _search_current(self) -> list[str]:
        ok = 0 <= self._search_pos < len(self._search_hits)
        return [self._search_hits[self._search_pos]] if ok else []

    def _items_path(self, names: set[str], grow: float) -> QPainterPath:
        assert self.result is not None
        s = self.result.scene
        idx = [self._index[n] for n in names if n in self._index]
        items = np.unique(s.rep[np.asarray(idx, dtype=np.int64)]) if idx else np.zeros(0, np.int64)
        return rects_path(s.x[items], s.y[items], s.w[items] + grow, s.h[items] + grow)

    def _edge_ids(self, a: GraphArrays) -> dict[tuple[int, int], int]:
        """(src, dst) node indices -> edge index, built once per graph: every re-layout and
        every overlay change reuses the same arrays, and a deep graph has thousands of edges."""
        if self._pairs is None or self._pairs[0] is not a:
            pair = {(u, v): e for e, (u, v) in enumerate(zip(a.src.tolist(), a.dst.tolist(), strict=True))}
            self._pairs = (a, pair)
        return self._pairs[1]

    def _styled_edges(self) -> list[StyledEdge]:
        assert self.result is not None
        s, a = self.result.scene, self.result.arrays
        if not self._edge_styles:
            return []
        pair = self._edge_ids(a)
        out = []
        for (u, v), style in self._edge_styles.items():
            e = pair.get((self._index.get(u, -1), self._index.get(v, -1)))
            k = -1 if e is None else int(s.edge_of[e])
            if k < 0:
                continue
            xs, ys = s.px[s.start[k] : s.start[k + 1]], s.py[s.start[k] : s.start[k + 1]]
            out.append(StyledEdge.through(xs.tolist(), ys.tolist(), style))
        return out

    # -- navigation -----------------------------------------------------------------------
    def fit_to_view(self) -> None:
        self.view.fit()

    def zoom_to_selection(self) -> None:
        """Frame the highlighted nodes (the primary one alone when nothing else is lit)."""
        res = self.result
        names = self._highlight or ({self._primary} if self._primary else set())
        idx = [self._index[n] for n in names if n in self._index]
        if res is None or not idx:
            return
        s = res.scene
        items = np.unique(s.rep[np.asarray(idx, dtype=np.int64)])
        x0, x1 = float(np.min(s.x[items] - s.w[items] / 2)), float(np.max(s.x[items] + s.w[items] / 2))
        y0, y1 = float(np.min(s.y[items] - s.h[items] / 2)), float(np.max(s.y[items] + s.h[items] / 2))
        self.view.zoom_to(QRectF(x0, y0, x1 - x0, y1 - y0))

    def node_rect(self, name: str) -> QRectF | None:
        """Where a node (or the collapsed group hiding it) is drawn, in view widget pixels."""
        res, i = self.result, self._index.get(name)
        if res is None or i is None:
            return None
        return self.view._screen_rect(res.scene, int(res.scene.rep[i]))

    def show_at_top_when_ready(self, name: str) -> None:
        """`show_at_top` now, or once the layout still running on the worker is installed."""
        if self.busy:
            self._center_after, self._top_after = name, True
        else:
            self.show_at_top(name)

    def show_at_top(self, name: str) -> None:
        """A node (a section's first) at the top of the view, read from the left like a first
        view: centring it put a wide graph's left half, and its group boxes, off screen."""
        res, i = self.result, self._index.get(name)
        if res is None or i is None:
            return
        if res.scene.rep[i] != i:  # hidden in a folded group: expand it, as center_on does
            g = int(res.tree.node_group[i])
            self._center_after, self._top_after = name, True
            self._relayout(set(res.expanded) | {g, *res.tree.ancestors(g)})
            return
        self.view.show_item_at_top(int(i))

    def center_on(self, name: str) -> None:
        """Scroll to a node, expanding the groups that hide it; zooms in if labels are unreadable."""
        res, i = self.result, self._index.get(name)
        if res is None or i is None:
            return
        if res.scene.rep[i] != i:
            g = int(res.tree.node_group[i])
            self._center_after, self._top_after = name, False
            self._relayout(set(res.expanded) | {g, *res.tree.ancestors(g)})
            return
        scale = max(self.view.scale, 0.9)
        self.view.center_on_point(float(res.scene.x[i]), float(res.scene.y[i]), scale)

    def search(self, text: str) -> list[str]:
        """Node ids whose name, op or target contains `text` (case-insensitive), in graph order."""
        if self.result is None or not text:
            return []
        t = text.lower()
        a = self.result.arrays
        return [
            a.ids[i]
            for i, n in enumerate(a.nodes)
            if t in a.ids[i].lower() or t in n.op.lower() or t in n.target.lower()
        ]

    def _search_next(self) -> None:
        hits = self.search(self.search_box.text())
        if hits != self._search_hits:
            self._search_hits, self._search_pos = hits, -1
        if not hits:
            self.status.setText("no match")
            return
        self._search_pos = (self._search_pos + 1) % len(hits)
        self.status.setText(f"match {self._search_pos + 1}/{len(hits)}")
        self._redecorate()
        self.center_on(hits[self._search_pos])

    # -- events ---------------------------------------------------------------------------
    def node_key(self, name: str) -> object:
        """The pane's key (e.g. a Ref) for a node id, or the id itself without `node_key`."""
        return self._key(name) if self._key is not None else name

    def _clicked(self, item: int) -> None:
        res = self.result
        if res is None or item < 0:
            return
        n = res.arrays.n
        if item < n:
            self.nodeClicked.emit(res.arrays.ids[item])
            return
        g = item - n
        ex = set(res.expanded)
        if g in ex:
            ex.discard(g)
        else:
            ex.add(g)
        self._hold(g)
        self._relayout(ex)

    def _hovered(self, item: int) -> None:
        res = self.result
        if res is None or item < 0:
            QToolTip.hideText()
            self.nodeHovered.emit("")
            return
        n = res.arrays.n
        if item < n:
            QToolTip.showText(  # markup: ours, data escaped by node_text
                QCursor.pos(), node_tooltip(res.arrays.nodes[item], res.arrays.module_paths[item])
            )
            self.nodeHovered.emit(res.arrays.ids[item])
        else:
            g = item - n
            QToolTip.showText(  # markup: ours, data escaped by node_text
                QCursor.pos(), group_tooltip(self.group_path(g), res.tree.size[g], g in res.expanded)
            )

    def closeEvent(self, event: object) -> None:
        self.runner.shutdown()


__all__ = ["EdgeStyle", "GraphCanvas"]
