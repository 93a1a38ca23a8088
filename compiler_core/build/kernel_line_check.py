"""An independent check of kernel-line marks against Inductor's own record of each kernel.

The real H200 logs carry no per-line provenance (`inductor_provenance_tracking_*` artifacts are
off by default, and even on they map kernels, not lines). What Inductor does write, above every
generated kernel, is a `# Graph fragment:` comment: the post-grad nodes the kernel was lowered
from (with their targets and arguments), the buffers it reads (`PlaceHolder`) and the values it
writes (`return %sum_24,%mul_471`). Every mark `kernel_lines` puts on a line is checked against
that record and against what the line itself spells, with rules written independently of the
marker's own heuristics:

- a store line's node is one the fragment returns, or any fragment node when it returns a bare
  buffer (`%buf75`: a split reduction's partials, an in-place `in_out_ptr`) or a later node that
  mutates the value in place (`%index_put` of the zeros it scatters into), or a view of it
  (`return %view_11` of a kernel that stores `mul_11`);
- a load line's node is one the kernel reads: a `PlaceHolder`, an argument of a fragment node
  from outside it (or a view chain back from one), a fragment reduction (a split reduction's
  partial sums) or a fragment gather (`embedding`: the load computes it);
- a reduction line (`tl.sum`, `max2`, a `_tmp` accumulator, welford) goes to a fragment
  reduction node (sum, mean, amax, var_mean, ...);
- a line that spells an op (`tmp6 = tmp4 * tmp5`) goes to a fragment node whose ATen op is
  spelled that way in generated code (`mul` → ` * `), `tl.where(xmask, ...)` (a reduction mask)
  spelling no op, and which reads (by the fragment's own arguments, through views) a node its
  operands' lines are marked with, when they are marked;
- a line that spells no op (`tl.broadcast_to`, a mask) carries a node of one of its operands;
- a constant (`tmp5 = 0.0`) is a constant-making node (`full`, `scalar_tensor`, `iota`).

Marks of a node whose op the table below does not know are counted as unchecked, as are lines
of kernels without a fragment (C++ kernels without `comment_origin`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from compiler_core.session.model import Graph, Kernel

_DEF = re.compile(r"^(\w+) = async_compile\.\w+\('(\w+)'", re.M)
_PLACEHOLDER = re.compile(r"^#\s+%(\w+) : .*?= PlaceHolder\[target=(\w+)\]")
_CALL = re.compile(r"^#\s+%(\w+) : .*?= call_function\[target=([\w.]+)\]\((.*)\)\s*$")
_RETURN = re.compile(r"^#\s+return\s+(.*)$")
_REF = re.compile(r"%(\w+)")
_BUF = re.compile(r"buf\d+$")  # a returned buffer that is no node
_STORE = re.compile(r"tl\.store\(|\.store\(|\b(?:in_out|out)_ptr\d+\s*\[[^\]]*\]\s*=")
_LOAD = re.compile(r"tl\.load\(|loadu\(|\b(?:in_out|in)_ptr\d+\s*\[")
_ASSIGN = re.compile(r"^\s*(?:auto |[\w:<>]+ )?(_?tmp\d+)\s*=\s*(.*?);?\s*$")
_TMP = re.compile(r"\b_?tmp\d+\b")
_REDUCTION_LINE = re.compile(
    r"tl\.(?:sum|max|min|reduce|argmax|argmin|prod|xor_sum|cumsum|cumprod)\(|triton_helpers\.\w*"
    r"(?:max2|min2|prod|welford|online_softmax|any)\w*\(|\b_tmp\d+\b|\btmp_acc\d+|welford_\w+\("
)
_REDUCTIONS = {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "var_mean", "var",
               "prod", "any", "all", "prepare_softmax_online", "std", "logsumexp"}  # fmt: skip
_GATHERS = {"embedding", "index", "gather", "take", "_unsafe_index"}
_VIEWS = {"view", "reshape", "_unsafe_view", "permute", "expand", "unsqueeze", "squeeze", "slice",
          "select", "t", "transpose", "as_strided", "alias", "split", "getitem", "clone",
          "_reshape_alias", "view_as_real", "view_as_complex", "reinterpret_tensor"}  # fmt: skip
# How Triton / C++ code spells an ATen op (from Inductor's TritonOverrides / CppOverrides).
_TOKENS: dict[str, tuple[str, ...]] = {
    "add": (" + ",), "sub": (" - ",), "rsub": (" - ",), "mul": (" * ",), "div": (" / ", "div_rn"),
    "true_divide": (" / ",), "floor_divide": ("//", "floordiv"), "remainder": (" % ", "remainder"),
    "neg": ("-tmp", "-(", "neg"), "relu": ("maximum", "relu", "max("), "clamp_min": ("maximum", "max("),
    "clamp_max": ("minimum", "min("), "clamp": ("maximum", "minimum"), "maximum": ("maximum",),
    "minimum": ("minimum",), "where": ("where(tmp", " ? ", "blendv"),
    "cat": ("where(tmp",), "le": (" <= ",), "lt": (" < ",),
    "ge": (" >= ",), "gt": (" > ",), "eq": (" == ",), "ne": (" != ",),
    "logical_not": ("== 0", "!", "logical_not"), "logical_and": (" & ", "&&"),
    "logical_or": (" | ", "||"), "bitwise_and": (" & ",), "bitwise_or": (" | ",),
    "convert_element_type": (".to(", "static_cast", "convert<", "c10::convert"),
    "_to_copy": (".to(", "static_cast", "convert<"), "exp": ("exp",), "exp2": ("exp2",),
    "expm1": ("expm1",), "log": ("log",), "log1p": ("log1p",), "log2": ("log2",), "sqrt": ("sqrt",),
    "rsqrt": ("rsqrt",), "erf": ("erf",), "tanh": ("tanh",), "sigmoid": ("sigmoid",), "sin": ("sin",),
    "cos": ("cos",), "abs": ("abs",), "pow": ("pow", " * "), "reciprocal": ("1 / ", "reciprocal", " / "),
    "sign": ("sign", " < ", " > "), "floor": ("floor",), "ceil": ("ceil",), "round": ("round",),
    "trunc": ("trunc",), "isnan": ("isnan", " != "), "isinf": ("isinf",), "fma": ("fma",),
    "full": ("tl.full(", "full"), "scalar_tensor": ("tl.full(", "full"),
    "inductor_random": ("rand",), "inductor_lookup_seed": ("load_seed", "seed"),
    "iota": ("index", "x0", "x1", "r0_", "arange"), "sum": ("sum",), "mean": ("sum", " / "),
    "amax": ("max",), "amin": ("min",), "max": ("max",), "min": ("min",),
    "var_mean": ("welford", "sum", " / "),
    "prepare_softmax_online": ("max", "sum", "exp", "online_softmax"), "any": ("any", " | ", "max"),
}  # fmt: skip
# A line that moves a value without an op: a broadcast, a reduction's mask, a plain copy.
_CARRY = re.compile(
    r"^(?:tl\.broadcast_to\(|tl\.where\((?!tmp)|\(?_?tmp\d+\)?(?:\[[:, None]*\])?$|"
    r"at::vec::Vectorized<\w+>\(tmp\d+\)$)"
)
_CONSTANT_OPS = {"full", "scalar_tensor", "iota", "arange", "zeros", "ones", "empty"}
_MULTI = re.compile(r"^\s*(_?tmp\w+(?:,\s*_?tmp\w+)+)\s*=\s*(.*)$")
_MASKED = re.compile(r"^tl\.where\(tmp\d+, tmp\d+, (tmp\d+)\)$")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:e[-+]?\d+)?|\b(?:inf|nan)\b")
# An expression of index variables and literals alone (`x0`, `r0_1 + 512*x0`, `(-32) + x2`).
_INDEX_EXPR = re.compile(r"^[\sxyzr0-9_+\-*/%()]*\b[xyzr]\w*\b[\sxyzr0-9_+\-*/%()]*$")


@dataclass
class Fragment:
    """Inductor's `# Graph fragment:` comment above one kernel definition."""

    placeholders: set[str] = field(default_factory=set)
    nodes: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)  # name -> (op, args)
    returns: set[str] = field(default_factory=set)
    constants: set[float] = field(default_factory=set)  # the literals of its constant-making nodes


