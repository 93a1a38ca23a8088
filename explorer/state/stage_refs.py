"""Refs of Inductor items, shared by the panes that show kernels and post-grad nodes."""

from __future__ import annotations

from compiler_core.session import Compile, Kernel, Ref


def kernel_ref(c: Compile, kernel: Kernel) -> Ref:
    return Ref.kernel(c.compile_id, kernel.graph, kernel.name, c.rank)


def post_grad_ref(c: Compile, graph: str, name: str) -> Ref:
    return Ref.post_grad_node(c.compile_id, graph, name, c.rank)
