"""The eager ATen ops a generated kernel replaced, as a function an exported harness checks the
kernel against.

The ops are the kernel's fused post-grad nodes, each written exactly as the session's post-grad
graph text writes it (`relu = torch.ops.aten.relu.default(addmm)`), in graph order. What is not
recorded is which kernel pointer holds which node's value, so it is matched here, and only where
the match is certain:

- a pointer whose buffer *is* a graph input (`arg0_1`, `primals_3`) holds that placeholder;
- else the subgraph's external inputs and the kernel's input pointers are paired by their
  shape, stride and dtype, and only when each such spec names one input and one pointer;
- outputs (nodes of the subgraph read outside it) pair with output pointers the same way; an
  output pointer with no unique partner is simply not compared.

When an input cannot be placed, `match()` says why, and the harness states that it runs
without an eager check rather than compare against a guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from compiler_core.export.call_plan import CallPlan, Launch, TensorSpec, kernel_params
from compiler_core.session import Graph, Kernel, Node, TensorMeta

_CLASS = re.compile(r"^class [^(\n]*\(", re.M)
_PART = re.compile(r"^(\w+)\[(\d+)\]$")
_DIM = re.compile(r"^-?\d+$")


@dataclass
class EagerMatch:
    """The reference function's body and how kernel parameters map to it; `why_not` is set when
    no check can be made."""

    inputs: dict[str, str] = field(default_factory=dict)  # node -> kernel parameter holding it
    outputs: dict[str, str] = field(default_factory=dict)  # kernel parameter -> node it must equal
    constants: dict[str, int] = field(default_factory=dict)  # size symbols the ops name
    # node -> its shape, where its pointer sees the same contiguous elements in another shape
    reshape: dict[str, tuple[int, ...]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # `name = expr`, graph order
    why_not: str = ""


@dataclass
class GraphFacts:
    """What matching needs of one post-grad graph, computed once per partition: a deep model's
    graph has ~10k nodes and its partition hundreds of kernels."""

    graph: Graph
    lines: dict[str, str]  # node -> its expression (node_lines)
    users: dict[str, set[str]]  # node -> the nodes that read it
    order: dict[str, int]  # node -> its place in the graph
    parts: dict[str, dict[int, str]]  # tuple node -> {i: the getitem node `x = node[i]`}

    @staticmethod
    def of(graph: Graph) -> GraphFacts:
        lines = node_lines(graph)
        users: dict[str, set[str]] = {}
        for n in graph.nodes:
            for i in n.inputs:
                users.setdefault(i, set()).add(n.name)
        parts: dict[str, dict[int, str]] = {}
        for name, expr in lines.items():
            m = _PART.match(expr)
            if m:
                parts.setdefault(m.group(1), {})[int(m.group(2))] = name
        return GraphFacts(graph, lines, users, {n.name: i for i, n in enumerate(graph.nodes)}, parts)


def node_lines(graph: Graph) -> dict[str, str]:
    """node name -> the Python expression its line of the graph text computes."""
    text = _CLASS.sub("class GraphModule(", graph.text, count=1)  # `class <lambda>(...)` is no Python
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, str] = {}
    for st in ast.walk(tree):
        target: ast.expr | None = None
        if isinstance(st, ast.AnnAssign) and st.value is not None:
            target = st.target
            value = st.value
        elif isinstance(st, ast.Assign) and len(st.targets) == 1:
            target = st.targets[0]
            value = st.value
        if isinstance(target, ast.Name) and not (isinstance(value, ast.Constant) and value.value is None):
            out[target.id] = ast.unparse(value)
    return out


def node_spec(node: Node, symbols: Mapping[str, int]) -> TensorSpec | None:
    """The node's one tensor value with its sizes made concrete; None for tuples and unknowns."""
    return meta_spec(node.outputs[0], symbols) if len(node.outputs) == 1 else None


def meta_spec(meta: TensorMeta, symbols: Mapping[str, int]) -> TensorSpec | None:
    """A recorded TensorMeta with its sizes made concrete; None where a symbol has no value."""
    try:
        shape = tuple(_concrete(d, symbols) for d in meta.shape)
        stride = tuple(_concrete(d, symbols) for d in meta.stride)
    except KeyError:
        return None
    return TensorSpec(shape, stride, meta.dtype, device=meta.device or "cpu")


def _concrete(dim: int | str, symbols: Mapping[str, int]) -> int:
    if isinstance(dim, int):
        return dim
    text = str(dim).strip()
    if _DIM.match(text):
        return int(text)
    return symbols[text]


