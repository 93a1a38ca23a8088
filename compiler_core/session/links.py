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
from collections.abc import Iterable, Iterator, Mapping

from compiler_core.session.refs import Ref, RefKind, split_source_key


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

    def freeze(self) -> dict[str, tuple[str, ...]]:
        return {k: tuple(sorted(v)) for k, v in sorted(self._adj.items())}


class LinkIndex:
    """Read-only lookups over a session's `links` mapping; torch- and Qt-free."""

    def __init__(self, links: Mapping[str, tuple[str, ...]]) -> None:
        self._links = links
        self._cache: dict[Ref, frozenset[Ref]] = {}

    def direct(self, ref: Ref) -> frozenset[Ref]:
        return frozenset(_decoded(self._links.get(ref.encode(), ())))

    def related(self, ref: Ref) -> frozenset[Ref]:
        """Everything `ref` maps to in other stages (and same-stage peers one hop away)."""
        if ref not in self._cache:
            up = self._walk(ref, upstream=True)
            down = self._walk(ref, upstream=False)
            self._cache[ref] = frozenset((up | down | self.direct(ref)) - {ref})
        return self._cache[ref]

    def related_all(self, refs: Iterable[Ref]) -> frozenset[Ref]:
        out: set[Ref] = set()
        for ref in refs:
            out |= self.related(ref)
        return frozenset(out)

    def _walk(self, start: Ref, upstream: bool) -> set[Ref]:
        seen: set[Ref] = set()
        frontier = [start]
        while frontier:
            current = frontier.pop()
            for nxt in self.direct(current):
                if nxt in seen or nxt == start:
                    continue
                ahead = nxt.stage < current.stage if upstream else nxt.stage > current.stage
                if ahead:
                    seen.add(nxt)
                    frontier.append(nxt)
        return seen

    def __len__(self) -> int:
        return len(self._links)


def _decoded(encoded: Iterable[str]) -> Iterator[Ref]:
    """Refs of `encoded`, skipping any that do not decode: a session from someone else may hold
    `links` entries of the right type but no valid ref (issue 12), and one of them must not make
    every selection that reaches it raise."""
    for e in encoded:
        ref = decode_or_none(e)
        if ref is not None:
            yield ref


def decode_or_none(encoded: str) -> Ref | None:
    """`Ref.decode`, or None for text that is not a ref (a source line's key must end `:<int>`)."""
    try:
        ref = Ref.decode(encoded)
        if ref.kind is RefKind.SOURCE_LINE:
            split_source_key(ref.key)
    except ValueError:
        return None
    return ref
