"""Kernel source line → post-grad nodes, traced through Inductor's generated code.

Inductor emits a fused kernel as loads, one assignment per fused op in the nodes' order, then
stores. Where its code allows, we follow that shape (Triton `tmpN = tl.load(in_ptr0 + ...)`, C++
`auto tmpN = in_ptr0[...]` / `Vectorized<float>::loadu(in_ptr0 + ...)`):

1. Parameters → buffers: one pass over `call()` in execution order. Inductor reuses one kernel
   for several layers (ResNet's per-block batch norm), and each call's `# Topologically Sorted
   Source Nodes: [...]` comment names that call's nodes (post-grad names in backward; Dynamo names,
   read through provenance `preToPost`, in forward). A kernel's lines are marked at its matched
   call: the first whose comment names any of its `fused_nodes` or resolves to no nodes, else
   its first call. Its parameters (`in_ptr0`, `in_out_ptr0`, `out_ptr1`, ...) pair positionally with
   that call's arguments (`kernel.run(buf1, arg1_1, 128, ...)` / `cpp_fused_x(buf0, primals_1,
   ...)`).
2. Buffers → nodes, as of that call: an argument that is a post-grad node name (`primals_1`) is
   that node; a `bufN` holds the value of the call that wrote it last (an extern call's
   `out=bufN` or `bufN = extern_kernels...` is its own node; a kernel's `out_ptr`/`in_out_ptr`
   argument holds, of the values the call must write (its nodes something outside it reads),
   the one the matched call's store into that parameter is marked with, else `fused_nodes[-1]`,
   else all of them; with none, `fused_nodes[-1]`). A later call of the same kernel writes its
   counterparts: same op at the same rank among the nodes its comment names, or, with no usable
   comment, the image of `fused_nodes` by data flow from the two calls' arguments.
   `bufB = bufA; del bufA  # reuse` (or a `reinterpret_tensor` of it) holds bufA's value only
   until the next write. A buffer that may hold several values is read as the one the reading
   kernel consumes (through `getitem`).
   `buf10 = buf9[0]` is a part of buf9's tuple op (the reader picks its getitem).
3. A load line links to the node that produced the buffer it reads; `in_ptr0 + load_seed_offset`
   is the fragment's `inductor_lookup_seed`.
4. An op line `tmpN = <expr>` links to the unused fused node whose ATen op the expr spells
   (`aten.add` → ` + `, `aten.relu` → `maximum`, `aten.le` → ` <= `, `div(x, 512)` → `x *
   0.001953125`...), proven by data flow and by the kernel's `# Graph fragment:` where there is
   one: every operand carries a node the candidate reads (through views and identities such as
   `pow(x, 1.0)`), every literal operand is one of its scalar arguments, and a line whose value
   is reduced (it reaches a `tl.sum`) only takes a node some reduction of the kernel reads: so
   var_mean's own `x - mean` and its square before the second sum are var_mean's, and the
   graph's later `sub` and `mul` take the lines after it. A line no fresh node fits, inside a node
   its operand already carries, is that node's inner step (var_mean's `/ N`, a pow's repeated
   product); a node is computed again only from other loads (a cat's other branch). An operand
   no line marked leaves the line unmarked. A cast no convert node of the fragment makes is a
   promotion inside the node that reads it (`mul(gt, x)` of a bool mask). Literals, index
   arithmetic, and values that reach no store or reduction (addresses, masks) compute no node.
   A constant line is the constant node holding its value and dtype; `x0` an iota. A reduction
   step (`tl.sum`, `max2`, welford, a looped reduction's `_tmpN` accumulator) links to the
   reduction its operand already carries (the accumulator; a split reduction's partials loaded
   back) or the next fused reduction reading its operand. A line that computes nothing
   (`tl.broadcast_to`, a reduction's mask `tl.where(xmask, ...)`, a copy) carries its operand's
   node on. The use pointer restarts with each loop body (a load after a store, a `for`), since
   C++ repeats the body for its vectorised and scalar tails and a looped reduction's second loop
   recomputes. A kernel whose fragment computes one node (a max pool with its offsets) has it
   on every line that makes a stored value. The tests' oracle holds these marks to the same
   fragments, with rules of its own (bench/kernel_line_marks.py).
5. A store line links to the node whose op made the `tmp` it stores when the fragment returns
   it, else to the clone a returned view chain materialises from it (`clone(permute(mul_4))`),
   else to the returned node it is a part or identity of; a loaded `tmp` stored is a copy: the
   clone of it, else the kernel's one node whose op no line spells; else to nothing.
6. As before, any line naming a fused node as a whole word (not as a call: `tl.where(` does not
   name a node called `where`) links to it.
Anything unmatched stays unlinked rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache, lru_cache

from compiler_core.build.kernel_fragment import (
    Flow,
    Fragment,
    literal_dtype,
    literal_value,
    numbers,
    parse_fragment,
    statements,
    stored_value,
)
from compiler_core.session.model import Graph, Kernel
from compiler_core.trace.output_code import split_extern_name

_DEF = re.compile(r"^(\w+) = async_compile\.\w+\('")
_PARAMS = re.compile(r"^\s*(?:def \w+|extern \"C\"[^(]*\w+)\s*\(([^)]*)\)", re.M)
_PTR = re.compile(r"\b((?:in_out|in|out)_ptr\d+)\b")
_ASSIGN = re.compile(r"^\s*(?:auto |[\w:<>]+ )?(_?tmp\d+)\s*=\s*(.*?);?\s*$")
# A reduction step: Triton's `tl.sum`/`max2`/welford, or a looped reduction's `_tmpN` accumulate.
_REDUCTION_LINE = re.compile(
    r"tl\.(?:sum|max|min|reduce|argmax|argmin|prod|xor_sum)\(|triton_helpers\.\w*(?:max2|min2|prod|"
    r"welford|online_softmax|any)\w*\(|\b_tmp\d+\b|\btmp_acc\d+|welford_\w+\("
)
# A step that moves a value without computing one: a broadcast, a reduction's mask
# (`tl.where(xmask, tmp1, 0)`, whose condition is no `tmp`), a plain copy, a vector splat.
_CARRY = re.compile(
    r"^(?:tl\.broadcast_to\(|tl\.where\((?!tmp)|\(?_?tmp\d+\)?(?:\[[:, None]*\])?$|"
    r"at::vec::Vectorized<\w+>\(tmp\d+\)$)"
)
_TMP = re.compile(r"\b_?tmp\d+\b")  # `_tmpN`: a looped reduction's accumulator
# A welford or online-softmax step's several results, and the accumulators they are named after
# (`tmp2_mean`, `_tmp3_max`).
_MULTI = re.compile(
    r"^\s*(_?tmp\w+(?:,\s*_?tmp\w+)+)\s*=\s*(triton_helpers\.\w*(?:welford|online_softmax)\w*\(.*)$"
)
_ACC = re.compile(r"\b_?tmp\d+_\w+")
# Inductor's masked(): a masked load's fill (`tl.full(tmp13.shape, 0.0, tmp13.dtype)`) and the
# `tl.where(mask, value, fill)` that keeps `value` where the mask holds (a cat's halves).
_FILL = re.compile(r"^tl\.full\(tmp\d+\.shape")
_MASKED = re.compile(r"^tl\.where\(tmp\d+, (tmp\d+), (tmp\d+)\)$")
_LOAD = re.compile(r"tl\.load\(|loadu\(|\b(?:in_out|in)_ptr\d+\s*\[")
_STORE = re.compile(r"tl\.store\(|\.store\(|\b(?:in_out|out)_ptr\d+\s*\[[^\]]*\]\s*=")
_CALL_ARGS = re.compile(r"^\s*([\w.]+?)(?:\.run)?\((.*)\)\s*$")
_OUT_ARG = re.compile(r"\bout=(buf\d+)")
_ASSIGNED = re.compile(r"^\s*(buf\d+)\s*=\s*(\w[\w.]*)\(")
_LOW_FLOATS = {"bf16": "f32", "f16": "f32"}
_PART = re.compile(r"^\s*(buf\d+)\s*=\s*(buf\d+)\[\d+\]\s*$")
_REUSE = re.compile(r"^\s*(buf\d+)\s*=\s*(?:reinterpret_tensor\(\s*)?(\w+)\b.*;\s*del\s+\w+")
_SOURCE_NODES = re.compile(r"^\s*#\s*(?:Topologically Sorted |Unsorted )?Source Nodes: \[([^\]]*)\]")
# How generated code spells an ATen op when it is not the op's own name.
_SPELLINGS = {
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
_INNER_SPELLINGS = {
    "mean": (" / ",), "var_mean": (" / ", " - ", " * "), "var": (" / ", " - ", " * "),
    "std": (" / ", " - ", " * ", "sqrt"), "prepare_softmax_online": (" - ", "exp", " * "),
    "logsumexp": (" - ", "exp", "log"), "pow": (" * ",),
}  # fmt: skip
# Inductor's random ops take (seed, offset): the offset is a position, not an operand.
_RAND = re.compile(r"^(?:tl\.rand|tl\.randn|triton_helpers\.randint64|tl\.randint)\(")
_PURE_CAST = re.compile(r"^\(?tmp\d+\)?\.to\([\w.]+\)$")
# An expression of index variables and literals alone (`x0`, `r0_1 + 512*x0`, `(-32) + x2`).
_INDEX_EXPR = re.compile(r"^[\sxyzr0-9_+\-*/%()]*\b[xyzr]\w*\b[\sxyzr0-9_+\-*/%()]*$")
# Ops whose value a load computes: an indirect load (its index holds a `tmp`) is the gather.
_GATHER_OPS = ("embedding", "index", "gather", "take")
_VIEW_OPS = {"view", "reshape", "_unsafe_view", "permute", "expand", "unsqueeze", "squeeze", "slice",
             "select", "t", "transpose", "as_strided", "alias", "_reshape_alias", "split",
             "split_with_sizes", "unbind", "chunk"}  # fmt: skip
# A node reads what is behind these too: a view is no code, a getitem picks a tuple op's output.
# A `clone` inside a fused kernel is a layout copy: rotary's `cos` reads `view_3 = view(clone(...))`.
_SEE_THROUGH = _VIEW_OPS | {"getitem", "clone"}
_CONSTANT_OPS = {"full", "scalar_tensor", "iota", "arange", "zeros", "ones"}
_REDUCTION_OPS = {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "var_mean", "var",
                  "prod", "any", "all", "prepare_softmax_online", "std", "logsumexp"}  # fmt: skip


GraphIndexes = tuple[dict[str, int], dict[str, str], dict[str, set[str]]]
# A kernel's matched call: what each parameter read, the nodes its comment named, what it stored.
_Matched = tuple[dict[str, list[str]], set[str], dict[str, list[str]]]


def graph_ops(post: Graph) -> GraphIndexes:
    """Per post-grad graph, once: node name -> position, -> short op name, -> what it reads. Built
    per kernel before, this was kernels x nodes (a second per 9k-node backward).

    What a node reads includes the nodes behind its view and getitem inputs: a kernel loads
    `addmm_2`'s buffer where the node it computes reads `view_10 = view(addmm_2)` (views are no
    code), and `add_1 = getitem_1 + eps` reads the `var_mean` a line before it computed."""
    ops = {n.name: aten_op(n.target) for n in post.nodes}
    reads: dict[str, set[str]] = {}
    for n in post.nodes:  # topological: a view's own reads are known before its users'
        behind = (reads.get(i, ()) for i in n.inputs if ops.get(i) in _SEE_THROUGH)
        reads[n.name] = set(n.inputs).union(*behind)
    return {n.name: i for i, n in enumerate(post.nodes)}, ops, reads


def kernel_line_nodes(kernel: Kernel, post: Graph | None, args: dict[str, list[str]],
                      indexes: GraphIndexes | None = None,
                      frag: Fragment | None = None) -> dict[str, tuple[str, ...]]:  # fmt: skip
    """`line_nodes` for a generated kernel (1-based line → post-grad nodes), given what each
    pointer parameter holds at the call it is marked for (`kernel_marks` builds that); pass
    `indexes` (`graph_ops(post)`) when calling for many kernels of one graph, and `frag`, the
    kernel's Graph fragment, where the output code has one (its scalar arguments, returns)."""
    if not kernel.source or post is None:
        return {}
    order, ops, node_inputs = indexes if indexes is not None else graph_ops(post)
    fused = sorted((n for n in kernel.fused_nodes if n in order), key=order.__getitem__)
    inputs = set().union(*(node_inputs.get(n, ()) for n in fused))
    inputs |= {x for i in inputs if ops.get(i) == "getitem" for x in node_inputs.get(i, ())}
    # A buffer that may hold one of several values holds the one this kernel reads from outside
    # (a tuple op's value is read through its `getitem`), else one it recomputes.
    outside = inputs - set(fused)
    args = {p: v if len(v) < 2 else [n for n in v if n in outside] or [n for n in v if n in inputs] or v
            for p, v in args.items()}  # fmt: skip
    # `buf68 = buf67[0]` of a tuple op (convolution_backward): the getitem of it this kernel reads
    getitems = [i for i in outside if ops.get(i) == "getitem"]
    args = {p: [g[0] if len(g := [x for x in getitems if n in node_inputs.get(x, ())]) == 1 else n for n in v]
            for p, v in args.items()}  # fmt: skip
    k = _KernelFlow(kernel, fused, ops, node_inputs, frag)
    loaded: dict[str, list[str]] = {}  # tmp -> nodes that produced the buffer it was loaded from
    out: dict[str, list[str]] = {}
    made: dict[str, list[str]] = {}  # tmp -> fused nodes whose op produced it (through plain copies)
    used: set[str] = set()
    stored = False
    fills: set[str] = set()
    literal: set[str] = set()  # tmps holding a literal or index arithmetic: no node's value
    values: dict[str, float] = {}  # tmp -> a literal's value
    promotions: dict[int, list[str]] = {}  # a cast no convert node makes: line -> operand's nodes
    written: dict[str, list[str]] = {}  # in_out_ptr -> what this kernel stored into it
    op_matched = {n for n in fused if _op_has_line(n, ops, kernel.source)}
    for i, line in enumerate(k.source, start=1):
        if line.lstrip().startswith("for "):  # a loop body recomputes what it needs afresh
            used = set()
        hits = _name_hits(line, fused)
        m = _ASSIGN.match(line)
        # what the assigned tmp held before (C++ reuses names across loop bodies): dropped below
        # unless this line gives it a value of its own
        before = (made.get(m.group(1)), loaded.get(m.group(1))) if m else (None, None)
        if m and m.group(1) not in _TMP.findall(m.group(2)):  # (`tmp3 = tmp3[:, None]` reads it)
            literal.discard(m.group(1))
            fills.discard(m.group(1))
            values.pop(m.group(1), None)
        if _STORE.search(line):
            stored = True
            value = [t for t in _TMP.findall(stored_value(line)) if t in made or t in loaded]
            held = [n for t in value[-1:] for n in made.get(t, [])]
            copied = [n for t in value[-1:] for n in loaded.get(t, [])]
            hits += k.store_node(held, copied, fused, op_matched)
            for p in _PTR.findall(line.split(",", 1)[0]):  # a later load of it reads this value
                if p.startswith("in_out_") and hits:
                    written[p] = list(hits)
        elif _LOAD.search(line):
            used, stored = (set(), False) if stored else (used, stored)
            read = [n for p in _PTR.findall(line) for n in written.get(p, args.get(p, ()))]
            gather = _gather_node(line, fused, ops, used)
            if "load_seed_offset" in line:  # Inductor's seed lookup is this load
                gather = next(
                    (n for n in fused if n not in used and ops.get(n) == "inductor_lookup_seed"), None
                )
            if gather is not None and read and not set(read) & k.reads(gather):
                # the gather's input is computed here (nll_loss gathers `sub_1` of the logits):
                # Inductor moved its index into this load of what the input is computed from
                used.add(gather)
                k.realize(gather)
                if m:
                    loaded[m.group(1)] = read
                read = [*read, gather]
            elif gather is not None:  # the load computes the gathered value (embedding lookup)
                used.add(gather)
                read = [gather]
                if m:
                    made[m.group(1)] = [gather]
            elif m:
                loaded[m.group(1)] = read
            hits += read
        elif multi := _MULTI.match(line):  # `tmp3, tmp4, tmp5 = triton_helpers.welford(tmp2_mean, ...)`
            names = [x.strip() for x in multi.group(1).split(",")]
            acc = [n for t in _ACC.findall(multi.group(2)) for n in made.get(t, made.get(t + "_next", []))]
            carried = [n for t in _TMP.findall(multi.group(2)) for n in made.get(t) or loaded.get(t, [])]
            node = acc[-1] if acc else _reduction_match(fused, ops, used, carried, node_inputs)
            if node is not None:
                used.add(node)
                hits.append(node)
                made.update({x: [node] for x in names})
        elif m and m.group(1).startswith("_") and not _TMP.search(m.group(2)):
            literal.add(
                m.group(1)
            )  # a loop reduction's accumulator starts as a constant (`_tmp3 = tl.full(...)`)
        elif m:
            tmp, expr = m.group(1), m.group(2)
            operand_tmps = _TMP.findall(expr.split(",", 1)[0] if _RAND.match(expr) else expr)
            lit = literal_value(expr, values)
            if lit is not None:
                values[tmp] = lit
            carried = [n for t in operand_tmps for n in made.get(t) or loaded.get(t, [])]
            masked = _MASKED.match(expr)
            node = None
            if _FILL.match(expr):
                fills.add(tmp)
            elif masked and masked.group(2) in fills:  # carries `value` on, as a broadcast does
                mine = made.get(masked.group(1), [])
                if mine:
                    made[tmp] = mine
                else:
                    loaded[tmp] = loaded.get(masked.group(1), [])
                hits += mine
            elif _REDUCTION_LINE.search(expr):
                node = _reduction_match(fused, ops, used, carried, node_inputs)
            elif _CARRY.match(expr):
                mine = [n for t in operand_tmps for n in made.get(t, [])][-1:]
                if mine:
                    made[tmp] = mine
                elif all(t in literal for t in operand_tmps):
                    literal.add(tmp)
                else:  # a loaded value broadcast: no line of this kernel's nodes (the load line is)
                    loaded[tmp] = [n for t in operand_tmps for n in loaded.get(t, [])]
                hits += mine
            elif not operand_tmps:  # a constant, or index arithmetic (`r0_1 + 512*x0`), or an iota
                node = k.constant(expr, i, used)
                if node is None or ops.get(node) != "iota":
                    literal.add(tmp)  # a constant node's value is any op's scalar operand too
            elif all(t in literal for t in operand_tmps) or (k.strict and i not in k.valued):
                literal.add(tmp)  # computed from literals / index variables alone, or an address
            else:
                sets = [set(made.get(t) or loaded.get(t, [])) for t in operand_tmps if t not in literal]
                # a literal operand (not a constant node's value, which the node reads) is a scalar
                lits = [values[t] for t in operand_tmps if t in literal and t in values and t not in made]
                if not k.strict:  # no fragment to hold the line to: what its known operands say
                    sets = [x for x in sets if x]
                if all(sets):
                    node = k.op(expr, i, used, sets, lits)
                    # else an inner step of a node its operand already carries, else a
                    # reduction's own first steps (`any` of a bool: `!= 0`)
                    step = None if node is not None else k.inner(expr, i, sets, lits)
                    step = (
                        step if step is not None or node is not None else k.pre_reduction(expr, i, used, sets)
                    )
                    if step is not None:
                        made[tmp] = [step]
                        hits.append(step)
                    elif node is None and _PURE_CAST.match(expr):  # no convert node: a promotion
                        promotions[i] = sorted(set().union(*sets))
                        if any(t in made for t in operand_tmps):
                            made[tmp] = [n for t in operand_tmps for n in made.get(t, [])]
                        else:
                            loaded[tmp] = [n for t in operand_tmps for n in loaded.get(t, [])]
            if node is not None:
                used.add(node)
                hits.append(node)
                # twins (same op on the same values: sum_15 and sum_17 of one where_6) share a line
                made[tmp] = [node, *k.squares(node, expr, used), *k.twins(node, set())]
                hits += made[tmp][1:]
                used.update(made[tmp])
        if m and before[0] is not None and made.get(m.group(1)) is before[0]:
            del made[m.group(1)]
        if m and before[1] is not None and loaded.get(m.group(1)) is before[1]:
            del loaded[m.group(1)]
        if hits:
            out[str(i)] = list(dict.fromkeys(hits))
    k.promote(promotions, out)
    k.single_node(out, literal)
    return {key: tuple(v) for key, v in out.items()}


