"""What happened to each user source line, across every compile: the per-line pipeline.

Derived from the session's link index and break list, never stored: the Source pane colours lines
from it and the per-line pipeline table shows it as rows.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass, field

from compiler_core.queries.break_ranking import distinct_breaks
from compiler_core.queries.recompile_explain import distinct_recompiles
from compiler_core.session import LinkIndex, Ref, RefKind, Session
from compiler_core.session.vocab import Partition

LineKey = tuple[str, int]


@dataclass
class LineFacts:
    dynamo_nodes: set[Ref] = field(default_factory=set)
    aot_nodes: set[Ref] = field(default_factory=set)
    post_grad_nodes: set[Ref] = field(default_factory=set)
    kernels: set[Ref] = field(default_factory=set)
    breaks: list[str] = field(default_factory=list)  # reasons, one per occurrence
    recompiles: list[str] = field(default_factory=list)  # recompile reasons of frames defined here

    @property
    def kernel_names(self) -> list[str]:
        return sorted({k.name for k in self.kernels})

    @property
    def aot_ops(self) -> int:
        """AOT ops from this line, each counted once. The joint graph holds every op of a
        training compile and its forward and backward partitions hold them again (ResNet's
        `self.bn1(out)`: 816 joint ops, 1,616 refs), so a compile's joint nodes are counted
        when it logged a joint graph, else its partitions' nodes."""
        with_joint = {(r.compile_id, r.rank) for r in self.aot_nodes if r.graph == Partition.JOINT}
        return sum(1 for r in self.aot_nodes
                   if r.graph == Partition.JOINT or (r.compile_id, r.rank) not in with_joint)  # fmt: skip

    @property
    def captured(self) -> bool:
        return bool(self.dynamo_nodes)


_BUCKET = {
    RefKind.DYNAMO_NODE: "dynamo_nodes",
    RefKind.AOT_NODE: "aot_nodes",
    RefKind.POST_GRAD_NODE: "post_grad_nodes",
    RefKind.KERNEL: "kernels",
}


def line_facts(session: Session, index: LinkIndex, rank: int | None = None) -> dict[LineKey, LineFacts]:
    """Facts for every source line that something links to, restricted to one rank. Cached per
    index (the Source and Per-line pipeline panes both ask on every open; the loader thread asks
    first), and dropped with it."""
    mine = _FACTS.setdefault(index, {})
    cached = mine.get((id(session), rank))
    if cached is not None and cached[0] is session:
        return cached[1]
    result = _line_facts(session, index, rank)
    mine[(id(session), rank)] = (session, result)
    return result


# A view of the explorer's, derived from an index and a session: kept here, not on the index
# (the core's `LinkIndex` caches only its own link queries).
_Cached = dict[tuple[int, int | None], tuple[Session, dict[LineKey, LineFacts]]]  # (session id, rank)
_FACTS: weakref.WeakKeyDictionary[LinkIndex, _Cached] = weakref.WeakKeyDictionary()


def _line_facts(session: Session, index: LinkIndex, rank: int | None) -> dict[LineKey, LineFacts]:
    facts: dict[LineKey, LineFacts] = defaultdict(LineFacts)
    for ref in index.of_kind(RefKind.SOURCE_LINE):
        if ref.rank != rank:
            continue
        entry = facts[(ref.path, ref.line)]
        for other in index.related(ref):
            bucket = _BUCKET.get(other.kind)
            if bucket:
                getattr(entry, bucket).add(other)
    for c in session.compiles:
        if c.rank != rank:
            continue
        for brk in c.graph_breaks:
            if brk.location is not None:
                facts[(brk.location.file, brk.location.line)].breaks.append(brk.reason)
        if c.recompile_reasons and c.code is not None:
            facts[(c.code.file, c.code.line)].recompiles.extend(c.recompile_reasons)
    return dict(facts)


def line_annotations(session: Session, rank: int | None = None) -> dict[LineKey, list[str]]:
    """The notes shown under a source line: each distinct break at it (code, reason, count, first
    hint) and each distinct recompile of a frame defined there (the failed guard and its fix)."""
    notes: dict[LineKey, list[str]] = defaultdict(list)
    for row in distinct_breaks(session, rank):
        loc = row.location
        if loc is None:
            continue
        code = f"{row.gb_code} " if row.gb_code else ""
        times = f" (×{row.count})" if row.count > 1 else ""
        notes[(loc.file, loc.line)].append(f"▲ graph break {code}{row.reason}{times}")
        if row.first.hints:
            notes[(loc.file, loc.line)].append(f"    hint: {row.first.hints[0]}")
    for cause in distinct_recompiles(session, rank):
        if not cause.file:
            continue
        notes[(cause.file, cause.line)].append(f"▲ recompiled ×{cause.count}: {cause.in_words()}")
        if cause.fix:
            notes[(cause.file, cause.line)].append(f"    fix: {cause.fix}")
    return dict(notes)
