"""Links of a compile that another rank logged identically: computed once, renamed per rank.

A data-parallel job leaves one log per rank, and each rank logs the same compile: the same graph
text, output code and guards. The parse memo (parse_memo.py) already shares the parsed graphs and
kernels between them, so such compiles hold the *same* graph and kernel objects. Their links are
then the same up to the rank written in every ref (`kind|rank|compile|key`), and linking the
seven ranks of a deep model one by one cost ~0.2 s each. Here the first rank is linked normally
and the others get its links with the rank prefix swapped, one dict lookup per distinct ref.

What `link_compile` reads besides the shared objects (pre-to-post provenance, break and guard
locations) is compared by value before a link set is reused; anything unexpected (a ref whose
prefix is not one of the compile's own) falls back to linking the compile normally.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Hashable

from compiler_core.build.linking import link_compile
from compiler_core.session.links import LinkBuilder
from compiler_core.session.model import Compile
from compiler_core.session.refs import Ref, RefKind

Adjacency = dict[str, tuple[str, ...]]


def shape_key(c: Compile) -> Hashable:
    """What makes two compiles' links equal up to the rank, by identity of the shared parsed
    objects (AOT partners, saved tensors and recomputed nodes are derived from the graphs)."""
    aot = c.aot
    graphs = (c.dynamo_graph, *((aot.joint, aot.forward, aot.backward, aot.inference) if aot else ()))
    parts = tuple((o.graph, id(o.post_grad), id(o.kernels)) for o in c.inductor)
    breaks = tuple((b.location.file, b.location.line) if b.location else None for b in c.graph_breaks)
    guards = tuple((g.source.file, g.source.line) if g.source else None for g in c.guards)
    return (c.compile_id, tuple(id(g) for g in graphs), parts, breaks, guards)


class LinkMemo:
    """Links `compiles` into `lb`, reusing the links of an identical compile of another rank."""

    def __init__(self, lb: LinkBuilder, compiles: list[Compile], user_files: set[str]) -> None:
        self.lb = lb
        self.user_files = user_files
        self.keys = [shape_key(c) for c in compiles]
        self.repeated = {k for k, n in Counter(self.keys).items() if n > 1}
        self.done: dict[Hashable, tuple[Compile, dict[str, list[str]], Adjacency]] = {}
        self.parts: list[Adjacency] = []  # frozen link sets of memoised compiles, joined at `freeze`
        # compile index -> index of the compile of another rank whose links it got, renamed: what
        # is derived from a compile's objects and links alone is the same for both (decompositions)
        self.same_as: dict[int, int] = {}
        self._index: dict[Hashable, int] = {}

    def link(self, i: int, c: Compile, pre_to_post: dict[str, list[str]]) -> None:
        key = self.keys[i]
        if key not in self.repeated:
            link_compile(self.lb, c, pre_to_post, self.user_files)
            return
        seen = self.done.get(key)
        if seen is not None and seen[0].rank != c.rank and seen[1] == pre_to_post:
            renamed = _renamed(seen[2], _prefix_map(c.compile_id, seen[0].rank, c.rank))
            if renamed is not None:
                self.parts.append(renamed)
                self.same_as[i] = self._index[key]
                return
        own = LinkBuilder()
        link_compile(own, c, pre_to_post, self.user_files)
        adjacency = own.freeze()
        self.parts.append(adjacency)
        if seen is None:
            self.done[key] = (c, pre_to_post, adjacency)
            self._index[key] = i

    def freeze(self) -> Adjacency:
        """`lb.freeze()` with the memoised link sets joined in: the session's `links`, sorted as
        `LinkBuilder.freeze` sorts them. Link sets of different ranks share no ref; a ref two
        sets (or the builder) share, a source line two compiles of one rank link to, takes the
        union of its targets."""
        links = self.lb.freeze()
        if not self.parts:
            return links
        for part in self.parts:
            shared = part.keys() & links.keys()
            joined = {k: tuple(sorted(set(links[k]).union(part[k]))) for k in shared}
            links.update(part)
            links.update(joined)
        return {k: links[k] for k in sorted(links)}  # (sorting keys alone: no tuple compares)


def _prefix_map(compile_id: str, old: int | None, new: int | None) -> dict[str, str]:
    """Each ref prefix of a compile of rank `old` -> the same prefix for rank `new`."""
    out = {Ref.prefix(kind, compile_id, old): Ref.prefix(kind, compile_id, new) for kind in RefKind}
    out[Ref.prefix(RefKind.SOURCE_LINE, "", old)] = Ref.prefix(RefKind.SOURCE_LINE, "", new)
    return out


def _renamed(adjacency: Adjacency, prefixes: dict[str, str]) -> Adjacency | None:
    """`adjacency` with every ref's prefix swapped; None if a ref has a prefix not in `prefixes`.

    A frozen adjacency's refs are sorted, so the refs of one prefix are one contiguous run: the
    prefix is looked up once per run and each ref renamed by one slice and one concatenation."""
    refs = list(adjacency)  # every ref is a key: the adjacency lists both directions
    if refs != sorted(refs):
        refs.sort()
    names: dict[str, str] = {}
    i, n = 0, len(refs)
    while i < n:
        cut = _prefix_end(refs[i])
        prefix = refs[i][:cut]
        new = prefixes.get(prefix) if cut else None
        if new is None:
            return None
        j = bisect.bisect_left(refs, prefix[:-1] + chr(ord(prefix[-1]) + 1), i + 1)
        names.update(zip(refs[i:j], [new + r[cut:] for r in refs[i:j]], strict=True))
        i = j
    rename: Callable[[str], str] = names.__getitem__
    try:
        return {names[k]: tuple(map(rename, targets)) for k, targets in adjacency.items()}
    except KeyError:  # a one-sided link to a ref that is no key: not an adjacency we made
        return None


def _prefix_end(ref: str) -> int:
    """Length of `kind|rank|compile|` at the start of `ref` (0 when it has fewer fields)."""
    end = -1
    for _ in range(3):
        end = ref.find("|", end + 1)
        if end < 0:
            return 0
    return end + 1