class _KernelFlow:
    """One kernel's lines with what the fragment and the def-use chains prove about them."""

    def __init__(self, kernel: Kernel, fused: list[str], ops: dict[str, str],
                 node_inputs: dict[str, set[str]], frag: Fragment | None) -> None:  # fmt: skip
        self.source = statements(kernel.source.split("\n"))
        self.fused, self.ops, self.node_inputs, self.frag = fused, ops, node_inputs, frag
        self.flow = Flow.of(self.source)
        self.valued = self.flow.valued()
        reductions = {  # assignment lines (the def-use pass found them) that reduce
            i for i in self.flow.uses if _REDUCTION_LINE.search(self.source[i - 1].split("=", 1)[-1])
        }
        self.into_reduction = self.flow.into_reduction(reductions)
        self._reads: dict[str, set[str]] = {}
        # output parameters the kernel stores into (`out_ptr0`, `in_out_ptr1`)
        self.outputs = len({p for i in self.flow.value for p in _PTR.findall(self.source[i - 1])
                            if p.startswith(("out_", "in_out_"))})  # fmt: skip
        self.realized: set[str] = set()
        self._twin_key: dict[str, tuple[object, ...]] | None = None
        red_nodes = {n for n in fused if ops.get(n) in _REDUCTION_OPS}
        inside = set(fused)
        self.upstream: set[str] = set()
        todo = list(red_nodes)
        while todo:  # what a value that is reduced may be: a reduction or a fused node it reads
            n = todo.pop()
            if n not in self.upstream:
                self.upstream.add(n)
                todo.extend(x for x in self.reads(n) if x in inside)
        self.scalars = frag.scalars if frag is not None else {}
        # Without a fragment (C++ kernels logged without `comment_origin`) nothing checks the
        # marks, and the C++ reductions' `tmp_acc0_vec` accumulators are no `tmp` def-use chain:
        # an op line takes the node that reads one of its known operands, as before the fragment.
        self.strict = frag is not None
        self.computed_from: dict[str, set[str]] = {}  # node -> the tmps its line read

    def realize(self, gather: str) -> None:
        """A gather whose index an indirect load applies: its value is its input's, as a view's."""
        self.realized.add(gather)
        self._reads.clear()

    def reads(self, node: str) -> set[str]:
        """What `node` reads, through views and identities (`pow(x, 1.0)` is `x`)."""
        out = self._reads.get(node)
        if out is None:
            out = self._reads[node] = set(self.node_inputs.get(node, ()))
            if self.frag is not None:
                for x in [x for x in out if x in self.frag.nodes and self.frag.identity(x)]:
                    out |= self.node_inputs.get(x, set())
            for x in [x for x in out if x in self.realized]:
                out |= self.node_inputs.get(x, set())
        return out

    def _spelled(self, name: str, expr: str, lits: list[float]) -> bool:
        op = self.ops.get(name, "").rstrip("_")
        if not op:
            return False
        if op == "reciprocal" and " / " in expr and 1.0 in lits:  # `1 / x` with the 1 in a tmp
            return True
        if op == "sum" and " + " in expr:  # a reduction over 2 elements, unrolled (`x[0] + x[1]`)
            return len(lits) == 0 and expr.count("tmp") == 2 and len(set(_TMP.findall(expr))) == 2
        if op == "div" and " * " in expr:  # `div(x, 512)` is emitted as `x * 0.001953125`
            return any(c and abs(v * c - 1) < 1e-6 for v in lits for c in self.scalars.get(name, ()))
        return (op in expr and bool(_word_re(op).search(expr))) or any(
            s in expr for s in _SPELLINGS.get(op, ())
        )

    def _literals_fit(self, name: str, lits: list[float]) -> bool:
        """A literal operand is one of the node's scalar arguments (or its reciprocal for a div)."""
        held = self.scalars.get(name)
        if not lits or not held or self.ops.get(name) in _REDUCTION_OPS:
            return True
        div = self.ops.get(name) == "div"
        return all(any(_close(v, c) or (div and c and _close(v * c, 1.0)) for c in held) for v in lits)

    def op(self, expr: str, line: int, used: set[str], sets: list[set[str]], lits: list[float]) -> str | None:
        """The unused fused node the line computes: its op is spelled, every operand carries a
        node it reads, the literals are its scalars, and when the line's value is reduced, it is
        something a reduction of the kernel reads. The most operands read wins, then the earliest."""
        best: str | None = None
        score = 0.0
        if not sets:  # operands no line made known: only the kernel's one node spelled so
            spelled = [n for n in self.fused if n not in used and self._spelled(n, expr, lits)]
            return spelled[0] if len(spelled) == 1 else None
        for name in self.fused:
            if not self._spelled(name, expr, lits):
                continue
            if name in used and self.computed_from.get(name, set()) & set(_TMP.findall(expr)):
                continue  # a node is computed again only from other values (a cat's other branch)
            if name in used and best is not None:
                continue
            reads = self.reads(name)
            if not self._literals_fit(name, lits):
                continue
            if any(not s & reads for s in sets) if self.strict else sets and not any(s & reads for s in sets):
                continue
            if line in self.into_reduction and name not in self.upstream:
                continue
            overlap = sum(len(s & reads) for s in sets) - (0.5 if name in used else 0)
            if best is None or overlap > score:
                best, score = name, overlap
        if best is not None:
            self.computed_from.setdefault(best, set()).update(_TMP.findall(expr))
        return best

    def inner(self, expr: str, line: int, sets: list[set[str]], lits: list[float]) -> str | None:
        """A line inside a node an operand already carries: var_mean's `x - mean` and its square
        before the second sum, a pow's repeated product, a reduction's last `/ N`. The other
        operands carry what the node reads; a reduction's inner steps other than its `/ N` feed
        its reduction."""
        carried = set().union(*sets)
        for name in self.fused:  # in graph order: the same answer whatever the set order
            if name not in carried:
                continue
            op = self.ops.get(name, "")
            steps = _INNER_SPELLINGS.get(op, ())
            step = any(t in expr for t in steps)
            if not step and not (op not in _REDUCTION_OPS and self._spelled(name, expr, lits)):
                continue
            if op == "pow" and (lits or not self.scalars.get(name, set()) - {0.0, 1.0, 2.0}):
                continue  # a pow's inner product multiplies by its base; `x * x` is all of pow 2
            reads = self.reads(name) | {name}
            if any(not s & reads for s in sets):
                continue
            if op in _REDUCTION_OPS and " / " not in expr and line not in self.into_reduction:
                continue
            if line in self.into_reduction and name not in self.upstream:
                continue
            return name
        return None

    def twins(self, node: str, used: set[str]) -> list[str]:
        """Unused nodes of the fragment with the node's op, arguments and scalars: the same value,
        which Inductor's CSE computes on this one line (`sum_15 * 0.0078125` twice in ResNet's
        batch-norm backward)."""
        if self.frag is None or node not in self.frag.nodes:
            return []
        if self._twin_key is None:  # op, arguments up to twins, scalars, dtype; in fragment order
            self._twin_key = {}
            rep: dict[tuple[object, ...], str] = {}
            for n, (op, args) in self.frag.nodes.items():
                key = (op, tuple(rep.get(self._twin_key.get(a, ()), a) for a in args),
                       tuple(sorted(self.scalars.get(n, ()))), self.frag.dtypes.get(n))  # fmt: skip
                self._twin_key[n] = key
                rep.setdefault(key, n)
        mine = self._twin_key.get(node)
        return [
            n for n in self.fused if n != node and n not in used and mine and self._twin_key.get(n) == mine
        ]

    def squares(self, node: str, expr: str, used: set[str]) -> list[str]:
        """`x * x` that is the first product of `pow(x, 3)` is also the kernel's `pow(x, 2)`
        (Inductor lowers an integer pow to products and shares the common one)."""
        operands = _TMP.findall(expr)
        if self.ops.get(node) != "pow" or len(operands) != 2 or operands[0] != operands[1]:
            return []
        base = self.node_inputs.get(node, set())
        return [n for n in self.fused if n != node and n not in used and self.ops.get(n) == "pow"
                and self.scalars.get(n) == {2.0} and self.node_inputs.get(n, set()) == base]  # fmt: skip

    def pre_reduction(self, expr: str, line: int, used: set[str], sets: list[set[str]]) -> str | None:
        """A line whose value only reaches a reduction, which no node of the kernel spells (a
        cast of a bool to int64 before `sum` counts it, `x != 0` before `any`): the reduction's
        own lowering, when every operand is the reduction's input or its own earlier step."""
        if not self.strict or line not in self.into_reduction:
            return None
        if not _PURE_CAST.match(expr) and any(self._spelled(n, expr, []) for n in self.fused):
            return None
        for name in self.fused:
            if self.ops.get(name) in _REDUCTION_OPS and name not in used:
                reads = self.reads(name) | {name}
                if sets and all(s & reads for s in sets):
                    return name
        return None

    def constant(self, expr: str, line: int, used: set[str]) -> str | None:
        """A constant-making node holding the line's literal, or an iota spelled as its index."""
        if _INDEX_EXPR.match(expr):  # an iota, read along one axis or several (`x0`, `x1`)
            if line not in self.valued:
                return None
            return next((n for n in self.fused if self.ops.get(n) in ("iota", "arange")), None)
        value = numbers(expr)
        dtype = literal_dtype(expr)
        for name in self.fused:
            if name in used or self.ops.get(name) not in _CONSTANT_OPS or self.ops.get(name) == "iota":
                continue
            if (
                self.frag is not None
                and dtype
                and _LOW_FLOATS.get(self.frag.dtypes.get(name, dtype), self.frag.dtypes.get(name, dtype))
                != dtype
            ):
                continue  # (a bf16 / f16 constant is computed in f32)
            held = self.scalars.get(name)
            if (held and value & held) or (held is None and self.frag is None):
                return name
        return None

    def promote(self, promotions: dict[int, list[str]], out: dict[str, list[str]]) -> None:
        """A cast no convert node of the fragment makes is a promotion inside the node that reads
        it (`mul(gt, x)` of a bool mask): when every line reading it is marked with one node and
        that node reads the cast's operand."""
        for line, operand in promotions.items():
            if self.frag is None:
                continue
            users = self.flow.users.get(line, [])
            nodes = [set(out.get(str(u), ())) for u in users]
            common = set.intersection(*nodes) if nodes else set()
            for name in sorted(common):
                if set(operand) & self.reads(name) and name in self.fused:
                    out[str(line)] = [name]
                    break

    def single_node(self, out: dict[str, list[str]], literal: set[str]) -> None:
        """A kernel whose fragment computes one node (a max pool with its offsets: the rest are
        getitems and views) computes it on every line that makes a stored value."""
        if self.frag is None:
            return
        compute = [n for n in self.fused if n in self.frag.nodes and n not in self.frag.placeholders
                   and self.ops.get(n) not in _SEE_THROUGH and not self.frag.identity(n)]  # fmt: skip
        if len(compute) != 1:
            return
        for i, line in enumerate(self.source, start=1):
            m = _ASSIGN.match(line)
            if str(i) in out or m is None or i not in self.valued or m.group(1) in literal:
                continue
            if _LOAD.search(line) or not _TMP.search(m.group(2)) or _CARRY.match(m.group(2)):
                continue
            out[str(i)] = [compute[0]]
        for i, line in enumerate(self.source, start=1):
            if str(i) not in out and _STORE.search(line):
                value = [j for j in self.flow.value.get(i, []) if compute[0] in out.get(str(j), ())]
                if value:
                    out[str(i)] = self.store_node([compute[0]], [], self.fused, set()) or [compute[0]]

    def store_node(
        self, held: list[str], copied: list[str], fused: list[str], op_matched: set[str]
    ) -> list[str]:
        """A store's node: the value's own when the kernel returns it (or a bare buffer), the
        clone a returned view chain materialises from it (`clone(permute(mul_4))`), else the
        copy of a loaded value; with no fragment, the value's node or the kernel's one copy."""
        frag = self.frag
        if frag is None or not frag.returns:  # (older Inductors write no `return` in the fragment)
            return held[-1:] or _copy_node(fused, op_matched, self.ops)
        bare = any(r.startswith("buf") and r not in frag.nodes for r in frag.returns)
        for v in held[-1:] + copied[-1:]:
            if v in frag.returns or (bare and v in frag.nodes and v in held):
                return [v]
            for r in sorted(frag.returns):
                if frag.identity(r) and v in self.node_inputs.get(r, ()):
                    return [r]  # `add(iota, 0)`: the returned node is the stored value itself
                if self.ops.get(r) not in _SEE_THROUGH or v not in self.node_inputs.get(r, ()):
                    continue
                chain = [r, *sorted(self.node_inputs.get(r, ()))]
                copies = [c for c in chain if self.ops.get(c) == "clone" and c in frag.nodes
                          and (c == r or v in self.node_inputs.get(c, ()))]  # fmt: skip
                return copies[:1] or ([v] if v in held else [])
        named = [r for r in frag.returns if r in self.node_inputs or r in frag.nodes]
        if not held and len(frag.returns) == 1 and named and self.outputs == 1:
            return named  # the kernel's one output buffer holds the one value it returns
        return []


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))


