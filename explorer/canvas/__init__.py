"""The graph canvas: batched drawing of 50k-node graphs with module groups, overlays and search.

Public API (everything a pane needs; node ids are FX node names, or `"<i>:<name>"` when
several graphs are shown with `set_graphs`):

- `GraphCanvas(parent=None, *, item_limit=300, sync_limit=3000)`, a QWidget.
  - structure: `set_graph(graph, *, node_key=None)`;
    `set_graphs([(graph, label), ...], separators=[reason, ...], *, node_key=None)` stacks graphs
    top to bottom with a dashed, labelled separator line between them (Dynamo: a frame's graphs
    in execution order, separators = break reasons);
    `set_bands({node id: band label})` splits the current single graph into bands stacked in
    first-seen order (AOT joint: forward above backward; edges crossing the band line are the
    saved tensors, emphasise them with `set_edge_styles`).
  - decoration, never re-lays out: `set_overlay({id: QColor | "#hex"}, legend={"#hex": caption})`,
    `set_edge_styles({(src id, dst id): EdgeStyle(color, width, label)})`,
    `set_marks({id: "♻"})` badges before labels, `set_highlight(ids, primary=None)`.
  - navigation: `center_on(id)` (expands groups hiding the node), `fit_to_view()`,
    `search(text) -> [id]` (name/op/target substring), `expand_all()`,
    `is_visible(id)`, `node_rect(id)` (view pixels), `node_key(id)`.
  - signals: `nodeClicked(str)`, `nodeHovered(str)`, `layoutFinished()`; property `busy`.
  - `grab()` renders it for screenshots like any QWidget.
- `EdgeStyle(color="#d62828", width=3.0, label="")`.

Graphs below `sync_limit` nodes lay out during `set_graph`; larger ones in a worker thread
(wait for `layoutFinished`). Module groups come from `Node.module_path`; the first view expands
groups breadth-first while at most `item_limit` items are visible. Click a collapsed group to
expand it, click an expanded group's header to collapse it.
"""

from explorer.canvas.canvas_view import EdgeStyle
from explorer.canvas.graph_canvas import GraphCanvas

__all__ = ["EdgeStyle", "GraphCanvas"]