@dataclass
class LineCheck:
    """Counts over checked marks: `passed` of `checked`; `lines`/`marked` over lines that compute
    (loads, ops, reductions, stores); `failures` as (kernel, line, text, node, rule)."""

    checked: int = 0
    passed: int = 0
    unchecked: int = 0
    lines: int = 0
    marked: int = 0
    failures: list[tuple[str, int, str, str, str]] = field(default_factory=list)
    unmarked: list[tuple[str, int, str]] = field(default_factory=list)  # computing lines, no mark

    def add(self, other: LineCheck) -> None:
        self.checked += other.checked
        self.passed += other.passed
        self.unchecked += other.unchecked
        self.lines += other.lines
        self.marked += other.marked
        self.failures += other.failures
        self.unmarked += other.unmarked

    @property
    def share(self) -> float:
        return self.passed / self.checked if self.checked else 1.0


def op_name(target: str) -> str:
    """`torch.ops.aten.mul.Tensor` / `aten.mul.Tensor` / `torch.ops.prims.convert_element_type.default`
    → `mul` / `convert_element_type`."""
    parts = target.replace("torch.ops.", "").split(".")
    if len(parts) >= 2 and parts[0] in ("aten", "prims", "inductor", "_inductor_test"):
        return parts[1]
    return parts[-1]