def kernel_marks(output_code: str, kernels: Iterable[Kernel], post: Graph,
                 pre_to_post: dict[str, list[str]] | None = None,
                 indexes: GraphIndexes | None = None) -> dict[str, dict[str, tuple[str, ...]]]:  # fmt: skip
    """Kernel name → `line_nodes` for every generated kernel of one graph, in one pass over
    `call()` in execution order (rules 1-3), so linear in the output code: a kernel's lines are
    marked at its matched call, with the value each argument held at that moment, and what each
    call stores becomes the value of the buffers it writes."""
    kernels = list(kernels)
    indexes = indexes if indexes is not None else graph_ops(post)
    order, ops, _ = indexes
    pre_to_post = pre_to_post or {}
    by_op: dict[str, list[str]] = {}
    for n in post.nodes:
        by_op.setdefault(ops[n.name], []).append(n.name)
    flow = _Flow(post, ops)
    by_name = {k.name: k for k in kernels}
    extern_seen: dict[str, int] = {}
    current: dict[str, list[str]] = {}  # bufN -> nodes whose value it holds now
    marks: dict[str, dict[str, tuple[str, ...]]] = {}
    matched: dict[str, _Matched] = {}
    first: dict[str, dict[str, list[str]]] = {}  # kernel -> reads of its first call
    pending: list[str] | None = None  # names of the Source Nodes comment above the next call
    block: list[str] = []  # the comment lines above the current line
    frag_text: dict[str, list[str]] = {}  # kernel -> the comment block above its definition
    params_of: dict[str, tuple[str, ...]] = {}  # kernel -> its parameter names
    for line in output_code.split("\n"):
        if line.startswith("#"):
            block.append(line)
            continue
        if block:
            d = _DEF.match(line)
            if d and d.group(1) in by_name:
                frag_text[d.group(1)] = block
            block = []
        comment = _SOURCE_NODES.match(line)
        if comment:
            pending = [x.strip() for x in comment.group(1).split(",") if x.strip()]
            continue
        reuse = _REUSE.match(line)
        if reuse:  # same storage, same value until the next write to either name
            old = reuse.group(2)  # a graph input (`mm_222`) or an earlier buffer
            current[reuse.group(1)] = [old] if old in order else current.get(old, [])
            continue
        part = _PART.match(line)
        if part:  # `buf10 = buf9[0]`: a part of a tuple op's result (the reader picks its getitem)
            current[part.group(1)] = current.get(part.group(2), [])
            continue
        call = _CALL_ARGS.match(line)
        assigned = _ASSIGNED.match(line)
        callee = assigned.group(2) if assigned else call.group(1) if call else ""
        kernel = by_name.get(callee)
        if kernel is not None and kernel.language == "extern":
            kernel = None
        if kernel is None and callee.startswith(("extern_kernels.", "aten.", "torch.ops.")):
            extern_seen[callee] = extern_seen.get(callee, 0) + 1
            kernel = by_name.get(f"{callee}:{extern_seen[callee]}")
        if kernel is None:
            continue
        names, pending = pending, None
        if kernel.language == "extern" or not call:
            extern = kernel.language == "extern"
            nodes = _extern_nodes(kernel, by_op) if extern else list(kernel.fused_nodes[-1:])
            if extern:  # the comment above it names its node among the group's (backward)
                named = _call_nodes(names, order, pre_to_post, post.name == "backward")
                own = [n for n in named if ops.get(n) == _callee_op(kernel.name)]
                nodes = own if len(own) == 1 else nodes
            for buf in [assigned.group(1)] if assigned else _OUT_ARG.findall(line):
                current[buf] = nodes
            continue
        params = params_of.get(kernel.name)
        if params is None:
            params = params_of[kernel.name] = _params(kernel.source)
        pairs = list(zip(params, _split_args(call.group(2)), strict=False))
        reads = {p: [v] if v in order else [n for n in current.get(v, []) if n in order] for p, v in pairs}
        exact = _call_nodes(names, order, pre_to_post, post.name == "backward")
        ref = matched.get(kernel.name)
        first.setdefault(kernel.name, reads)
        if ref is None and (not exact or exact & set(kernel.fused_nodes)):
            marks[kernel.name] = kernel_line_nodes(
                kernel, post, reads, indexes, _frag(frag_text, kernel.name)
            )
            ref = matched[kernel.name] = (reads, exact, _stored(kernel, marks[kernel.name]))
        for p, v in pairs:
            if p.startswith(("out_", "in_out_")) and v not in order:
                current[v] = _written(kernel, p, ref, reads, exact, flow, order, ops)
    for k in kernels:  # no call's comment named its nodes: its first call's arguments, if any
        if k.language != "extern" and k.name not in marks:
            marks[k.name] = kernel_line_nodes(
                k, post, first.get(k.name, {}), indexes, _frag(frag_text, k.name)
            )
    return marks


