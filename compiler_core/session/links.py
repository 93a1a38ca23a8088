"""The link index: which items of one stage map to which items of the others.

The core records *direct* links once, while building a session (source line ↔ Dynamo node ↔
AOT node ↔ post-grad node ↔ kernel ↔ kernel line, plus saved tensors, guards and breaks), the way
tlparse computes preToPost/postToCppCode. `LinkIndex.related` expands them for a selection by
walking only *away* from the selected item's stage: upstream through earlier stages and
downstream through later ones. Walking freely would let one shared source line pull every
kernel of the model into the highlight.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from compiler_core.session.gc_pause import gc_paused
from compiler_core.session.refs import STAGE_ORDER, Ref, RefKind, graph_key, kind_of_encoded, kind_prefix


class LinkBuilder:
    """Collects undirected direct links while a session is built."""

    def __init__(self) -> None:
        self._adj: dict[str, set[str]] = defaultdict(set)

    def add(self, a: Ref, b: Ref) -> None:
        self.add_encoded(a.encode(), b.encode())

    def add_encoded(self, ea: str, eb: str) -> None:
        if ea != eb:
            self._adj[ea].add(eb)
            self._adj[eb].add(ea)

    def add_many(self, a: Ref, others: Iterable[Ref]) -> None:
        for b in others:
            self.add(a, b)

    def add_star(self, ea: str, others: Iterable[str]) -> None:
        """`add_encoded(ea, eb)` for every `eb`, in one call (a kernel and its ~30 lines: a
        third of a deep compile's links)."""
        adj = self._adj
        mine = adj[ea]
        for eb in others:
            if eb != ea:
                mine.add(eb)
                adj[eb].add(ea)

    def freeze(self) -> dict[str, tuple[str, ...]]:
        adj = self._adj  # keys sorted alone: comparing (key, set) pairs costs a fifth more
        return {k: tuple(sorted(adj[k])) for k in sorted(adj)}


class LinkIndex:
    """Read-only lookups over a session's `links` mapping; torch- and Qt-free.

    Storage holds only direct links (what a user can click: node <-> node across stages, node <->
    kernel, kernel line <-> node, source line <-> node, saved tensor <-> its nodes); transitive
    hops are derived here, per looked-up ref, and cached. The walk runs over integer ids built once
    on first use (~50 ms for the 33k refs of a 32-layer Llama), not over decoded `Ref`s: decoding
    on every hop made opening that model's Source pane take seconds.

    This is the only walker over links: `related` (a selection's highlight), `upstream` /
    `downstream` (one direction, one kind: a post-grad node's source lines), `direct` (one hop),
    `names_linked` (one hop by name within a compile, for the builder) and `of_kind` (every ref
    of a kind: the source lines) are answered here and nowhere else.
    Each caches what it computed; derived views of its users (the explorer's line facts) are
    cached by those users, not on the index.

    Adding a link kind needs no change here or in the codec: add a `RefKind` with its
    `STAGE_ORDER` (refs.py) and call `LinkBuilder.add` where the session is built.
    """

    def __init__(self, links: Mapping[str, tuple[str, ...]]) -> None:
        self._links = links
        self._cache: dict[Ref, frozenset[Ref]] = {}
        self._ids: dict[str, int] | None = None
        self._names: list[str] = []
        self._adj: list[list[int]] = []
        self._stage: list[float] = []
        self._whole: list[bool] = []  # kernels: reached, never walked through (see `_walk`)
        self._refs: list[Ref | None] = []
        self._one_way: dict[tuple[Ref, bool, RefKind | None], frozenset[Ref]] = {}
        self._of_kind: dict[RefKind, tuple[Ref, ...]] = {}
        self._decoded: dict[str, Ref | None] = {}  # `direct` before the integer index is built

    def built_from(self, links: Mapping[str, tuple[str, ...]]) -> bool:
        """Whether this index reads this very mapping (the explorer's model takes an index the
        loader thread prepared only when it is the shown session's own)."""
        return self._links is links

    def prepare(self) -> LinkIndex:
        """Build the integer index now (call off the GUI thread); lookups build it lazily otherwise."""
        if self._ids is None:
            with gc_paused():  # millions of lists and no cycle: collections would walk them all
                self._build()
        return self

    def _build(self) -> None:
        """Ids by key order where every target is a key (a built session lists both directions):
        the ids map and each key's target ids are then made in C-level passes (64 ranks: 2.1M
        refs, 9.9M targets)."""
        names = list(self._links)
        ids = dict(zip(names, range(len(names)), strict=True))
        try:
            adj = [list(map(ids.__getitem__, targets)) for targets in self._links.values()]
        except KeyError:  # a one-sided link (a hand-made or damaged session's)
            ids, names, adj = self._one_sided()
        stage_of: dict[RefKind | None, float] = {}
        stage = []
        for name in names:
            kind = kind_of_encoded(name)
            found = stage_of.get(kind)
            if found is None:
                found = stage_of[kind] = -1.0 if kind is None else STAGE_ORDER[kind]
            stage.append(found)
        self._names, self._adj, self._stage = names, adj, stage
        kernel = STAGE_ORDER[RefKind.KERNEL]
        self._whole = [at == kernel for at in stage]
        self._refs = [None] * len(names)
        self._ids = ids

    def _one_sided(self) -> tuple[dict[str, int], list[str], list[list[int]]]:
        """Ids for every name met, keys and targets alike, and each key's targets as ids."""
        ids: dict[str, int] = {}
        names: list[str] = []
        for key, targets in self._links.items():
            for name in (key, *targets):
                if name not in ids:
                    ids[name] = len(names)
                    names.append(name)
        adj: list[list[int]] = [[] for _ in names]
        for key, targets in self._links.items():
            adj[ids[key]] = [ids[t] for t in targets]
        return ids, names, adj

    def _ref(self, i: int) -> Ref | None:
        """The decoded ref of id `i`, or None for a name that is no ref (see `decode_or_none`)."""
        ref = self._refs[i]
        if ref is None:
            ref = self._refs[i] = decode_or_none(self._names[i])
        return ref

    def direct(self, ref: Ref, kind: RefKind | None = None) -> frozenset[Ref]:
        """The refs `ref` links to directly (of `kind` only, when given). Before the integer
        index is built this reads the stored mapping and decodes only the targets of `kind`
        without building it: the session builder asks a few thousand of these on every import
        (analysis/decompositions.py), where building the index would cost more than they do."""
        ids = self._ids
        if ids is None:
            targets = self._links.get(ref.encode())
            if not targets:
                return frozenset()
            if kind is not None:
                start = kind_prefix(kind)
                targets = tuple(t for t in targets if t.startswith(start))
            decoded = self._decoded  # a kernel is the target of each of its nodes: decoded once
            found = []
            for t in targets:
                r = decoded.get(t)
                if r is None:
                    r = decoded[t] = decode_or_none(t)
                if r is not None:
                    found.append(r)
            return frozenset(found)
        i = ids.get(ref.encode())
        if i is None:
            return frozenset()
        near = (self._ref(j) for j in self._adj[i])
        return frozenset(r for r in near if r is not None and (kind is None or r.kind is kind))

    def names_linked(self, kind: RefKind, target: RefKind, compile_id: str, rank: int | None, *,
                     graph: str | None = None, target_graph: str | None = None,
                     ) -> Callable[[str], list[str]]:  # fmt: skip
        """One hop by name inside one compile and rank: `lookup(name)` gives the names of the refs
        of kind `target` (in `target_graph`, for graph-scoped kinds) that the ref of kind `kind`
        named `name` (in `graph`) links to directly. The session builder asks this a few thousand
        times on every import (a decomposed node's Dynamo op, a post-grad node's kernels); it
        reads the stored mapping by key, making no `Ref` per question, which `direct` would
        (a third of the decomposition step on a 12-layer BERT)."""
        # a graph-scoped ref's key is `graph:name` (Ref.key)
        start = Ref.prefix(kind, compile_id, rank) + ("" if graph is None else graph_key(graph, ""))
        wanted = Ref.prefix(target, compile_id, rank)
        if target_graph is not None:
            wanted += graph_key(target_graph, "")
        cut, links = len(wanted), self._links

        def lookup(name: str) -> list[str]:
            targets = links.get(start + name)
            return [t[cut:] for t in targets if t.startswith(wanted)] if targets else []

        return lookup

    def upstream(self, ref: Ref, kind: RefKind | None = None) -> frozenset[Ref]:
        """The refs of earlier stages `ref` reaches moving to an earlier stage at every hop (of
        `kind` only, when given): a post-grad node's source lines. Cached per question."""
        return self._one_way_walk(ref, True, kind)

    def downstream(self, ref: Ref, kind: RefKind | None = None) -> frozenset[Ref]:
        """`upstream`'s mirror: the refs of later stages `ref` reaches (a kernel is reached but
        not walked through; see `_walk`)."""
        return self._one_way_walk(ref, False, kind)

    def _one_way_walk(self, ref: Ref, upstream: bool, kind: RefKind | None) -> frozenset[Ref]:
        key = (ref, upstream, kind)
        found = self._one_way.get(key)
        if found is None:
            ids = self.prepare()._ids
            assert ids is not None
            i = ids.get(ref.encode())
            hits = () if i is None else self._walk(i, upstream)
            refs = (self._ref(j) for j in hits)
            found = frozenset(r for r in refs if r is not None and (kind is None or r.kind is kind))
            self._one_way[key] = found
        return found

    def of_kind(self, kind: RefKind) -> tuple[Ref, ...]:
        """Every ref of `kind` that has links, in storage order (the source lines the Source
        pane colours: 8k of a 64-rank session's 2.1M refs), found once per kind."""
        found = self._of_kind.get(kind)
        if found is None:
            start = kind_prefix(kind)
            found = tuple(r for name in self._links if name.startswith(start)
                          if (r := decode_or_none(name)) is not None)  # fmt: skip
            self._of_kind[kind] = found
        return found

    def related(self, ref: Ref) -> frozenset[Ref]:
        """Everything `ref` maps to in other stages (and same-stage peers one hop away)."""
        found = self._cache.get(ref)
        if found is None:
            ids = self.prepare()._ids
            assert ids is not None
            i = ids.get(ref.encode())
            if i is None:
                found = frozenset()
            else:
                hits = self._walk(i, upstream=True) | self._walk(i, upstream=False)
                hits.update(self._adj[i])
                hits.discard(i)
                found = frozenset(r for j in hits if (r := self._ref(j)) is not None)
            self._cache[ref] = found
        return found

    def related_all(self, refs: Iterable[Ref]) -> frozenset[Ref]:
        out: set[Ref] = set()
        for ref in refs:
            out |= self.related(ref)
        return frozenset(out)

    def _walk(self, start: int, upstream: bool) -> set[int]:
        """Ids reachable from `start` moving strictly away from its stage at every hop.

        A kernel reached from elsewhere is a hit but the walk does not go on through it: a
        kernel links to all its fused nodes and all its lines, so passing through it would widen
        one kernel line (`tmp13 = rsqrt(tmp12)`) to every node of its kernel, and one post-grad
        node to every line of its kernel. The item's own links already reach its own lines and
        nodes; the kernel itself still lights."""
        adj, stage, whole = self._adj, self._stage, self._whole
        seen: set[int] = set()
        frontier = [start]
        while frontier:
            current = frontier.pop()
            here = stage[current]
            for nxt in adj[current]:
                if nxt in seen or nxt == start:
                    continue
                if (stage[nxt] < here) if upstream else (stage[nxt] > here):
                    seen.add(nxt)
                    if not whole[nxt]:
                        frontier.append(nxt)
        return seen

    def __len__(self) -> int:
        return len(self._links)


def decode_or_none(encoded: str) -> Ref | None:
    """`Ref.decode`, or None for text that is not a ref (an unknown kind or graph, a line that
    is no integer: a hostile or damaged session's links are skipped, not fatal)."""
    try:
        return Ref.decode(encoded)
    except ValueError:
        return None
