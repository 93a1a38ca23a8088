"""An independent check of kernel-line marks against Inductor's own record of each kernel: the
oracle the kernel-line tests and `bench/kernel_line_marks.py` hold the product's marks to. It lives
with the tests because nothing in the product needs it, and keeping it apart from the marker keeps
its rules from drifting into the marker's own heuristics.

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
- a constant (`tmp5 = 0.0`) is a constant-making node (`full`, `scalar_tensor`, `iota`) that
  holds that value in that dtype.

And by data flow (the def-use chains of the kernel's `tmp`s), so a mark that names the right op
on the wrong line fails:

- an op line's operands each carry its node or a node it reads (a literal or a constant line is
  any op's scalar); a reduction's inner step (`x - mean` of var_mean) carries the node itself;
- a line whose value is reduced (it reaches a `tl.sum` / `max2` / accumulator line) is a node
  that some reduction of the kernel reads, or a reduction: var_mean's own `x - mean` and square
  cannot be the graph's later `sub` and `mul_2`; a reduction's inner step that is not its last
  `/ N` must feed a reduction;
- the op lines of a node together read all its inputs (where every operand line is marked);
- a store's node is the stored value's, or a clone / view of it;
- a cast (`tmp5 = tmp4.to(tl.float32)`) that is no convert node is a promotion inside the node
  every line reading it is marked with, and only where the fragment converts nothing it carries.

Marks of a node whose op the table below does not know are counted as unchecked, as are lines
of kernels without a fragment (C++ kernels without `comment_origin`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from compiler_core.analysis.kernel_fragment import (
    Flow,
    Fragment,
    fragments,
    literal_dtype,
    literal_value,
    numbers,
    op_name,
    statements,
    stored_value,
)
from compiler_core.session.model import Graph, Kernel

__all__ = ["Fragment", "LineCheck", "check_kernel", "check_kernels", "fragments", "op_name", "text_flow"]

_BUF = re.compile(r"buf\d+$")  # a returned buffer that is no node
_STORE = re.compile(r"tl\.store\(|\.store\(|\b(?:in_out|out)_ptr\d+\s*\[[^\]]*\]\s*=")
_LOAD = re.compile(r"tl\.load\(|loadu\(|\b(?:in_out|in)_ptr\d+\s*\[")
_ASSIGN = re.compile(r"^\s*(?:auto |[\w:<>]+ )?(_?tmp\d+)\s*=\s*(.*?);?\s*$")
_TMP = re.compile(r"\b_?tmp\d+\b")
_NAMED = re.compile(r"^\s*(_?tmp\d+_\w+)\s*=\s*(.*?);?\s*$")  # `_tmp3_max = tl.where(...)`
_MULTI = re.compile(r"^\s*(_?tmp\w+(?:,\s*_?tmp\w+)+)\s*=\s*(.*)$")
# In def-use chains, a reduction's named accumulators too (`_tmp3_max_next`, `tmp2_mean`).
_NAME = re.compile(r"\b_?tmp\d+(?:_[a-z0-9_]+)?\b")
# Inductor's random ops take (seed, offset): the offset is a position, not a value.
_RAND = re.compile(r"^(?:tl\.rand|tl\.randn|triton_helpers\.randint64|tl\.randint)\(")
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
    "cat": ("where(tmp",), "slice_scatter": ("where(tmp",), "le": (" <= ",), "lt": (" < ",),
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
    "iota": ("index", "x0", "x1", "r0_", "arange"), "sum": ("sum", " + "), "mean": ("sum", " / "),
    "amax": ("max",), "amin": ("min",), "max": ("max",), "min": ("min",),
    "var_mean": ("welford", "sum", " / "),
    "prepare_softmax_online": ("max", "sum", "exp", "online_softmax"), "any": ("any", " | ", "max"),
}  # fmt: skip
# Steps inside a reduction's own computation (`x - mean`, its square, `sum / N`; online
# softmax's `exp(x - max)`), and a pow's repeated products, spelled while the operand is already
# the node's own value.
_INNER_TOKENS = {
    "var_mean": (" - ", " * ", " / "), "var": (" - ", " * ", " / "),
    "std": (" - ", " * ", " / ", "sqrt"), "mean": (" / ",),
    "prepare_softmax_online": (" - ", "exp", " / ", " * "), "logsumexp": (" - ", "exp", "log"),
    "any": (" != ", ".to("), "sum": (".to(",),
}  # fmt: skip
# A line that moves a value without an op: a broadcast, a reduction's mask, a plain copy.
_CARRY = re.compile(
    r"^(?:tl\.broadcast_to\(|tl\.where\((?!tmp)|\(?_?tmp\d+\)?(?:\[[:, None]*\])?$|"
    r"at::vec::Vectorized<\w+>\(tmp\d+\)$)"
)
_INDIRECT = re.compile(r"_ptr\d+ \+ \(?[^,]*\btmp\d+")  # a load whose address holds a tmp
# Ops whose value a store makes from a loaded input, with no line of their own.
_COPIES = {"constant_pad_nd", "clone", "_to_copy", "copy", "slice_scatter", "select_scatter"}
_PURE_CAST = re.compile(r"^\(?tmp\d+\)?\.to\([\w.]+\)$")
_CONSTANT_OPS = {"full", "scalar_tensor", "iota", "arange", "zeros", "ones", "empty"}
_MULTI = re.compile(r"^\s*(_?tmp\w+(?:,\s*_?tmp\w+)+)\s*=\s*(.*)$")
_MASKED = re.compile(r"^tl\.where\(tmp\d+, tmp\d+, (tmp\d+)\)$")
# An expression of index variables and literals alone (`x0`, `r0_1 + 512*x0`, `(-32) + x2`).
_INDEX_EXPR = re.compile(r"^[\sxyzr0-9_+\-*/%()]*\b[xyzr]\w*\b[\sxyzr0-9_+\-*/%()]*$")


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


def check_kernel(kernel: Kernel, frag: Fragment, post: Graph | None = None) -> LineCheck:
    """Every mark of `kernel.line_nodes` against `frag` (see the module docstring). `post`, when
    given, lets a load through a view chain (`mm_3` read as `view_12`) count as the view's read."""
    result = LineCheck()
    inputs = {n.name: n.inputs for n in post.nodes} if post is not None else {}
    ops = {n.name: op_name(n.target) for n in post.nodes} if post is not None else {}
    for name, (op, args) in frag.nodes.items():  # the fragment's own record wins
        inputs[name], ops[name] = args, ("alias" if frag.identity(name) else op)
    reductions = {n for n, (op, _) in frag.nodes.items() if op in _REDUCTIONS}
    readable = set(frag.placeholders) | reductions
    readable |= {n for n, (op, _) in frag.nodes.items() if op in _GATHERS}
    readable |= {a for _, args in frag.nodes.values() for a in args if a not in frag.nodes}
    readable |= _view_sources(readable, inputs, ops)
    upstream = _ancestors(reductions, inputs, ops)  # what a reduction's input may be made of
    source = statements(kernel.source.split("\n"))
    flow = text_flow(source)
    valued = flow.valued()
    kinds: dict[int, str] = {}
    matches: dict[int, re.Match[str] | None] = {}
    for i, line in enumerate(source, start=1):
        m = _ASSIGN.match(line)
        kind = _kind(line, m)
        if m is None and (multi := _MULTI.match(line)) and _REDUCTION_LINE.search(multi.group(2)):
            kind = "reduction"  # `tmp3, tmp4, tmp5 = triton_helpers.welford(...)`: var_mean's parts
        kinds[i], matches[i] = kind, m
    into_reduction = flow.into_reduction({i for i, k in kinds.items() if k == "reduction"})
    carried: dict[int, set[str]] = {}  # line -> its marks, or a mark-less carry's operand's marks
    literals: dict[str, float] = {}  # tmp -> value of a literal line (`tl.full([1, 1], 0.1, ...)`)
    literal_lines: set[int] = set()  # literals, index arithmetic, fills: no operand of a node
    index_only: set[int] = set()  # computed from index variables and literals alone
    fills: set[int] = set()  # a masked load's fill value
    loaded: set[int] = set()  # a loaded value, also once broadcast or masked
    iota = any(op in ("iota", "arange") for op, _ in frag.nodes.values())
    verdicts: dict[tuple[int, str], str | None] = {}
    for i, line in enumerate(source, start=1):
        marks = kernel.line_nodes.get(str(i), ())
        m, kind = matches[i], kinds[i]
        counted = kind != "other"
        uses = flow.uses.get(i, [])
        if m and kind == "load":
            loaded.add(i)
        elif m and kind == "carry" and uses and all(j in loaded for j in uses):
            loaded.add(i)  # a broadcast / mask of a loaded value: the load line is its line
            counted = False
        if m and kind in ("op", "constant", "carry"):
            expr = m.group(2)
            value = literal_value(expr, literals)
            if value is not None and (kind == "constant" or all(j in literal_lines for j in uses)):
                literals[m.group(1)] = value
            if expr.startswith("tl.full(tmp"):
                fills.add(i)
                counted = False
            elif (w := _MASKED.match(expr)) and any(j in fills and source[j - 1].strip().startswith(
                    w.group(1) + " ") for j in uses):  # fmt: skip
                kind = kinds[i] = "carry"  # Inductor's masked(): `tl.where(mask, value, fill)` is `value`
            if all(j in index_only or j in literal_lines for j in uses) and (
                any(j in index_only for j in uses) or _INDEX_EXPR.match(expr)
            ):
                index_only.add(i)
        # Lines that compute no node's value are not computing lines: index arithmetic (a tmp
        # no stored value or reduction depends on, only load/store addresses and masks: the
        # embedding index's bound wrap, dropout's offset; or one made of index variables and
        # literals alone, as a cat's range masks, unless the kernel has an iota), a literal no
        # constant-making node of the fragment holds (`tl.full([1, 1], 512.0, ...)` is
        # `div(x, 512)`'s operand; `0.1` is `gt(x, 0.1)`'s; a looped reduction's `_tmp` start),
        # an op on literals alone (`tmp14.to(tl.float32)` of the literal 512), and a masked
        # load's fill value (`tl.full(tmp13.shape, 0.0, ...)`); nor is a broadcast or mask of a
        # loaded value (above: its value is the loaded node's, whose line is the load).
        if counted and m and kind not in ("load", "store"):
            expr = m.group(2)
            index = i not in valued or (i in index_only and not iota)
            constant = kind == "constant" and not _INDEX_EXPR.match(expr)
            literal = constant and not (_numbers(expr) & frag.constants)
            literal |= constant and m.group(1).startswith("_")  # an accumulator's start
            literal |= kind == "op" and bool(uses) and all(j in literal_lines for j in uses)
            if literal or i in fills or (i in index_only and not (iota and i in valued)):
                literal_lines.add(i)
            counted = not (index or literal)
        if counted:
            result.lines += 1
            result.marked += bool(marks)
            if not marks:
                result.unmarked.append((kernel.name, i, line.strip()))
        if marks:
            carried[i] = set(marks)
        elif kind == "reduction":  # an unmarked reduction line still makes one of the kernel's reductions
            carried[i] = set(reductions)
        elif kind == "carry" or i in loaded or (m is not None and _PURE_CAST.match(m.group(2))):
            carried[i] = set().union(*(carried.get(j, set()) for j in uses))  # a cast carries its operand
        if kind == "reduction" and m is None and (multi := _MULTI.match(line)):
            carried[i] = set(marks)
        # a literal or constant-node operand is any op's scalar (Inductor shares one `tl.full`)
        operands = [carried.get(j, set()) for j in uses if j not in literal_lines and kinds[j] != "constant"]
        if kind == "load" and len(marks) > 1 and _INDIRECT.search(line):
            # an indirect load of what a gather's input is computed from, marked with the gather
            # too: Inductor applies the gather's index here, so downstream its value is its input's
            for g in marks:
                if frag.nodes.get(g, ("",))[0] in _GATHERS:
                    ops[g] = "alias"
        lits = [literals[t] for t in _TMP.findall(m.group(2)) if t in literals] if m else []
        for node in marks:
            rule = _rule(kind, node, m, frag, reductions, readable, operands, lits, inputs, ops)
            if rule == "" and kind == "store":
                rule = _stored(node, [carried.get(j, set()) for j in flow.value.get(i, [])], frag,
                               inputs, ops)  # fmt: skip
            if rule == "" and kind == "op" and m is not None and _PURE_CAST.match(m.group(2)):
                rule = _cast(i, node, frag, flow, kernel.line_nodes, operands)
            if rule == "" and i in into_reduction and node not in upstream and kind != "store":
                rule = "flow: its value is reduced, but the node feeds no reduction of the kernel"
            if (rule == "" and kind == "op" and node in reductions and any(node in s for s in operands)
                    and " / " not in (m.group(2) if m else "") and i not in into_reduction):  # fmt: skip
                rule = "flow: an inner step of a reduction that feeds none"
            verdicts[(i, node)] = rule
    _coverage(kernel, kinds, flow, carried, literal_lines, frag, inputs, ops, verdicts)
    for (i, node), rule in sorted(verdicts.items()):
        if rule is None:
            result.unchecked += 1
            continue
        result.checked += 1
        if rule == "":
            result.passed += 1
        else:
            result.failures.append((kernel.name, i, source[i - 1].strip(), node, rule))
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
    return numbers(text)


