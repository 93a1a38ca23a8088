"""Kernel source line → post-grad nodes, traced through Inductor's generated code.

Inductor emits a fused kernel as loads, one assignment per fused op in the nodes' order, then
stores. Where its code allows, we follow that shape (Triton `tmpN = tl.load(in_ptr0 + ...)`, C++
`auto tmpN = in_ptr0[...]` / `Vectorized<float>::loadu(in_ptr0 + ...)`):

1. Parameters → buffers: the kernel's parameters (`in_ptr0`, `in_out_ptr0`, `out_ptr1`, ...) pair
   positionally with the arguments of its call in the output code's `call()`
   (`kernel.run(buf1, arg1_1, 128, ...)` / `cpp_fused_x(buf0, primals_1, ...)`).
2. Buffers → nodes: an argument that is a post-grad node name (`primals_1`, `arg1_1`) is that
   node; a `bufN` is the node of the call that wrote it first (an extern call's `out=bufN` or
   `bufN = extern_kernels...`, a kernel's `out_ptr`/`in_out_ptr` argument), following
   `bufB = bufA; del bufA  # reuse`.
3. A load line links to the node that produced the buffer it reads.
4. An op line `tmpN = <expr>` links to the next not-yet-used fused node whose ATen op the expr
   spells and that reads a node the expr's `tmp`s carry (data flow, when known); a line that
   spells no op (broadcast, mask, scale) carries its operand's node on and links to it
   (`aten.add` → ` + `, `aten.relu` → `maximum`, `aten.sigmoid` → `sigmoid`...); the use
   pointer restarts with each loop body (a load after a store), since C++ repeats the body for its
   vectorised and scalar tails.
5. A store line links to the node whose op made the `tmp` it stores (a `tmp` no op matched
   inherits the latest such node among the `tmp`s it reads; a loaded `tmp` its buffer's node;
   an indirect load, whose index holds a `tmp`, is the kernel's gather node, e.g. `embedding`),
   else to the kernel's one node whose op no line spells (a copy), else to nothing.
6. As before, any line naming a fused node as a whole word links to it.
Anything unmatched stays unlinked rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from compiler_core.session.model import Graph, Kernel

_PARAMS = re.compile(r"^\s*(?:def \w+|extern \"C\"[^(]*\w+)\s*\(([^)]*)\)", re.M)
_PTR = re.compile(r"\b((?:in_out|in|out)_ptr\d+)\b")
_ASSIGN = re.compile(r"^\s*(?:auto |[\w:<>]+ )?(tmp\d+)\s*=\s*(.*?);?\s*$")
_TMP = re.compile(r"\btmp\d+\b")
_LOAD = re.compile(r"tl\.load\(|loadu\(|\b(?:in_out|in)_ptr\d+\s*\[")
_STORE = re.compile(r"tl\.store\(|\.store\(|\b(?:in_out|out)_ptr\d+\s*\[[^\]]*\]\s*=")
_CALL_ARGS = re.compile(r"^\s*([\w.]+?)(?:\.run)?\((.*)\)\s*$")
_OUT_ARG = re.compile(r"\bout=(buf\d+)")
_ASSIGNED = re.compile(r"^\s*(buf\d+)\s*=\s*(\w[\w.]*)\(")
_REUSE = re.compile(r"^\s*(buf\d+)\s*=\s*(buf\d+)\s*;\s*del\s+buf\d+")
# How generated code spells an ATen op when it is not the op's own name.
_SPELLINGS = {
    "add": (" + ",), "sub": (" - ",), "rsub": (" - ",), "mul": (" * ",), "div": (" / ",),
    "relu": ("maximum", "relu"), "neg": ("-",), "clamp_min": ("maximum",), "clamp_max": ("minimum",),
    "where": ("where",), "pow": ("pow", " * "), "gelu": ("erf", "tanh"), "abs": ("abs",),
    "sum": ("sum", "reduction"), "amax": ("max",), "mean": ("sum",), "convert_element_type": (".to(",),
}  # fmt: skip
# Ops whose value a load computes: an indirect load (its index holds a `tmp`) is the gather.
_GATHER_OPS = ("embedding", "index", "gather", "take")


GraphIndexes = tuple[dict[str, int], dict[str, str], dict[str, set[str]]]


def graph_ops(post: Graph) -> GraphIndexes:
    """Per post-grad graph, once: node name -> position, -> short op name, -> its inputs. Built
    per kernel before, this was kernels x nodes (a second per 9k-node backward)."""
    return ({n.name: i for i, n in enumerate(post.nodes)}, {n.name: aten_op(n.target) for n in post.nodes},
            {n.name: set(n.inputs) for n in post.nodes})  # fmt: skip


def kernel_line_nodes(kernel: Kernel, output_code: str, post: Graph | None,
                      producers: dict[str, list[str]],
                      indexes: GraphIndexes | None = None,
                      ) -> dict[str, tuple[str, ...]]:  # fmt: skip
    """`line_nodes` for a generated kernel (1-based line → post-grad nodes); pass `indexes`
    (`graph_ops(post)`) when calling for many kernels of one graph."""
    if not kernel.source or post is None:
        return {}
    order, ops, node_inputs = indexes if indexes is not None else graph_ops(post)
    fused = sorted((n for n in kernel.fused_nodes if n in order), key=order.__getitem__)
    loaded: dict[str, list[str]] = {}  # tmp -> nodes that produced the buffer it was loaded from
    args = _param_args(kernel, output_code)
    out: dict[str, list[str]] = {}
    made: dict[str, list[str]] = {}  # tmp -> fused nodes whose op produced it (through plain copies)
    used: set[str] = set()
    stored = False
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
            read = [n for p in _PTR.findall(line) for n in _buffer_nodes(args.get(p, ""), order, producers)]
            gather = _gather_node(line, fused, ops, used)
            if gather is not None:  # the load computes the gathered value (embedding lookup)
                used.add(gather)
                read = [gather]
                if m:
                    made[m.group(1)] = [gather]
            elif m:
                loaded[m.group(1)] = read
            hits += read
        elif m:
            operands = {n for t in _TMP.findall(m.group(2)) for n in made.get(t) or loaded.get(t, [])}
            node = _op_match(m.group(2), fused, ops, used, operands, node_inputs)
            if node is not None:
                used.add(node)
                hits.append(node)
                made[m.group(1)] = [node]
            else:  # a broadcast / mask / scale step carries its operand's value on
                made[m.group(1)] = [n for t in _TMP.findall(m.group(2)) for n in made.get(t, [])][-1:]
                hits += made[m.group(1)]
        if hits:
            out[str(i)] = list(dict.fromkeys(hits))
    return {k: tuple(v) for k, v in out.items()}


def buffer_producers(output_code: str, kernels: Iterable[Kernel], post: Graph) -> dict[str, list[str]]:
    """`bufN` → post-grad nodes of the call in `call()` that first wrote it."""
    kernels = list(kernels)
    by_op: dict[str, list[str]] = {}
    for n in post.nodes:
        by_op.setdefault(aten_op(n.target), []).append(n.name)
    by_name = {k.name: k for k in kernels if k.language != "extern"}
    extern_seen: dict[str, int] = {}
    out: dict[str, list[str]] = {}
    for line in output_code.split("\n"):
        reuse = _REUSE.match(line)
        if reuse:
            out.setdefault(reuse.group(1), out.get(reuse.group(2), []))
            continue
        call = _CALL_ARGS.match(line)
        assigned = _ASSIGNED.match(line)
        callee = assigned.group(2) if assigned else call.group(1) if call else ""
        kernel = by_name.get(callee)
        if kernel is None and callee.startswith(("extern_kernels.", "aten.", "torch.ops.")):
            extern_seen[callee] = extern_seen.get(callee, 0) + 1
            kernel = _extern(kernels, f"{callee}:{extern_seen[callee]}")
        if kernel is None:
            continue
        written = [assigned.group(1)] if assigned else _OUT_ARG.findall(line)
        if kernel.language != "extern" and call:
            params = _params(kernel.source)
            values = _split_args(call.group(2))
            written = [v for p, v in zip(params, values, strict=False) if p.startswith(("out_", "in_out_"))]
        nodes = _extern_nodes(kernel, by_op) if kernel.language == "extern" else list(kernel.fused_nodes[-1:])
        for buf in written:
            out.setdefault(buf, nodes)
    return out


def _extern(kernels: Iterable[Kernel], name: str) -> Kernel | None:
    return next((k for k in kernels if k.name == name), None)


def _extern_nodes(kernel: Kernel, by_op: dict[str, list[str]]) -> list[str]:
    """An extern call's own node: the n-th post-grad node with the callee's op for the n-th call
    (`extern_kernels.mm:2` → the second `aten.mm` node; externs run in graph order)."""
    callee, _, nth = kernel.name.partition(":")
    same_op = by_op.get(callee.rsplit(".", 1)[-1], [])
    index = int(nth) - 1 if nth.isdigit() else 0
    return same_op[index : index + 1] or list(kernel.fused_nodes[:1])


def aten_op(target: str) -> str:
    """`aten.add.Tensor` / `torch.ops.aten.add.Tensor` → `add`."""
    parts = target.replace("torch.ops.", "").split(".")
    return parts[1] if len(parts) >= 2 and parts[0] in ("aten", "prims") else parts[-1]


def _op_match(expr: str, fused: list[str], ops: dict[str, str], used: set[str], operands: set[str],
              node_inputs: dict[str, set[str]]) -> str | None:  # fmt: skip
    """The next unused fused node whose op `expr` spells and which reads one of the nodes the
    expr's `tmp`s carry (when they carry any): `tmp2 = tmp0 + tmp1` on an index is not the
    `add` of a later variance + eps."""
    for name in fused:
        if name in used or (operands and not operands & node_inputs.get(name, set())):
            continue
        op = ops.get(name, "").rstrip("_")
        if op and (
            (op in expr and _word_re(op).search(expr)) or any(s in expr for s in _SPELLINGS.get(op, ()))
        ):
            return name
    return None


@cache
def _word_re(word: str) -> re.Pattern[str]:
    """Whole-word pattern, compiled once per name (re's own cache holds 512 and a 9k-node graph
    thrashes it)."""
    return re.compile(rf"\b{re.escape(word)}\b")


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
    return [n for n in fused if n in line and _word_re(n).search(line)]


def _buffer_nodes(arg: str, order: dict[str, int], producers: dict[str, list[str]]) -> list[str]:
    if arg in order:
        return [arg]
    return [n for n in producers.get(arg, []) if n in order]


def _params(source: str) -> list[str]:
    m = _PARAMS.search(source)
    if not m:
        return []
    return [_param_name(p) for p in m.group(1).split(",") if p.strip()]


def _param_name(decl: str) -> str:
    """`const float* in_ptr0` / `XBLOCK : tl.constexpr` / `xnumel` → the parameter's name."""
    ptr = _PTR.search(decl)
    if ptr:
        return ptr.group(1)
    words = re.findall(r"\w+", decl.split(":")[0])
    return words[-1] if words else ""


def _param_args(kernel: Kernel, output_code: str) -> dict[str, str]:
    """Kernel parameter → the argument its first call in `call()` passes."""
    params = _params(kernel.source)
    call = re.search(rf"^\s*{re.escape(kernel.name)}(?:\.run)?\((.*)\)\s*$", output_code, re.M)
    if not params or not call:
        return {}
    return dict(zip(params, _split_args(call.group(1)), strict=False))


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments (nested calls such as `reinterpret_tensor(...)` kept)."""
    out: list[str] = []
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
