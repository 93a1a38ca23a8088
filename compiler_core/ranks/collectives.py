"""The collectives a compiled graph issues, in order, with their sizes.

A collective inside a compiled graph is a functional-collective node
(`torch.ops._c10d_functional.all_reduce_.default`, `..all_gather_into_tensor..`,
`..reduce_scatter_tensor..`) followed by its `wait_tensor`. Every rank must issue the same
collectives in the same order with the same sizes, or the job hangs (a rank waits for a partner
that never comes) or fails; so the sequence per graph is what ranks are compared on.

The sequence is read from the graphs closest to what runs: Inductor's post-grad graphs, one per
partition (forward, then backward), else AOT's forward/backward/inference graphs, else the Dynamo
graph. The waits are left out (they pair with their collective and say nothing more).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from compiler_core.session.model import Compile, Graph, Node

# `_c10d_functional.all_reduce_.default` -> all_reduce; legacy `c10d.allreduce_` -> allreduce
_COLLECTIVE = re.compile(
    r"(?:^|\.)(?:_c10d_functional|c10d_functional|c10d|_dtensor)\.([a-z_]+?)_?(?:\.[a-z_]+)?$")
NOT_COLLECTIVES = frozenset({"wait_tensor", "wait", "barrier"})
DTYPE_BYTES = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
    "int8": 1, "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16, "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}  # fmt: skip


@dataclass(frozen=True)
class Collective:
    """One collective: its op (`all_reduce`), its first output's shape and dtype, bytes (None
    where a size is symbolic or the dtype unknown), and the node and graph it is in."""

    op: str
    shape: tuple[int | str, ...] = ()
    dtype: str = ""
    bytes: int | None = None
    node: str = ""
    graph: str = ""

    def key(self) -> tuple[str, tuple[int | str, ...], str]:
        """What ranks must agree on: the op, the shape and the dtype (not node names)."""
        return (self.op, self.shape, self.dtype)

    def describe(self) -> str:
        size = f" {_bytes_text(self.bytes)}" if self.bytes is not None else ""
        return f"{self.op} {self.dtype}{list(self.shape)}{size}"


def collective_op(target: str) -> str | None:
    """The collective a node target names (`all_reduce`), or None for any other op or a wait."""
    m = _COLLECTIVE.search(target)
    if m is None or m.group(1) in NOT_COLLECTIVES:
        return None
    return m.group(1)


def graph_collectives(graph: Graph, label: str = "") -> list[Collective]:
    out = []
    for node in graph.nodes:
        if node.op != "call_function" or ("c10d" not in node.target and "_dtensor" not in node.target):
            continue
        op = collective_op(node.target)
        if op is not None:
            out.append(_collective(op, node, label))
    return out


def compile_collectives(c: Compile) -> tuple[Collective, ...]:
    """The compile's collectives in the order its graphs run them (see the module docstring)."""
    post = [(str(o.graph), o.post_grad) for o in c.inductor if o.post_grad is not None]
    if post:
        return tuple(x for name, g in post for x in graph_collectives(g, name))
    if c.aot is not None:
        aot = [("forward", c.aot.forward), ("backward", c.aot.backward), ("inference", c.aot.inference)]
        found = [x for name, g in aot if g is not None for x in graph_collectives(g, name)]
        if found or any(g is not None for _, g in aot):
            return tuple(found)
    return tuple(graph_collectives(c.dynamo_graph, "dynamo")) if c.dynamo_graph is not None else ()


def _collective(op: str, node: Node, graph: str) -> Collective:
    meta = node.outputs[0] if node.outputs else None
    shape = tuple(meta.shape) if meta is not None else ()
    dtype = meta.dtype.removeprefix("torch.") if meta is not None else ""
    size: int | None = None
    if meta is not None and dtype in DTYPE_BYTES and all(isinstance(d, int) for d in shape):
        size = math.prod(int(d) for d in shape) * DTYPE_BYTES[dtype]
    return Collective(op, shape, dtype, size, node.name, graph)


def _bytes_text(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
