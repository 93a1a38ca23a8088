"""What each Dynamo op became after PrimTorch/AOT decomposition, and where those ops ended up.

`decomposition_table(session, compile_id, rank)` gives one `DecompRow` per Dynamo op: e.g.
`probs = torch.softmax(...)` → `amax, sub, exp, sum, div` in the forward and its backward ops,
plus the kernels those ops landed in. Torch- and Qt-free; it reads only the session.

Where the decomposed ops come from, best first:

1. the `compilescope_decompositions` artifact (decomp_capture.py): the joint/inference graph
   *before* Inductor's pattern passes, so decompositions that a pattern later rewrote (softmax →
   fused SDPA on the transformer example) are still visible, and marked `rewritten`;
2. otherwise the AOT graphs in `Compile.aot` (joint, else forward/backward/inference).

Which Dynamo op a decomposed node belongs to: its `from_node` chain (the Dynamo node it was
traced from), else its `source_fn` name, else — for backward nodes, which often have neither —
the forward node with the same autograd `seq_nr`, else the session's links. Kernels: the
post-grad node of the same name in the same partition, through `Kernel.fused_nodes` or links.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field

from compiler_core.session.links import LinkIndex
from compiler_core.session.model import Compile, Graph, Node, Session, SourceLoc
from compiler_core.session.refs import Ref, RefKind
from compiler_core.trace.json_payload import JsonPayloadError, parse_json

ARTIFACT = "compilescope_decompositions"
_NOT_OPS = frozenset({"getitem", "placeholder", "output", "alias", "detach"})
_OP_KINDS = ("call_function", "call_method", "call_module")


@dataclass(frozen=True)
class DecompNode:
    """One node of the decomposed graph, reduced to what ownership and kernels need."""

    name: str
    target: str
    inputs: tuple[str, ...] = ()
    from_node: tuple[str, ...] = ()
    source_fn: str = ""
    seq_nr: str = ""
    backward: bool = False


@dataclass(frozen=True)
class DecompRow:
    dynamo_node: str
    op: str  # short name of the Dynamo op: softmax, layer_norm, gelu, linear...
    target: str = ""
    source: SourceLoc | None = None
    module_path: str = ""
    forward_ops: tuple[str, ...] = ()  # distinct core ops, in graph order
    backward_ops: tuple[str, ...] = ()
    aot_nodes: tuple[str, ...] = ()  # decomposed node names (forward / inference side)
    backward_nodes: tuple[str, ...] = ()
    rewritten: tuple[str, ...] = ()  # forward decomposed nodes gone before lowering (pattern, CSE...)
    replaced: bool = False  # every forward op vanished before lowering: a pattern rewrote it
    replaced_by: tuple[str, ...] = ()  # the ops the pattern put in its place (e.g. SDPA)
    kernels: tuple[Ref, ...] = ()  # forward / inference kernels
    backward_kernels: tuple[Ref, ...] = ()

    @property
    def decomposed(self) -> bool:
        """True when the op became something other than itself (or several ops)."""
        return len(self.forward_ops) > 1 or (bool(self.forward_ops) and self.forward_ops[0] != self.op)

    def refs(self, compile_id: str, rank: int | None) -> frozenset[Ref]:
        return frozenset({Ref.dynamo_node(compile_id, self.dynamo_node, rank), *self.kernels,
                          *self.backward_kernels})


@dataclass(frozen=True)
class DecompSummary:
    ops_in: tuple[str, ...] = ()  # distinct high-level (Dynamo) ops
    ops_out: tuple[str, ...] = ()  # distinct core ATen/prims ops after decomposition (forward)
    decomposed_rows: int = 0
    rewritten_ops: tuple[str, ...] = ()  # Dynamo ops whose whole decomposition a pattern replaced
    introduced: tuple[str, ...] = field(default_factory=tuple)  # post-grad ops no Dynamo op owns


def op_name(target: str) -> str:
    """`aten.amax.default` → `amax`, `prims.convert_element_type.default` → `prims.convert_element_type`,
    `torch._VariableFunctionsClass.softmax` → `softmax`, `_operator.add` → `add`."""
    parts = target.split(".")
    if parts[0] == "aten" and len(parts) >= 2:
        return parts[1]
    if parts[0] == "prims" and len(parts) >= 2:
        return f"prims.{parts[1]}"
    if parts[0] == "torch" and len(parts) >= 3 and parts[1] == "ops":  # torch.ops.ns.op.overload
        return ".".join(parts[2:4])
    return parts[-1]


def decomposed_graph(c: Compile) -> tuple[list[DecompNode], str]:
    """The decomposed nodes of a compile and where they came from ("artifact" or "aot")."""
    text = c.artifacts.get(ARTIFACT, "")
    if text:
        nodes = _artifact_nodes(text)
        if nodes:
            return nodes, "artifact"
    return _aot_nodes(c), "aot"


def _artifact_nodes(text: str) -> list[DecompNode]:
    try:
        data = parse_json(text)
    except JsonPayloadError:
        return []
    out = []
    for n in data.get("nodes", []) if isinstance(data, dict) else []:
        if not isinstance(n, dict) or n.get("op") not in _OP_KINDS or not _names_lists(n):
            continue
        seq = n.get("seq_nr")
        out.append(DecompNode(
            name=str(n.get("name", "")), target=str(n.get("target", "")),
            inputs=tuple(str(x) for x in n.get("inputs") or ()),
            from_node=tuple(str(x) for x in n.get("from_node") or ()),
            source_fn=str(n.get("source_fn") or ""),
            seq_nr="" if seq is None else str(seq), backward=bool(n.get("backward")),
        ))
    return out


def _names_lists(n: dict[str, object]) -> bool:
    """`inputs` / `from_node` are lists of names when present (a log may hold anything)."""
    return all(isinstance(n.get(k) or [], list) for k in ("inputs", "from_node"))


def _aot_nodes(c: Compile) -> list[DecompNode]:
    aot = c.aot
    if aot is None:
        return []
    if aot.joint is not None and aot.joint.nodes:
        bw = _tangent_descendants(aot.joint)
        return [_from_session_node(n, n.name in bw) for n in aot.joint.nodes if n.op in _OP_KINDS]
    out: list[DecompNode] = []
    for g, backward in ((aot.inference, False), (aot.forward, False), (aot.backward, True)):
        if g is not None:
            out += [_from_session_node(n, backward) for n in g.nodes if n.op in _OP_KINDS]
    return out


def _from_session_node(n: Node, backward: bool) -> DecompNode:
    chain = tuple(x for x in n.attrs.get("from_node", "").split(",") if x)
    return DecompNode(n.name, n.target, n.inputs, chain, n.attrs.get("source_fn", "").split(":")[0],
                      n.attrs.get("seq_nr", ""), backward)


def _tangent_descendants(g: Graph) -> set[str]:
    seen: set[str] = set()
    for n in g.nodes:
        if (n.op == "placeholder" and n.name.startswith("tangents")) or any(i in seen for i in n.inputs):
            seen.add(n.name)
    return seen


class _Owners:
    """Resolves which Dynamo node a decomposed node came from."""

    def __init__(self, dynamo: Graph, nodes: list[DecompNode], links: LinkIndex, c: Compile) -> None:
        self.names = {n.name for n in dynamo.nodes if n.op in _OP_KINDS}
        self.by_source_fn = {n.attrs["source_fn"].split(":")[0]: n.name for n in dynamo.nodes
                             if n.op in _OP_KINDS and n.attrs.get("source_fn")}
        self.links, self.c = links, c
        self.by_seq: dict[str, str] = {}
        for n in nodes:
            if not n.backward and n.seq_nr:
                owner = self._direct(n)
                if owner:
                    self.by_seq.setdefault(n.seq_nr, owner)

    def _direct(self, n: DecompNode) -> str:
        for name in n.from_node:
            if name in self.names:
                return name
        if n.source_fn in self.names and n.source_fn not in self.by_source_fn:
            return n.source_fn
        return self.by_source_fn.get(n.source_fn, "")

    def owner(self, n: DecompNode) -> str:
        direct = self._direct(n)
        if direct and not n.backward:
            return direct
        if n.backward and n.seq_nr in self.by_seq:
            return self.by_seq[n.seq_nr]
        if direct:
            return direct
        graph = "joint" if self.c.aot is not None and self.c.aot.joint is not None else "forward"
        ref = Ref.aot_node(self.c.compile_id, graph, n.name, self.c.rank)
        for other in sorted(self.links.direct(ref)):
            if other.kind is RefKind.DYNAMO_NODE:
                return other.name
        return ""


class _Kernels:
    """Post-grad node name → kernel keys, per partition."""

    def __init__(self, c: Compile, links: LinkIndex) -> None:
        self.c, self.links = c, links
        self.by_node: dict[tuple[str, str], set[Ref]] = defaultdict(set)
        self.post_grad: dict[str, set[str]] = {}
        for out in c.inductor:
            if out.post_grad is not None:
                self.post_grad[out.graph] = {n.name for n in out.post_grad.nodes}
            for k in out.kernels:
                for name in k.fused_nodes:
                    self.by_node[(out.graph, name)].add(Ref.kernel(c.compile_id, out.graph, k.name, c.rank))
        self.partitions = [o.graph for o in c.inductor]

    def partition(self, backward: bool) -> str:
        if backward:
            return "backward"
        only_inference = "inference" in self.partitions and "forward" not in self.partitions
        return "inference" if only_inference else "forward"

    def phase(self, n: DecompNode) -> DecompNode:
        """Trust the partitioner over tangent reachability: a node computed in the backward
        partition is backward even when it reads only saved forward values."""
        fw, bw = self.post_grad.get(self.partition(False), set()), self.post_grad.get("backward", set())
        backward = n.name not in fw and (n.name in bw or n.backward)
        return n if backward == n.backward else dataclasses.replace(n, backward=backward)

    def kernels(self, graph: str, name: str) -> set[Ref]:
        found = set(self.by_node.get((graph, name), ()))
        ref = Ref.post_grad_node(self.c.compile_id, graph, name, self.c.rank)
        found |= {r for r in self.links.direct(ref) if r.kind is RefKind.KERNEL}
        return found

    def rewritten(self, graph: str, name: str) -> bool:
        known = self.post_grad.get(graph)
        return known is not None and name not in known


def decomposition_table(session: Session, compile_id: str, rank: int | None = None) -> list[DecompRow]:
    """One row per Dynamo op (placeholders and outputs excluded), in Dynamo graph order."""
    c = session.compile(compile_id, rank)
    if c is None or c.dynamo_graph is None:
        return []
    links = LinkIndex.of(session.links)
    kernels = _Kernels(c, links)
    nodes = [kernels.phase(n) for n in decomposed_graph(c)[0]]
    owners = _Owners(c.dynamo_graph, nodes, links, c)
    grouped: dict[str, list[DecompNode]] = defaultdict(list)
    for n in nodes:
        owner = owners.owner(n)
        if owner:
            grouped[owner].append(n)
    swaps = _Replacements(c, [n for n in nodes if not n.backward], kernels.partition(False))
    ops = [d for d in c.dynamo_graph.nodes if d.op in _OP_KINDS]
    return [_row(d, grouped.get(d.name, []), kernels, swaps) for d in ops]


def _row(d: Node, mine: list[DecompNode], kernels: _Kernels, swaps: _Replacements) -> DecompRow:
    fw = [n for n in mine if not n.backward]
    bw = [n for n in mine if n.backward]
    fw_graph, bw_graph = kernels.partition(False), kernels.partition(True)
    fw_kernels = {k for n in fw for k in kernels.kernels(fw_graph, n.name)}
    bw_kernels = sorted({k for n in bw for k in kernels.kernels(bw_graph, n.name)})
    fw_ops = [n for n in fw if _is_op(n)]
    rewritten = tuple(n.name for n in fw_ops if kernels.rewritten(fw_graph, n.name))
    replaced = bool(fw_ops) and len(rewritten) == len(fw_ops)
    replaced_by: list[str] = []
    if replaced:
        for node in swaps.replacing(fw):
            replaced_by.append(op_name(node.target))
            fw_kernels |= kernels.kernels(fw_graph, node.name)
    return DecompRow(
        dynamo_node=d.name, op=op_name(d.target), target=d.target, source=d.source, module_path=d.module_path,
        forward_ops=_distinct_ops(fw), backward_ops=_distinct_ops(bw),
        aot_nodes=tuple(n.name for n in fw), backward_nodes=tuple(n.name for n in bw),
        rewritten=rewritten, replaced=replaced, replaced_by=tuple(dict.fromkeys(replaced_by)),
        kernels=tuple(sorted(fw_kernels)), backward_kernels=tuple(bw_kernels),
    )


class _Replacements:
    """Matches a rewritten decomposition to the post-grad ops a pattern pass put in its place.

    Both sides are traced back to the surviving values they read (through other rewritten or
    introduced nodes): a replacement that reads the same surviving inputs (q, k, v for an
    attention pattern) stands in for the rewritten ops.
    """

    def __init__(self, c: Compile, nodes: list[DecompNode], graph: str) -> None:
        self.pre = {n.name: n.inputs for n in nodes}
        post = next((o.post_grad for o in c.inductor if o.graph == graph and o.post_grad is not None), None)
        self.post = {n.name: n.inputs for n in post.nodes} if post is not None else {}
        self.introduced = [n for n in (post.nodes if post is not None else ())
                           if n.op == "call_function" and n.name not in self.pre
                           and op_name(n.target) not in _NOT_OPS]

    def _sources(self, names: tuple[str, ...], graph: dict[str, tuple[str, ...]],
                 through: set[str]) -> set[str]:
        out: set[str] = set()
        stack, seen = list(names), set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in through:
                stack.extend(graph.get(name, ()))
            elif name in self.post:
                out.add(name)
        return out

    def replacing(self, fw: list[DecompNode]) -> list[Node]:
        missing = {n for n in self.pre if n not in self.post}
        mine = self._sources(tuple(i for n in fw for i in n.inputs), self.pre, missing)
        intro = {n.name for n in self.introduced}
        return [n for n in self.introduced if mine & self._sources(n.inputs, self.post, intro)]


def _is_op(n: DecompNode) -> bool:
    return op_name(n.target) not in _NOT_OPS


def _distinct_ops(nodes: list[DecompNode]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(op_name(n.target) for n in nodes if _is_op(n)))


def decomposition_summary(session: Session, compile_id: str, rank: int | None = None,
                          rows: list[DecompRow] | None = None) -> DecompSummary:
    """Distinct high-level ops in, distinct core ops out, and what pattern passes changed."""
    rows = decomposition_table(session, compile_id, rank) if rows is None else rows
    ops_in = tuple(dict.fromkeys(r.op for r in rows))
    ops_out = tuple(dict.fromkeys(op for r in rows for op in r.forward_ops))
    c = session.compile(compile_id, rank)
    return DecompSummary(
        ops_in=ops_in, ops_out=ops_out, decomposed_rows=sum(1 for r in rows if r.decomposed),
        rewritten_ops=tuple(dict.fromkeys(r.op for r in rows if r.replaced)),
        introduced=_introduced(c, rows) if c is not None else (),
    )


def _introduced(c: Compile, rows: list[DecompRow]) -> tuple[str, ...]:
    """Forward post-grad ops absent from the decomposed graph: what pattern passes put in."""
    known = {n for r in rows for n in (*r.aot_nodes, *r.backward_nodes)}
    decomposed = {n.name for n in decomposed_graph(c)[0]}
    out: list[str] = []
    for o in c.inductor:
        if o.graph == "backward" or o.post_grad is None:
            continue
        for n in o.post_grad.nodes:
            if n.op == "call_function" and n.name not in known and n.name not in decomposed:
                name = op_name(n.target)
                if name not in _NOT_OPS:
                    out.append(name)
    return tuple(dict.fromkeys(out))


def rows_for_refs(rows: list[DecompRow], refs: frozenset[Ref]) -> list[int]:
    """Indices of rows a selection touches (its Dynamo node, AOT/post-grad nodes or kernels)."""
    dyn = {r.name for r in refs if r.kind is RefKind.DYNAMO_NODE}
    nodes = {r.name for r in refs if r.kind in (RefKind.AOT_NODE, RefKind.POST_GRAD_NODE)}
    kern = {(r.graph, r.name) for r in refs if r.kind is RefKind.KERNEL}
    hits = []
    for i, row in enumerate(rows):
        if (row.dynamo_node in dyn or nodes & {*row.aot_nodes, *row.backward_nodes}
                or kern & {(k.graph, k.name) for k in (*row.kernels, *row.backward_kernels)}):
            hits.append(i)
    return hits