def _reads(node: str, inputs: dict[str, tuple[str, ...]], ops: dict[str, str]) -> set[str]:
    """What a node reads: its arguments and, behind a view / getitem / identity argument, what
    that one reads (a view is no code)."""
    args = set(inputs.get(node, ()))
    return args | _view_sources(args, inputs, ops)


def _ancestors(nodes: set[str], inputs: dict[str, tuple[str, ...]], ops: dict[str, str]) -> set[str]:
    """`nodes` and everything they are computed from."""
    out: set[str] = set()
    todo = list(nodes)
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo.extend(inputs.get(n, ()))
    return out


def _stored(node: str, value: list[set[str]], frag: Fragment, inputs: dict[str, tuple[str, ...]],
            ops: dict[str, str]) -> str:  # fmt: skip
    """A store's node must be the stored value's, or a copy / view of it (a clone the kernel
    materialises: `clone(permute(mul_4))`, the getitem of a tuple op the kernel computes)."""
    marks = set().union(*value) if value else set()
    if not marks or node in marks or _copy_sources(node, inputs, ops) & marks:
        return ""
    if frag.nodes.get(node, ("",))[0] in _COPIES and marks & set(inputs.get(node, ())):
        return ""  # a copy-like op the store completes from its input (`constant_pad_nd` of a load)
    return "store: the stored value is not the node's, nor one it copies"