def _frag(text: dict[str, list[str]], name: str) -> Fragment | None:
    """The kernel's Graph fragment, parsed only for kernels that are marked."""
    frag = parse_fragment(text[name]) if name in text else None
    return frag if frag is not None and frag.nodes else None


def _stored(kernel: Kernel, line_nodes: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Output parameter → nodes the store lines into it are marked with."""
    out: dict[str, list[str]] = {}
    for i, line in enumerate(kernel.source.split("\n"), start=1):
        if line_nodes.get(str(i)) and _STORE.search(line):
            for p in _PTR.findall(line):
                if p.startswith(("out_", "in_out_")):
                    out.setdefault(p, []).extend(n for n in line_nodes[str(i)] if n not in out.get(p, []))
    return out


def _written(kernel: Kernel, param: str, ref: _Matched | None,
             reads: dict[str, list[str]], exact: set[str], flow: _Flow, order: dict[str, int],
             ops: dict[str, str]) -> list[str]:  # fmt: skip
    """The nodes whose value a call leaves in its argument for output `param`: of the values the
    call must write (its nodes read outside it), those the matched call's store lines into `param`
    are marked with, carried over to this call's counterparts; else all of them (the reading
    kernel keeps the one it consumes); else `fused_nodes[-1]`."""
    last = [n for n in kernel.fused_nodes[-1:] if n in order]
    if ref is None:
        return last
    ref_reads, ref_exact, stored = ref
    nodes = stored.get(param, []) + last
    if reads is ref_reads:
        group = ref_exact or {n for n in kernel.fused_nodes if n in order}
    elif exact and ref_exact:
        # (`fused_nodes[-1]` may be another call's node: a union over calls has no one last)
        nodes = [c for n in stored.get(param, []) if (c := _counterpart(n, ref_exact, exact, order, ops))]
        group = exact
    else:
        image = flow.image(kernel, ref_reads, reads, order)
        nodes = [image[n] for n in nodes if n in image]
        group = {image[n] for n in kernel.fused_nodes if n in image}
    sinks = flow.sinks(group, order)
    return [n for n in nodes if n in sinks][:1] or sinks or last


def _call_nodes(names: list[str] | None, order: dict[str, int], pre_to_post: dict[str, list[str]],
                partial: bool) -> set[str]:  # fmt: skip
    """The post-grad nodes a call's `Source Nodes` comment names: post-grad names as they are,
    others (Dynamo names) through provenance `preToPost`. A forward comment holds Dynamo names,
    some of which spell a different post-grad node (`add_9`), so one unknown name voids it; a
    backward comment holds post-grad names plus a few Dynamo ones of recomputed forward ops,
    which are left out (every call of the kernel leaves out the same ones)."""
    out: set[str] = set()
    for name in names or ():
        nodes = [name] if name in order else [n for n in pre_to_post.get(name, ()) if n in order]
        if not nodes and not partial:
            return set()
        out.update(nodes)
    return out


def _counterpart(node: str, ref: set[str], mine: set[str], order: dict[str, int],
                 ops: dict[str, str]) -> str | None:  # fmt: skip
    """`node` of the matched call's comment nodes `ref` → the node of this call's `mine` with the
    same op at the same rank (graph order) among that op's nodes."""
    if node not in ref:
        return node if node in mine else None
    op = ops.get(node, "")
    theirs = sorted((n for n in ref if ops.get(n) == op), key=order.__getitem__)
    same = sorted((n for n in mine if ops.get(n) == op), key=order.__getitem__)
    rank = theirs.index(node)
    return same[rank] if rank < len(same) else None


