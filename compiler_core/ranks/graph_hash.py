"""Structural signatures of graphs, so the same compile on two ranks can be compared cheaply.

A graph's signature is one short string per node, in graph order: its op, its target, where its
inputs come from (as positions in the graph, not names) and what it produces (shape and dtype).
Names are left out on purpose: two ranks that trace the same code name nodes alike, but a name
is not structure (a renamed placeholder is the same graph), while a changed shape or an extra op
is a different graph. The hash is taken over that list, so equal hashes compare ranks in O(1)
and unequal ones are walked once to name the first node where they part.

Order is kept rather than hashed away (networkx's Weisfeiler-Lehman hash would ignore it): for
ranks the question is "where does rank 7 start doing something else", which is a position.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from compiler_core.session.model import Graph, Node


def node_signature(node: Node, position: dict[str, int]) -> str:
    """`call_function|aten.add|3,5|f32[8,4]`: the node without its name. An input that is no
    node of this graph (a constant written by name) keeps its text."""
    inputs = ",".join(str(position[i]) if i in position else i for i in node.inputs)
    outputs = ";".join(f"{o.dtype}{list(o.shape)}" for o in node.outputs)
    return f"{node.op}|{node.target}|{inputs}|{outputs}"


def graph_signature(graph: Graph) -> tuple[str, ...]:
    position = {n.name: i for i, n in enumerate(graph.nodes)}
    return tuple(node_signature(n, position) for n in graph.nodes)


def structural_hash(graph: Graph) -> str:
    """16 hex digits over the graph's signature: equal for graphs of the same structure."""
    digest = hashlib.blake2b(digest_size=8)
    for sig in graph_signature(graph):
        digest.update(sig.encode("utf-8", "replace"))
        digest.update(b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class NodeDifference:
    """Where two graphs part: the position of the first differing node, and that node on each
    side ("" past a graph's end)."""

    position: int
    left: str
    right: str
    left_what: str = ""
    right_what: str = ""

    def describe(self, left_name: str, right_name: str) -> str:
        def side(name: str, node: str, what: str) -> str:
            return f"{name} has `{node}` ({what})" if node else f"{name}'s graph has ended"

        return (f"first difference at node {self.position}: {side(left_name, self.left, self.left_what)}, "
                f"{side(right_name, self.right, self.right_what)}")


def first_difference(left: Graph, right: Graph) -> NodeDifference | None:
    """The first node (in graph order) whose signature differs; None when the graphs agree."""
    a, b = graph_signature(left), graph_signature(right)
    for i in range(max(len(a), len(b))):
        sa = a[i] if i < len(a) else None
        sb = b[i] if i < len(b) else None
        if sa != sb:
            return NodeDifference(i, _name(left, i), _name(right, i), _what(left, i), _what(right, i))
    return None


def _name(graph: Graph, i: int) -> str:
    return graph.nodes[i].name if i < len(graph.nodes) else ""


def _what(graph: Graph, i: int) -> str:
    if i >= len(graph.nodes):
        return ""
    n = graph.nodes[i]
    shapes = ", ".join(f"{o.dtype}{list(o.shape)}" for o in n.outputs)
    return f"{n.op} {n.target}" + (f" -> {shapes}" if shapes else "")
