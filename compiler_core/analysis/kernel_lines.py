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
3. A load line links to the node that produced the buffer it reads; a load whose address holds
   a `tmp` computes the kernel's gather (an embedding, an index); `in_ptr0 + load_seed_offset` is
   the fragment's `inductor_lookup_seed`.
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
6. Any line naming a fused node as a variable links to it (a call, an attribute, a keyword or a
   parameter names none: `tl.where(` names no node called `where`, a decorator's
   `DeviceProperties(index=0)` no node called `index`).
Anything unmatched stays unlinked rather than guessed.

Inductor's provenance artifacts (`inductor_provenance_tracking_node_mappings`) map kernels to
nodes, not lines: where a log has them they give the kernel's `fused_nodes`
(`compile_builder`), the candidates every rule above chooses among; no log records lines.

Where the pieces live: this module walks `call()` (rules 1-2) with the call helpers of
`kernel_calls`; `kernel_line_marker` walks one kernel's lines as a state machine, one handler
per kind of line (rules 3-6). `kernel_line_kinds` reads every line once into a `KernelLine`: its
kind, def-use names, pointers, and what its value spells (op forms, names, literal numbers, a
literal's value and dtype) and the names it refers to; a Triton line through `ast` (its
identifiers told apart by pattern: `tmpN`, `in_ptr0`), a C++ line through regular expressions
over its text (for both, a statement spanning lines is first joined onto its first line by
bracket count, `kernel_fragment.statements`). `kernel_line_facts` answers what the fragment and the
def-use chains prove, asking the `KernelLine`s, never the text, so neither it nor the marker
knows the language; `kernel_op_spellings` holds how generated code spells each op (the forms as
the text shows them, which the C++ reader finds in the text and the Triton reader in the tree).
`kernel_fragment` reads the `# Graph fragment:` comment (FX text) with regular expressions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from compiler_core.analysis.kernel_calls import (
    CallFlow,
    Matched,
    call_nodes,
    callee_op,
    extern_nodes,
    param_names,
    split_args,
    written,
)
from compiler_core.analysis.kernel_fragment import Fragment, parse_fragment
from compiler_core.analysis.kernel_line_kinds import STORE, read_lines
from compiler_core.analysis.kernel_line_marker import LineMarker
from compiler_core.analysis.kernel_op_spellings import SEE_THROUGH, aten_op
from compiler_core.session.model import Graph, Kernel

__all__ = ["GraphIndexes", "aten_op", "graph_ops", "kernel_line_nodes", "kernel_marks"]

_DEF = re.compile(r"^(\w+) = async_compile\.\w+\('")
_CALL_ARGS = re.compile(r"^\s*([\w.]+?)(?:\.run)?\((.*)\)\s*$")
_OUT_ARG = re.compile(r"\bout=(buf\d+)")
_ASSIGNED = re.compile(r"^\s*(buf\d+)\s*=\s*(\w[\w.]*)\(")
_PART = re.compile(r"^\s*(buf\d+)\s*=\s*(buf\d+)\[\d+\]\s*$")
_REUSE = re.compile(r"^\s*(buf\d+)\s*=\s*(?:reinterpret_tensor\(\s*)?(\w+)\b.*;\s*del\s+\w+")
_SOURCE_NODES = re.compile(r"^\s*#\s*(?:Topologically Sorted |Unsorted )?Source Nodes: \[([^\]]*)\]")

GraphIndexes = tuple[dict[str, int], dict[str, str], dict[str, set[str]]]


def graph_ops(post: Graph) -> GraphIndexes:
    """Per post-grad graph, once: node name -> position, -> short op name, -> what it reads (built
    per kernel, it would cost kernels x nodes, which is slow on a deep model's backward).

    What a node reads includes the nodes behind its view and getitem inputs: a kernel loads
    `addmm_2`'s buffer where the node it computes reads `view_10 = view(addmm_2)` (views are no
    code), and `add_1 = getitem_1 + eps` reads the `var_mean` a line before it computed."""
    ops = {n.name: aten_op(n.target) for n in post.nodes}
    reads: dict[str, set[str]] = {}
    for n in post.nodes:  # topological: a view's own reads are known before its users'
        behind = (reads.get(i, ()) for i in n.inputs if ops.get(i) in SEE_THROUGH)
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
    return LineMarker(kernel, fused, ops, node_inputs, _held(args, fused, ops, node_inputs), frag).run()


