"""Record the decomposed graph *before* Inductor's joint-graph pattern passes rewrite it.

Why a separate record: by the time AOTAutograd's partitions reach Inductor (and by the time our
recording backend sees the joint graph), Inductor's joint passes may already have replaced whole
decompositions by fused patterns. On the transformer example the softmax decomposition (amax,
sub, exp, sum, div) is rewritten into `_scaled_dot_product_flash_attention` and disappears, so
the article's "softmax becomes amax, sub, exp, sum, div" could not be shown from the later
graphs. Inductor's official `joint_custom_pre_pass` hook runs first thing in
`joint_graph_passes` (for training joints and inference graphs alike), after PrimTorch / AOT
decomposition and before any pattern matching: exactly the graph we want.

The record is one `compilescope_decompositions` artifact per graph, logged inside the compile
context (so it carries the compile id): `{"graph": "joint"|"inference", "nodes": [...]}` with
the fields `decompositions.py` reads. Works on torch 2.11–2.15 (the hook and `meta` keys exist
unchanged there).
"""

from __future__ import annotations

import json
from typing import Any

import torch
import torch.fx
from torch._inductor.custom_graph_pass import CustomGraphPass

from compiler_core.capture.graph_records import from_node_chain, target_name

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

ARTIFACT = "compilescope_decompositions"


def node_facts(node: torch.fx.Node, backward: bool) -> dict[str, Any]:
    """What the table needs of one node: its op, its Dynamo owner clues and its phase."""
    meta = node.meta
    source_fn = meta.get("source_fn_stack") or []
    return {
        "name": node.name,
        "op": node.op,
        "target": target_name(node.target),
        "inputs": [n.name for n in node.all_input_nodes],
        "from_node": from_node_chain(meta.get("from_node")),
        "source_fn": str(source_fn[-1][0]) if source_fn else "",
        "original_aten": str(meta["original_aten"]) if meta.get("original_aten") is not None else "",
        "seq_nr": meta.get("seq_nr"),
        "backward": backward,
    }


def backward_nodes(graph: torch.fx.Graph) -> set[str]:
    """Nodes that depend on a tangent: the backward half of a joint graph."""
    seen: set[str] = set()
    for node in graph.nodes:
        tangent = node.op == "placeholder" and node.name.startswith("tangents")
        if tangent or (node.op != "placeholder" and any(i.name in seen for i in node.all_input_nodes)):
            seen.add(node.name)
    return seen


def graph_payload(graph: torch.fx.Graph) -> dict[str, Any]:
    bw = backward_nodes(graph)
    kind = "joint" if bw else "inference"
    nodes = [node_facts(n, n.name in bw) for n in graph.nodes if n.op not in ("placeholder", "output")]
    return {"graph": kind, "nodes": nodes}


class PreJointPass(CustomGraphPass):
    """`joint_custom_pre_pass` that logs the graph, then runs whatever pass was there before."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, graph: torch.fx.Graph) -> None:
        from torch._logging import trace_structured

        trace_structured(
            "artifact",
            metadata_fn=lambda: {"name": ARTIFACT, "encoding": "json"},
            payload_fn=lambda: json.dumps(graph_payload(graph)),
        )
        if self.previous is not None:
            self.previous(graph)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """torch.compile deep-copies the Inductor config; a pass shares its recorder, never a copy."""
        return self

    def uuid(self) -> Any:
        """CustomGraphPass protocol: part of the cache key. None would bypass Inductor's and
        AOTAutograd's caches for every capture; on a hit the capture's AOT replay re-logs this
        pass's artifact (compiler_core/capture/hooks/aot_replay.py)."""
        return ("compilescope-decompositions", 1, getattr(self.previous, "uuid", lambda: None)())
