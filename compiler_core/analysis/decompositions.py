"""What each Dynamo op became after PrimTorch/AOT decomposition, computed once per session.

`with_decompositions(session)` fills `Compile.decomposition` with one `Decomposition` per Dynamo
op: e.g. `probs = torch.softmax(...)` → `amax, sub, exp, sum, div` in the forward and its backward
ops, plus the kernels those ops landed in. The Decompositions pane only looks the rows up
(queries/decompositions.py), so the CLI and the tests see exactly what it shows, and nothing is
derived again through the link index on every open.

Where the decomposed ops come from, best first:

1. the `compilescope_decompositions` artifact (decomp_capture.py): the joint/inference graph
   *before* Inductor's pattern passes, so decompositions that a pattern later rewrote (softmax →
   fused SDPA on the transformer example) are still visible, and marked `rewritten`;
2. otherwise the AOT graphs in `Compile.aot` (joint, else forward/backward/inference).

Which Dynamo op a decomposed node belongs to: its `from_node` chain (the Dynamo node it was
traced from), else its `source_fn` name, else — for backward nodes, which often have neither —
the forward node with the same autograd `seq_nr`, else the session's links. Kernels: the
post-grad node of the same name in the same partition, through `Kernel.fused_nodes` or links.

Speed: it runs on every import, so links are read one hop at a time by name
(`LinkIndex.names_linked`, which reads the stored mapping by key and makes no `Ref` per question,
without building the index's integer walk), which keeps it cheap on deep models where building
the whole index per open would not be.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable
from functools import cache, lru_cache
from typing import NamedTuple

from compiler_core.session.links import LinkIndex
from compiler_core.session.model import Compile, Decomposition, DecompositionInfo, Graph, Node, Session
from compiler_core.session.refs import RefKind
from compiler_core.session.vocab import Partition
from compiler_core.trace.json_payload import JsonPayloadError, parse_json

ARTIFACT = "compilescope_decompositions"
NOT_OPS = frozenset({"getitem", "placeholder", "output", "alias", "detach"})
_OP_KINDS = ("call_function", "call_method", "call_module")


class DecompNode(NamedTuple):
    """One node of the decomposed graph, reduced to what ownership and kernels need (a
    NamedTuple: thousands are made per deep model on every import, and a frozen dataclass is
    several times slower to make)."""

    name: str
    target: str
    inputs: tuple[str, ...] = ()
    from_node: tuple[str, ...] = ()
    source_fn: str = ""
    seq_nr: str = ""
    backward: bool = False


# A Dynamo graph read from a log's text names an operator node by its Python expression
# (`variance + 1e-06`, `q_arange[`, `0 + mul_2`): the operator, by the name `operator` gives it.
_EXPRESSION_OPS = (("**", "pow"), ("//", "floordiv"), ("<<", "lshift"), (">>", "rshift"),
                   ("==", "eq"), ("!=", "ne"), ("<=", "le"), (">=", "ge"), ("+", "add"), ("-", "sub"),
                   ("*", "mul"), ("/", "truediv"), ("%", "mod"), ("@", "matmul"), ("&", "and_"),
                   ("|", "or_"), ("^", "xor"), ("<", "lt"), (">", "gt"), ("[", "getitem"), ("~", "invert"))
_OPERAND = re.compile(r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|[\w.]+|'[^']*'|\"[^\"]*\"")  # 1e-06: one number


@cache
@lru_cache(maxsize=8192)  # a few hundred targets over ~10k nodes per compile
def op_name(target: str) -> str:
    """`aten.amax.default` → `amax`, `prims.convert_element_type.default` → `prims.convert_element_type`,
    `torch._VariableFunctionsClass.softmax` → `softmax`, `_operator.add` → `add`, and an operator
    node's expression from a log's text, `variance + 1e-06` → `add`, `q_arange[` → `getitem`."""
    if not re.fullmatch(r"[\w.]+", target.strip() or "x"):
        symbols = _OPERAND.sub(" ", target)
        return next((name for symbol, name in _EXPRESSION_OPS if symbol in symbols), target.strip())
    parts = target.split(".")
    if parts[0] == "aten" and len(parts) >= 2:
        return parts[1]
    if parts[0] == "prims" and len(parts) >= 2:
        return f"prims.{parts[1]}"
    if parts[0] == "torch" and len(parts) >= 3 and parts[1] == "ops":  # torch.ops.ns.op.overload
        return ".".join(parts[2:4])
    return parts[-1]


def with_decompositions(session: Session, same_as: dict[int, int] | None = None) -> Session:
    """The session with every compile's decomposition table (None where there is no Dynamo graph).

    `same_as[i] = j`: compile i holds compile j's parsed objects and j's links renamed to its own
    rank (link_memo.py: another rank logged it identically), so where their decomposition
    artifacts are equal too its table is j's: tables hold node, op and kernel names, no rank.
    A 64-rank log of one model built the same table 64 times (a third of its import)."""
    same_as = same_as or {}
    index = LinkIndex(session.links)
    tables: list[DecompositionInfo | None] = []
    compiles = session.compiles
    for i, c in enumerate(compiles):
        j = same_as.get(i, i)
        twin = compiles[j] if j < i else None
        if twin is not None and (twin.compile_id, twin.artifacts.get(ARTIFACT)) == (
                c.compile_id, c.artifacts.get(ARTIFACT)):  # fmt: skip
            tables.append(tables[j])
        else:
            tables.append(compile_decomposition(c, index))
    done = tuple(dataclasses.replace(c, decomposition=t) for c, t in zip(compiles, tables, strict=True))
    return dataclasses.replace(session, compiles=done)


def compile_decomposition(c: Compile, index: LinkIndex) -> DecompositionInfo | None:
    """One row per Dynamo op (placeholders and outputs excluded), in Dynamo graph order; `index`
    over the session's links (one for all its compiles)."""
    if c.dynamo_graph is None:
        return None
    kernels = _Kernels(c, index)
    found, origin = decomposed_graph(c)
    nodes = [kernels.phase(n) for n in found]
    owners = _Owners(c.dynamo_graph, nodes, index, c)
    grouped: dict[str, list[DecompNode]] = defaultdict(list)
    for n in nodes:
        owner = owners.owner(n)
        if owner:
            grouped[owner].append(n)
    swaps = _Replacements(c, [n for n in nodes if not n.backward], kernels.partition(False))
    ops = [d for d in c.dynamo_graph.nodes if d.op in _OP_KINDS]
    rows = tuple(_row(d, grouped.get(d.name, []), kernels, swaps) for d in ops)
    return DecompositionInfo(rows=rows, forward_graph=kernels.partition(False),
                             introduced=_introduced(c, rows, found), origin=origin)  # fmt: skip


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
    attrs = n.attrs
    chain = attrs.get("from_node", "")
    return DecompNode(n.name, n.target, n.inputs, tuple(x for x in chain.split(",") if x) if chain else (),
                      attrs.get("source_fn", "").split(":")[0], attrs.get("seq_nr", ""), backward)


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
        self.graph = Partition.JOINT if c.aot is not None and c.aot.joint is not None else Partition.FORWARD
        self._linked_ops = links.names_linked(RefKind.AOT_NODE, RefKind.DYNAMO_NODE, c.compile_id, c.rank,
                                              graph=self.graph)
        self.by_seq: dict[str, str] = {}
        for n in nodes:
            if not n.backward and n.seq_nr:
                owner = self._direct(n)
                if owner:
                    self.by_seq.setdefault(n.seq_nr, owner)
        self.aot_nodes = {n.name: n for n in nodes}
        self.dynamo_nodes = {n.name: n for n in dynamo.nodes}
        # AOTAutograd's primals are the Dynamo graph's inputs, in order (parameters included)
        placeholders = [n.name for n in dynamo.nodes if n.op == "placeholder"]
        self.primal = {f"primals_{i}": name for i, name in enumerate(placeholders, start=1)}
        # Per Dynamo node, once: half the AOT nodes of a deep model ask about the same few dozen
        # candidates of a layer line (4k `_closest` calls on a 32-layer Llama).
        self._only_inputs: dict[str, bool] = {}
        self._dyn_inputs: dict[str, set[str]] = {}
        self._op: dict[str, str] = {}

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
        candidates = sorted(self._linked_ops(n.name))
        if len(candidates) > 1:
            candidates = self._closest(n, candidates)
        return candidates[0] if candidates else ""

    def _closest(self, n: DecompNode, candidates: list[str]) -> list[str]:
        """Of several Dynamo ops one source line holds (`self.k_proj(x).view(...).transpose(1, 2)`),
        the ones that read the same graph input (a weight) as `n`, else the ones of its op;
        the line's link alone cannot tell the linear from the view after it."""
        inputs = self._aot_inputs(n.name, 3)
        if inputs:
            same = [d for d in candidates if inputs & self._dynamo_inputs_of(d)]
            if same:
                return same
        else:  # `n` reads activations only: not the op that reads only inputs (bn's buffer `add_`)
            only = self._only_inputs
            on_activations = [d for d in candidates if not (only[d] if d in only else
                                                            only.setdefault(d, self._reads_only_inputs(d)))]
            candidates = on_activations or candidates
        op = self._short_op(n.target)
        same_op = [d for d in candidates if d in self.dynamo_nodes
                   and self._short_op(self.dynamo_nodes[d].target) == op]
        return same_op or candidates

    def _short_op(self, target: str) -> str:
        found = self._op.get(target)
        if found is None:
            found = self._op[target] = _last(op_name(target))
        return found

    def _aot_inputs(self, name: str, depth: int) -> set[str]:
        """The Dynamo graph inputs `name` reads, directly or through views and casts."""
        out: set[str] = set()
        node = self.aot_nodes.get(name)
        for i in node.inputs if node is not None else ():
            if i in self.primal:
                out.add(self.primal[i])
            elif depth > 0 and i in self.aot_nodes and _last(op_name(self.aot_nodes[i].target)) in _VIEWS:
                out |= self._aot_inputs(i, depth - 1)
        return out

    def _reads_only_inputs(self, name: str) -> bool:
        """Every node `name` reads is a graph input (a buffer update such as num_batches_tracked)."""
        node = self.dynamo_nodes.get(name)
        names = node.inputs if node is not None else ()
        read = [self.dynamo_nodes[i] for i in names if i in self.dynamo_nodes]
        return bool(read) and all(src.op == "placeholder" for src in read)

    def _dynamo_inputs_of(self, name: str) -> set[str]:
        """`_dynamo_inputs(name, 2)`, once per node (callers only read the set)."""
        found = self._dyn_inputs.get(name)
        if found is None:
            found = self._dyn_inputs[name] = self._dynamo_inputs(name, 2)
        return found

    def _dynamo_inputs(self, name: str, depth: int) -> set[str]:
        out: set[str] = set()
        node = self.dynamo_nodes.get(name)
        for i in node.inputs if node is not None else ():
            src = self.dynamo_nodes.get(i)
            if src is None:
                continue
            if src.op == "placeholder":
                out.add(i)
            elif depth > 0 and src.op != "placeholder" and _last(op_name(src.target)) in _VIEWS:
                out |= self._dynamo_inputs(i, depth - 1)
        return out