def _copy_sources(node: str, inputs: dict[str, tuple[str, ...]], ops: dict[str, str]) -> set[str]:
    """What a view / clone chain ending in `node` starts from (a layout copy holds its value)."""
    return _view_sources({node}, inputs, ops) if ops.get(node, "") in _VIEWS else set()


def _cast(line: int, node: str, frag: Fragment, flow: Flow, line_nodes: dict[str, tuple[str, ...]],
          operands: list[set[str]]) -> str:  # fmt: skip
    """`tmp5 = tmp4.to(tl.float32)` marked with a node that is no convert: an implicit type
    promotion inside the node that consumes it (`mul(gt, x)` of a bool mask), which holds only
    when the fragment has no convert of that operand, every line reading the cast is marked
    with the same node, and the node reads the operand."""
    if frag.nodes.get(node, ("",))[0] in ("convert_element_type", "_to_copy"):
        return ""
    mine = set().union(*operands) if operands else set()
    converts = {n for n, (op, args) in frag.nodes.items() if op in ("convert_element_type", "_to_copy")
                and set(args) & mine}  # fmt: skip
    if converts:
        return "cast: the fragment converts this operand itself"
    users = flow.users.get(line, [])
    if not users or any(node not in line_nodes.get(str(u), ()) for u in users):
        return "cast: not every line reading it is its node's"
    return ""