class _Flow:
    """Maps a deduplicated kernel's `fused_nodes` (its first call's) onto a later call's nodes by
    data flow, where no comment names them exactly (Dynamo names, no `preToPost`): the args of the
    two calls pair per parameter, and each fused node's image is the consumer of its input's
    image with the same op at the same rank among that input's consumers of that op."""

    def __init__(self, post: Graph, ops: dict[str, str]) -> None:
        self.ops = ops
        self.inputs = {n.name: n.inputs for n in post.nodes}
        consumers: dict[tuple[str, str], list[str]] = {}
        self.rank: dict[tuple[str, str], int] = {}  # (input, consumer) -> rank among same-op consumers
        for n in post.nodes:
            op = ops.get(n.name, "")
            for x in dict.fromkeys(n.inputs):
                group = consumers.setdefault((x, op), [])
                self.rank[(x, n.name)] = len(group)
                group.append(n.name)
        self.consumers = consumers
        self.users: dict[str, list[str]] = {}
        for n in post.nodes:
            for x in n.inputs:
                self.users.setdefault(x, []).append(n.name)
        self.sorted: dict[str, list[str]] = {}

    def sinks(self, nodes: set[str], order: dict[str, int]) -> list[str]:
        """Nodes of a call that something outside it reads: the values it must write, one of
        which its buffer holds (the reading kernel picks the one it consumes)."""
        return sorted((n for n in nodes if any(u not in nodes for u in self.users.get(n, ()))),
                      key=order.__getitem__)  # fmt: skip

    def image(self, kernel: Kernel, ref: dict[str, list[str]], reads: dict[str, list[str]],
              order: dict[str, int]) -> dict[str, str]:  # fmt: skip
        """Fused node (or node the first call read) → its counterpart in this call."""
        image: dict[str, str] = {}
        for p, nodes in ref.items():
            for a, b in zip(nodes, reads.get(p, ()), strict=False):
                image.setdefault(a, b)
        fused = self.sorted.get(kernel.name)
        if fused is None:
            fused = self.sorted[kernel.name] = sorted(
                (n for n in kernel.fused_nodes if n in order), key=order.__getitem__
            )
        # Forward from the inputs that differ between the two calls (a buffer both calls read,
        # such as the dropout seeds, names the same node in both and says nothing about which
        # of its consumers this call's is); then backward from users whose image is known
        # (dropout's `gt` is the mask input of the `mul` whose other input is this layer's
        # matmul); then forward from shared inputs for what is left.
        self._forward(fused, image, informative=True)
        for f in reversed(fused):
            if f in image:
                continue
            op = self.ops.get(f, "")
            for u in self.users.get(f, ()):
                if u in image and image[u] != u:
                    mine = [x for x in self.inputs.get(u, ()) if self.ops.get(x) == op]
                    theirs = [x for x in self.inputs.get(image[u], ()) if self.ops.get(x) == op]
                    if f in mine and len(mine) == len(theirs):
                        image[f] = theirs[mine.index(f)]
                        break
        self._forward(fused, image, informative=False)
        return image

    def _forward(self, fused: list[str], image: dict[str, str], informative: bool) -> None:
        for f in fused:
            if f in image:
                continue
            op = self.ops.get(f, "")
            for x in self.inputs.get(f, ()):
                if x in image and (image[x] != x or not informative):
                    group = self.consumers.get((image[x], op), [])
                    r = self.rank.get((x, f), len(group))
                    if r < len(group):
                        image[f] = group[r]
                        break