# ops that only reshape, transpose or cast what they read: a weight seen through them is still read
_VIEWS = frozenset({"view", "_unsafe_view", "reshape", "t", "permute", "transpose", "expand",
                    "unsqueeze", "squeeze", "clone", "alias", "_to_copy", "to",
                    "convert_element_type", "contiguous", "float", "type_as"})


def _last(op: str) -> str:
    return op.rsplit(".", 1)[-1]


class _Kernels:
    """Post-grad node name → kernel names, per partition."""

    def __init__(self, c: Compile, links: LinkIndex) -> None:
        self._links = links
        self._linked_kernels: dict[Partition, Callable[[str], list[str]]] = {}
        self.by_node: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.post_grad: dict[str, set[str]] = {}
        for out in c.inductor:
            if out.post_grad is not None:
                self.post_grad[out.graph] = {n.name for n in out.post_grad.nodes}
            for k in out.kernels:
                for name in k.fused_nodes:
                    self.by_node[(out.graph, name)].add(k.name)
        partitions = {o.graph for o in c.inductor}
        only_inference = "inference" in partitions and "forward" not in partitions
        self.forward = Partition.INFERENCE if only_inference else Partition.FORWARD
        self._fw_nodes = self.post_grad.get(self.forward, set())
        self._bw_nodes = self.post_grad.get("backward", set())
        self._compile_id, self._rank = c.compile_id, c.rank

    def partition(self, backward: bool) -> Partition:
        return Partition.BACKWARD if backward else self.forward

    def phase(self, n: DecompNode) -> DecompNode:
        """Trust the partitioner over tangent reachability: a node computed in the backward
        partition is backward even when it reads only saved forward values."""
        backward = n.name not in self._fw_nodes and (n.name in self._bw_nodes or n.backward)
        return n if backward == n.backward else n._replace(backward=backward)

    def kernels(self, graph: Partition, name: str) -> set[str]:
        found = set(self.by_node.get((graph, name), ()))
        lookup = self._linked_kernels.get(graph)
        if lookup is None:
            lookup = self._linked_kernels[graph] = self._links.names_linked(
                RefKind.POST_GRAD_NODE, RefKind.KERNEL, self._compile_id, self._rank,
                graph=graph, target_graph=graph)  # fmt: skip
        found.update(lookup(name))
        return found

    def rewritten(self, graph: str, name: str) -> bool:
        known = self.post_grad.get(graph)
        return known is not None and name not in known