def _coverage(kernel: Kernel, kinds: dict[int, str], flow: Flow, carried: dict[int, set[str]],
              literal_lines: set[int], frag: Fragment, inputs: dict[str, tuple[str, ...]],
              ops: dict[str, str], verdicts: dict[tuple[int, str], str | None]) -> None:  # fmt: skip
    """A node's lines must read all of its inputs: the operands of the op lines marked with it
    (its own inner steps seen through) carry every argument of the node, or what is behind a
    view of it, or a constant it folds into a literal. Fails the node's last op line."""
    lines: dict[str, list[int]] = {}
    for (i, node), rule in verdicts.items():
        if kinds[i] == "op" and rule == "":
            lines.setdefault(node, []).append(i)
    for node, mine in lines.items():
        if node not in frag.nodes or frag.nodes[node][0] in _REDUCTIONS:
            continue
        covered: set[str] = set()
        unknown = False
        todo = list(mine)
        seen: set[int] = set()
        while todo:  # through the node's own lines and mark-less carries to the lines it reads
            i = todo.pop()
            for j in flow.uses.get(i, []):
                if j in seen or j in literal_lines:
                    continue
                seen.add(j)
                marks = carried.get(j, set())
                if not marks and kinds[j] in ("op", "reduction", "load"):
                    unknown = True  # an unmarked operand may be the input: nothing to hold it to
                covered |= marks - {node}
                if node in marks or not marks:
                    todo.append(j)
        if unknown:
            continue
        for x in frag.nodes[node][1]:
            if x in covered or ops.get(x, "") in _CONSTANT_OPS:
                continue
            behind = _view_sources({x}, inputs, ops) if ops.get(x, "") in _VIEWS else set()
            if behind & covered:
                continue
            last = max(mine)
            verdicts[(last, node)] = f"op: reads none of {x}, an input of its node"
            break


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
          readable: set[str], operands: list[set[str]], lits: list[float],
          inputs: dict[str, tuple[str, ...]], ops: dict[str, str]) -> str | None:  # fmt: skip
    """'' when the mark passes, the broken rule's name when not, None when it cannot be checked.
    `operands`: the marks each non-literal operand's line carries; `lits`: literal operands."""
    if kind == "store":
        bare = any(_BUF.match(r) for r in frag.returns)  # partials, or an in-place buffer
        # the buffer named after a later in-place op on this value (`return %index_put` of a
        # kernel that writes the zeros `full_default_198` which index_put_ then scatters into)
        bare |= any(r not in frag.nodes and node in inputs.get(r, ()) for r in frag.returns)
        # or a view of the value: the buffer is named after the reshape the graph returns
        # (through a chain of them: `view_558 = view(view(clone_100))` of a kernel that stores clone_100)
        bare |= any(frag.nodes.get(r, ("",))[0] in _VIEWS and node in _view_sources({r}, inputs, ops)
                    for r in frag.returns)  # fmt: skip
        return (
            ""
            if node in frag.returns or (bare and node in frag.nodes)
            else "store: not a value the kernel returns"
        )
    if kind == "load":
        if m is not None and "load_seed_offset" in m.group(2):  # Inductor's seed lookup is a load
            seed = frag.nodes.get(node, ("",))[0] == "inductor_lookup_seed"
            return "" if seed else "load: not the seed lookup"
        return "" if node in readable else "load: not a value the kernel reads"
    if kind == "reduction":
        return "" if node in reductions else "reduction: not a reduction node of the kernel"
    if kind == "carry" and m is not None:
        return "" if any(node in s for s in operands) else "carry: not a node of its operands"
    if kind == "constant":
        op = frag.nodes.get(node, ("",))[0]
        if op not in _CONSTANT_OPS:
            return "constant: not a constant-making node of the kernel"
        value = _numbers(m.group(2)) if m is not None else set()
        held = frag.scalars.get(node, set())
        dtype = literal_dtype(m.group(2)) if m is not None else None
        held_dtype = frag.dtypes.get(node, dtype or "")
        if dtype and {"bf16": "f32", "f16": "f32"}.get(held_dtype, held_dtype) != dtype:
            return "constant: not its dtype"
        return "" if not value or not held or value & held or op == "iota" else "constant: not its value"
    if kind == "op" and m is not None:
        if node not in frag.nodes:
            return "op: not a node of the kernel"
        op, _ = frag.nodes[node]
        if _TOKENS.get(op.rstrip("_")) is None and _only_compute(frag, ops) == node:
            return ""  # the kernel computes this one node (a max pool and its offsets): every line is it
        expr = m.group(2)
        tokens = _TOKENS.get(op.rstrip("_"))
        if tokens is None:
            return None
        inner = any(node in s for s in operands)
        if inner and op == "pow" and lits:
            return "op: a pow's inner product multiplies by its base, not by a literal"
        spelled = any(t in expr for t in tokens)
        spelled |= inner and any(t in expr for t in _INNER_TOKENS.get(op, ()))
        # `div(x, 512)` is emitted as `x * 0.001953125`
        spelled |= op == "div" and " * " in expr and any(
            c and abs(v * c - 1) < 1e-6 for v in lits for c in frag.scalars.get(node, ()))  # fmt: skip
        spelled |= bool(_PURE_CAST.match(expr)) and not inner  # a promotion inside the node (`_cast`)
        if not spelled:
            return f"op: line does not spell {op}"
        reads = _reads(node, inputs, ops) | {node}
        if any(s and not s & reads for s in operands):
            return "op: reads a value its node does not read"
        return ""
    return None


