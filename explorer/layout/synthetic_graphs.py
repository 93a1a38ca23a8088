"""Session graphs shaped like real FX graphs of transformers, at any size (tests and bench).

Real trace logs top out at ~70 nodes, far from the 50k the canvas must handle, so this builds
the same shape at scale: a long chain of blocks with residual skips, a normed input fanning out
to q/k/v, parameters as module-less placeholders used once, and module paths nested 4 deep
(`model/layers/3/attn/q_proj`).
"""

from __future__ import annotations

from compiler_core.session import Graph, GraphKind, Node, SourceLoc, TensorMeta

_META = (TensorMeta(shape=(8, 128, 512), dtype="float32"),)


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[Node] = []

    def add(self, op: str, target: str, inputs: tuple[str, ...], path: str, base: str) -> str:
        name = f"{base}_{len(self.nodes)}"
        loc = SourceLoc("model.py", 10 + len(self.nodes) % 90, "forward", f"{base}(...)")
        self.nodes.append(Node(name, op, target, inputs, _META, loc, (), path))
        return name

    def linear(self, x: str, path: str) -> str:
        w = self.add("placeholder", "", (), "", "p_weight")
        return self.add("call_function", "torch.ops.aten.mm.default", (x, w), path, "mm")

    def fn(self, target: str, inputs: tuple[str, ...], path: str) -> str:
        return self.add("call_function", f"torch.ops.aten.{target}.default", inputs, path, target)


def _block(b: _Builder, x: str, path: str) -> str:
    h = b.fn("layer_norm", (x,), f"{path}/norm1")
    q, k, v = (b.linear(h, f"{path}/attn/{p}_proj") for p in "qkv")
    s = b.fn("bmm", (q, b.fn("transpose", (k,), f"{path}/attn")), f"{path}/attn")
    s = b.fn("softmax", (b.fn("div", (s,), f"{path}/attn"),), f"{path}/attn")
    o = b.linear(b.fn("bmm", (s, v), f"{path}/attn"), f"{path}/attn/o_proj")
    x = b.fn("add", (x, o), path)
    h = b.fn("layer_norm", (x,), f"{path}/norm2")
    h = b.fn("gelu", (b.linear(h, f"{path}/mlp/fc1"),), f"{path}/mlp/act")
    return b.fn("add", (x, b.linear(h, f"{path}/mlp/fc2")), path)


def transformer_graph(n_nodes: int, kind: str = "dynamo") -> Graph:
    """A graph of about `n_nodes` nodes (exactly, the tail is padded with a relu chain)."""
    b = _Builder()
    x = b.add("placeholder", "", (), "", "l_x")
    x = b.fn("embedding", (x, b.add("placeholder", "", (), "", "p_embed")), "model/embed")
    layer = 0
    while len(b.nodes) + 30 < n_nodes:
        x = _block(b, x, f"model/layers/{layer}")
        layer += 1
    x = b.fn("layer_norm", (x,), "model/norm")
    while len(b.nodes) < n_nodes - 1:
        x = b.fn("relu", (x,), "head")
    b.nodes.append(Node("output", "output", "output", (x,)))
    return Graph(kind=GraphKind(kind), nodes=tuple(b.nodes))