def _extern(kernels: Iterable[Kernel], name: str) -> Kernel | None:
    return next((k for k in kernels if k.name == name), None)


def _callee_op(name: str) -> str:
    """`extern_kernels.mm:2` → `mm`; `torch.ops.aten.convolution_backward.default:1` →
    `convolution_backward`."""
    callee = (split_extern_name(name) or (name, 1))[0]
    return callee.rsplit(".", 1)[-1] if callee.startswith("extern_kernels.") else aten_op(callee)


def _extern_nodes(kernel: Kernel, by_op: dict[str, list[str]]) -> list[str]:
    """An extern call's own node when no comment names it: the n-th post-grad node with the
    callee's op for the n-th call (`extern_kernels.mm:2` → the second `aten.mm` node). Inductor
    may run them out of graph order (the Llama backward does), so a comment wins."""
    nth = (split_extern_name(kernel.name) or (kernel.name, 1))[1]
    same_op = by_op.get(_callee_op(kernel.name), [])
    return same_op[nth - 1 : nth] or list(kernel.fused_nodes[:1])


@lru_cache(maxsize=8192)
def aten_op(target: str) -> str:
    """`aten.add.Tensor` / `torch.ops.aten.add.Tensor` → `add`. Cached: a few hundred targets
    over the 9k nodes of a deep post-grad graph."""
    parts = target.replace("torch.ops.", "").split(".")
    return parts[1] if len(parts) >= 2 and parts[0] in ("aten", "prims") else parts[-1]


