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
3. A load line links to the node that produced the buffer it reads.
4. An op line `tmpN = <expr>` links to the unused fused node whose ATen op the expr spells
   (`aten.add` → ` + `, `aten.relu` → `maximum`, `aten.le` → ` <= `...) and that reads the most
   nodes the expr's `tmp`s carry (data flow, when known); an expr without `tmp`s (a constant,
   index arithmetic such as `r0_1 + 512*x0`) only matches a constant-making node (`full`). A
   reduction step (`tl.sum`, `max2`, welford, a looped reduction's `_tmpN` accumulator) links
   to the reduction its operand already carries (the accumulator; a split reduction's partials
   loaded back) or the next fused reduction reading its operand. A line that computes nothing
   (`tl.broadcast_to`, a reduction's mask `tl.where(xmask, ...)`, a copy) carries its operand's
   node on; an op line no node matches stays unmarked (it is another op's inner step, not its
   operand's node). The use pointer restarts with each loop body (a load after a store), since
   C++ repeats the body for its vectorised and scalar tails. `kernel_line_check` holds these
   marks to Inductor's `Graph fragment` comments (bench/kernel_line_marks.py).
5. A store line links to the node whose op made the `tmp` it stores (a `tmp` no op matched
   inherits the latest such node among the `tmp`s it reads; a loaded `tmp` its buffer's node;
   an indirect load, whose index holds a `tmp`, is the kernel's gather node, e.g. `embedding`),
   else to the kernel's one node whose op no line spells (a copy), else to nothing.
6. As before, any line naming a fused node as a whole word (not as a call: `tl.where(` does not
   name a node called `where`) links to it.
Anything unmatched stays unlinked rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache, lru_cache

from compiler_core.session.model import Graph, Kernel
from compiler_core.trace.output_code import split_extern_name

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
# A welford step's several results, and the accumulators they are named after (`tmp2_mean`).
_MULTI = re.compile(r"^\s*(_?tmp\w+(?:,\s*_?tmp\w+)+)\s*=\s*(triton_helpers\.\w*welford\w*\(.*)$")
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
_REUSE = re.compile(r"^\s*(buf\d+)\s*=\s*(?:reinterpret_tensor\(\s*)?(\w+)\b.*;\s*del\s+\w+")
_SOURCE_NODES = re.compile(r"^\s*#\s*(?:Topologically Sorted |Unsorted )?Source Nodes: \[([^\]]*)\]")
# How generated code spells an ATen op when it is not the op's own name.
_SPELLINGS = {
    "add": (" + ",), "sub": (" - ",), "rsub": (" - ",), "mul": (" * ",), "div": (" / ",),
    "relu": ("maximum", "relu"), "neg": ("-tmp", "-("), "clamp_min": ("maximum",), "clamp_max": ("minimum",),
    "where": ("where",), "cat": ("tl.where(tmp",),
    "pow": ("pow", " * "), "gelu": ("erf", "tanh"), "abs": ("abs",),
    "sum": ("sum", "reduction"), "amax": ("max",), "mean": ("sum",), "convert_element_type": (".to(",),
    "le": (" <= ",), "lt": (" < ",), "ge": (" >= ",), "gt": (" > ",), "eq": (" == ",), "ne": (" != ",),
    "logical_and": (" & ",), "logical_or": (" | ",), "logical_not": ("== 0",), "isnan": ("isnan",),
    "reciprocal": ("1 / ", "reciprocal"), "full": ("tl.full(",), "scalar_tensor": ("tl.full(",),
    "inductor_random": ("rand",), "fma": ("fma",), "maximum": ("maximum",), "minimum": ("minimum",),
}  # fmt: skip
# How a reduction's last step after its sum is spelled (`mean` = sum / N).
_STEP_SPELLINGS = {"mean": (" / ",), "var_mean": (" / ",), "var": (" / ",)}
# Ops whose value a load computes: an indirect load (its index holds a `tmp`) is the gather.
_GATHER_OPS = ("embedding", "index", "gather", "take")
_VIEW_OPS = {"view", "reshape", "_unsafe_view", "permute", "expand", "unsqueeze", "squeeze", "slice",
             "select", "t", "transpose", "as_strided", "alias", "_reshape_alias"}  # fmt: skip
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
                      indexes: GraphIndexes | None = None) -> dict[str, tuple[str, ...]]:  # fmt: skip
    """`line_nodes` for a generated kernel (1-based line → post-grad nodes), given what each
    pointer parameter holds at the call it is marked for (`kernel_marks` builds that); pass
    `indexes` (`graph_ops(post)`) when calling for many kernels of one graph."""
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
    loaded: dict[str, list[str]] = {}  # tmp -> nodes that produced the buffer it was loaded from
    out: dict[str, list[str]] = {}
    made: dict[str, list[str]] = {}  # tmp -> fused nodes whose op produced it (through plain copies)
    used: set[str] = set()
    stored = False
    fills: set[str] = set()
    op_matched = {n for n in fused if _op_has_line(n, ops, kernel.source)}
    for i, line in enumerate(kernel.source.split("\n"), start=1):
        hits = _name_hits(line, fused)
        m = _ASSIGN.match(line)
        if _STORE.search(line):
            stored = True
            value = [t for t in _TMP.findall(line) if t in made]
            hits += [n for t in value[-1:] for n in made[t]] or _copy_node(fused, op_matched)
        elif _LOAD.search(line):
            used, stored = (set(), False) if stored else (used, stored)
            read = [n for p in _PTR.findall(line) for n in args.get(p, ())]
            gather = _gather_node(line, fused, ops, used)
            if gather is not None:  # the load computes the gathered value (embedding lookup)
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
            pass  # a loop reduction's accumulator starts as a constant (`_tmp3 = tl.full(...)`)
        elif m:
            expr = m.group(2)
            carried = [n for t in _TMP.findall(expr) for n in made.get(t) or loaded.get(t, [])]
            masked = _MASKED.match(expr)
            if _FILL.match(expr):
                fills.add(m.group(1))
                node = None
            elif masked and masked.group(2) in fills:  # carries `value` on, as a broadcast does
                node = None
                mine = made.get(masked.group(1), [])
                if mine:
                    made[m.group(1)] = mine
                else:
                    loaded[m.group(1)] = loaded.get(masked.group(1), [])
                hits += mine
            elif _REDUCTION_LINE.search(expr):
                node = _reduction_match(fused, ops, used, carried, node_inputs)
            elif _CARRY.match(expr):
                node = None
            elif not _TMP.search(expr):  # a constant, or index arithmetic (`r0_1 + 512*x0`)
                node = _op_match(expr, [n for n in fused if ops.get(n) in _CONSTANT_OPS], ops, used, set(),
                                 node_inputs)  # fmt: skip
            else:
                node = _op_match(expr, fused, ops, used, set(carried), node_inputs)
            if node is not None:
                used.add(node)
                hits.append(node)
                made[m.group(1)] = [node]
            elif _CARRY.match(expr):  # a broadcast / mask / copy carries its operand's value on
                mine = [n for t in _TMP.findall(expr) for n in made.get(t, [])][-1:]
                if mine:
                    made[m.group(1)] = mine
                else:  # a loaded value broadcast: no line of this kernel's nodes (the load line is)
                    loaded[m.group(1)] = [n for t in _TMP.findall(expr) for n in loaded.get(t, [])]
                hits += mine
            elif not masked or masked.group(2) not in fills:
                # a reduction's decomposed last step (`mean` = its sum / N, var_mean's mean):
                # the line spells the op of the reduction its operand already carries
                step = [n for t in _TMP.findall(expr) for n in made.get(t, [])
                        if any(s in expr for s in _STEP_SPELLINGS.get(ops.get(n, ""), ()))]  # fmt: skip
                if step:
                    made[m.group(1)] = step[-1:]
                    hits += step[-1:]
            # else: an op no fused node matches (index arithmetic, a decomposition's inner step)
            # stays unmarked rather than inheriting its operand's node
        if hits:
            out[str(i)] = list(dict.fromkeys(hits))
    return {k: tuple(v) for k, v in out.items()}


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
    params_of: dict[str, tuple[str, ...]] = {}  # kernel -> its parameter names
    for line in output_code.split("\n"):
        comment = _SOURCE_NODES.match(line)
        if comment:
            pending = [x.strip() for x in comment.group(1).split(",") if x.strip()]
            continue
        reuse = _REUSE.match(line)
        if reuse:  # same storage, same value until the next write to either name
            old = reuse.group(2)  # a graph input (`mm_222`) or an earlier buffer
            current[reuse.group(1)] = [old] if old in order else current.get(old, [])
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
            marks[kernel.name] = kernel_line_nodes(kernel, post, reads, indexes)
            ref = matched[kernel.name] = (reads, exact, _stored(kernel, marks[kernel.name]))
        for p, v in pairs:
            if p.startswith(("out_", "in_out_")) and v not in order:
                current[v] = _written(kernel, p, ref, reads, exact, flow, order, ops)
    for k in kernels:  # no call's comment named its nodes: its first call's arguments, if any
        if k.language != "extern" and k.name not in marks:
            marks[k.name] = kernel_line_nodes(k, post, first.get(k.name, {}), indexes)
    return marks


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
        for f in fused:
            if f in image:
                continue
            op = self.ops.get(f, "")
            for x in self.inputs.get(f, ()):
                if x in image:
                    group = self.consumers.get((image[x], op), [])
                    r = self.rank.get((x, f), len(group))
                    if r < len(group):
                        image[f] = group[r]
                        break
        return image


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


def _op_match(expr: str, fused: list[str], ops: dict[str, str], used: set[str], operands: set[str],
              node_inputs: dict[str, set[str]]) -> str | None:  # fmt: skip
    """The unused fused node whose op `expr` spells and which reads the most nodes the expr's
    `tmp`s carry (at least one, when they carry any; the earliest among equals): `tmp2 = tmp0 +
    tmp1` on an index is not the `add` of a later variance + eps, and `tmp14 * tmp16` is the `mul`
    of both its operands, not an earlier `mul` of one of them."""
    best, score = None, 0
    for name in fused:
        if name in used:
            continue
        overlap = len(operands & node_inputs.get(name, set()))
        if (operands and overlap <= score) or (not operands and best is not None):
            continue
        op = ops.get(name, "").rstrip("_")
        if op and (
            (op in expr and _word_re(op).search(expr)) or any(s in expr for s in _SPELLINGS.get(op, ()))
        ):
            best, score = name, overlap
    return best


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


def _copy_node(fused: list[str], op_matched: set[str]) -> list[str]:
    """A store of a value no op line made: the kernel's one node whose op it never spells (a
    clone / layout copy), else nothing; the kernel's last node would be a guess."""
    copies = [n for n in fused if n not in op_matched]
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
