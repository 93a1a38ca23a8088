"""The Decompositions pane's rows: lookups into `Compile.decomposition`, joined for display.

The table itself (what each Dynamo op decomposed into, which kernels it landed in, what a pattern
pass rewrote) is computed once when the session is built, by analysis/decompositions.py, and
stored in the session; here it is only joined with the Dynamo node's target, source line and
module path, and turned into refs a selection can match. Torch- and Qt-free.

Sessions saved before the table was stored get it when they are loaded (codec.py), from the
same build function, never from a second copy of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler_core.analysis.decompositions import ARTIFACT, op_name
from compiler_core.session.model import Session, SourceLoc
from compiler_core.session.refs import Ref, RefKind
from compiler_core.session.vocab import Partition

__all__ = ["ARTIFACT", "DecompRow", "DecompSummary", "decomposition_summary", "decomposition_table",
           "op_name", "rows_for_refs"]


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


def decomposition_table(session: Session, compile_id: str, rank: int | None = None) -> list[DecompRow]:
    """One row per Dynamo op (placeholders and outputs excluded), in Dynamo graph order."""
    c = session.compile(compile_id, rank)
    if c is None or c.dynamo_graph is None:
        return []
    info = c.decomposition
    if info is None:  # a session made in memory without the builder (load fills old files')
        return []
    nodes = c.dynamo_graph.node_index
    cid, fw, bw = c.compile_id, info.forward_graph, Partition.BACKWARD
    rows = []
    for d in info.rows:
        node = nodes.get(d.dynamo_node)
        target = node.target if node is not None else ""
        rows.append(DecompRow(
            dynamo_node=d.dynamo_node, op=op_name(target), target=target,
            source=node.source if node is not None else None,
            module_path=node.module_path if node is not None else "",
            forward_ops=d.forward_ops, backward_ops=d.backward_ops, aot_nodes=d.aot_nodes,
            backward_nodes=d.backward_nodes, rewritten=d.rewritten, replaced=d.replaced,
            replaced_by=d.replaced_by,
            kernels=tuple(Ref.kernel(cid, fw, k, c.rank) for k in d.kernels),
            backward_kernels=tuple(Ref.kernel(cid, bw, k, c.rank) for k in d.backward_kernels),
        ))  # fmt: skip
    return rows


def decomposition_summary(session: Session, compile_id: str, rank: int | None = None,
                          rows: list[DecompRow] | None = None) -> DecompSummary:
    """Distinct high-level ops in, distinct core ops out, and what pattern passes changed."""
    rows = decomposition_table(session, compile_id, rank) if rows is None else rows
    ops_in = tuple(dict.fromkeys(r.op for r in rows))
    ops_out = tuple(dict.fromkeys(op for r in rows for op in r.forward_ops))
    c = session.compile(compile_id, rank)
    info = c.decomposition if c is not None else None
    return DecompSummary(
        ops_in=ops_in, ops_out=ops_out, decomposed_rows=sum(1 for r in rows if r.decomposed),
        rewritten_ops=tuple(dict.fromkeys(r.op for r in rows if r.replaced)),
        introduced=info.introduced if info is not None else (),
    )


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