@cache
def _word_re(word: str) -> re.Pattern[str]:
    """Whole-word pattern, compiled once per name (re's own cache holds 512 and a 9k-node graph
    thrashes it)."""
    return re.compile(rf"\b{re.escape(word)}\b")


def _reduction_match(fused: list[str], ops: dict[str, str], used: set[str], carried: list[str],
                     node_inputs: dict[str, set[str]]) -> str | None:  # fmt: skip
    """A reduction step's node: the reduction its operand already carries (a looped reduction's
    accumulator, a split reduction's partial sums loaded back), else the next unused fused
    reduction that reads a node the operands carry (any, when they carry none)."""
    same = [n for n in carried if n in fused and ops.get(n) in _REDUCTION_OPS]
    if same:
        return same[-1]
    for name in fused:
        if name in used or ops.get(name) not in _REDUCTION_OPS:
            continue
        if not carried or set(carried) & node_inputs.get(name, set()):
            return name
    return None


def _gather_node(line: str, fused: list[str], ops: dict[str, str], used: set[str]) -> str | None:
    index = line.split("+", 1)[1] if "+" in line else ""
    if not _TMP.search(index):
        return None
    return next((n for n in fused if n not in used and ops.get(n, "") in _GATHER_OPS), None)


def _op_has_line(name: str, ops: dict[str, str], source: str) -> bool:
    """Whether the kernel spells node `name`'s op anywhere (else it may be a pure copy/layout op)."""
    op = ops.get(name, "").rstrip("_")
    return bool(op) and (op in source or any(s in source for s in _SPELLINGS.get(op, ())))