def _row(d: Node, mine: list[DecompNode], kernels: _Kernels, swaps: _Replacements) -> Decomposition:
    fw = [n for n in mine if not n.backward]
    bw = [n for n in mine if n.backward]
    fw_graph, bw_graph = kernels.partition(False), kernels.partition(True)
    fw_kernels = {k for n in fw for k in kernels.kernels(fw_graph, n.name)}
    bw_kernels = sorted({k for n in bw for k in kernels.kernels(bw_graph, n.name)})
    fw_ops = [n for n in fw if is_op(n)]
    rewritten = tuple(n.name for n in fw_ops if kernels.rewritten(fw_graph, n.name))
    replaced = bool(fw_ops) and len(rewritten) == len(fw_ops)
    replaced_by: list[str] = []
    if replaced:
        for node in swaps.replacing(fw):
            replaced_by.append(op_name(node.target))
            fw_kernels |= kernels.kernels(fw_graph, node.name)
    return Decomposition(
        dynamo_node=d.name, forward_ops=_distinct_ops(fw), backward_ops=_distinct_ops(bw),
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
                           and op_name(n.target) not in NOT_OPS]
        self._missing: set[str] | None = None

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
        if self._missing is None:  # once per compile, not per rewritten row
            self._missing = {n for n in self.pre if n not in self.post}
        mine = self._sources(tuple(i for n in fw for i in n.inputs), self.pre, self._missing)
        intro = {n.name for n in self.introduced}
        return [n for n in self.introduced if mine & self._sources(n.inputs, self.post, intro)]


def is_op(n: DecompNode) -> bool:
    return op_name(n.target) not in NOT_OPS


def _distinct_ops(nodes: list[DecompNode]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(op_name(n.target) for n in nodes if is_op(n)))


def _introduced(c: Compile, rows: tuple[Decomposition, ...], decomposed: list[DecompNode]) -> tuple[str, ...]:
    """Forward post-grad ops absent from the decomposed graph: what pattern passes put in."""
    known = {n for r in rows for n in (*r.aot_nodes, *r.backward_nodes)}
    names = {n.name for n in decomposed}
    out: list[str] = []
    for o in c.inductor:
        if o.graph == "backward" or o.post_grad is None:
            continue
        for n in o.post_grad.nodes:
            if n.op == "call_function" and n.name not in known and n.name not in names:
                name = op_name(n.target)
                if name not in NOT_OPS:
                    out.append(name)
    return tuple(dict.fromkeys(out))