def fragments(output_code: str) -> dict[str, Fragment]:
    """Kernel name → its `Graph fragment`, read from the comment block above its definition."""
    lines = output_code.split("\n")
    out: dict[str, Fragment] = {}
    starts = {output_code.count("\n", 0, m.start()): m.group(1) for m in _DEF.finditer(output_code)}
    for line_no, name in starts.items():
        frag = Fragment()
        i = line_no - 1
        while i >= 0 and lines[i].lstrip().startswith("#"):
            text = lines[i].strip()
            if m := _PLACEHOLDER.match(text):
                frag.placeholders.add(m.group(1))
            elif m := _CALL.match(text):
                frag.nodes[m.group(1)] = (op_name(m.group(2)), tuple(_REF.findall(m.group(3))))
                if frag.nodes[m.group(1)][0] in _CONSTANT_OPS:
                    frag.constants.update(_numbers(m.group(3).split("kwargs")[0]))
            elif m := _RETURN.match(text):
                frag.returns.update(_REF.findall(m.group(1)))
            i -= 1
        if frag.nodes:
            out[name] = frag
    return out


def check_kernel(kernel: Kernel, frag: Fragment, post: Graph | None = None) -> LineCheck:
    """Every mark of `kernel.line_nodes` against `frag` (see the module docstring). `post`, when
    given, lets a load through a view chain (`mm_3` read as `view_12`) count as the view's read."""
    result = LineCheck()
    inputs = {n.name: n.inputs for n in post.nodes} if post is not None else {}
    ops = {n.name: op_name(n.target) for n in post.nodes} if post is not None else {}
    reductions = {n for n, (op, _) in frag.nodes.items() if op in _REDUCTIONS}
    readable = set(frag.placeholders) | reductions
    readable |= {n for n, (op, _) in frag.nodes.items() if op in _GATHERS}
    readable |= {a for _, args in frag.nodes.values() for a in args if a not in frag.nodes}
    readable |= _view_sources(readable, inputs, ops)
    carried: dict[str, set[str]] = {}  # tmp -> marks of its defining line
    source = kernel.source.split("\n")
    valued = _valued(source)
    index_only: set[str] = set()  # tmps computed from index variables and literals alone
    literals: set[str] = set()  # tmps holding a literal
    fills: set[str] = set()  # a masked load's fill value
    loaded: set[str] = set()  # tmps holding a loaded value, also once broadcast or masked
    iota = any(op in ("iota", "arange") for op, _ in frag.nodes.values())
    for i, line in enumerate(source, start=1):
        marks = kernel.line_nodes.get(str(i), ())
        m = _ASSIGN.match(line)
        kind = _kind(line, m)
        if m is None and (multi := _MULTI.match(line)) and _REDUCTION_LINE.search(multi.group(2)):
            kind = "reduction"  # `tmp3, tmp4, tmp5 = triton_helpers.welford(...)`: var_mean's parts
            carried.update({x.strip(): set(marks) for x in multi.group(1).split(",")})
        counted = kind != "other"
        if m and kind == "load":
            loaded.add(m.group(1))
        elif m and kind == "carry" and (ts := _TMP.findall(m.group(2))) and all(t in loaded for t in ts):
            loaded.add(m.group(1))  # a broadcast / mask of a loaded value: the load line is its line
            counted = False
        if m and kind in ("op", "constant", "carry"):
            tmps = _TMP.findall(m.group(2))
            if kind == "constant":
                literals.add(m.group(1))
            elif m.group(2).startswith("tl.full(tmp"):
                fills.add(m.group(1))
                counted = False
            elif (w := _MASKED.match(m.group(2))) and w.group(1) in fills:
                kind = "carry"  # Inductor's masked(): `tl.where(mask, value, fill)` is `value`
            if all(t in index_only or t in literals for t in tmps) and (
                any(t in index_only for t in tmps) or _INDEX_EXPR.match(m.group(2))
            ):
                index_only.add(m.group(1))
        # Lines that compute no node's value are not computing lines: index arithmetic (a tmp
        # no stored value or reduction depends on, only load/store addresses and masks: the
        # embedding index's bound wrap, dropout's offset; or one made of index variables and
        # literals alone, as a cat's range masks, unless the kernel has an iota), a literal no
        # constant-making node of the fragment holds (`tl.full([1, 1], 512.0, ...)` is
        # `div(x, 512)`'s operand; a looped reduction's `_tmp` start), and a masked load's fill
        # value (`tl.full(tmp13.shape, 0.0, ...)`); nor is a broadcast or mask of a loaded value
        # (above: its value is the loaded node's, whose line is the load).
        if counted and m and kind not in ("load", "store"):
            index = m.group(1) not in valued or (m.group(1) in index_only and not iota)
            literal = kind == "constant" and not (_numbers(m.group(2)) & frag.constants or iota)
            literal |= kind == "constant" and m.group(1).startswith("_")  # an accumulator's start
            counted = not (index or literal)
        if counted:
            result.lines += 1
            result.marked += bool(marks)
            if not marks:
                result.unmarked.append((kernel.name, i, line.strip()))
        if m:
            carried[m.group(1)] = set(marks)
        for node in marks:
            rule = _rule(kind, node, m, frag, reductions, readable, carried, inputs, ops)
            if rule is None:
                result.unchecked += 1
                continue
            result.checked += 1
            if rule == "":
                result.passed += 1
            else:
                result.failures.append((kernel.name, i, line.strip(), node, rule))
    return result