def _held(args: dict[str, list[str]], fused: list[str], ops: dict[str, str],
          node_inputs: dict[str, set[str]]) -> dict[str, list[str]]:  # fmt: skip
    """What each parameter holds for this kernel: a buffer that may hold one of several values
    holds the one this kernel reads from outside (a tuple op's value is read through its
    `getitem`), else one it recomputes."""
    inputs = set().union(*(node_inputs.get(n, ()) for n in fused))
    inputs |= {x for i in inputs if ops.get(i) == "getitem" for x in node_inputs.get(i, ())}
    outside = inputs - set(fused)
    args = {p: v if len(v) < 2 else [n for n in v if n in outside] or [n for n in v if n in inputs] or v
            for p, v in args.items()}  # fmt: skip
    # `buf68 = buf67[0]` of a tuple op (convolution_backward): the getitem of it this kernel reads
    getitems = [i for i in outside if ops.get(i) == "getitem"]
    return {p: [g[0] if len(g := [x for x in getitems if n in node_inputs.get(x, ())]) == 1 else n for n in v]
            for p, v in args.items()}  # fmt: skip


def kernel_marks(output_code: str, kernels: Iterable[Kernel], post: Graph,
                 pre_to_post: dict[str, list[str]] | None = None,
                 indexes: GraphIndexes | None = None) -> dict[str, dict[str, tuple[str, ...]]]:  # fmt: skip
    """Kernel name → `line_nodes` for every generated kernel of one graph, in one pass over
    `call()` in execution order (rules 1-3), so linear in the output code: a kernel's lines are
    marked at its matched call, with the value each argument held at that moment, and what each
    call stores becomes the value of the buffers it writes."""
    indexes = indexes if indexes is not None else graph_ops(post)
    return _CallWalk(list(kernels), post, pre_to_post or {}, indexes).run(output_code)