def _only_compute(frag: Fragment, ops: dict[str, str]) -> str | None:
    """The fragment's one computed node, when it has one: the others are views of it or of
    what it reads, getitems of its results, or values read from outside (`PlaceHolder`s)."""
    compute = [n for n, (op, _) in frag.nodes.items()
               if n not in frag.placeholders and op not in _VIEWS and not frag.identity(n)]  # fmt: skip
    return compute[0] if len(compute) == 1 else None


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


def text_flow(source: list[str]) -> Flow:
    """The def-use chains of a kernel's `tmp` lines read from its text alone, with regular
    expressions, in both languages: the oracle's own reading, independent of the marker's
    (`kernel_line_kinds.def_use`, from `ast` for Triton), which the tests hold equal to it."""
    flow = Flow()
    latest: dict[str, int] = {}
    for i, line in enumerate(statements(source), start=1):
        if "tmp" not in line:
            continue
        if _STORE.search(line):
            flow.value[i] = [latest[t] for t in _NAME.findall(stored_value(line)) if t in latest]
            for j in flow.value[i]:
                flow.users.setdefault(j, []).append(i)
            continue
        m = _ASSIGN.match(line) or _NAMED.match(line)
        multi = None if m else _MULTI.match(line)
        if m is None and multi is None:
            continue
        expr = (m or multi).group(2)  # type: ignore[union-attr]
        if not _LOAD.search(line):
            if _RAND.match(expr):
                expr = expr.split(",", 1)[0]
            flow.uses[i] = [latest[t] for t in _NAME.findall(expr) if t in latest]
            for j in flow.uses[i]:
                flow.users.setdefault(j, []).append(i)
        names = [m.group(1)] if m else [x.strip() for x in multi.group(1).split(",")]  # type: ignore[union-attr]
        for t in names:
            latest[t] = i
        flow.defs[i] = names[0]
    return flow