def match(kernel: Kernel, facts: GraphFacts | None, plan: CallPlan, launch: Launch) -> EagerMatch:
    """Pair the kernel's parameters with its subgraph's inputs and outputs (see the module doc)."""
    if facts is None or not facts.lines:
        return EagerMatch(why_not="the session has no post-grad graph text for this partition")
    graph = facts.graph
    params = kernel_params(kernel.source)
    args = launch.args
    if len(params) != len(args):
        return EagerMatch(why_not="the kernel's parameters and its launch's arguments differ in number")
    found_nodes = [n for name in set(kernel.fused_nodes) if (n := graph.node(name)) is not None]
    nodes = sorted((n for n in found_nodes if n.op == "call_function"), key=lambda n: facts.order[n.name])
    if not nodes:
        return EagerMatch(why_not="no post-grad node of this kernel is recorded")
    lines = facts.lines
    if any(n.name not in lines for n in nodes):
        return EagerMatch(why_not="a fused node's line is missing from the post-grad graph text")
    inside = {n.name for n in nodes}
    external = list(dict.fromkeys(i for n in nodes for i in n.inputs if i not in inside))
    outputs = [n for n in nodes if facts.users.get(n.name, set()) - inside]
    found = EagerMatch(lines=[f"{n.name} = {lines[n.name]}" for n in nodes])
    by_param = dict(zip(params, args, strict=True))
    spec_of = {p: a.view or plan.specs.get(a.root) for p, a in by_param.items() if a.root}
    ins = [p for p in params if p.startswith(("in_ptr", "in_out_ptr")) and spec_of.get(p)]
    outs = [p for p in params if p.startswith(("out_ptr", "in_out_ptr")) and spec_of.get(p)]
    fresh = launch.fresh
    pending: list[str] = []
    for name in external:
        node = graph.node(name)
        if node is not None and not node.outputs and name in plan.symbols:
            found.constants[name] = plan.symbols[name]
            continue
        own = _spec(graph, name, plan)
        exact = [
            p
            for p in ins
            if name in (by_param[p].root, launch.producers.get(by_param[p].root))
            and _fits(by_param[p].view, own)
        ]
        if len(exact) == 1:
            found.inputs[name] = exact[0]
            view = by_param[exact[0]].view
            if own is not None and view is not None and view.shape != own.shape:
                found.reshape[name] = own.shape
        else:
            pending.append(name)
    free = [p for p in ins if p not in found.inputs.values()]
    for name in pending:
        node = graph.node(name)
        spec = node_spec(node, plan.symbols) if node is not None else None
        if spec is None:
            return EagerMatch(why_not=f"input {name} has no single recorded tensor shape")
        same = [p for p in free if by_param[p].root not in fresh and _same(spec_of[p], spec)]
        rivals = [o for o in pending if o != name and _same(_spec(graph, o, plan), spec)]
        if len(same) != 1 or rivals:
            return EagerMatch(why_not=f"input {name} cannot be told apart from another by shape")
        found.inputs[name] = same[0]
        free.remove(same[0])
    unread = [p for p in free if by_param[p].root not in fresh]
    if unread:
        return EagerMatch(why_not=f"the kernel reads {unread[0]}, which no fused node's input explains")
    for p in outs:
        hits = [n for n in outputs if _same(_spec(graph, n.name, plan), spec_of[p])]
        claimed = [q for q in outs if hits and _same(spec_of[q], spec_of[p])]
        if len(hits) == 1 and len(claimed) == 1:
            found.outputs[p] = hits[0].name
    if not found.outputs:
        found.why_not = "no output pointer could be paired with one node's value"
    return found


def _spec(graph: Graph, name: str, plan: CallPlan) -> TensorSpec | None:
    node = graph.node(name)
    return node_spec(node, plan.symbols) if node is not None else None


def _fits(view: TensorSpec | None, own: TensorSpec | None) -> bool:
    """A pointer to the node's buffer holds its value: the buffer itself, a view with the node's
    own layout, or the same contiguous elements in another shape."""
    return view is None or _same(view, own) or _reshaped(view, own)


def _reshaped(view: TensorSpec, own: TensorSpec | None) -> bool:
    """Both contiguous from offset 0 with the same elements: `view(4, 16, 64)` of an mm's (64, 64)."""
    return (
        own is not None
        and view.dtype == own.dtype
        and view.offset == own.offset == 0
        and _numel(view.shape) == _numel(own.shape)
        and _contiguous(view)
        and _contiguous(own)
    )


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _contiguous(spec: TensorSpec) -> bool:
    expected, stride = [], 1
    for size in reversed(spec.shape):
        expected.append(stride)
        stride *= max(size, 1)
    return all(
        sz == 1 or st == ex for sz, st, ex in zip(spec.shape, spec.stride, reversed(expected), strict=True)
    )


def _same(a: TensorSpec | None, b: TensorSpec | None) -> bool:
    return a is not None and b is not None and (a.shape, a.stride, a.dtype) == (b.shape, b.stride, b.dtype)