class _CallWalk:
    """The output code read line by line, one handler per kind of line: a comment line (the block
    above a kernel's definition is its Graph fragment), a call's `Source Nodes` comment (it names
    the next call's nodes), a buffer reuse, a part of a tuple result, and a call of a generated
    or extern kernel. `current` is what each buffer holds at the line read."""

    def __init__(self, kernels: list[Kernel], post: Graph, pre_to_post: dict[str, list[str]],
                 indexes: GraphIndexes) -> None:  # fmt: skip
        self.kernels, self.post, self.pre_to_post, self.indexes = kernels, post, pre_to_post, indexes
        self.order, self.ops, _ = indexes
        self.backward = post.name == "backward"
        self.by_op: dict[str, list[str]] = {}
        for n in post.nodes:
            self.by_op.setdefault(self.ops[n.name], []).append(n.name)
        self.flow = CallFlow(post, self.ops)
        self.by_name = {k.name: k for k in kernels}
        self.extern_seen: dict[str, int] = {}
        self.current: dict[str, list[str]] = {}  # bufN -> nodes whose value it holds now
        self.marks: dict[str, dict[str, tuple[str, ...]]] = {}
        self.matched: dict[str, Matched] = {}
        self.first: dict[str, dict[str, list[str]]] = {}  # kernel -> reads of its first call
        self.pending: list[str] | None = None  # names of the Source Nodes comment above the next call
        self.block: list[str] = []  # the comment lines above the current line
        self.frag_text: dict[str, list[str]] = {}  # kernel -> the comment block above its definition
        self.params_of: dict[str, tuple[str, ...]] = {}  # kernel -> its parameter names

    def run(self, output_code: str) -> dict[str, dict[str, tuple[str, ...]]]:
        for line in output_code.split("\n"):
            self._line(line)
        for k in self.kernels:  # no call's comment named its nodes: its first call's arguments, if any
            if k.language != "extern" and k.name not in self.marks:
                self.marks[k.name] = self._mark(k, self.first.get(k.name, {}))
        return self.marks

    def _line(self, line: str) -> None:
        if line.startswith("#"):
            self.block.append(line)
            return
        if self.block:
            d = _DEF.match(line)
            if d and d.group(1) in self.by_name:
                self.frag_text[d.group(1)] = self.block
            self.block = []
        if comment := _SOURCE_NODES.match(line):
            self.pending = [x.strip() for x in comment.group(1).split(",") if x.strip()]
        elif reuse := _REUSE.match(line):  # same storage, same value until the next write to either
            old = reuse.group(2)  # a graph input (`mm_222`) or an earlier buffer
            self.current[reuse.group(1)] = [old] if old in self.order else self.current.get(old, [])
        elif part := _PART.match(line):  # `buf10 = buf9[0]`: a part of a tuple op's result (the
            self.current[part.group(1)] = self.current.get(part.group(2), [])  # reader picks its getitem)
        else:
            self._call(line)

    def _call(self, line: str) -> None:
        call = _CALL_ARGS.match(line)
        assigned = _ASSIGNED.match(line)
        callee = assigned.group(2) if assigned else call.group(1) if call else ""
        kernel = self.by_name.get(callee)
        if kernel is not None and kernel.language == "extern":
            kernel = None
        if kernel is None and callee.startswith(("extern_kernels.", "aten.", "torch.ops.")):
            self.extern_seen[callee] = self.extern_seen.get(callee, 0) + 1
            kernel = self.by_name.get(f"{callee}:{self.extern_seen[callee]}")
        if kernel is None:
            return
        names, self.pending = self.pending, None
        if kernel.language != "extern" and call:
            self._kernel_call(kernel, call.group(2), names)
            return
        nodes = list(kernel.fused_nodes[-1:])
        if kernel.language == "extern":  # its comment names its node among the group's (backward)
            named = call_nodes(names, self.order, self.pre_to_post, self.backward)
            own = [n for n in named if self.ops.get(n) == callee_op(kernel.name)]
            nodes = own if len(own) == 1 else extern_nodes(kernel, self.by_op)
        for buf in [assigned.group(1)] if assigned else _OUT_ARG.findall(line):
            self.current[buf] = nodes

    def _kernel_call(self, kernel: Kernel, args: str, names: list[str] | None) -> None:
        """A generated kernel's call: marked at the first call its comment fits, and what it
        leaves in the buffers it writes."""
        params = self.params_of.get(kernel.name)
        if params is None:
            params = self.params_of[kernel.name] = param_names(kernel.source)
        order, current = self.order, self.current
        pairs = list(zip(params, split_args(args), strict=False))
        reads = {p: [v] if v in order else [n for n in current.get(v, []) if n in order] for p, v in pairs}
        exact = call_nodes(names, order, self.pre_to_post, self.backward)
        ref = self.matched.get(kernel.name)
        self.first.setdefault(kernel.name, reads)
        if ref is None and (not exact or exact & set(kernel.fused_nodes)):
            marks = self.marks[kernel.name] = self._mark(kernel, reads)
            ref = self.matched[kernel.name] = (reads, exact, _stored(kernel, marks))
        for p, v in pairs:
            if p.startswith(("out_", "in_out_")) and v not in order:
                self.current[v] = written(kernel, p, ref, reads, exact, self.flow, order, self.ops)

    def _mark(self, kernel: Kernel, reads: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
        return kernel_line_nodes(kernel, self.post, reads, self.indexes, _frag(self.frag_text, kernel.name))


def _frag(text: dict[str, list[str]], name: str) -> Fragment | None:
    """The kernel's Graph fragment, parsed only for kernels that are marked."""
    frag = parse_fragment(text[name]) if name in text else None
    return frag if frag is not None and frag.nodes else None


def _stored(kernel: Kernel, line_nodes: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Output parameter → nodes the store lines into it are marked with."""
    out: dict[str, list[str]] = {}
    for i, line in enumerate(read_lines(kernel.source, kernel.language), start=1):
        if line_nodes.get(str(i)) and line.kind == STORE:
            for p in line.pointers:
                if p.startswith(("out_", "in_out_")):
                    out.setdefault(p, []).extend(n for n in line_nodes[str(i)] if n not in out.get(p, []))
    return out
