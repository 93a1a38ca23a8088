"""How Inductor's generated code spells each ATen op, and the op families the marker tells apart.

The kernel-line marker holds a line to a node only when the line spells the node's op: an
`aten.add` is ` + `, an `aten.relu` is `maximum`, a `div` by 512 is `* 0.001953125`. These
are properties of Inductor's code generation, the same in Triton and C++, written here as the
text shows them (`SPELLING_FORMS`). Each line says which forms its value spells (`KernelLine.spells`,
`kernel_line_kinds`): a C++ line finds them in its text, a Triton line in its syntax tree (a
`BinOp` of `Add` spells ` + `, a call of `triton_helpers.maximum` spells `maximum`), so the
marker asks the line, never the text.
"""

from __future__ import annotations

from functools import lru_cache

# How generated code spells an ATen op when it is not the op's own name.
SPELLINGS = {
    "add": (" + ",), "sub": (" - ",), "rsub": (" - ",), "mul": (" * ",), "div": (" / ", "div_rn"),
    "relu": ("maximum", "relu"), "neg": ("-tmp", "-("), "clamp_min": ("maximum",), "clamp_max": ("minimum",),
    "where": ("where",), "cat": ("tl.where(tmp",), "slice_scatter": ("tl.where(tmp",),
    "pow": ("pow", " * "), "gelu": ("erf", "tanh"), "abs": ("abs",),
    "sum": ("sum", "reduction"), "amax": ("max",), "mean": ("sum",), "convert_element_type": (".to(",),
    "le": (" <= ",), "lt": (" < ",), "ge": (" >= ",), "gt": (" > ",), "eq": (" == ",), "ne": (" != ",),
    "logical_and": (" & ",), "logical_or": (" | ",), "logical_not": ("== 0",), "isnan": ("isnan",),
    "reciprocal": ("1 / ", "reciprocal"), "full": ("tl.full(",), "scalar_tensor": ("tl.full(",),
    "inductor_random": ("rand",), "fma": ("fma",), "maximum": ("maximum",), "minimum": ("minimum",),
}  # fmt: skip
# How steps inside a node are spelled while an operand already holds the node's own value: a
# reduction's last `/ N`, var_mean's `x - mean` and its square before the second sum (a
# persistent reduction's welford), online softmax's `exp(x - max)`, a pow's repeated products.
INNER_SPELLINGS = {
    "mean": (" / ",), "var_mean": (" / ", " - ", " * "), "var": (" / ", " - ", " * "),
    "std": (" / ", " - ", " * ", "sqrt"), "prepare_softmax_online": (" - ", "exp", " * "),
    "logsumexp": (" - ", "exp", "log"), "pow": (" * ",),
}  # fmt: skip
# Every form above: what a line's reader reports its value spells (`KernelLine.spells`). A form
# that is an identifier (`maximum`, `exp`) is spelled by any name in the value that contains it.
SPELLING_FORMS = frozenset(f for table in (SPELLINGS, INNER_SPELLINGS) for forms in table.values()
                           for f in forms)  # fmt: skip
# (a bf16 / f16 constant is computed in f32)
LOW_FLOATS = {"bf16": "f32", "f16": "f32"}

# Ops whose value a load computes: an indirect load (its index holds a `tmp`) is the gather.
GATHER_OPS = ("embedding", "index", "gather", "take")
VIEW_OPS = {"view", "reshape", "_unsafe_view", "permute", "expand", "unsqueeze", "squeeze", "slice",
            "select", "t", "transpose", "as_strided", "alias", "_reshape_alias", "split",
            "split_with_sizes", "unbind", "chunk"}  # fmt: skip
# A node reads what is behind these too: a view is no code, a getitem picks a tuple op's output.
# A `clone` inside a fused kernel is a layout copy: rotary's `cos` reads `view_3 = view(clone(...))`.
SEE_THROUGH = VIEW_OPS | {"getitem", "clone"}
CONSTANT_OPS = {"full", "scalar_tensor", "iota", "arange", "zeros", "ones"}
REDUCTION_OPS = {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "var_mean", "var",
                 "prod", "any", "all", "prepare_softmax_online", "std", "logsumexp"}  # fmt: skip


@lru_cache(maxsize=8192)
def aten_op(target: str) -> str:
    """`aten.add.Tensor` / `torch.ops.aten.add.Tensor` → `add`. Cached: a few hundred targets
    over the 9k nodes of a deep post-grad graph."""
    parts = target.replace("torch.ops.", "").split(".")
    return parts[1] if len(parts) >= 2 and parts[0] in ("aten", "prims") else parts[-1]


def copy_node(fused: list[str], op_matched: set[str], ops: dict[str, str]) -> list[str]:
    """A store of a value no op line made: the kernel's one node whose op it never spells (a
    clone / layout copy; views are no code), else nothing; the kernel's last node would be a guess."""
    copies = [n for n in fused if n not in op_matched and ops.get(n) not in VIEW_OPS | {"getitem", "split"}]
    return copies[-1:] if len(copies) == 1 else []


def close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))
