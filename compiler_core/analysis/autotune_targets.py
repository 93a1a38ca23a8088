"""Which post-grad nodes an autotuning result decided, and which kernel its winner became.

Inductor's autotune hook reports an operation name (`mm`, `addmm`, `bmm`, `packed_linear`...)
and the sizes of its inputs, not the node it was lowering; and it tunes each (op, shapes) once
per process, so 32 identical q_proj matmuls share one result. The nodes are therefore the
post-grad nodes of that op family (mm, addmm, bmm, linear, conv) that read every reported size
(`addmm`'s bias is reported expanded to the output, so it is left out; CPU's `packed_linear`
reports the packed weight, which the `_mkl_linear` node also reads). The kernel: a generated
template kernel whose fused nodes include one of them when a template won, else the extern call
that holds one of them. Torch-free; runs while the session is built.
"""

from __future__ import annotations

import dataclasses
import re

from compiler_core.session.model import AutotuneResult, Graph, InductorOutput, Node

_DIMS = re.compile(r"(\d+(?:x\d+)*)")


def _op(target: str) -> str:
    parts = target.replace("torch.ops.", "").split(".")
    return parts[1] if len(parts) >= 2 and parts[0] in ("aten", "prims") else parts[-1]


def _reported_shapes(shape: str) -> list[tuple[int, ...]]:
    out = []
    for part in shape.split(","):
        m = _DIMS.search(part.strip())
        if m:
            out.append(tuple(int(d) for d in m.group(1).split("x")))
    return out


def _input_shapes(n: Node, by_name: dict[str, Node]) -> list[tuple[int, ...]]:
    out = []
    for i in n.inputs:
        src = by_name.get(i)
        meta = src.outputs[0] if src is not None and src.outputs else None
        if meta is not None and all(isinstance(d, int) for d in meta.shape):
            out.append(tuple(int(d) for d in meta.shape))
    return out


_FAMILIES = ("baddbmm", "addmm", "bmm", "mm", "linear", "conv")


def _family(op: str) -> str:
    """`packed_linear` and `_mkl_linear` are one family: the hook names the lowering, not the op."""
    return next((f for f in _FAMILIES if f in op), op)


def tuned_nodes(result: AutotuneResult, post: Graph) -> tuple[str, ...]:
    want = _reported_shapes(result.shape)
    if _family(result.op) in ("addmm", "baddbmm"):
        want = want[1:]  # the bias is reported expanded to the output's size
    by_name = {n.name: n for n in post.nodes}
    family = _family(result.op)
    out = []
    for n in post.nodes:
        if n.op != "call_function" or _family(_op(n.target)) != family or not want:
            continue
        have = _input_shapes(n, by_name)
        if all(have.count(s) >= want.count(s) for s in want):
            out.append(n.name)
    return tuple(out)


def winner_kernel(result: AutotuneResult, out: InductorOutput, nodes: tuple[str, ...]) -> str:
    mine = set(nodes)
    holding = [k for k in out.kernels if mine & set(k.fused_nodes)]
    extern_won = any(c.name == result.winner and c.kind == "extern" for c in result.choices)
    preferred = [k for k in holding if (k.language == "extern") == extern_won]
    pick = preferred or holding
    return pick[0].name if pick else ""


def resolve(result: AutotuneResult, out: InductorOutput) -> AutotuneResult:
    """`result` with `nodes` and `kernel` filled from `out` (kept when already known)."""
    if out.post_grad is None or result.nodes:
        return result
    nodes = tuned_nodes(result, out.post_grad)
    kernel = result.kernel or winner_kernel(result, out, nodes)
    return dataclasses.replace(result, nodes=nodes, kernel=kernel)

