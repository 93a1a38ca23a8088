"""Kernels refused: an op Inductor generated code for on one side and called as an extern kernel
or ATen fallback on the other (or the reverse), among the kernels a compile pair did not pair.

What shows it is already in every session: Inductor names a generated kernel after the ATen ops
of the nodes it fuses (`cpp_fused_mul_rand_like_relu_0`, `triton_tem_fused_addmm_relu_0`), and
an extern call after its callee (`extern_kernels.mm:1`, `torch.ops.aten.rand_like.default:1`).
So `rand_like` in a kernel removed and an extern `aten.rand_like` added is the op refused by
the code generator (`fallback_random`, an op Inductor cannot lower); `mm` as an extern removed
and in a template kernel added is the reverse (max-autotune picking its own GEMM over ATen's).

Matched by op name only, each kernel at most once, in the order the sessions list them: two
kernels of one op in one partition pair in order. A kernel that only changed its fusion (no
extern on the other side names its op) is not listed: it is in the added/removed lists already.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler_core.diff.diff_result import KernelSwap
from compiler_core.session.model import Kernel
from compiler_core.trace.output_code import split_extern_name


def extern_op(name: str) -> str:
    """The op an extern call runs: `mm` for `extern_kernels.mm:1`, `rand_like` for
    `torch.ops.aten.rand_like.default:1` (any op namespace), `randint` for `aten.randint.low_out:1`."""
    parsed = split_extern_name(name)
    parts = (parsed[0] if parsed is not None else name).split(".")
    if parts[:2] == ["torch", "ops"]:
        return parts[3] if len(parts) > 3 else ""
    return parts[1] if len(parts) > 1 else parts[0]


def _fuses(kernel: Kernel, op: str) -> bool:
    """Whether the generated kernel's name lists `op` among the ops it fuses."""
    _, sep, ops = kernel.name.partition("fused_")
    return bool(sep and op) and f"_{op}_" in f"_{ops}_"


def kernel_swaps(removed: Sequence[Kernel], added: Sequence[Kernel]) -> tuple[KernelSwap, ...]:
    """Each op that went from a generated kernel (before) to an extern call (after), then each
    that went the other way: `removed` and `added` are a partition's unpaired kernels."""
    return (*_swaps(_generated(removed), _externs(added), to_extern=True),
            *_swaps(_generated(added), _externs(removed), to_extern=False))  # fmt: skip


def _generated(kernels: Sequence[Kernel]) -> list[Kernel]:
    return [k for k in kernels if k.language != "extern"]


def _externs(kernels: Sequence[Kernel]) -> list[Kernel]:
    return [k for k in kernels if k.language == "extern"]


def _swaps(generated: list[Kernel], externs: list[Kernel], to_extern: bool) -> list[KernelSwap]:
    out = []
    taken: set[str] = set()
    for ext in externs:
        op = extern_op(ext.name)
        gen = next((k for k in generated if k.name not in taken and _fuses(k, op)), None)
        if gen is None:
            continue
        taken.add(gen.name)
        before, after = (gen.name, ext.name) if to_extern else (ext.name, gen.name)
        out.append(KernelSwap(op=op, before=before, after=after, to_extern=to_extern))
    return out