def check_kernels(output_code: str, kernels: Iterable[Kernel], post: Graph | None) -> LineCheck:
    """All generated kernels of one Inductor output; kernels without a fragment are unchecked."""
    frags = fragments(output_code)
    total = LineCheck()
    for k in kernels:
        if k.language == "extern":
            continue
        frag = frags.get(k.name)
        if frag is None:
            total.unchecked += sum(len(v) for v in k.line_nodes.values())
            continue
        total.add(check_kernel(k, frag, post))
    return total


def _numbers(text: str) -> set[float]:
    return {float(x) for x in _NUMBER.findall(text)}


def _valued(source: list[str]) -> set[str]:
    """Tmps a stored value or a reduction depends on, backwards through the lines that use them
    as operands: a load's address and mask, a store's address and mask are no operand."""
    valued: set[str] = set()
    for line in reversed(source):
        if _STORE.search(line):
            valued.update(_TMP.findall(_stored_value(line)))
            continue
        m = _ASSIGN.match(line)
        if m is None or _LOAD.search(line):
            continue
        if m.group(1) in valued:
            valued.update(_TMP.findall(m.group(2)))
    return valued


def _stored_value(line: str) -> str:
    """The stored expression: `tl.store(ptr, VALUE, mask)`, C++ `VALUE.store(ptr)` / `ptr[i] = VALUE`."""
    if "tl.store(" in line:
        depth, parts, cur = 0, [], ""
        for ch in line.split("tl.store(", 1)[1]:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        return parts[1] if len(parts) > 1 else ""
    if ".store(" in line:
        return line.split(".store(", 1)[0]
    return line.split("=", 1)[1] if "=" in line else line


