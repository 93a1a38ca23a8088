"""Refs of Inductor items, shared by the panes that show kernels and post-grad nodes."""

from __future__ import annotations

from compiler_core.session import Compile, Kernel, Ref, RefKind
from compiler_core.session.refs import graph_key


def kernel_ref(c: Compile, kernel: Kernel) -> Ref:
    return Ref(RefKind.KERNEL, c.compile_id, graph_key(kernel.graph, kernel.name), c.rank)


def post_grad_ref(c: Compile, graph: str, name: str) -> Ref:
    return Ref(RefKind.POST_GRAD_NODE, c.compile_id, graph_key(graph, name), c.rank)
