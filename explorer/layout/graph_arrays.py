"""Session graphs flattened into index arrays, the form every layout phase works on.

Several graphs can be stacked into one `GraphArrays` as *sections* (a Dynamo frame's graphs in
execution order, or the forward/backward bands of an AOT joint graph); node ids then stay unique
by prefixing the section index (`"1:add"`) when more than one graph is given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from compiler_core.analysis.module_paths import param_short_name
from compiler_core.session import Graph, Node

NODE_W_MIN, NODE_W_MAX, NODE_H = 64.0, 240.0, 30.0
_PLAIN = re.compile(r"[A-Za-z_][\w.]*")
_OVERLOADS = frozenset(
    {"default", "Tensor", "Scalar", "dim_IntList", "int", "self", "out", "dim", "Tensor_Scalar"}
)


@dataclass(frozen=True)
class GraphArrays:
    """Nodes in order (`ids[i]`), edges `src[e] -> dst[e]`, each node's section and module path."""

    ids: list[str]
    nodes: list[Node]
    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    section: NDArray[np.int64]
    section_labels: list[str]
    module_paths: list[str]
    widths: NDArray[np.float64]
    heights: NDArray[np.float64]
    labels: list[str] | None = None  # drawn text per node (node_label); ids when None

    @property
    def n(self) -> int:
        return len(self.ids)

    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.ids)}


def node_label(node: Node) -> str:
    """The text drawn in a node box: the FX name; a lifted parameter by its own short name
    (`weight`, not `l_self_modules_net_modules_layer1_..._parameters_weight_`, which made every
    batch-norm five 240-px boxes wide). Its module is the group it sits in."""
    if node.op == "placeholder":
        return param_short_name(node.name) or node.name
    if node.op in ("call_function", "call_method") and _PLAIN.fullmatch(node.target or ""):
        parts = [p for p in node.target.split(".") if p not in _OVERLOADS]
        return parts[-1] if parts else node.name  # `torch.ops.aten.mm.default` -> `mm`
    return node.name


def node_width(label: str) -> float:
    return float(min(NODE_W_MAX, max(NODE_W_MIN, 8.0 * len(label) + 16.0)))  # 9 pt text at 0.9 zoom


def from_graph(graph: Graph) -> GraphArrays:
    return from_sections([(graph, graph.name or graph.kind)], prefix_ids=False)


def from_sections(
    sections: Sequence[tuple[Graph, str]],
    *,
    band_of: Sequence[str] | None = None,
    prefix_ids: bool | None = None,
) -> GraphArrays:
    """Stack graphs as sections. `band_of` instead splits ONE graph's nodes into named bands."""
    prefix = len(sections) > 1 if prefix_ids is None else prefix_ids
    ids: list[str] = []
    nodes: list[Node] = []
    sec: list[int] = []
    src: list[int] = []
    dst: list[int] = []
    for s, (graph, _label) in enumerate(sections):
        local = {n.name: (f"{s}:{n.name}" if prefix else n.name) for n in graph.nodes}
        base = len(ids)
        pos = {n.name: base + i for i, n in enumerate(graph.nodes)}
        for i, node in enumerate(graph.nodes):
            ids.append(local[node.name])
            nodes.append(node)
            sec.append(s)
            for inp in node.inputs:
                j = pos.get(inp)
                if j is not None:
                    src.append(j)
                    dst.append(base + i)
    labels = [label for _, label in sections]
    section = np.asarray(sec, dtype=np.int64)
    if band_of is not None:
        labels = list(dict.fromkeys(band_of))
        section = np.asarray([labels.index(b) for b in band_of], dtype=np.int64)
    texts = [node_label(n) for n in nodes]
    widths = np.asarray([node_width(t) for t in texts], dtype=np.float64)
    return GraphArrays(
        ids=ids,
        nodes=nodes,
        src=np.asarray(src, dtype=np.int64),
        dst=np.asarray(dst, dtype=np.int64),
        section=section,
        section_labels=labels,
        module_paths=[n.module_path for n in nodes],
        widths=widths,
        heights=np.full(len(nodes), NODE_H),
        labels=texts,
    )