def _kind(line: str, m: re.Match[str] | None) -> str:
    if _STORE.search(line):
        return "store"
    if _LOAD.search(line):
        return "load"
    if m is None:
        return "other"
    expr = m.group(2)
    if _REDUCTION_LINE.search(expr):
        return "reduction"
    if _CARRY.match(expr):
        return "carry"
    return "op" if _TMP.search(expr) else "constant"


def _rule(kind: str, node: str, m: re.Match[str] | None, frag: Fragment, reductions: set[str],
          readable: set[str], carried: dict[str, set[str]], frag_inputs: dict[str, tuple[str, ...]],
          frag_ops: dict[str, str]) -> str | None:  # fmt: skip
    """'' when the mark passes, the broken rule's name when not, None when it cannot be checked."""
    if kind == "store":
        bare = any(_BUF.match(r) for r in frag.returns)  # partials, or an in-place buffer
        # the buffer named after a later in-place op on this value (`return %index_put` of a
        # kernel that writes the zeros `full_default_198` which index_put_ then scatters into)
        bare |= any(r not in frag.nodes and node in frag_inputs.get(r, ()) for r in frag.returns)
        # or a view of the value: the buffer is named after the reshape the graph returns
        bare |= any(frag.nodes.get(r, ("",))[0] in _VIEWS and node in frag.nodes[r][1] for r in frag.returns)
        return (
            ""
            if node in frag.returns or (bare and node in frag.nodes)
            else "store: not a value the kernel returns"
        )
    if kind == "load":
        return "" if node in readable else "load: not a value the kernel reads"
    if kind == "reduction":
        return "" if node in reductions else "reduction: not a reduction node of the kernel"
    if kind == "carry" and m is not None:
        operands = {n for t in _TMP.findall(m.group(2)) for n in carried.get(t, ())}
        return "" if node in operands else "carry: not a node of its operands"
    if kind == "constant":
        op = frag.nodes.get(node, ("",))[0]
        return "" if op in _CONSTANT_OPS else "constant: not a constant-making node of the kernel"
    if kind == "op" and m is not None:
        if node not in frag.nodes:
            return "op: not a node of the kernel"
        op, args = frag.nodes[node]
        tokens = _TOKENS.get(op.rstrip("_"))
        if tokens is None:
            return None
        if not any(t in m.group(2) for t in tokens):
            return f"op: line does not spell {op}"
        operands = {n for t in _TMP.findall(m.group(2)) for n in carried.get(t, ())}
        if node in operands and op in _REDUCTIONS:
            return ""  # a reduction's decomposed last step (`mean` = its sum / N), spelled as it
        reads = set(args) | _view_sources(set(args), frag_inputs, frag_ops)
        return "" if not operands or operands & reads else "op: reads none of its operands' nodes"
    return None


def _view_sources(names: set[str], inputs: dict[str, tuple[str, ...]], ops: dict[str, str]) -> set[str]:
    """Nodes a view chain ending in one of `names` starts from (a kernel reads the base buffer)."""
    out: set[str] = set()
    todo = [n for n in names if ops.get(n, "") in _VIEWS]
    while todo:
        n = todo.pop()
        for x in inputs.get(n, ()):
            if x not in out:
                out.add(x)
                if ops.get(x, "") in _VIEWS:
                    todo.append(x)
    return out