def _copy_node(fused: list[str], op_matched: set[str], ops: dict[str, str]) -> list[str]:
    """A store of a value no op line made: the kernel's one node whose op it never spells (a
    clone / layout copy; views are no code), else nothing; the kernel's last node would be a guess."""
    copies = [n for n in fused if n not in op_matched and ops.get(n) not in _VIEW_OPS | {"getitem", "split"}]
    return copies[-1:] if len(copies) == 1 else []


def _name_hits(line: str, fused: list[str]) -> list[str]:
    """Fused nodes the line names, not as a call or attribute: a node named `where` or `mm` is
    not what `tl.where(` spells."""
    return [n for n in fused if n in line and _name_re(n).search(line)]


@cache
def _name_re(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![.\w]){re.escape(word)}\b(?!\s*\()")


def _params(source: str) -> tuple[str, ...]:
    """A kernel's parameter names (`kernel_marks` keeps them per kernel: a deep model calls each
    kernel once per layer, and finding the signature searches the whole source, ~60 µs)."""
    m = _PARAMS.search(source)
    if not m:
        return ()
    return tuple(_param_name(p) for p in m.group(1).split(",") if p.strip())


def _param_name(decl: str) -> str:
    """`const float* in_ptr0` / `XBLOCK : tl.constexpr` / `xnumel` → the parameter's name."""
    ptr = _PTR.search(decl)
    if ptr:
        return ptr.group(1)
    words = re.findall(r"\w+", decl.split(":")[0])
    return words[-1] if words else ""


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments (nested calls such as `reinterpret_tensor(...)` kept)."""
    if "(" not in text and "[" not in text and "{" not in text and ")" not in text and "]" not in text \
            and "}" not in text:  # fmt: skip
        # no nesting (most calls): every comma splits, as the loop below would
        *parts, last = text.split(",")
        out = [x.strip() for x in parts]
        last = last.strip()
        if last:
            out.append(last)
        return out
    out = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out
